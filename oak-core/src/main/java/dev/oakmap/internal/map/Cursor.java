package dev.oakmap.internal.map;

import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.internal.chunk.Chunk;
import dev.oakmap.internal.chunk.KeyOps;
import dev.oakmap.internal.chunk.StaleKeyException;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.Refs;
import dev.oakmap.internal.reclaim.SliceManager;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * A forward-only cursor over the live mappings of a key range, ascending or descending. Not
 * thread-safe: one cursor per iterating thread. Usage: {@code while (c.advance()) { ... }}.
 *
 * <h2>Ascending</h2>
 * Walks each chunk's entries list, then follows {@code nextChunk}. Stepping off a chunk that has
 * been released (or onto one that has), the cursor re-locates through the index, by the last key
 * it returned, and skips keys not greater than it: that keeps every key present throughout the
 * scan returned exactly once and in order (Oak's RB1-RB3), however chunks were split or merged.
 *
 * <h2>Descending, with a stack per bypass</h2>
 * The entries list is singly linked, so within a chunk the cursor works from the sorted prefix:
 * for a sorted entry {@code s} it walks the list from {@code s} to the next sorted entry (the
 * "bypass" of {@code s}, holding the entries inserted after the chunk was built), pushing them on
 * a stack, and pops them in reverse. When the stack is empty it steps to sorted entry
 * {@code s - 1}, and from the head bypass (entry 0, before the first sorted key) to the previous
 * chunk, found in the index. Each entry is thus visited twice at most and no lookup is repeated:
 * a descending scan costs about what an ascending one does.
 *
 * <h2>The ends of a chunk</h2>
 * Removed mappings stay linked until their chunk is compacted, and appended keys pile up in the
 * bypass of the last sorted entry. So a cursor that starts at a chunk's head begins at the
 * chunk's dead-prefix hint, and one that starts at its end begins at its dead-suffix hint, or
 * else examines the list's last entry (from the chunk's ring of recent ends) before it loads the
 * bypass holding it; after walking dead entries to the first live one, it proposes a new hint
 * (the protocol is in {@link Chunk}, "Dead prefix"), and after many dead entries at a chunk's end
 * it asks for the chunk's compaction. This keeps scans that start at the ends of the map from
 * walking every removed entry on every call ({@link Navigator}, which serves {@code firstKey},
 * {@code pollLastEntry} and the like, does the same).
 *
 * <h2>Liveness</h2>
 * An entry is returned if its value reference is live when examined. A value found not live in a
 * released chunk may have moved rather than been removed, so the cursor re-locates at that key.
 *
 * <h2>Reclaimed keys</h2>
 * When keys are reclaimed (any scheme but grow-only keys), a key the cursor compares against or
 * reads may be deleted and its memory reused once the rebalancer has dropped it; a read through
 * a chunk whose keys the rebalancer has begun to delete then fails validation
 * ({@link StaleKeyException}; see {@link Chunk}, "Lifecycle"). The cursor therefore keeps an
 * on-heap copy of the key it is on, taken with a validated read when it arrives there, and on any
 * stale read it re-locates strictly after (before, descending) that copy, or from the range's
 * start if it has returned nothing yet; re-locating goes through the current index, so nothing
 * present throughout the scan is skipped. {@link #key()} reads the copy, and so do the
 * key views it hands out ({@link ScanKeyView}): they keep working after the mapping is removed,
 * and a scan over keys never fails because of a concurrent removal.
 *
 * <h2>Keys read in place (zero-copy scans)</h2>
 * The copy costs a full read of every key, the user's or not (at 1M pairs of 100-byte keys, about
 * a fifth of a scan step). Zero-copy iterators ask for keys to be read in place instead
 * ({@link #readKeysInPlace}): no copy is taken, except the one a plain iterator's key view needs
 * to outlive the step ({@link #keyView}). Before returning a mapping the cursor protects its
 * key with a hazard pointer and then checks that the key's chunk is not released
 * ({@link KeyHazards}); the rebalancer does not delete a protected key. Registering the hazards
 * costs a lock and a weak reference, which a short scan, often abandoned before its end (a loop
 * that takes a few mappings and breaks off), would pay for a few steps; so the first
 * {@link #IN_PLACE_AFTER} mappings of a scan are still copied, and the cursor switches to
 * in-place keys at the next one ({@link #beginInPlace}), once that key is protected. The cursor's slot holds
 * two hazards, its current key and the one being taken, so the current key stays readable, by the
 * cursor when it re-locates and by the user's view, whatever is removed meanwhile; the view
 * ({@link ScanKeyView}) therefore reads the slice without validating. When the scan ends, its
 * protection ends too, and the view is moved onto a copy of the last key.
 *
 * <h2>Look-ahead</h2>
 * In a map larger than the caches every pair's key and value are misses at random places, and a
 * step that waits for them costs a full miss. The entries array names the pairs ahead, so the
 * cursor touches their lines in batches ({@link #prefetchAhead}, {@link #prefetchBelow}): a load
 * of each line, nothing more, so that many misses are in flight together and the steps that
 * follow find their lines cached. A load cannot retire before its line arrives, so how many
 * misses overlap depends on how few instructions sit between the touches: the positions of the
 * lines are computed first ({@link #gather}), while nothing is outstanding, and the touches then
 * read them through the one segment over the block region ({@link BlockAllocator#touchRegion}),
 * whose checks the compiler folds. Touches are hints: a stale reference or a freed block costs
 * speed, never correctness, and never a fault. Where consecutive pairs lie next to each other in
 * memory (keys inserted in order), the hardware prefetchers already stream the lines in, and the
 * touches would only wait for them: the cursor scores how far apart the pairs it returns lie
 * ({@link #noteLayout}) and looks ahead only while they are scattered ({@link #scattered}).
 * There, before a key is read whole (a plain iterator's key view copies it; a stream's user may
 * read it, see {@link #userReadsPastKeyStart}), the cursor loads each of its lines in address
 * order ({@link #touchKeyIfInOrder}); the read alone left the prefetchers behind.
 *
 * <h2>Asking for placement</h2>
 * Where the map places on request ({@link Rebalancer}, "Placement on request"), the same score
 * is kept per chunk: a scan that leaves a chunk after at least {@link #PLACE_MIN_STEPS} mappings
 * of it, most of them far from the one before, asks for that chunk to be laid out anew in key
 * order ({@link InternalOakMap#placeScattered}), once its new position is set (so the request
 * replaces only a chunk the cursor is done with, and the cursor meets a replaced chunk the way it
 * meets any concurrent rebalance). The request is queued and the scan goes on: the map's placer
 * thread ({@code Placer}) pays the copy, once per chunk.
 */
public final class Cursor<K, V> {
    private final InternalOakMap<K, V> map;
    private final KeyOps<K> keys;
    /** The map's value and key slice managers, held here to shorten the chain of loads per step. */
    private final SliceManager valueSlices;
    private final SliceManager keySlices;
    /** The cursor keeps an on-heap copy of the current key: keys are reclaimed and not read in place. */
    private boolean copiesKeys;
    private final K lo;
    private final long loPrefix;
    private final boolean loInclusive;
    private final K hi;
    private final long hiPrefix;
    private final boolean hiInclusive;
    /** The chunk whose 32-bit forms of the bounds {@link #loLocal} and {@link #hiLocal} hold (computed once per chunk). */
    private Chunk loChunk, hiChunk;
    private int loLocal, hiLocal;
    private final boolean descending;
    /** Whether this scan touches the slices of entries ahead of it (see {@link #LOOK_AHEAD_FROM}). */
    private final boolean lookAhead;
    /** Whether look-ahead touches lines by their block-region positions ({@link #gather}). */
    private final boolean touchesByPosition;

    private Chunk chunk;
    private boolean started;
    private boolean done;
    /** Ascending: the next entry to examine, or NONE at the end of the chunk. */
    private int nextEi;
    /**
     * Ascending, after a start at a chunk's head, until the first live entry: the entry the walk
     * started from ({@link Chunk#NONE} otherwise), and the chunk's dead-prefix hint it was read
     * from ({@link Chunk#NONE}: the head). See {@link #endHeadRun}.
     */
    private int headRunStart = Chunk.NONE;
    private int headRunHint = Chunk.NONE;
    /**
     * Descending, after a start at a chunk's end, until the first live entry: the sorted entry
     * whose bypass the walk started from, and the chunk's dead-suffix hint it was read from
     * ({@link Chunk#NO_HINT}: none). See {@link #endTailRun}.
     */
    private boolean inTailRun;
    private int tailRunStart;
    private int tailRunHint = Chunk.NO_HINT;
    /**
     * Descending: the chunk's last entry, pushed alone by {@link #startAtTail} so that the first
     * step does not walk the bypass holding it (appended keys make it long); {@link Chunk#NONE}
     * once that bypass is loaded. A lastKey() of a map fed in key order took 300 ns, walking it.
     * It is set only while the stack holds that entry or nothing (every load of a bypass clears
     * it): an index left over from a chunk the cursor has since re-located away from would make
     * {@link #loadBypassBelowPeeked} load a bypass of the new chunk a second time, returning its
     * keys twice (seen once in a stress test: a scan's first key read went stale, and the new
     * last chunk was entered through its dead-suffix hint, a path that did not clear it).
     */
    private int peeked = Chunk.NONE;
    /** Descending: dead entries met since the start at a chunk's end, up to the first live one. */
    private int tailRunDead;
    /**
     * Dead entries a descending cursor meets at a chunk's end before it asks for the chunk to be
     * compacted. The dead-suffix hint skips sorted entries, but not dead entries in the bypass of
     * the last sorted one, where appended keys are: a stack-like use (put past the end, take the
     * last) would walk all of them on every call. Compaction sorts the live ones. The
     * {@link Navigator}'s descending walks use the same threshold.
     */
    static final int COMPACT_AFTER_DEAD = 16;
    /** Descending: the sorted entry whose bypass is on the stack. */
    private int sorted;
    private int[] stack = NO_ENTRIES;
    private int stackSize;

    private long curKey = Refs.NULL;
    private long curValue = Refs.NULL;
    /** A read token of {@link #curValue} (see {@link SliceManager#liveToken}), or NO_TOKEN. */
    private long curToken = SliceManager.NO_TOKEN;
    private int curEi;
    private Chunk curChunk;

    private ScanKeyView reusableKey;
    private SliceView reusableValue;

    /**
     * The mapping the cursor was on before the current one (see {@link #removePrevious}): where it
     * was, and where its key can still be read. Copied from the current fields at each step, so
     * it costs a few stores. Its key stays readable until the next step: copied keys are in
     * {@link #prevCopy} (the array the next copy goes to is the other one), a key read in place
     * stays protected by the hazard that does not hold the current key (the next
     * {@link #protect} overwrites it), and other keys are never reclaimed.
     */
    private Chunk prevChunk;
    private int prevEi;
    private long prevKey = Refs.NULL;
    private long prevValue;
    /** The previous key's bytes are in {@link #prevCopy}, or else readable at {@link #prevKey}. */
    private boolean prevCopied;
    private byte[] prevCopy = NO_BYTES;
    private int prevCopyLength;

    /** With reclaimed keys: an on-heap copy of the current key (and a spare for the next one). */
    private byte[] keyCopy = NO_BYTES;
    private MemorySegment keyCopySegment = NO_SEGMENT;
    private byte[] spareCopy = NO_BYTES;
    private MemorySegment spareSegment = NO_SEGMENT;
    private final int[] copyLength = new int[1];
    private int keyCopyLength;
    /** Keys are read in place, never copied (stream scans over reclaimed keys). */
    private boolean keysInPlace;
    /** In-place keys were asked for; the cursor copies keys until {@link #copiedSteps} reaches {@link #copyFirst}. */
    private boolean inPlacePending;
    /** Mappings to copy before switching to in-place keys (see the class comment). */
    private int copyFirst;
    /** Mappings whose keys were copied so far. */
    private int copiedSteps;
    /**
     * Mappings a scan that asked for in-place keys copies first (see the class comment). With it,
     * abandoned stream scans of 10 pairs on 2 threads ran 600-817k scans/s against 388-422k when
     * every scan registered at its first step (`bin/bench --map oak-legacy,oak-zc --workload
     * scan-asc,scan-asc-stream --threads 1,2 --keys 200k --key-size 16 --value-size 16 --scan
     * 10`, two alternated runs; one thread and the other iterators within the noise); and legacy
     * iterators could read keys in place past it without slowing short scans.
     */
    static final int IN_PLACE_AFTER = 16;
    /** In-place keys: this cursor's hazards, protecting the current key. */
    private KeyHazards.Slot hazard;
    /**
     * In-place keys that are still read whole at each step, because the user's view of each key
     * takes a copy of it ({@link #keyView}): look-ahead then touches every line of the key.
     */
    private boolean wholeKeysRead;

    Cursor(InternalOakMap<K, V> map, K lo, boolean loInclusive, K hi, boolean hiInclusive, boolean descending) {
        this.map = map;
        this.keys = map.keys();
        this.valueSlices = map.values();
        this.keySlices = keys.slices();
        this.copiesKeys = keys.reclaims();
        this.lo = lo;
        this.loPrefix = lo == null ? 0 : keys.prefix(lo);
        this.loInclusive = loInclusive;
        this.hi = hi;
        this.hiPrefix = hi == null ? 0 : keys.prefix(hi);
        this.hiInclusive = hiInclusive;
        this.descending = descending;
        this.lookAhead = AHEAD > 0 && map.scansLookAhead();
        this.placesOnScans = lookAhead && map.placesOnScans();
        this.touchesByPosition = valueSlices.touchesByPosition() && keySlices.touchesByPosition();
    }

    /**
     * Asks this cursor to read keys in place rather than copy each one (see the class comment);
     * its reusable key view then reads the key slice, which stays readable while the cursor is on
     * it. Takes effect only before the first {@link #advance}, and only over reclaimed keys
     * (other keys are never copied). {@code wholeKeys} says that every key will still be read
     * whole (a plain iterator's {@link #keyView} copies each one), so that look-ahead touches all
     * of a key's cache lines rather than its first.
     */
    public void readKeysInPlace(boolean wholeKeys) {
        readKeysInPlace(wholeKeys, IN_PLACE_AFTER);
    }

    /** {@link #readKeysInPlace(boolean)}, copying the first {@code copyFirst} keys (tests: 0). */
    void readKeysInPlace(boolean wholeKeys, int copyFirst) {
        if (!started && !keysInPlace && !inPlacePending && keys.reclaims()) {
            wholeKeysRead = wholeKeys;
            inPlacePending = true;
            this.copyFirst = copyFirst;
        }
    }

    /** Moves to the next live mapping. @return false when the range is exhausted */
    public boolean advance() {
        map.checkOpen();
        if (done) {
            return false;
        }
        try {
            boolean found = advanceOnce();
            if (!found) {
                done = true;
                keepCurrentAsPrevious();
                if (hazard != null) {
                    releaseHazards();
                }
                curKey = Refs.NULL;
            }
            return found;
        } catch (IllegalStateException e) {
            map.checkOpen();
            throw e;
        }
    }

    /** One advance, re-locating from the current key's copy whenever a key read goes stale. */
    private boolean advanceOnce() {
        boolean relocate = false;
        while (true) {
            try {
                if (relocate) {
                    relocate();
                }
                return descending ? advanceDescending() : advanceAscending();
            } catch (StaleKeyException e) {
                relocate = true;
            }
        }
    }

    /** Positions the cursor just past the last mapping returned, or at the range's start. */
    private void relocate() {
        started = true;
        stackSize = 0;
        if (curKey != Refs.NULL) {
            K last = lastKey();
            if (descending) {
                seekDescending(map.locate(last), last, false);
            } else {
                seekAscending(last, false);
            }
        } else if (descending) {
            if (hi != null) {
                seekDescending(map.locate(hi), hi, hiInclusive);
            } else {
                startAtTail(lastChunk());
            }
        } else if (lo != null) {
            seekAscending(lo, loInclusive);
        } else {
            startAtHead(firstChunk());
        }
    }

    /** @return a deserialized copy of the last key returned (from the on-heap copy if keys are copied) */
    private K lastKey() {
        return readKey(copiesKeys, keyCopy, keyCopyLength, curKey);
    }

    /**
     * @return a deserialized copy of a key the cursor was on: from its on-heap copy if
     *     {@code copied}, else from slice {@code ref}, which is protected (in place) or never
     *     reclaimed, so the read cannot go stale (and re-locating must not retry)
     */
    private K readKey(boolean copied, byte[] copy, int copyLength, long ref) {
        if (copied) {
            return keys.readCopy(copy, copyLength);
        }
        try {
            return keys.read(ref, null);
        } catch (StaleKeyException e) {
            throw new IllegalStateException("a key a scan stands on was reclaimed", e);
        }
    }

    // ---------------------------------------------------------------- ascending

    private boolean advanceAscending() {
        if (!started) {
            started = true;
            if (lo == null) {
                startAtHead(firstChunk());
            } else {
                seekAscending(lo, loInclusive);
            }
        }
        while (true) {
            if (nextEi == Chunk.NONE) {
                if (!nextChunk()) {
                    return false;
                }
                continue;
            }
            int ei = nextEi;
            nextEi = chunk.nextEntry(ei);
            if (lookAhead && pastQuietSteps()) {
                if (scattered()) {
                    prefetchAhead();
                } else {
                    aheadChunk = null; // restart at the cursor's position if the layout scatters again
                }
            }
            long k = chunk.keyRef(ei);
            if (hi != null) {
                int c = compareWithHi(ei);
                if (c < 0 || (c == 0 && !hiInclusive)) {
                    return false;
                }
            }
            long v = liveValue(chunk, ei);
            if (v == RESEEK) {
                seekAscending(keys.read(k, chunk), true); // the value may have moved: look again
                continue;
            }
            if (v == Refs.NULL) {
                continue;
            }
            if (headRunStart != Chunk.NONE) {
                endHeadRun(ei);
            }
            setCurrent(chunk, ei, k, v);
            return true;
        }
    }

    /**
     * Positions the cursor at the start of chunk {@code c}: at its dead-prefix hint if it has one
     * (see {@link Chunk}, "Dead prefix"), otherwise at the first entry of its list.
     */
    private void startAtHead(Chunk c) {
        chunk = c;
        int h = c.liveFrom();
        nextEi = h != Chunk.NONE ? h : c.nextEntry(Chunk.NONE);
        headRunHint = h;
        headRunStart = nextEi;
    }

    /**
     * The first live entry after a start at a chunk's head: if dead entries were passed to reach
     * it, lets later searches start there.
     */
    private void endHeadRun(int live) {
        if (live != headRunStart) {
            chunk.skipDeadPrefix(headRunHint, live, map.liveValues());
        }
        headRunStart = Chunk.NONE;
    }

    private Chunk firstChunk() {
        while (true) {
            Chunk c = map.index().first();
            if (!c.isReleased()) {
                return c;
            }
            map.rebalancer().awaitRebalance();
        }
    }

    private boolean nextChunk() {
        Chunk n = chunk.nextChunk;
        if (!chunk.isReleased() && (n == null || !n.isReleased())) {
            if (n == null) {
                leaveLastChunk();
                return false;
            }
            startAtHead(n);
            return true;
        }
        // stale links: re-locate after the last key returned (or from the lower bound)
        if (curKey != Refs.NULL) {
            seekAscending(lastKey(), false);
        } else if (lo != null) {
            seekAscending(lo, loInclusive);
        } else {
            aheadChunk = null;
            startAtHead(firstChunk());
        }
        return true;
    }

    private void seekAscending(K from, boolean inclusive) {
        aheadChunk = null;
        headRunStart = Chunk.NONE;
        chunk = map.locate(from);
        nextEi = chunk.ceilingEntry(from, keys.prefix(from), inclusive, keys);
    }

    // ---------------------------------------------------------------- descending

    private boolean advanceDescending() {
        if (!started) {
            started = true;
            if (hi == null) {
                startAtTail(lastChunk());
            } else {
                seekDescending(map.locate(hi), hi, hiInclusive);
            }
        }
        while (true) {
            if (stackSize == 0) {
                if (peeked != Chunk.NONE) {
                    loadBypassBelowPeeked();
                    continue;
                }
                if (sorted > Chunk.NONE) {
                    loadBypass(sorted - 1, null, false);
                    continue;
                }
                if (!previousChunk()) {
                    return false;
                }
                continue;
            }
            int ei = stack[--stackSize];
            if (lookAhead && stackSize > 1 && steps > QUIET_STEPS && scattered()) {
                prefetchEntry(stack[stackSize - 2]);
            }
            long k = chunk.keyRef(ei);
            if (lo != null) {
                int c = compareWithLo(ei);
                if (c > 0 || (c == 0 && !loInclusive)) {
                    return false;
                }
            }
            long v = liveValue(chunk, ei);
            if (v == RESEEK) {
                K key = keys.read(k, chunk); // the value may have moved: look again
                seekDescending(map.locate(key), key, true);
                continue;
            }
            if (v == Refs.NULL) {
                if (inTailRun && ++tailRunDead == COMPACT_AFTER_DEAD) {
                    map.compact(chunk);
                }
                continue;
            }
            if (inTailRun) {
                endTailRun();
            }
            setCurrent(chunk, ei, k, v);
            return true;
        }
    }

    /**
     * Positions the cursor at the end of chunk {@code c}: at the bypass of its dead-suffix hint if
     * it has one (see {@link Chunk}, "Dead prefix"), otherwise at that of its last sorted entry.
     */
    private void startAtTail(Chunk c) {
        chunk = c;
        int t = c.deadAfter();
        tailRunHint = t;
        tailRunStart = t != Chunk.NO_HINT ? t : c.sortedCount();
        inTailRun = true;
        tailRunDead = 0;
        int last = t == Chunk.NO_HINT ? c.lastLinked() : Chunk.NONE;
        if (last != Chunk.NONE) {
            // the list's last entry, known without walking the bypass that holds it: examined
            // first, alone; the rest of the bypass is loaded when it is consumed
            sorted = tailRunStart;
            stackSize = 0;
            push(last);
            peeked = last;
        } else {
            loadBypass(tailRunStart, null, false);
        }
    }

    /**
     * After the peeked last entry was consumed: loads the bypass that holds it, without it and
     * without what was linked after it (keys inserted since, which the scan may skip).
     */
    private void loadBypassBelowPeeked() {
        int p = peeked;
        loadBypass(sorted, null, false); // clears peeked
        while (stackSize > 0 && stack[--stackSize] != p) {
            // p is in this bypass (it was the list's last entry, after the last sorted one)
        }
    }

    /**
     * The last live entry after a start at a chunk's end: if it lies in the bypass of an earlier
     * sorted entry than the start, the sorted entries passed hold nothing live, and later
     * searches may start below them.
     */
    private void endTailRun() {
        inTailRun = false;
        if (sorted < tailRunStart) {
            chunk.skipDeadSuffix(tailRunHint, sorted, map.liveValues());
        }
    }

    private Chunk lastChunk() {
        while (true) {
            Chunk c = map.index().last();
            if (!c.isReleased()) {
                return c;
            }
            map.rebalancer().awaitRebalance();
        }
    }

    /** Positions on {@code c}, below {@code bound} (inclusive or not). */
    private void seekDescending(Chunk c, K bound, boolean inclusive) {
        inTailRun = false;
        chunk = c;
        loadBypass(c.floorSorted(bound, keys.prefix(bound), keys), bound, inclusive);
    }

    /**
     * Pushes the bypass of sorted entry {@code s} (the head bypass for {@code s == 0}): the
     * entries from {@code s} up to the next sorted entry, those not above {@code bound}.
     */
    private void loadBypass(int s, K bound, boolean inclusive) {
        long bp = bound == null ? 0 : keys.prefix(bound);
        sorted = s;
        stackSize = 0;
        peeked = Chunk.NONE; // the stack no longer holds a peeked entry (see peeked)
        int cur = s == Chunk.NONE ? chunk.nextEntry(Chunk.NONE) : s;
        while (cur != Chunk.NONE && (cur == s || !chunk.isSorted(cur))) {
            if (bound != null) {
                int c = chunk.compareAt(bound, bp, cur, keys);
                if (c < 0 || (c == 0 && !inclusive)) {
                    break;
                }
            }
            push(cur);
            cur = chunk.nextEntry(cur);
        }
        if (lookAhead && pastQuietSteps()) {
            if (scattered()) {
                prefetchBelow(s);
            } else {
                descAheadChunk = null; // restart below the cursor if the layout scatters again
            }
        }
    }

    /**
     * Descending: the counterpart of {@link #prefetchAhead}. Touches, in one batch, the sorted
     * entries below {@code s} (and their bypasses) that the scan will visit next, a batch at a
     * time (doubling up to {@link #AHEAD}), and the next batch once half of it has been consumed.
     */
    private void prefetchBelow(int s) {
        if (descAheadChunk != chunk || descAhead > s) {
            descAheadChunk = chunk;
            descAhead = s;
        }
        if (s - descAhead > descLast / 2 || descAhead == Chunk.NONE) {
            return;
        }
        int batch = descBatch;
        descLast = batch;
        descBatch = Math.min(AHEAD, 2 * batch);
        int stop = Math.max(Chunk.NONE, descAhead - batch);
        for (int t = descAhead - 1; t >= stop; t--) {
            int cur = t == Chunk.NONE ? chunk.nextEntry(Chunk.NONE) : t;
            while (cur != Chunk.NONE && (cur == t || !chunk.isSorted(cur))) {
                gather(chunk, cur);
                cur = chunk.nextEntry(cur);
            }
        }
        touchGathered();
        descAhead = stop;
    }

    /**
     * Scores how far apart in memory consecutive mappings have lain: up by one for each mapping
     * whose key or value is more than {@link #NEAR} bytes from the previous mapping's (or in
     * another block), down by one for each other, within 0 to {@link #SCATTER_MAX}.
     */
    private void noteLayout(long keyRef, long valueRef) {
        long k = Refs.location(keyRef);
        long v = Refs.location(valueRef);
        boolean far = Math.abs(k - lastKeyAt) > NEAR || Math.abs(v - lastValueAt) > NEAR;
        lastKeyAt = k;
        lastValueAt = v;
        scatter = far ? Math.min(scatter + 1, SCATTER_MAX) : Math.max(scatter - 1, 0);
        chunkSteps++;
        if (far) {
            chunkFar++;
        }
    }

    /**
     * At an end of the map: the scan leaves the chunk it ends in, which it may ask to be placed
     * like any other (see "Asking for placement"); else scans in one direction would never place
     * the chunk at that end, and its pairs alone would keep every old block from emptying.
     */
    private void leaveLastChunk() {
        if (placesOnScans && layoutChunk != null) {
            Chunk toPlace = enterLayoutChunk(null);
            if (toPlace != null) {
                map.placeScattered(toPlace);
            }
        }
    }

    /**
     * Starts counting the layout of chunk {@code c}'s mappings (null: of none, the scan ended).
     *
     * @return the chunk the scan leaves, if it should be laid out anew (see "Asking for
     *     placement"), else null
     */
    private Chunk enterLayoutChunk(Chunk c) {
        Chunk left = layoutChunk;
        boolean scatteredChunk = placesOnScans && left != null
                && (PLACE_MIN_STEPS == 0 || (chunkSteps >= PLACE_MIN_STEPS && 2 * chunkFar > chunkSteps));
        layoutChunk = c;
        chunkSteps = 0;
        chunkFar = 0;
        if (placesOnScans && !scatteredChunk) {
            map.discardSurplusBlocks(); // the blocks that earlier placements emptied (the placer does it too)
        }
        return scatteredChunk ? left : null;
    }

    /**
     * Compares the upper bound with the key of entry {@code ei} of the current chunk. The bound's
     * 32-bit form is computed once per chunk: in a chunk with a prefix window it takes a read of
     * the bound's bytes (and, unless keys are {@code byte[]}, its serialization).
     */
    private int compareWithHi(int ei) {
        if (hiChunk != chunk) {
            hiLocal = chunk.localPrefix(hi, hiPrefix, keys);
            hiChunk = chunk;
        }
        return chunk.compareLocal(hi, hiLocal, ei, keys);
    }

    /** {@link #compareWithHi} for the lower bound. */
    private int compareWithLo(int ei) {
        if (loChunk != chunk) {
            loLocal = chunk.localPrefix(lo, loPrefix, keys);
            loChunk = chunk;
        }
        return chunk.compareLocal(lo, loLocal, ei, keys);
    }

    /**
     * Whether to look ahead: while most recent steps found their mapping far from the one before.
     * Pairs at random places miss one by one, and only look-ahead overlaps their misses; pairs
     * that follow each other in memory (keys inserted in order, such as timestamps, or pairs
     * placed in key order) are streamed in by the hardware prefetchers, and touching them costs
     * a scan step more than it saves, as the touches wait for lines that are on their way anyway.
     * 1M pairs of 100 B / 1 KB inserted in key order, stream scans of 1,000 pairs, ns a pair,
     * alternated runs with and without this test: ascending 58.7, 59.1 against 116.5, 80.9;
     * descending 53.4, 61.3, 94.5 against 118.5, 83.6, 119.0 ({@code ScanBench -p
     * ingestOrder=sorted}); with pairs in random order, where the score stays high, no change
     * beyond the host's noise.
     */
    private boolean scattered() {
        return scatter >= SCATTER_ON;
    }

    /** Counts a step. @return true once the scan has taken more than {@link #QUIET_STEPS} */
    private boolean pastQuietSteps() {
        if (steps > QUIET_STEPS) {
            return true;
        }
        return ++steps > QUIET_STEPS;
    }

    private void push(int ei) {
        if (stackSize == stack.length) {
            stack = Arrays.copyOf(stack, Math.max(16, stackSize * 2));
        }
        stack[stackSize++] = ei;
    }

    private boolean previousChunk() {
        if (chunk.minKey == Refs.NULL) {
            leaveLastChunk();
            return false; // the first chunk: nothing below
        }
        if (!chunk.isReleased()) {
            Chunk p = map.index().before(chunk);
            if (p != null && !p.isReleased() && !chunk.isReleased()) {
                startAtTail(p);
                return true;
            }
        }
        // the chunk or its neighbour was replaced: re-locate strictly below this chunk's range
        K bound = keys.read(chunk.minKey, chunk);
        Chunk p;
        while (true) {
            p = map.index().findLower(bound, keys.prefix(bound), keys);
            if (!p.isReleased()) {
                break;
            }
            map.rebalancer().awaitRebalance();
        }
        seekDescending(p, bound, false);
        return true;
    }

    /** Written by prefetches so the JIT keeps their loads; never read for its value. */
    private long prefetchSink;
    /** Keys whose lines {@link #touchKeyIfInOrder} touched (for tests). */
    private long keysTouchedInOrder;
    /**
     * What {@link #gather} recorded for touching, one element per line. Flushed by
     * {@link #touchGathered} when full, so a batch larger than {@link #GATHER_PAIRS} pairs is
     * touched in parts. Allocated at the first look-ahead.
     */
    private long[] gatheredRefs = NO_REFS;
    private int gathered;
    /** Where the lines of the pair {@link #gather} is recording start in {@link #gatheredRefs}. */
    private int pairLinesFrom;
    /** Ascending: the look-ahead position of {@link #prefetchAhead}; null to restart it at nextEi. */
    private Chunk aheadChunk;
    private int aheadEi;
    /** Entries touched ahead and not yet consumed. */
    private int aheadCredit;
    /** Ascending: entries the next look-ahead batch touches; doubles up to {@link #AHEAD}. */
    private int aheadBatch = FIRST_BATCH;
    /** Ascending: the size of the last batch issued; the next goes out when half of it is left. */
    private int aheadLast;
    /** Descending: in this chunk, the sorted entries from this index up have been touched. */
    private Chunk descAheadChunk;
    private int descAhead;
    /** Descending: sorted entries the next look-ahead batch covers; doubles up to {@link #AHEAD}. */
    private int descBatch = FIRST_BATCH;
    /** Descending: the size of the last batch issued; the next goes out when half of it is left. */
    private int descLast;

    /**
     * The most entries one look-ahead batch touches. Larger batches put more misses in flight, but
     * the core stalls until most of a batch has arrived, and touches of entries the scan never
     * reaches are pure loss. 1M random pairs of 100 B / 1 KB, 10K-pair stream scans, alternated
     * runs of the harness's child JVM: 887-1,031 scans/s with 32, 880-987 with 64. With 8-byte
     * keys and values, legacy-API scans of 100 pairs (an ad-hoc probe) took 153-175 ns per pair
     * with 32 and 224-239 with 64. A zero or negative setting disables look-ahead.
     */
    static final int AHEAD = Integer.getInteger("oak.scan.ahead", 32);
    /**
     * Off-heap bytes in use from which scans look ahead; default half the last-level cache.
     * Below that, a map's slices mostly stay in the caches and the touches only cost CPU (a JMH
     * probe, ascending stream scans, per pair: 10K pairs of 16-byte keys and values 25 ns without
     * look-ahead, 34 with; 10K pairs of 100 B and 1 KB, 11 MB in all, 32 against 40), while from
     * the cache's size on they pay (25K such pairs, 28 MB: 53 against 46 ns).
     */
    static final long LOOK_AHEAD_FROM = Long.getLong("oak.scan.aheadFrom", lastLevelCacheBytes() / 2);
    /**
     * The first batch of a scan: batches start small and double, each issued once half of the
     * one before has been consumed, so a scan never touches much more than twice what it reads.
     * (The next batch used to follow the first at once: a 10-pair scan touched 56 entries.)
     * Measured with the harness, 1M pairs of 16-byte keys and values, one thread, alternated
     * runs, before / after: legacy-API scans of 10 pairs 137-151k / 285-287k scans/s (the
     * skiplist: 272k), of 100 pairs 39-41k / 51-53k; stream scans of 100 pairs 56-62k / 76-79k
     * (`bin/bench --map oak-legacy,cslm --workload scan-asc --key-size 16 --value-size 16 --scan 10`).
     */
    private static final int FIRST_BATCH = Math.max(1, Math.min(2, AHEAD));
    /**
     * Steps a scan takes before it starts looking ahead. An iterator advances twice for its first
     * mapping (to return it, and to know whether there is a next), and a point-like scan (the
     * first key of a range) stops there: touching ahead then more than doubled its cost (an
     * ad-hoc probe, 1M 8-byte pairs: 1.0-1.2 us a scan of one pair without, 2.6-3.4 with).
     */
    private static final int QUIET_STEPS = 2;
    /** Advances (ascending) or bypasses loaded (descending) so far, up to {@link #QUIET_STEPS} + 1. */
    private int steps;
    /**
     * @return the size of the largest cache of the highest level that CPU 0 reports (Linux
     *     sysfs), or 32 MiB where none can be read
     */
    private static long lastLevelCacheBytes() {
        int bestLevel = 0;
        long best = 0;
        for (int i = 0; i < 16; i++) {
            Path dir = Path.of("/sys/devices/system/cpu/cpu0/cache/index" + i);
            try {
                int level = Integer.parseInt(Files.readString(dir.resolve("level")).trim());
                String size = Files.readString(dir.resolve("size")).trim(); // e.g. "32768K"
                long unit = switch (size.charAt(size.length() - 1)) {
                    case 'K' -> 1L << 10;
                    case 'M' -> 1L << 20;
                    case 'G' -> 1L << 30;
                    default -> 1;
                };
                long bytes = unit * Long.parseLong(unit == 1 ? size : size.substring(0, size.length() - 1));
                if (level > bestLevel || (level == bestLevel && bytes > best)) {
                    bestLevel = level;
                    best = bytes;
                }
            } catch (IOException | RuntimeException e) {
                // no such cache index, or not Linux
            }
        }
        return best > 0 ? best : 32L << 20;
    }

    /**
     * How scattered the last mappings were ({@link #noteLayout}); a scan starts out assuming
     * pairs at random places, and stops looking ahead after {@link #SCATTER_MAX} -
     * {@link #SCATTER_ON} + 1 steps more near than far.
     */
    private int scatter = SCATTER_MAX;
    /** The {@link Refs#location} of the last key and value {@link #noteLayout} saw. */
    private long lastKeyAt;
    private long lastValueAt;
    private static final int SCATTER_MAX = 16;
    /** Whether this cursor asks for scattered chunks to be placed (see "Asking for placement"). */
    private final boolean placesOnScans;
    /** The chunk whose mappings {@link #chunkSteps} and {@link #chunkFar} count. */
    private Chunk layoutChunk;
    /** Mappings of {@link #layoutChunk} returned, and how many of them lay far from the one before. */
    private int chunkSteps;
    private int chunkFar;
    /**
     * Mappings of a chunk a scan must return before it may ask for the chunk's placement. Tests
     * set {@code -Doak.scan.placeFrom=0}: then every chunk a scan leaves is laid out anew, however
     * it lies, so that moves race everything the suites run (their maps are too small to scatter).
     */
    static final int PLACE_MIN_STEPS = Integer.getInteger("oak.scan.placeFrom", 64);
    private static final int SCATTER_ON = 8;
    /** A page: hardware prefetchers follow a stream within a page, and to the next one. */
    private static final long NEAR = 4096;
    /** Lines touched by look-ahead so far (tests: see {@link #linesTouched}). */
    private long linesTouched;

    /** Pairs gathered before their touches are issued (the look-ahead's scratch space). */
    private static final int GATHER_PAIRS = 32;

    /**
     * Ascending: touches the key and value headers of the next batch of entries at once
     * (following the chunk list), and the next batch when half of it has been consumed.
     * Java has no prefetch instruction and a load holds back retirement until its data arrives,
     * so touching one entry per step stalls a full miss per pair; a batch of independent loads
     * puts many misses in flight at once and pays one stall for all of them. Only a hint: a
     * stale or out-of-sync position costs speed, never correctness.
     */
    private void prefetchAhead() {
        if (aheadChunk == null) {
            aheadChunk = chunk;
            aheadEi = nextEi;
            aheadCredit = 0;
            if (nextEi != Chunk.NONE) {
                prefetchEntry(chunk, nextEi);
            }
        }
        if (--aheadCredit > aheadLast / 2) {
            return;
        }
        int batch = aheadBatch;
        for (int i = 0; i < batch && aheadChunk != null; i++) {
            stepAhead();
        }
        touchGathered();
        aheadCredit += batch;
        aheadLast = batch;
        aheadBatch = Math.min(AHEAD, 2 * batch);
    }

    /** Moves the look-ahead position one entry on and gathers its slices. */
    private void stepAhead() {
        Chunk c = aheadChunk;
        int ei = aheadEi == Chunk.NONE ? Chunk.NONE : c.nextEntry(aheadEi);
        if (ei == Chunk.NONE) {
            c = c.nextChunk;
            aheadChunk = c;
            if (c == null) {
                return;
            }
            ei = c.nextEntry(Chunk.NONE);
        }
        aheadEi = ei;
        gather(c, ei);
    }

    /**
     * Records the lines of entry {@code ei} that {@link #touchGathered} must touch (see there),
     * one element per line: with the block region ({@link SliceManager#touchesByPosition}), the
     * line's region position; otherwise the slice's reference with the line's offset in its aux
     * field (a touch needs only the block and offset of a reference). Gathering walks only
     * on-heap arrays, which are cached, and runs while no touch is outstanding, so its
     * instructions cost no overlap. The touches that follow are then back-to-back loads, which is
     * what lets many of their misses be in flight at once (see {@link #prefetchAhead}).
     */
    private void gather(Chunk c, int ei) {
        if (ei == Chunk.NONE) {
            return;
        }
        long v = c.valueRef(ei);
        if (v == Refs.NULL) {
            return;
        }
        if (gathered + LINES_PER_PAIR > gatheredRefs.length) {
            if (gatheredRefs.length == 0) {
                gatheredRefs = new long[LINES_PER_PAIR * GATHER_PAIRS];
            } else {
                touchGathered();
            }
        }
        pairLinesFrom = gathered;
        int valueHeader = valueSlices.headerBytes();
        gatherLine(v, 0);
        if (crossesLine(v, valueHeader)) { // the first data byte, on the next line
            gatherLine(v, valueHeader);
        }
        long k = c.keyRef(ei);
        gatherLine(k, 0);
        long lastKeyByte = lastKeyByteTouched();
        if (keyStartOnly()) {
            if (crossesLine(k, lastKeyByte)) {
                gatherLine(k, lastKeyByte);
            }
        } else {
            // stepping by a line from the slice's start meets every line up to the last byte's
            for (long at = CACHE_LINE; at < lastKeyByte + CACHE_LINE; at += CACHE_LINE) {
                gatherLine(k, Math.min(at, lastKeyByte));
            }
        }
    }

    /**
     * Records the line holding byte {@code at} of slice {@code ref} (see {@link #gather}), unless
     * it is a line already recorded for the same pair: a small key and the value header after it
     * often share one.
     */
    private void gatherLine(long ref, long at) {
        long line = touchesByPosition ? BlockAllocator.regionPosition(ref) + at : Refs.withAux(ref, (int) at);
        long lineAt = lineOf(line);
        for (int i = pairLinesFrom; i < gathered; i++) {
            if (lineOf(gatheredRefs[i]) == lineAt) {
                return;
            }
        }
        gatheredRefs[gathered++] = line;
    }

    /** @return which line an element of {@link #gatheredRefs} stands for, as a number equal only for the same line */
    private long lineOf(long gatheredLine) {
        long bytePosition = touchesByPosition ? gatheredLine
                : Refs.location(gatheredLine) + Refs.aux(gatheredLine); // blocks are page-aligned
        return bytePosition / CACHE_LINE;
    }

    /**
     * Whether only a key's start is read at each step: in-place keys are read only by the user,
     * who may read only the start (with a copy, ours or a key view's, every line is read; with an
     * upper bound, comparisons read the whole key anyway).
     */
    private boolean keyStartOnly() {
        return keysInPlace && !wholeKeysRead && !userReadsPastKeyStart();
    }

    /**
     * Whether the user of this cursor's reusable key view has read past the first line of a key
     * ({@link ScanKeyView#reach}): then look-ahead touches every line of the keys ahead, as for
     * {@link #wholeKeysRead}, and keys in order get their lines touched first
     * ({@link #touchKeyIfInOrder}). A stream scan whose user reads whole keys (rows, say) is
     * otherwise left with a miss per line: over 1M random pairs of 100 B / 1 KB, reading every
     * 8-byte word of each key took 172-181 ns a pair with whole keys touched ahead against 280-306
     * with first lines only; over 400K pairs fed in key order, 68-96 with the lines touched first
     * against 200-223 ({@code ScanBench.oakZcStreamAscendingParts -p reads=wholeKey}, alternated).
     * A user who reads only a key's start pays nothing for it.
     */
    private boolean userReadsPastKeyStart() {
        return reusableKey != null && reusableKey.reach() > CACHE_LINE;
    }

    /** @return the last byte of a key slice that look-ahead touches (see {@link #touchGathered}) */
    private long lastKeyByteTouched() {
        return keyStartOnly() ? keySlices.headerBytes() : Math.min(keys.typicalSpan(), KEY_TOUCH_LIMIT) - 1;
    }

    /**
     * Touches what {@link #gather} recorded, then forgets it. The lines touched per entry: the
     * value's header and first data word, and the key's first line and, when the whole key is
     * read, every line of it (up to {@link #KEY_TOUCH_LIMIT} bytes; key lengths come from a
     * hint, see {@link KeyOps#typicalSpan}); a line that two of these share is touched once
     * ({@link #gatherLine}). A key of 100 bytes after its header spans three
     * lines for most alignments, and the per-step key copy reads all of them: a line left
     * untouched here was a miss on every other step (measured with a single-threaded scan probe
     * over 1M pairs: 220 to 175 ns per pair).
     *
     * <p>Through the block region, each touch is one load and nothing else. Against touches
     * through each block's segment (the other loop, where there is no region), on 1M pairs of
     * 100 B / 1 KB: stream scans 66-83 against 99-127 ns a pair ascending, 80-90 against 111-134
     * descending (ScanBench, alternated runs with -Doak.blockRegion=false).
     */
    private void touchGathered() {
        long[] lines = gatheredRefs;
        int n = gathered;
        long sink = 0;
        if (touchesByPosition) {
            for (int i = 0; i < n; i++) {
                sink += BlockAllocator.touchRegion(lines[i]);
            }
        } else {
            SliceManager slices = valueSlices; // keys and values share the map's allocator
            for (int i = 0; i < n; i++) {
                sink += slices.touch(Refs.withAux(lines[i], 0), Refs.aux(lines[i]));
            }
        }
        gathered = 0;
        prefetchSink += sink;
        linesTouched += n;
    }

    private static final int CACHE_LINE = 64;

    /** For tests: the cache lines this cursor's look-ahead has touched. */
    long linesTouched() {
        return linesTouched;
    }

    /**
     * @return true if byte {@code at} of slice {@code ref} lies on a later cache line than the
     *     slice's start (blocks are page-aligned, so offsets in a block give line positions)
     */
    private static boolean crossesLine(long ref, long at) {
        return (Refs.offset(ref) & (CACHE_LINE - 1)) + at >= CACHE_LINE;
    }

    /** Bytes of a key slice that look-ahead touches at most. */
    private static final int KEY_TOUCH_LIMIT = 4 * CACHE_LINE;
    /** The most lines {@link #gather} records for one pair. */
    private static final int LINES_PER_PAIR = 2 + KEY_TOUCH_LIMIT / CACHE_LINE + 1;

    private void prefetchEntry(int ei) {
        prefetchEntry(chunk, ei);
    }

    private void prefetchEntry(Chunk c, int ei) {
        gather(c, ei);
        touchGathered();
    }

    /**
     * The read token of the value {@link #liveValue} last found live ({@link SliceManager#liveToken}):
     * the user's first read of the current value starts from it instead of reading the header again.
     */
    private long liveToken = SliceManager.NO_TOKEN;

    /** An empty array: a key copy into it takes a new array of the key's exact length. */
    private static final byte[] NO_BYTES = new byte[0];
    private static final MemorySegment NO_SEGMENT = MemorySegment.ofArray(NO_BYTES);
    /**
     * Empty scratch arrays: a cursor allocates its stack and its look-ahead buffer when it first
     * needs them, so that a call that takes one step ({@code isEmpty}, an iterator's first
     * mapping) allocates little (allocating them up front took a fifth of a pollFirstEntry, when
     * navigation still went through cursors).
     */
    private static final int[] NO_ENTRIES = new int[0];
    private static final long[] NO_REFS = new long[0];

    /** Returned by {@link #liveValue} when the chunk was replaced and the key must be looked up again. */
    private static final long RESEEK = -1L;

    /**
     * @return the live value reference of entry {@code ei}, {@link Refs#NULL} if the key is
     *     absent, or {@link #RESEEK}. A reference found not live in a current chunk is re-read: a
     *     concurrent move swaps the entry to the new slice before deleting the old one.
     */
    private long liveValue(Chunk c, int ei) {
        while (true) {
            long v = c.valueRef(ei);
            if (v == Refs.NULL) {
                return v;
            }
            long token = valueSlices.liveToken(v);
            if (token != SliceManager.GONE) {
                liveToken = token;
                return v;
            }
            if (c.isReleased()) {
                return RESEEK;
            }
            if (c.valueRef(ei) == v) {
                return Refs.NULL; // removed
            }
        }
    }

    // ---------------------------------------------------------------- current mapping

    private void setCurrent(Chunk c, int ei, long k, long v) {
        rememberCurrent(); // before anything may change: repeated as is if this step is retried
        if (keysInPlace) {
            protect(c, k);
        } else if (copiesKeys) {
            if (inPlacePending && copiedSteps >= copyFirst) {
                beginInPlace(c, k); // may throw StaleKeyException: then still copying, nothing changed
            } else {
                copyKey(c, k); // may throw StaleKeyException: then nothing changed
                copiedSteps++;
            }
        }
        Chunk toPlace = null;
        if (lookAhead) {
            if (c != layoutChunk) {
                toPlace = enterLayoutChunk(c);
            }
            noteLayout(k, v);
        }
        curChunk = c;
        curEi = ei;
        curKey = k;
        curValue = v;
        curToken = liveToken;
        if (reusableKey != null) {
            positionReusableKey();
        }
        if (reusableValue != null) {
            reusableValue.position(v, curToken, c, ei);
        }
        if (toPlace != null) {
            map.placeScattered(toPlace); // the cursor is done with that chunk
        }
    }

    /**
     * In-place keys, at the end of the scan, after {@link #keepCurrentAsPrevious} copied the last
     * key: moves the reusable key view onto that copy and gives up the hazards.
     */
    private void releaseHazards() {
        if (keysInPlace && reusableKey != null && curKey != Refs.NULL) {
            reusableKey.position(keyCopySegment, 0, keyCopyLength);
        }
        map.keyHazards().unregister(hazard);
    }

    /**
     * Switches a cursor that copies keys to in-place keys, at key {@code k} of chunk {@code c}:
     * registers the hazards (once), protects {@code k} as {@link #protect} does, and only then
     * stops copying. If the protection fails the cursor is still copying, and re-locates by its
     * current key's copy. The key before {@code k} was copied, so it needs no protection.
     */
    private void beginInPlace(Chunk c, long k) {
        if (hazard == null) {
            hazard = map.keyHazards().register();
        }
        protect(c, k);
        inPlacePending = false;
        copiesKeys = false;
        keysInPlace = true;
        if (reusableKey != null) {
            reusableKey.keepAlive(hazard); // it reads the protected slice from now on
        }
    }

    /** Positions the reusable key view on the current key: its copy, or its protected slice. */
    private void positionReusableKey() {
        if (copiesKeys) {
            reusableKey.position(keyCopySegment, 0, keyCopyLength);
        } else {
            if (userReadsPastKeyStart()) {
                touchKeyIfInOrder(curKey);
            }
            MemorySegment segment = keySlices.segment(curKey);
            reusableKey.position(segment, keySlices.dataOffset(curKey), keySlices.length(segment, curKey));
        }
    }

    /**
     * In-place keys: stores {@code k} in the hazard that does not hold the current key (a
     * volatile store), then checks (a volatile load, after it) that chunk {@code c} is not
     * released. If it is, the rebalancer may have read the hazards before the store and may
     * delete {@code k}: throws {@link StaleKeyException} with nothing changed, so the cursor
     * re-locates by its current key, still protected (and finds {@code k} again if present).
     */
    private void protect(Chunk c, long k) {
        hazard.protect(k);
        if (c.isReleased()) {
            throw StaleKeyException.INSTANCE;
        }
        hazard.commit();
    }

    /**
     * Copies key {@code k}, read from chunk {@code c} (null: a protected key), on-heap: into the
     * spare array, so that a stale read changes nothing, then swaps the spare and the current
     * arrays (views hand out copies or are repositioned).
     */
    private void copyKey(Chunk c, long k) {
        byte[] filled = keys.copy(k, spareCopy, copyLength, c);
        MemorySegment filledSegment = filled == spareCopy ? spareSegment : MemorySegment.ofArray(filled);
        // the copy validated: it becomes the current key, and the old current array the spare
        spareCopy = keyCopy;
        spareSegment = keyCopySegment;
        keyCopy = filled;
        keyCopySegment = filledSegment;
        keyCopyLength = copyLength[0];
    }

    /**
     * @throws dev.oakmap.OakClosedException if the map was closed
     * @throws IllegalStateException if the cursor is not on a mapping
     */
    public void requireCurrent() {
        map.checkOpen();
        if (curKey == Refs.NULL) {
            throw new IllegalStateException("cursor is not on a mapping");
        }
    }

    /**
     * Removes the current mapping, if it is still present, without looking its key up again (see
     * {@link InternalOakMap#deleteAt}). The cursor stays where it is.
     */
    public void removeCurrent() {
        requireCurrent();
        if (!map.deleteAt(curChunk, curEi, curValue)) {
            map.delete(key()); // the value moved meanwhile: remove whatever the key holds now
        }
    }

    /**
     * Removes the mapping the cursor was on before its last {@link #advance} (the last one, if
     * that advance found nothing more), if it is still present; like {@link #removeCurrent}, by
     * its value's reference, else by its key. For iterators that have looked ahead.
     *
     * @throws IllegalStateException if the cursor was on no mapping before that advance
     */
    public void removePrevious() {
        map.checkOpen();
        if (prevKey == Refs.NULL) {
            throw new IllegalStateException("the cursor was on no mapping before its last step");
        }
        if (!map.deleteAt(prevChunk, prevEi, prevValue)) {
            map.delete(previousKey()); // the value moved meanwhile: remove whatever the key holds now
        }
    }

    /** At each step, before the current mapping changes: it becomes the previous one. */
    private void rememberCurrent() {
        prevKey = curKey;
        if (curKey == Refs.NULL) {
            return;
        }
        prevChunk = curChunk;
        prevEi = curEi;
        prevValue = curValue;
        prevCopied = copiesKeys; // then the current key's copy is in keyCopy, which the next copy does not write
        prevCopy = keyCopy;
        prevCopyLength = keyCopyLength;
    }

    /**
     * When the scan ends: the current mapping becomes the previous one, its key copied if it was
     * read in place, since its protection ends with the scan (the reusable key view moves onto
     * the same copy, {@link #releaseHazards}).
     */
    private void keepCurrentAsPrevious() {
        rememberCurrent();
        if (curKey != Refs.NULL && keysInPlace) {
            copyKey(null, curKey); // still protected: no guard; the scan takes no copy after it
            prevCopy = keyCopy;
            prevCopyLength = keyCopyLength;
            prevCopied = true;
        }
    }

    /** @return a deserialized copy of the previous key (see {@link #prevChunk}) */
    private K previousKey() {
        return readKey(prevCopied, prevCopy, prevCopyLength, prevKey);
    }

    /** @return a deserialized copy of the current key */
    public K key() {
        requireCurrent();
        try {
            return lastKey();
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    /** @return a deserialized copy of the current value, or null if it was removed since advance() */
    public V value() {
        requireCurrent();
        try {
            V v = map.readValue(curValue);
            if (v != InternalOakMap.gone()) {
                return v;
            }
            if (map.goneForGood(curChunk, curEi, curValue)) {
                return null;
            }
            return map.get(key()); // the value moved or the chunk was replaced: read it afresh
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    /**
     * @return a new unscoped view of the current key; when keys are reclaimed, over its own
     *     on-heap copy of the key, so it stays readable after the mapping is removed
     */
    public OakUnscopedBuffer keyView() {
        requireCurrent();
        if (keys.reclaims()) {
            // a view that outlives the step needs its own copy (in place, the key is protected: it validates)
            byte[] own;
            if (keysInPlace) {
                touchKeyIfInOrder(curKey);
                own = keys.copy(curKey, NO_BYTES, copyLength, null); // protected; a new array of its length
            } else {
                own = Arrays.copyOf(keyCopy, keyCopyLength);
            }
            return new KeyCopyView(map, own);
        }
        return new SliceView(map, keySlices, curKey, "key");
    }

    /**
     * Before a key is read whole (a key view's copy, or a stream's user who reads past a key's
     * start, see {@link #userReadsPastKeyStart}), where pairs lie in order (so look-ahead is off):
     * loads one byte of each of the key's lines, first to last, each by its own instruction at a
     * fixed offset from the key's start, then the last byte. The reads that follow find the lines
     * arriving. Without this, the copy of a 100-byte key was most of a plain iterator's step over
     * keys fed in order:
     * 114-168 ns a pair against 53-72 with it (JMH {@code ScanBench.oakZcIteratorAscending}, 400K
     * pairs of 100 B / 1 KB fed in key order; the skiplist 37). What the touches do is not a
     * matter of lines alone: the same loads issued from one loop instruction (stride 64) measured
     * 192-201 ns, and from a chain running from the last line to the first 104-120. So each line
     * gets its own load, in address order: a hardware prefetcher that follows each load
     * instruction's stride from pair to pair fits that shape, but without hardware counters here
     * that reading is a guess. Where pairs are scattered, look-ahead has touched the key's lines
     * already ({@link #touchGathered}) and these loads only cost (5-10 ns a pair at 1M random
     * pairs); in maps that fit the caches ({@link #lookAhead} off) the lines are there. Only keys
     * of 65 to {@link #KEY_TOUCH_LIMIT} bytes: a key of one line gains nothing (16-byte keys
     * measured 51-52 ns a pair with the touches against 43-47), and a 1,000-byte key's copy
     * (the JDK's, see {@code Bytes}) gained nothing from touches of its first lines. Plain,
     * bounds-checked loads: the key is the cursor's current one, protected by its hazard
     * ({@link KeyHazards}), so its slice is not reused under them, and their values are ignored.
     */
    private void touchKeyIfInOrder(long ref) {
        if (!lookAhead || scattered()) {
            return;
        }
        MemorySegment seg = keySlices.segment(ref);
        long at = keySlices.dataOffset(ref);
        int length = keySlices.length(seg, ref);
        if (length <= CACHE_LINE || length > KEY_TOUCH_LIMIT) {
            return;
        }
        long sink = seg.get(ValueLayout.JAVA_BYTE, at);
        sink += seg.get(ValueLayout.JAVA_BYTE, at + CACHE_LINE);
        if (length > 2 * CACHE_LINE) {
            sink += seg.get(ValueLayout.JAVA_BYTE, at + 2 * CACHE_LINE);
        }
        if (length > 3 * CACHE_LINE) {
            sink += seg.get(ValueLayout.JAVA_BYTE, at + 3 * CACHE_LINE);
        }
        sink += seg.get(ValueLayout.JAVA_BYTE, at + length - 1);
        prefetchSink += sink;
        keysTouchedInOrder++;
    }

    /** For tests: the keys {@link #touchKeyIfInOrder} touched before they were read whole. */
    long keysTouchedInOrder() {
        return keysTouchedInOrder;
    }

    /** @return a new unscoped view of the current value */
    public OakUnscopedBuffer valueView() {
        requireCurrent();
        SliceView view = new SliceView(map, valueSlices, curValue, "value");
        view.position(curValue, curToken, curChunk, curEi);
        return view;
    }

    /** @return one view object per cursor, repositioned on the current key at each advance */
    public OakUnscopedBuffer reusableKeyView() {
        requireCurrent();
        if (reusableKey == null) {
            reusableKey = new ScanKeyView(map, hazard);
            positionReusableKey();
        }
        return reusableKey;
    }

    /** @return one view object per cursor, repositioned on the current value at each advance */
    public OakUnscopedBuffer reusableValueView() {
        requireCurrent();
        if (reusableValue == null) {
            reusableValue = new SliceView(map, valueSlices, curValue, "value");
            reusableValue.position(curValue, curToken, curChunk, curEi);
        }
        return reusableValue;
    }
}
