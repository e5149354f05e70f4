package dev.oakmap.internal.map;

import dev.oakmap.OakClosedException;
import dev.oakmap.OakOutOfMemoryException;
import dev.oakmap.internal.chunk.Chunk;
import dev.oakmap.internal.chunk.KeyOps;
import dev.oakmap.internal.chunk.StaleKeyException;
import dev.oakmap.internal.index.ChunkIndex;
import dev.oakmap.internal.reclaim.SliceManager;
import dev.oakmap.internal.memory.Refs;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * Splits, merges and compacts chunks.
 *
 * <h2>Algorithm</h2>
 * To rebalance chunk {@code C}:
 * <ol>
 * <li><b>Freeze</b> {@code C} ({@link Chunk#tryFreeze()}): publications fail from then on, and the
 *     rebalancer waits until published operations drain. From that point the set of entries of
 *     {@code C} that hold a value reference is fixed. Freezing is also the claim: a rebalance that
 *     finds {@code C} already frozen leaves it to the one that froze it.
 * <li><b>Copy</b> the live entries in list order (key order): an entry is live if its value
 *     reference is non-null and its header is live. Entries without a value, and values removed
 *     (logically, in their header) are dropped. If few entries are live, the next chunk is frozen
 *     and copied too, to merge the two, unless another rebalance has it.
 * <li><b>Build</b> replacement chunks, each filled to about {@link #FILL} of capacity with a
 *     fully sorted prefix. The first inherits {@code C}'s minimum key, so the ranges of the
 *     chunks around them do not change. A chunk that only grew at its end (keys arriving in
 *     increasing order) is treated differently, since the next keys will land past it too: it is
 *     rebuilt whole, with room to grow, until it nears capacity; then all but its last entries
 *     are packed into a chunk with almost no spare slots, and the last ones start the chunk that
 *     takes the appends. Ordered ingestion so leaves chunks full rather than two-thirds full.
 * <li>Under {@link #lock}: <b>release</b> the old chunks, then <b>link</b> the replacements: the
 *     last one points to the old successor, the predecessor (found in the index) points to the
 *     first, and the index snapshot is replaced. Releasing first guarantees that no operation
 *     reaches the new chunks while an old one still looks current (see {@link ChunkIndex}).
 * </ol>
 *
 * <h2>Concurrent rebalances</h2>
 * Steps 1-3 run without the lock, so rebalances of different chunks copy and build at the same
 * time; only step 4 is serialized. Until 2026-11-28 the whole rebalance ran under the lock, and
 * during an ingestion on two threads each thread spent 11-16% of its time waiting for it (a
 * rebalance is about a sixth of an ingestion's work: by Amdahl's law that capped ingestion at
 * about six times one thread's rate, whatever the cores). What makes the split safe:
 * <ul>
 * <li>A frozen chunk belongs to the rebalance that froze it (the freeze is a claim), and nothing
 *     else changes its entries, so a copy made outside the lock is as exact as one made inside.
 *     A merge takes the next chunk only if it can freeze it; a chunk released stays frozen, so
 *     it is never claimed twice.
 * <li>Links are made one at a time, under the lock, each from the list and index that the links
 *     before it left: the successor and the predecessor are read there, not when the copy began.
 *     The predecessor may be frozen by another rebalance still copying; its next pointer is
 *     updated all the same, and that rebalance reads it when it links. A chunk's next pointer is
 *     thus written only under the lock.
 * <li>Writers that cannot publish in a frozen chunk wait for that chunk's release (or its
 *     unfreezing, if its rebalance failed), on a condition signalled after each link
 *     ({@link #awaitRelease}); operations that found a released chunk wait for the link in
 *     progress ({@link #awaitRebalance}), after which the index leads to the replacements.
 * <li>Deleting the keys the replacements dropped, and the deferred keys that scans protected,
 *     happens under the lock, as before.
 * </ul>
 * Maps that move pairs (the two placement experiments below) still run each rebalance under the
 * lock from start to end: their moves and records were built for one rebalance at a time.
 * Value slices are shared by the old and the new chunks, so in-place updates and removals (which
 * act on value headers) go on during a rebalance; only operations that must CAS a value
 * reference (insertions, moves) wait for it, in {@link #awaitRelease}.
 *
 * <h2>Guarantees</h2>
 * RB1-RB3 of the Oak paper: a traversal that reads a frozen or released chunk sees exactly the
 * keys present when it was frozen, adjusted by later removals (which it sees in the headers);
 * insertions into the range happen only after the replacement is linked, into the replacement.
 * Scans that step from a released chunk re-locate through the index by the last key returned.
 *
 * <p>With chunks of thousands of entries, rebalances are rare compared to operations.
 *
 * <h2>Key ownership</h2>
 * A key slice is referenced by one chunk at most, as the key of one of its entries, as its
 * minimum key, or as both: a rebalance may then delete every key its engaged chunks reference
 * that no replacement does (the keys of dropped entries, the minimum keys no replacement keeps),
 * knowing that no other chunk links it. Replacements after the first take as minimum key the key
 * of their own first entry; the first inherits {@code C}'s, so it must also take the entry that
 * holds that key, if one is copied. Under a comparator that keeps its contract that entry leads
 * the list, since no key of {@code C} is smaller. Under one that breaks it (key prefixes out of
 * key order, say) the entry may sit anywhere in the list, and a split would hand it to a later
 * replacement: two chunks would then reference the slice, and the rebalance that drops it from
 * one would delete it under the other, which would go on linking a deleted key (scans and
 * lookups that read it fail as stale and re-locate for ever; Nova keys would be deleted twice).
 * So the copy puts that entry first ({@code Entries#putFirst}); the order was wrong anyway.
 *
 * <h2>Placement (an experiment, off unless {@code -Doak.placePairs=true})</h2>
 * Pairs are allocated in arrival order, so with random keys a scan misses the cache on every
 * pair. A placing rebalance also copies the pairs inserted since the chunk was built (its
 * unsorted entries) into fresh memory, key then value, in key order ({@link #place}): each chunk
 * then holds a few runs laid out in key order, which a scan reads as a few sequential streams.
 * Each pair is copied once, when it first goes through a rebalance; entries that were sorted in
 * their chunk were placed then. Chunks that grew only at an end (keys arriving in increasing or
 * decreasing order) are left alone: their pairs arrived, and were allocated, in key order.
 * <ol>
 * <li>Before the copy, {@link SliceManager#beginMove} stops writers of the value (they wait)
 *     but not readers; a value being written is left where it is. The old value stays live
 *     until the old chunk is released, since an operation that finds a dead reference in a chunk
 *     that is not released concludes that the key was removed.
 * <li>Before the release, each replaced chunk records where each of its live values went
 *     ({@link Chunk#recordMove}), so that zero-copy views of them follow ({@code SliceView}).
 * <li>After the replacements are linked, {@link SliceManager#endMove} deletes the old values
 *     (writers that waited find them gone and look their keys up again, in the replacements) and
 *     the old keys go with the dropped ones.
 * </ol>
 * Fresh memory is taken only while the free lists are short ({@link SliceManager#fewFreeSlices}):
 * the originals a placement frees are reused by later insertions, and under churn, where free
 * slices pile up, placement pauses, so the footprint stays bounded.
 *
 * <h2>Placement on request (off unless {@code -Doak.placeOnScans=true})</h2>
 * Placing at rebalances costs ingestion a copy per pair and still leaves a chunk in a few runs.
 * Instead, a scan that finds a chunk's pairs scattered asks for it ({@code Cursor}, "Asking for
 * placement"), and {@link #placeOnRequest} rebuilds that chunk with every live pair moved, in key
 * order, into fresh memory, by the same steps as above. The chunk then reads as one sequential
 * stream; a later scan asks again only once insertions have scattered most of it. A chunk that
 * saw no insertion or removal since its build keeps its shape; others are rebuilt as a
 * rebalance would. The scan does not wait: it queues the request for the map's placer thread
 * ({@code Placer}), which waits for the rebalancer's lock instead. Moves are possible only where
 * blocks are reused whole (the copies' originals then empty whole blocks, which become the next
 * copies' fresh memory), and the caller checks the headroom first ({@code BlockAllocator#roomToRelocate}): a map laid out at random empties no old
 * block before most of its pairs have moved, so a pass over a whole map holds up to about twice
 * its bytes meanwhile. Every rebalance of such a map records where its values went, moved or
 * not, so that views follow later moves.
 */
final class Rebalancer {
    /** Target fill of a replacement chunk, as a fraction of capacity. */
    static final double FILL = 0.625;
    /**
     * Free slots every replacement chunk built with room keeps. A rebalance voids the insertions
     * that had linked an entry in the old chunk but not yet installed its value: they retry in
     * the replacement. With one free slot, two threads inserting into the same full chunk can void
     * each other for ever: one takes the last slot, the other finds the chunk full, rebalances it
     * and takes the one free slot of the replacement, and the first, retrying, finds that full in
     * turn. With two, both retries find room. Packed chunks (the keys that appends or prepends
     * went past, see {@link #buildPacked}) keep one spare slot; a packed chunk that an insertion
     * fills holds one live entry less at its rebuild, so at most two rebuilds later the chunk has
     * room. Only chunks of fewer than 32 entries are affected (larger ones keep more anyway).
     * Lincheck's model checker found the cycle in chunks of 4, with a key serializer whose loop it
     * switches threads in, between an insertion's slot and its value.
     */
    static final int MIN_FREE = 2;
    /**
     * Room a chunk that was only appended to is rebuilt with, as a fraction of its entries (or the
     * map's ratio, if larger). Each rebuild copies the whole chunk, so growing by the ratio (a
     * quarter, say) copied every appended entry about five times before the chunk was packed;
     * doubling copies it about twice (Druid-style plain rows, time-ordered keys, 1.2M rows on one
     * thread: 6.0M entries copied by 5,730 rebalances before, 3.1M by 2,462 after; the ingestion
     * rate moved within the host's noise, +1% in medians of four). The room costs little memory:
     * only the chunk that takes the appends has it, and the appends fill it. Appends start at the
     * newest list ends (see {@code Chunk#startPoint}), but other keys in that room are found by
     * walking the list, so a chunk whose new keys lie past its end in random order keeps the
     * ratio's room.
     */
    static final double APPEND_GROWTH = 1.0;
    /**
     * How far behind the newest entries an insertion may land and still count as an append:
     * concurrent appenders interleave, and rows that share a timestamp arrive in any order among
     * themselves (about 20 per millisecond in the Druid-style plain rows).
     */
    static final int APPEND_WINDOW = 32;
    /**
     * A new chunk whose inherited prefix shift leaves more than one key in this many tied with its
     * predecessor gets its keys' exact prefixes read (one off-heap read each), if a finer shift
     * would fit them.
     */
    static final int TIES_TO_REFINE = 16;

    private final ReentrantLock lock = new ReentrantLock();
    private final ChunkIndex index;
    private final KeyOps<?> keys;
    private final SliceManager values;
    private final KeyHazards hazards;
    private final int capacity;
    private final double ratio;
    private final BooleanSupplier closed;
    /** Whether rebalances move live pairs into key order (see "Placement"). */
    private final boolean places;
    /** Whether {@link #placeOnRequest} lays chunks out anew (see "Placement on request"). */
    private final boolean placesOnRequest;
    /** Whether any rebalance may move pairs: then every rebalance records where its values went. */
    private final boolean moves;
    /**
     * Signalled, under {@link #lock}, whenever a rebalance ends, linked or given up: writers that
     * found their chunk frozen wait on it for the chunk's release ({@link #awaitRelease}).
     */
    private final Condition rebalanceEnded = lock.newCondition();
    /**
     * Scratch buffers of rebalances, reused by later ones: allocating and zeroing them anew cost
     * as much as building the chunks. Rebalances of different chunks run together, so a few are
     * kept; a rebalance that finds none spare takes a new one. Slots are taken and given back
     * with atomic swaps.
     */
    private final AtomicReferenceArray<Entries> spareBuffers = new AtomicReferenceArray<>(SPARE_BUFFERS);
    private static final int SPARE_BUFFERS = 4;
    /** Entries copied into replacement chunks so far; written under {@link #lock}, read racily. */
    private volatile long entriesCopied;
    /** Pairs moved by {@link #place} and kept; written under {@link #lock}, read racily. */
    private volatile long pairsMoved;

    /**
     * @param hazards keys that scans read in place: deleted only once no scan protects them
     * @param capacity the most entries a chunk may hold
     * @param ratio unsorted entries a chunk may take, as a fraction of its sorted ones, before it is
     *     reorganized
     */
    Rebalancer(ChunkIndex index, KeyOps<?> keys, SliceManager values, KeyHazards hazards, int capacity, double ratio,
               boolean placePairs, boolean placeOnRequest, BooleanSupplier closed) {
        // movable keys are reclaimed ones, so the dropped-keys buffer that finishMoves fills exists
        boolean movable = values.movable() && keys.slices().movable();
        this.places = placePairs && movable;
        this.placesOnRequest = placeOnRequest && movable;
        this.moves = places || placesOnRequest;
        this.index = index;
        this.keys = keys;
        this.values = values;
        this.hazards = hazards;
        this.capacity = capacity;
        this.ratio = ratio;
        this.closed = closed;
    }

    /**
     * Entry slots for a chunk built with {@code sorted} entries: room for the unsorted entries the
     * ratio allows (at least a few), and no more, so on-heap metadata stays proportional to the
     * data. A chunk whose slots run out is reorganized.
     */
    static int slotsFor(int sorted, int capacity, double ratio) {
        int extra = Math.max((int) Math.ceil(sorted * ratio), Math.min(16, capacity / 4));
        return (int) Math.min(capacity, (long) sorted + Math.max(MIN_FREE, extra));
    }

    /** @return pairs moved into key order since the map was built (for tests and diagnostics) */
    long pairsMoved() {
        return pairsMoved;
    }

    /** @return entries copied into replacement chunks since the map was built (for tests and diagnostics) */
    long entriesCopied() {
        return entriesCopied;
    }

    /**
     * Waits until no rebalance is linking its replacements (returns at once if none is): for an
     * operation that found a released chunk, whose replacements are then in the index.
     */
    void awaitRebalance() {
        if (closed.getAsBoolean()) {
            throw new OakClosedException();
        }
        lock.lock();
        lock.unlock();
    }

    /**
     * Waits until chunk {@code c}, if a rebalance has it frozen, is replaced or given back: for an
     * operation that cannot publish in {@code c}. Returns at once if {@code c} is not frozen or
     * already released. Spins for up to {@link #SPIN_NANOS} first (most rebalances take less; an
     * ingestion on two threads parked 352-589 times per million pairs without the spin, 117-233
     * with it: docs/results.md, "Ingestion on two threads"), then parks; an interrupt is kept for
     * the caller.
     *
     * @throws OakClosedException if the map is closed meanwhile
     */
    void awaitRelease(Chunk c) {
        long spinUntil = System.nanoTime() + SPIN_NANOS;
        while (isBeingRebalanced(c)) {
            if (System.nanoTime() - spinUntil > 0) {
                break;
            }
            Thread.onSpinWait();
        }
        if (!isBeingRebalanced(c)) {
            return;
        }
        boolean interrupted = false;
        lock.lock();
        try {
            while (isBeingRebalanced(c)) {
                if (closed.getAsBoolean()) {
                    throw new OakClosedException();
                }
                try {
                    // bounded: a close() signals nothing
                    rebalanceEnded.awaitNanos(RELEASE_CHECK_NANOS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            lock.unlock();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** @return whether a rebalance holds {@code c}: frozen, and neither replaced yet nor given back */
    private static boolean isBeingRebalanced(Chunk c) {
        return c.isFrozen() && !c.isReleased();
    }

    private static final long RELEASE_CHECK_NANOS = 1_000_000L;
    /** How long {@link #awaitRelease} spins before it parks; {@code -Doak.rebalance.spinNanos} (for measurements). */
    private static final long SPIN_NANOS = Long.getLong("oak.rebalance.spinNanos", 100_000L);

    /**
     * Rebalances {@code c} unless it is being or was already replaced; if another rebalance has
     * it, waits for that one to end (see "Concurrent rebalances").
     */
    void rebalance(Chunk c) {
        if (moves) {
            rebalanceAlone(c);
            return;
        }
        if (closed.getAsBoolean()) {
            throw new OakClosedException();
        }
        if (!c.tryFreeze()) {
            awaitRelease(c);
            return;
        }
        doRebalance(c, false, false);
    }

    /** {@link #rebalance} in a map that moves pairs: under {@link #lock} from start to end. */
    private void rebalanceAlone(Chunk c) {
        lock.lock();
        try {
            if (closed.getAsBoolean()) {
                throw new OakClosedException();
            }
            if (c.isReleased() || !c.tryFreeze()) {
                return;
            }
            doRebalance(c, false, true);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Deletes the keys deferred by earlier rebalances that no scan protects any more (scans that
     * broke off keep theirs until the collector finds them), unless a rebalance runs now, which
     * does it anyway. After a placement pass no rebalance may follow for a long time, and a
     * deferred key keeps its old block from emptying.
     */
    void retryDeferredKeys() {
        if (hazards.deferredCount() == 0) { // a racy read: a hint
            return;
        }
        long now = System.nanoTime();
        // Reading every registered hazard costs more with every broken-off scan the collector
        // has not found yet, and scans call this at each chunk: so at most once per interval,
        // which doubles (up to a second) while retries free nothing, and is reset when one does.
        if (now - lastDeferredRetry < deferredRetryInterval || !lock.tryLock()) {
            return;
        }
        lastDeferredRetry = now; // racy: two threads may both retry once
        try {
            if (!closed.getAsBoolean()) {
                long[] free = hazards.deletable(new long[0]);
                for (long ref : free) {
                    keys.delete(ref);
                }
                if (free.length == 0 && hazards.deferredCount() > 0) {
                    // no key went: the ones still deferred are those of scans that broke off, and
                    // may be all that keeps old blocks from emptying. Give back the pages around
                    // them (blocks already retired so are skipped)
                    keys.slices().discardAllBut(hazards.deferredKeys());
                }
                deferredRetryInterval = free.length > 0 ? DEFERRED_RETRY_MIN_NANOS
                        : Math.min(2 * deferredRetryInterval, DEFERRED_RETRY_MAX_NANOS);
            }
        } finally {
            lock.unlock();
        }
    }

    /** {@link System#nanoTime} of the last {@link #retryDeferredKeys} that read the hazards (a hint). */
    private volatile long lastDeferredRetry = System.nanoTime() - DEFERRED_RETRY_MIN_NANOS;
    /** How long after the last one {@link #retryDeferredKeys} may read the hazards again; written under {@link #lock}. */
    private volatile long deferredRetryInterval = DEFERRED_RETRY_MIN_NANOS;
    private static final long DEFERRED_RETRY_MIN_NANOS = 10_000_000L;
    private static final long DEFERRED_RETRY_MAX_NANOS = 1_000_000_000L;

    /** @return whether {@link #placeOnRequest} may lay chunks out anew in this map */
    boolean placesOnRequest() {
        return placesOnRequest;
    }

    /**
     * Rebuilds {@code c} with every live pair moved into fresh memory in key order (see
     * "Placement on request"), unless {@code c} is being or was replaced, or the map does not
     * place on request. Waits for a rebalance that runs now: the caller is the map's placer
     * thread, which nobody waits for.
     *
     * @return true if {@code c} was rebuilt
     * @throws OakClosedException if the map was closed
     */
    boolean placeOnRequest(Chunk c) {
        if (!placesOnRequest) {
            return false;
        }
        lock.lock();
        try {
            if (closed.getAsBoolean()) {
                throw new OakClosedException();
            }
            if (c.isReleased() || !c.tryFreeze()) {
                return false;
            }
            doRebalance(c, true, true);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Replaces {@code c}, which the caller has frozen ({@link Chunk#tryFreeze}): copies and builds
     * (under {@link #lock} only if {@code locked}, which the caller then holds), then links the
     * replacements under the lock. If anything fails before the link, the frozen chunks are
     * unfrozen and the map is as it was.
     *
     * @param placeAll move every live pair into key order, not only those inserted since {@code c} was built
     */
    private void doRebalance(Chunk c, boolean placeAll, boolean locked) {
        Entries live, dropped;
        try {
            live = takeBuffer();
            dropped = keys.reclaims() ? takeBuffer() : null;
        } catch (RuntimeException | Error e) {
            // no heap left for a scratch buffer: c is frozen already, and left so its writers
            // would wait for ever
            giveUp(c, null, locked);
            throw e;
        }
        try {
            doRebalance(c, placeAll, locked, live, dropped);
        } finally {
            giveBack(live);
            giveBack(dropped);
        }
    }

    private void doRebalance(Chunk c, boolean placeAll, boolean locked, Entries live, Entries dropped) {
        Chunk merged = null; // the next chunk, once this rebalance has claimed it to merge
        Chunk[] engaged;
        boolean placing = false;
        long minCopy = Refs.NULL; // a copy of c's minimum key made by this rebalance alone
        Chunk[] replacements;
        try {
            Growth growth = copyLive(c, live, dropped);
            Chunk n = c.nextChunk; // racy: a chunk another rebalance has frozen is left to it
            if (n != null && live.size < capacity / 4 && n.tryFreeze()) {
                merged = n;
                copyLive(n, live, dropped);
                growth = Growth.SCATTERED;
            }
            engaged = merged == null ? new Chunk[] {c} : new Chunk[] {c, merged};
            // racy, like the read of n above: its minimum key, the replacements' upper bound, is
            // read validated against it, and the rebalance that replaces it keeps that key's bytes
            Chunk after = engaged[engaged.length - 1].nextChunk;
            live.putFirst(c.minKey); // the first replacement inherits it (see "Key ownership")
            if (moves) {
                placing = true;
                // chunks that grew only at an end hold pairs that arrived in key order
                place(live, placeAll || (places && growth != Growth.APPENDED && growth != Growth.PREPENDED), placeAll);
            }
            long minKey = c.minKey;
            if (placeAll && minKey != Refs.NULL) {
                // the minimum key moves too, or it alone would keep its old block from emptying
                if (live.size > 0 && live.moveTokens[0] >= 0 && live.oldKeys[0] == minKey) {
                    minKey = live.keys[0]; // the first entry's key, moved
                } else {
                    try {
                        minKey = minCopy = copyOf(keys.slices(), minKey);
                    } catch (OakOutOfMemoryException full) {
                        // it stays where it is: placement is an optimization
                    }
                }
            }
            if (placeAll && merged == null && c.allocatedCount() == c.sortedCount() && c.removals() == 0) {
                // laid out anew, nothing else changed since its build: keep its shape (a packed
                // chunk stays packed)
                replacements = new Chunk[] {chunk(minKey, c.minPrefix, c.capacity(), live, 0, live.size, after)};
            } else if (growth == Growth.SCATTERED) {
                replacements = build(minKey, c.minPrefix, live, pieces(live.size), ratio, after);
            } else if (live.size > capacity - Math.max(appendRoom(), MIN_FREE)) {
                replacements = growth == Growth.PREPENDED ? buildPackedBehind(minKey, c.minPrefix, live, after)
                        : buildPacked(minKey, c.minPrefix, live, after);
            } else {
                double room = growth == Growth.PAST_THE_END ? ratio : Math.max(ratio, APPEND_GROWTH);
                replacements = build(minKey, c.minPrefix, live, 1, room, after);
            }
        } catch (RuntimeException | Error e) {
            if (minCopy != Refs.NULL) {
                keys.slices().discard(minCopy);
            }
            if (placing) {
                unplace(live);
            }
            giveUp(c, merged, locked);
            throw e;
        }
        if (locked) {
            try {
                link(engaged, replacements, live, dropped);
            } finally {
                rebalanceEnded.signalAll();
            }
            return;
        }
        lock.lock();
        try {
            if (closed.getAsBoolean()) {
                giveUp(c, merged, true);
                throw new OakClosedException();
            }
            link(engaged, replacements, live, dropped);
        } finally {
            rebalanceEnded.signalAll();
            lock.unlock();
        }
    }

    /**
     * Unfreezes the chunks a failed rebalance claimed, {@code c} and the one it was merging
     * ({@code merged}, or null), and wakes the writers waiting for them: nothing was replaced, so
     * the map stays as it was (e.g. closed mid-copy). It takes the two chunks rather than an
     * array of them, and unfreezes them before anything else, so that a rebalance that ran out of
     * heap still gives them back (the signal that follows may then fail: waiters look again
     * every millisecond anyway).
     */
    private void giveUp(Chunk c, Chunk merged, boolean locked) {
        c.unfreeze();
        if (merged != null) {
            merged.unfreeze();
        }
        if (!locked) {
            lock.lock();
        }
        try {
            rebalanceEnded.signalAll();
        } finally {
            if (!locked) {
                lock.unlock();
            }
        }
    }

    /**
     * Puts {@code replacements} in the place of the {@code engaged} chunks: in the list, then in
     * the index; then deletes what they no longer need. Holds {@link #lock}, so links are made
     * one at a time, each reading the neighbours the links before it left.
     */
    private void link(Chunk[] engaged, Chunk[] replacements, Entries live, Entries dropped) {
        Chunk c = engaged[0];
        entriesCopied += live.size; // under the lock: no lost update
        if (moves) {
            recordMoves(live, replacements);
        }
        replacements[replacements.length - 1].nextChunk = engaged[engaged.length - 1].nextChunk;
        Chunk pred = index.before(c);
        for (Chunk e : engaged) {
            e.release();
        }
        if (pred != null) {
            pred.nextChunk = replacements[0];
        }
        index.replace(engaged, replacements, keys);
        if (moves) {
            finishMoves(live, dropped);
        }
        if (dropped != null) {
            deleteDroppedKeys(engaged, replacements[0].minKey, live, dropped);
        }
    }

    /**
     * Moves the pairs of {@code live} that were not sorted in their chunk (those inserted since it
     * was built, in arrival order) into fresh memory, key then value, one pair after the other in
     * key order, and points {@code live} at the copies (see "Placement"). A value that a writer
     * holds now, or that is gone, stays where it is, with its key. Moves nothing unless
     * {@code worthIt}, nor while the free lists hold many slices (fresh memory would then grow
     * the map's footprint), and stops moving (leaving the rest in place) if the map's capacity
     * runs out: placement is an optimization. With {@code all}, moves the sorted entries too,
     * and the caller has judged the headroom instead of the free lists.
     */
    private void place(Entries live, boolean worthIt, boolean all) {
        live.prepareMoves();
        Arrays.fill(live.moveTokens, 0, live.size, SliceManager.GONE); // every rebalance records (recordMoves)
        if (!worthIt || (!all && !values.fewFreeSlices())) {
            return;
        }
        SliceManager keySlices = keys.slices();
        for (int i = 0; i < live.size; i++) {
            if (!all && live.sources[i].isSorted(live.sourceEntries[i])) {
                continue; // laid out in key order when its chunk was built
            }
            long v = live.values[i];
            long token = values.beginMove(v);
            live.moveTokens[i] = token;
            if (token < 0) {
                continue; // GONE or BUSY
            }
            long k = live.keys[i];
            long nk = Refs.NULL;
            long nv;
            try {
                nk = copyOf(keySlices, k);
                nv = copyOf(values, v);
            } catch (OakOutOfMemoryException full) {
                if (nk != Refs.NULL) {
                    keySlices.discard(nk);
                }
                values.endMove(v, token, false);
                Arrays.fill(live.moveTokens, i, live.size, SliceManager.GONE); // this one and the rest stay
                return;
            }
            live.oldKeys[i] = k;
            live.oldValues[i] = v;
            live.keys[i] = nk;
            live.values[i] = nv;
        }
    }

    /** @return a copy of slice {@code ref} of {@code slices}, at the bump pointer */
    private static long copyOf(SliceManager slices, long ref) {
        int length = slices.length(ref);
        long copy = slices.allocateFresh(length);
        MemorySegment.copy(slices.segment(ref), slices.dataOffset(ref), slices.segment(copy), slices.dataOffset(copy),
                length);
        return copy;
    }

    /** Undoes {@link #place} for a rebalance that failed: the copies go, the originals stay. */
    private void unplace(Entries live) {
        for (int i = 0; i < live.size; i++) {
            long token = live.moveTokens[i];
            if (token >= 0) {
                values.discard(live.values[i]);
                keys.slices().discard(live.keys[i]);
                values.endMove(live.oldValues[i], token, false);
                live.moveTokens[i] = SliceManager.GONE;
            }
        }
    }

    /**
     * Records in each replaced chunk where each of its live values went, moved or not, before the
     * chunks are released: entry {@code i} of the live entries is sorted entry {@code j} of the
     * replacement that holds it, in order. A value left in place by this rebalance may be moved
     * by a later one; its views follow the record of every rebalance on the way.
     */
    private static void recordMoves(Entries live, Chunk[] replacements) {
        int i = 0;
        for (Chunk r : replacements) {
            for (int j = 1; j <= r.sortedCount(); j++, i++) {
                live.sources[i].recordMove(live.sourceEntries[i], r, j, live.values[i]);
            }
        }
    }

    /**
     * Deletes the originals of the moved pairs, once their replacements are linked: values now
     * (writers that waited on them look their keys up again and find the copies), keys with the
     * dropped ones (after the chunks are marked, and unless a scan protects them).
     */
    private void finishMoves(Entries live, Entries dropped) {
        for (int i = 0; i < live.size; i++) {
            long token = live.moveTokens[i];
            if (token >= 0) {
                values.endMove(live.oldValues[i], token, true);
                dropped.add(live.oldKeys[i], 0, Refs.NULL, null, Chunk.NONE);
                pairsMoved++; // under the lock: no lost update
            }
        }
    }

    /**
     * Deletes the keys that no chunk links any more: those of the dropped entries and, after a
     * merge, the minimum key of the absorbed chunk, and a minimum key that placement moved, but
     * never {@code kept}, the first replacement's minimum key. Runs after the replacements are
     * linked, so only operations still reading the released chunks (or an old index snapshot) can meet these keys; their reads
     * fail validation and they start over ({@link dev.oakmap.internal.chunk.StaleKeyException}).
     * Keys that a stream scan is on are kept until a later rebalance finds them free.
     */
    private void deleteDroppedKeys(Chunk[] engaged, long kept, Entries live, Entries dropped) {
        for (Chunk e : engaged) {
            e.markKeysDeleted(); // before any deletion: readers through these chunks now fail validation
        }
        for (Chunk e : engaged) {
            long m = e.minKey;
            if (m != Refs.NULL && m != kept && !live.holdsKey(m)) {
                dropped.add(m, 0, Refs.NULL, null, Chunk.NONE);
            }
        }
        long[] refs = Arrays.copyOf(dropped.keys, dropped.size);
        Arrays.sort(refs);
        int distinct = 0;
        for (int i = 0; i < refs.length; i++) {
            if (refs[i] != kept && (i == 0 || refs[i] != refs[i - 1])) {
                refs[distinct++] = refs[i];
            }
        }
        // the chunks were released above: a key a scan still protects is deferred (KeyHazards)
        assert Arrays.stream(engaged).noneMatch(Chunk::keysIntact) : "keys deleted before their chunks were marked";
        for (long ref : hazards.deletable(Arrays.copyOf(refs, distinct))) {
            keys.delete(ref);
        }
    }

    /** How a chunk grew since it was built, as {@link #copyLive} found it. */
    private enum Growth {
        /** Insertions among the sorted entries, or removals: rebuild and split as usual. */
        SCATTERED,
        /** Insertions past the last sorted entry, in any order among themselves. */
        PAST_THE_END,
        /** Insertions past the last sorted entry, each (nearly all) at the end of the list. */
        APPENDED,
        /**
         * Insertions before the first sorted entry, each (nearly all) at the head of the list:
         * keys arriving in decreasing order. The mirror of {@link #APPENDED}.
         */
        PREPENDED
    }

    /**
     * Copies the entries of frozen chunk {@code c} that hold a value. Value headers (one off-heap
     * read each) are checked only if removals were counted in {@code c}: otherwise every value
     * reference it holds is live, except, rarely, one removed through the chunk {@code c} was
     * copied from, which is harmless (a dead reference reads as absent and is dropped by a later
     * compaction). This keeps ingestion-only rebalances off the value slices entirely.
     *
     * @return {@link Growth#PAST_THE_END} if {@code c} was built with sorted entries and the
     *     entries linked since lie after all of them, but for at most one in nine: the chunk grew
     *     at its end, as it does when keys arrive in increasing order (timestamps, sequence
     *     numbers); {@link Growth#APPENDED} if, moreover, nearly every one of those was linked
     *     at or near the end of the list. Slots are taken in arrival order, so an entry whose
     *     slot is more than {@link #APPEND_WINDOW} below the largest met before it in the list
     *     has a key above that of an entry that arrived over {@code APPEND_WINDOW} insertions
     *     after it: that later entry landed that far from the end; {@link Growth#PREPENDED} if the chunk
     *     saw no removals and nearly all entries linked since the build lie before its first
     *     sorted entry, nearly each linked at the head (the mirror test: in list order, an entry
     *     whose slot is more than {@code APPEND_WINDOW} above the least met before it arrived
     *     that many insertions after an entry with a smaller key: it landed that far from the
     *     head)
     */
    private Growth copyLive(Chunk c, Entries out, Entries dropped) {
        boolean check = c.removals() > 0;
        if (!out.windowed) {
            out.head = c.head(); // the first chunk copied sets the window of the copied prefixes
            out.windowed = true;
        }
        // prefixes in another window (a merged neighbour's) are read from the keys, exactly
        boolean sameWindow = Arrays.equals(out.head, c.head());
        if (sameWindow) {
            out.shift = Math.max(out.shift, c.prefixShift()); // the copied prefixes are exact down to it
        }
        ListShape shape = new ListShape();
        // The list is, in order: the entries linked before the first sorted entry, then each
        // sorted entry followed by those linked after it. Every linked entry went in between two
        // adjacent ones and none is ever unlinked, so the entries linked after sorted entry s
        // lead to s + 1 (or end the list). Stepping through the sorted entries by index, not by
        // link, lets the processor load the next ones while this one is copied, where a walk by
        // links waits for each link's load: a rebalance finds its chunk's arrays partly out of
        // the caches. A chain stops at any sorted entry, so no sorted entry is copied twice.
        for (int ei = c.nextEntry(Chunk.NONE); ei != Chunk.NONE && !c.isSorted(ei); ei = c.nextEntry(ei)) {
            copyEntry(c, ei, check, sameWindow, out, dropped, shape);
        }
        for (int s = 1, sorted = c.sortedCount(); s <= sorted; s++) {
            copyEntry(c, s, check, sameWindow, out, dropped, shape);
            for (int ei = c.nextEntry(s); ei != Chunk.NONE && !c.isSorted(ei); ei = c.nextEntry(ei)) {
                copyEntry(c, ei, check, sameWindow, out, dropped, shape);
            }
        }
        return shape.growth(c.sortedCount(), check);
    }

    /**
     * {@link #copyLive} of entry {@code ei}, the next in list order; {@code sameWindow}: whether
     * {@code c}'s prefixes are in the window of {@code out}'s.
     */
    private void copyEntry(Chunk c, int ei, boolean check, boolean sameWindow, Entries out, Entries dropped,
                           ListShape shape) {
        shape.visit(c.isSorted(ei), ei);
        long v = c.valueRef(ei);
        if (v != Refs.NULL && (!check || values.isLive(v))) {
            long k = c.keyRef(ei);
            out.add(k, sameWindow && c.prefixKnown(ei) ? c.prefixFloor(ei) : keys.prefixOf(k, out.head), v, c, ei);
        } else if (dropped != null) {
            dropped.add(c.keyRef(ei), 0, Refs.NULL, null, Chunk.NONE);
        }
    }

    /** Where a chunk's entries linked since its build lie in its list, as {@link #copyLive} meets them: see {@link Growth}. */
    private static final class ListShape {
        int linkedSince; // entries linked after the build, met so far
        int inside;      // of those, the ones met before the last sorted entry
        int outOfOrder;  // entries linked after the build far behind the end (see APPEND_WINDOW)
        int lastSlot = Chunk.NONE;
        int beforeFirst = -1;   // entries linked after the build, met before the first sorted entry
        int prependedOutOfOrder; // of those, the ones far from the head when linked (the mirror of outOfOrder)
        int leastSlot = Integer.MAX_VALUE;

        /** Counts entry {@code ei}, the next in list order; {@code sorted}: whether it is a sorted one. */
        void visit(boolean sorted, int ei) {
            if (beforeFirst < 0) { // still before the first sorted entry
                if (sorted) {
                    beforeFirst = linkedSince;
                } else {
                    // prepended keys sit here newest (highest slot) first
                    if (leastSlot != Integer.MAX_VALUE && ei > leastSlot + APPEND_WINDOW) {
                        prependedOutOfOrder++;
                    }
                    leastSlot = Math.min(leastSlot, ei);
                }
            }
            if (sorted) {
                inside = linkedSince;
                outOfOrder = 0; // only the entries past the last sorted one count
                lastSlot = Chunk.NONE;
            } else {
                linkedSince++;
                if (ei < lastSlot - APPEND_WINDOW) {
                    outOfOrder++;
                }
                lastSlot = Math.max(lastSlot, ei);
            }
        }

        /** @return the chunk's growth, as {@link #copyLive} says; {@code removals}: whether any were counted */
        Growth growth(int sortedCount, boolean removals) {
            int after = linkedSince - inside;
            if (sortedCount > 0 && linkedSince > 0 && !removals
                    && linkedSince - beforeFirst <= linkedSince / 8 && prependedOutOfOrder <= beforeFirst / 8) {
                return Growth.PREPENDED;
            }
            // a few stragglers are tolerated: concurrent appenders do not arrive in exact order
            if (sortedCount == 0 || after == 0 || inside > after / 8) {
                return Growth.SCATTERED;
            }
            return outOfOrder <= after / 8 ? Growth.APPENDED : Growth.PAST_THE_END;
        }
    }

    /**
     * @return how many replacement chunks {@code total} entries make, each about {@link #FILL}
     *     full and with {@link #MIN_FREE} slots free
     */
    private int pieces(int total) {
        double fill = Math.max(1, Math.min(capacity * FILL, capacity - MIN_FREE));
        return Math.max(1, (int) Math.ceil(total / fill));
    }

    /**
     * Entries an appended-to chunk keeps for the appends still to come: at least a quarter of the
     * capacity, so that it never becomes a candidate for merging (see {@link #doRebalance}).
     */
    private int appendRoom() {
        return Math.max(1, capacity / 4);
    }

    /**
     * Replacements for a chunk that only grew at its end: all but the last {@link #appendRoom()}
     * entries go into one chunk with almost no spare slots, since the appends that filled it
     * will go on past its range; the rest start a chunk that takes them.
     */
    private Chunk[] buildPacked(long minKey, long minPrefix, Entries live, Chunk after) {
        int split = live.size - appendRoom();
        int spare = Math.max(1, Math.min(16, capacity / 16)); // for a few out-of-order stragglers
        Chunk left = chunk(minKey, minPrefix, Math.min(capacity, split + spare), live, 0, split, null);
        Chunk right = chunk(live.keys[split], keys.prefixOf(live.keys[split]),
                slotsFor(live.size - split, capacity, ratio), live, split, live.size - split, after);
        left.nextChunk = right;
        return new Chunk[] {left, right};
    }

    /**
     * Replacements for a chunk that only grew at its head (keys arriving in decreasing order), the
     * mirror of {@link #buildPacked}: the first {@link #appendRoom()} entries start the chunk that
     * takes the next prepends (it keeps the old chunk's minimum key, below which they land), and
     * the rest go into one chunk with almost no spare slots.
     */
    private Chunk[] buildPackedBehind(long minKey, long minPrefix, Entries live, Chunk after) {
        int split = appendRoom();
        int spare = Math.max(1, Math.min(16, capacity / 16)); // for a few out-of-order stragglers
        Chunk front = chunk(minKey, minPrefix, slotsFor(split, capacity, Math.max(ratio, APPEND_GROWTH)), live, 0, split,
                null);
        Chunk back = chunk(live.keys[split], keys.prefixOf(live.keys[split]),
                Math.min(capacity, live.size - split + spare), live, split, live.size - split, after);
        front.nextChunk = back;
        return new Chunk[] {front, back};
    }

    /**
     * Builds {@code pieces} chunks of about equal size from {@code live}, each with slots for the
     * unsorted entries that {@code growth} (as a fraction of its sorted ones) allows.
     */
    private Chunk[] build(long minKey, long minPrefix0, Entries live, int pieces, double growth, Chunk after) {
        int total = live.size;
        Chunk[] out = new Chunk[pieces];
        for (int p = 0; p < pieces; p++) {
            int from = (int) ((long) total * p / pieces);
            int to = (int) ((long) total * (p + 1) / pieces);
            long min = p == 0 ? minKey : live.keys[from];
            // a chunk's minimum prefix must be exact (the index compares it): live's may be floors
            long minPrefix = p == 0 ? minPrefix0 : keys.prefixOf(min);
            out[p] = chunk(min, minPrefix, slotsFor(to - from, capacity, growth), live, from, to - from,
                    p == pieces - 1 ? after : null);
            if (p > 0) {
                out[p - 1].nextChunk = out[p];
            }
        }
        return out;
    }

    /**
     * Builds a chunk of {@code count} entries of {@code live} from {@code from}. Their prefixes
     * are exact down to {@code live.shift} only, the least shift the chunk may use; if a finer
     * one would tell apart many keys that it leaves tied, their exact prefixes are read first
     * (see {@link Chunk}, "Prefixes"). The chunk's head (see {@link KeyOps}, "Prefix windows")
     * is what its bounds share: {@code minKey} and the key after its range, which is the entry
     * after the last one, or, for the last chunk of a rebalance, the minimum key of
     * {@code after} (the chunk after the rebalanced ones, or null); every key the chunk will ever
     * hold lies between them, so none falls outside the head. The first and the last chunk of the
     * map, unbounded, take their first or last key as that bound, and a head only if it is at
     * least 8 bytes long: keys inserted beyond that bound later may fall outside the head, and
     * then tie at an end until the next rebalance, which with a shorter head could tie keys that
     * the comparator's prefix tells apart. (So can a merge whose upper bound could not be read,
     * when the head is kept: see below.)
     *
     * @param after the chunk after this one if it is the last of the rebalance, else null
     */
    private Chunk chunk(long minKey, long minPrefix, int slots, Entries live, int from, int count, Chunk after) {
        int shift = live.shift;
        byte[] head = live.head;
        long upper = after != null ? after.minKey : from + count < live.size ? live.keys[from + count] : Refs.NULL;
        Chunk upperGuard = after;
        int minHead = KeyOps.MIN_WINDOW_GAIN;
        if (upper == Refs.NULL && count > 0) {
            upper = live.keys[from + count - 1]; // the map's last chunk: what its keys share now
            upperGuard = null;
            minHead = Long.BYTES;
        }
        long lower = minKey;
        if (lower == Refs.NULL && count > 0) {
            lower = live.keys[from]; // likewise for the first
            minHead = Long.BYTES;
        }
        byte[] w;
        try {
            w = keys.windowFor(lower, upper, upperGuard, head, minHead);
        } catch (StaleKeyException e) {
            // after was rebalanced meanwhile: any head is sound, and this one needs no reads, though
            // keys of a merged neighbour may fall outside it (and tie at an end)
            w = head;
        }
        {
            if (w != head) { // keys that share more than the head, or no longer all of it
                for (int i = from; i < from + count; i++) {
                    live.prefixes[i] = keys.prefixOf(live.keys[i], w);
                }
                head = w;
                shift = 0;
            }
        }
        if (count > 1 && shift > 0) {
            long lo = live.prefixes[from], hi = live.prefixes[from + count - 1];
            int s = Chunk.shiftFor(lo, hi, shift);
            if (Chunk.shiftFor(lo, hi, 0) < s && ties(live.prefixes, from, count, s) > count / TIES_TO_REFINE) {
                for (int i = from; i < from + count; i++) {
                    live.prefixes[i] = keys.prefixOf(live.keys[i], head);
                }
                shift = 0;
            }
        }
        return new Chunk(minKey, minPrefix, slots, live.keys, live.prefixes, live.values, from, count, shift, head);
    }

    /** @return how many of {@code count} prefixes from {@code from} equal their predecessor's above bit {@code shift} */
    private static int ties(long[] prefixes, int from, int count, int shift) {
        int ties = 0;
        for (int i = from + 1; i < from + count; i++) {
            if (prefixes[i] >>> shift == prefixes[i - 1] >>> shift) {
                ties++;
            }
        }
        return ties;
    }

    /** @return a cleared scratch buffer: a spare one, or a new one if none is spare */
    private Entries takeBuffer() {
        for (int i = 0; i < SPARE_BUFFERS; i++) {
            Entries e = spareBuffers.getAndSet(i, null);
            if (e != null) {
                return e;
            }
        }
        return new Entries(16, moves);
    }

    /** Keeps {@code e} (null: nothing) for a later rebalance, if a slot is free. */
    private void giveBack(Entries e) {
        if (e == null) {
            return;
        }
        e.clear();
        for (int i = 0; i < SPARE_BUFFERS; i++) {
            if (spareBuffers.compareAndSet(i, null, e)) {
                return;
            }
        }
    }

    /** Growable arrays of entries: key reference, prefix, value reference, and where each came from. */
    private static final class Entries {
        long[] keys;
        long[] prefixes;
        long[] values;
        /** Where each entry came from, its chunk and entry there; null unless the map moves pairs. */
        Chunk[] sources;
        int[] sourceEntries;
        /** After {@link #place}: the moved entry's token for {@link SliceManager#endMove}, or negative. */
        long[] moveTokens;
        /** After {@link #place}: the references a moved entry had before. */
        long[] oldKeys;
        long[] oldValues;
        int size;
        /** The prefixes are exact in their bits from this one up (see {@link Chunk}, "Prefixes"). */
        int shift;
        /** The head whose window the prefixes are taken in (null: the comparator's prefix), once {@link #windowed}. */
        byte[] head;
        /** Whether {@link #head} was set, by the first chunk copied. */
        boolean windowed;

        /**
         * @param tracksSources whether to keep where each entry came from: only maps that move
         *     pairs read it, and storing a chunk reference per entry (with the collector's write
         *     barrier, and the clearing afterwards) was a noticeable part of a copy
         */
        Entries(int initial, boolean tracksSources) {
            keys = new long[initial];
            prefixes = new long[initial];
            values = new long[initial];
            if (tracksSources) {
                sources = new Chunk[initial];
                sourceEntries = new int[initial];
            }
        }

        /** Sizes the arrays that {@link Rebalancer#place} fills. */
        void prepareMoves() {
            if (moveTokens == null || moveTokens.length < size) {
                moveTokens = new long[keys.length];
                oldKeys = new long[keys.length];
                oldValues = new long[keys.length];
            }
        }

        /** Empties the buffer, keeping its arrays. @return this */
        Entries clear() {
            if (sources != null) {
                Arrays.fill(sources, 0, size, null); // let released chunks go
            }
            size = 0;
            shift = 0;
            head = null;
            windowed = false;
            return this;
        }

        boolean holdsKey(long k) {
            return indexOf(k) >= 0;
        }

        /** @return the position of the entry holding key reference {@code k}, or -1 */
        private int indexOf(long k) {
            for (int i = 0; i < size; i++) {
                if (keys[i] == k) {
                    return i;
                }
            }
            return -1;
        }

        /**
         * Makes the entry holding key reference {@code k}, if any, the first, moving the ones
         * before it up by one: {@code k} is the minimum key the first replacement inherits, which
         * must link it if any replacement does (see "Key ownership"). A no-op under a comparator
         * that keeps its contract, where that entry can only be the first already.
         */
        void putFirst(long k) {
            if (k == Refs.NULL || size == 0 || keys[0] == k) {
                return;
            }
            int j = indexOf(k);
            if (j <= 0) {
                return;
            }
            long key = keys[j], prefix = prefixes[j], value = values[j];
            System.arraycopy(keys, 0, keys, 1, j);
            System.arraycopy(prefixes, 0, prefixes, 1, j);
            System.arraycopy(values, 0, values, 1, j);
            keys[0] = key;
            prefixes[0] = prefix;
            values[0] = value;
            if (sources != null) {
                Chunk source = sources[j];
                int sourceEntry = sourceEntries[j];
                System.arraycopy(sources, 0, sources, 1, j);
                System.arraycopy(sourceEntries, 0, sourceEntries, 1, j);
                sources[0] = source;
                sourceEntries[0] = sourceEntry;
            }
        }

        void add(long k, long p, long v, Chunk source, int sourceEntry) {
            if (size == keys.length) {
                grow();
            }
            keys[size] = k;
            prefixes[size] = p;
            values[size] = v;
            if (sources != null) {
                sources[size] = source;
                sourceEntries[size] = sourceEntry;
            }
            size++;
        }

        private void grow() {
            int n = keys.length * 2 + 1;
            keys = Arrays.copyOf(keys, n);
            prefixes = Arrays.copyOf(prefixes, n);
            values = Arrays.copyOf(values, n);
            if (sources != null) {
                sources = Arrays.copyOf(sources, n);
                sourceEntries = Arrays.copyOf(sourceEntries, n);
            }
        }
    }
}
