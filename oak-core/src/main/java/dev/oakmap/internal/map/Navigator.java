package dev.oakmap.internal.map;

import dev.oakmap.internal.chunk.Chunk;
import dev.oakmap.internal.chunk.KeyOps;
import dev.oakmap.internal.chunk.StaleKeyException;
import dev.oakmap.internal.memory.Refs;
import dev.oakmap.internal.reclaim.SliceManager;
import dev.oakmap.internal.wait.Backoff;
import dev.oakmap.internal.wait.HeldLocks;

import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.Arrays;

/**
 * Linearizable navigation: the least (or greatest) live mapping of a key range, as
 * {@code ceilingKey}, {@code floorEntry}, {@code firstKey} of a sub-map and the like ask for.
 *
 * <h2>Why a scan is not enough</h2>
 * A scan returns the first live entry it meets, but it meets entries one after another: it may
 * pass the position of key {@code a} before {@code a} is inserted, then find key {@code b}
 * removed, although {@code a} was inserted before {@code b} was removed, and return a key past
 * both, which was never the least one. Scans promise only the weak guarantee that allows this;
 * navigation, like {@code ConcurrentSkipListMap}'s, must return a key that was the answer at one
 * instant of the call ({@code NavigationLinearizabilityTest} catches the scan's answers).
 *
 * <h2>Two walks that agree</h2>
 * The navigator walks the entries lists from the range's start, in the chunks the index gives,
 * to the first live entry in range (ascending), or collects bypasses downwards to the last live
 * one (descending), and records every fact the answer rests on: each chunk it entered, every link
 * it followed ({@code nextEntry}), every entry's value reference and whether it was live, and the
 * dead-prefix (or dead-suffix) hint it started from. Then it walks again and compares. If every
 * fact is the same, and no chunk walked was released by the end of the second walk, the answer
 * holds at the start of the second walk:
 * <ul>
 * <li>an entry's value reference changes with every insertion into it (removal leaves it in
 *     place, marking the slice deleted, which is final for that reference): an entry seen dead
 *     with reference {@code r} by both walks was dead throughout, and one seen live with
 *     {@code r} by both walks was live throughout;
 * <li>links only ever change from an entry to a newly inserted one and are never undone in a
 *     chunk that is not released: a link read the same twice did not change in between, so no
 *     entry appeared between two entries walked;
 * <li>a made hint never covers a live entry (see {@link Chunk}, "Dead prefix"), so the region it
 *     covers is dead when the second walk reads it, which it does first. Only the chunk a walk
 *     starts in has its hint used: with two hints there would be two instants;
 * <li>a chunk not released by the end holds its whole key range throughout, and the index's
 *     answers (first, last, the chunk of a key, the one before a chunk) were the same twice.
 * </ul>
 * Any difference, a released chunk or a stale key read (a key reclaimed under a released chunk)
 * starts both walks over: some other operation completed meanwhile, so the retries are
 * lock-free. With a value to return, the value's read begins before the second walk and is
 * validated after it ({@link SliceManager#readBegin}, {@link SliceManager#readEnd}), so the value
 * returned is the one at that same instant.
 *
 * <h2>Polls</h2>
 * {@code pollFirstEntry} must remove a mapping at an instant when it was the least. Finding the
 * least and then removing it by key leaves a window in which a lesser key can be inserted, and
 * observed, before the removal ({@code ConcurrentSkipListMap} has that window). So a poll takes
 * the found value's write lock between the two walks, with a mark that makes every liveness
 * check whose answer must be linearizable ({@code containsKey}, navigation, {@code putIfAbsent}
 * of that key) wait until the poll is over ({@link SliceManager#lockForPoll},
 * {@link SliceManager#isLiveAwaitingPoll}; reads of the value wait for the lock anyway). If the
 * second walk agrees, the mapping was the least at its start, and nobody has seen it present
 * since without waiting for the poll, which then deletes it under the lock: the poll is
 * linearized at the start of the second walk. A poll never waits while it holds its mark: its
 * second walk counts its own value as live, other write-locked values as live too (then the
 * walk disagrees and the poll starts over), and gives up when it meets another poll's mark
 * ({@link HeldLocks.PollConflict}), so two polls from opposite ends cannot wait for each other.
 * Scans are weakly consistent and do not wait for marks.
 *
 * <h2>Cost</h2>
 * Two walks instead of one, each usually a few entries long: the hints skip runs of removed
 * entries at the ends of the map, and a search by key starts at the sorted entry below the key.
 * The navigator allocates its record (a few small arrays) per call and no cursor.
 */
final class Navigator<K, V> {
    /**
     * Outcomes of a walk; NOT_FOUND_BELOW (within a descending walk): a live entry was found below
     * the range's start, so nothing is in range and the walk need not go on.
     */
    private static final int FOUND = 0, NOT_FOUND = 1, RETRY = 2, NOT_FOUND_BELOW = 3;
    /** Kinds of recorded facts (the high bits of a fact's first word). */
    private static final long CHUNK = 1L << 60, HINT = 2L << 60, LINK = 3L << 60, ENTRY = 4L << 60, LAST = 5L << 60;
    /** Values of {@link #cursor} other than a position: recording (first walk), or a fact differed. */
    private static final int RECORDING = -1, DIFFERED = -2;

    private final InternalOakMap<K, V> map;
    private final KeyOps<K> keys;
    private final SliceManager values;
    private final K lo;
    private final boolean loInclusive;
    private final K hi;
    private final boolean hiInclusive;
    private final long loPrefix;
    private final long hiPrefix;

    /** Facts of the first walk: two words each, and the chunk each was read in. */
    private long[] facts = new long[12];
    private Chunk[] chunks = new Chunk[6];
    private int count;
    /** Second walk: the next fact to compare; {@link #RECORDING} during the first walk, {@link #DIFFERED} once a fact differed. */
    private int cursor = RECORDING;
    /** The answer of the last walk: chunk and entry of the live entry found, and its value. */
    private Chunk foundChunk;
    private int foundEntry;
    private long foundValue;
    /** The key of the entry the first walk found (see {@link #firstWalk}). */
    private K foundKey;

    Navigator(InternalOakMap<K, V> map, K lo, boolean loInclusive, K hi, boolean hiInclusive) {
        this.map = map;
        this.keys = map.keys();
        this.values = map.values();
        this.lo = lo;
        this.loInclusive = loInclusive;
        this.hi = hi;
        this.hiInclusive = hiInclusive;
        this.loPrefix = lo == null ? 0 : keys.prefix(lo);
        this.hiPrefix = hi == null ? 0 : keys.prefix(hi);
    }

    /**
     * @param descending find the greatest mapping of the range, rather than the least
     * @param withValue also read the mapping's value
     * @return the mapping (with a null value unless {@code withValue}), or null if the range was
     *     empty at the instant the answer holds
     */
    SimpleImmutableEntry<K, V> find(boolean descending, boolean withValue) {
        return run(descending, withValue, false);
    }

    /**
     * Removes the least (or greatest) mapping of the range, linearizably (see "Polls" above).
     *
     * @return the mapping removed, with its value, or null if the range was empty at the instant
     *     the answer holds
     */
    SimpleImmutableEntry<K, V> poll(boolean descending) {
        return run(descending, true, true);
    }

    private SimpleImmutableEntry<K, V> run(boolean descending, boolean withValue, boolean poll) {
        for (int conflicts = 0; ; ) {
            map.checkOpen();
            replaced = false;
            try {
                SimpleImmutableEntry<K, V> e = poll ? attemptPoll(descending) : attempt(descending, withValue);
                if (e != null) {
                    tidyEnds(descending);
                    return e == NONE_ENTRY ? null : e;
                }
            } catch (StaleKeyException stale) {
                replaced = true; // a key read under a chunk whose keys are being reclaimed
            } catch (HeldLocks.PollConflict conflict) {
                Backoff.pause(conflicts++); // let the other poll, which holds a lesser key, finish
            } catch (IllegalStateException e) {
                throw map.closedOr(e); // memory of a map closed meanwhile
            }
            if (replaced) {
                map.rebalancer().awaitRebalance();
            }
        }
    }

    /** Marks "the range was empty" among the results of {@link #attempt}. */
    @SuppressWarnings("rawtypes")
    private static final SimpleImmutableEntry NONE_ENTRY = new SimpleImmutableEntry<>(null, null);

    /** Set when an attempt met a released chunk: the next one waits for the rebalance to finish. */
    private boolean replaced;

    /**
     * The first walk of an attempt, recording. If it finds a live entry, the entry is left in
     * {@link #foundChunk}, {@link #foundEntry}, {@link #foundValue} and its key, read, in
     * {@link #foundKey}; if it finds none, the second walk has already confirmed that.
     *
     * @return FOUND, NOT_FOUND, or RETRY to start over
     */
    private int firstWalk(boolean descending) {
        count = 0;
        cursor = RECORDING;
        int first = walk(descending);
        if (first == NOT_FOUND) {
            return secondWalkAgrees(descending, NOT_FOUND) ? NOT_FOUND : RETRY;
        }
        if (first == FOUND) {
            foundKey = keys.read(foundChunk.keyRef(foundEntry), foundChunk);
        }
        return first;
    }

    /** @return the answer, NONE_ENTRY for none, or null to start over */
    @SuppressWarnings("unchecked")
    private SimpleImmutableEntry<K, V> attempt(boolean descending, boolean withValue) {
        int first = firstWalk(descending);
        if (first != FOUND) {
            return first == NOT_FOUND ? NONE_ENTRY : null;
        }
        K key = foundKey;
        if (!withValue) {
            return secondWalkAgrees(descending, FOUND) ? new SimpleImmutableEntry<>(key, null) : null;
        }
        long v = foundValue;
        // the value's read spans the second walk, so the value is the one of the same instant
        long token = values.readBegin(v);
        if (token == SliceManager.GONE) {
            return null;
        }
        V value = null;
        Throwable failure = null;
        boolean agreed = false;
        try {
            // a deserializer that writes this value would wait for the read lock held here, or
            // spoil this read at every retry: it fails at once instead, as in readValueWith
            HeldLocks held = HeldLocks.hold(v);
            try {
                value = map.deserializeValue(v);
            } catch (Throwable t) {
                failure = t; // may come from bytes torn by a writer: judged after validation
            } finally {
                held.release();
            }
            agreed = secondWalkAgrees(descending, FOUND);
        } finally {
            agreed &= values.readEnd(v, token); // ends the read in every case (a lock, for some schemes)
        }
        if (!agreed) {
            return null;
        }
        if (failure != null) {
            throw SliceManager.rethrow(failure);
        }
        return new SimpleImmutableEntry<>(key, value);
    }

    /**
     * One attempt of {@link #poll}: the first walk finds the mapping; its value's write lock is
     * taken with the poll's mark ({@link SliceManager#lockForPoll}); the second walk, which counts
     * the marked value as live, checks that it is still the answer; then the value is read and
     * deleted under the lock.
     *
     * @return the mapping removed, NONE_ENTRY for none, or null to start over
     */
    @SuppressWarnings("unchecked")
    private SimpleImmutableEntry<K, V> attemptPoll(boolean descending) {
        int first = firstWalk(descending);
        if (first != FOUND) {
            return first == NOT_FOUND ? NONE_ENTRY : null;
        }
        K key = foundKey;
        Chunk c = foundChunk;
        long v = foundValue;
        long locked = values.lockForPoll(v);
        if (locked == SliceManager.GONE) {
            return null; // removed or replaced since the first walk
        }
        HeldLocks held = HeldLocks.holdForPoll(v);
        boolean deleted = false;
        try {
            if (!secondWalkAgrees(descending, FOUND)) {
                return null;
            }
            // The mapping was the answer when the second walk began, marked since before then:
            // no liveness check has seen it since without waiting for the poll's end.
            V value = map.deserializeValue(v); // under the lock: whole, and the one removed
            values.deleteLocked(v, locked);
            deleted = true;
            map.removed(c);
            return new SimpleImmutableEntry<>(key, value);
        } finally {
            held.releasePoll();
            if (!deleted) {
                values.unlock(v, locked);
            }
        }
    }

    /**
     * Walks again, comparing: true if the walk ended the same way, met every recorded fact and
     * nothing else, and none of the chunks walked is released (a volatile read of each, after
     * all the walk's reads).
     */
    private boolean secondWalkAgrees(boolean descending, int outcome) {
        cursor = 0;
        if (walk(descending) != outcome || cursor != count) {
            return false;
        }
        for (int i = 0; i < count; i++) {
            if (chunks[i].isReleased()) {
                replaced = true;
                return false;
            }
        }
        return true;
    }

    // ---------------------------------------------------------------- the record

    /**
     * Records a fact (first walk) or compares it with the one recorded at this point (second
     * walk). @return false if the second walk found it different
     */
    private boolean fact(Chunk c, long kind, long a, long b) {
        long word = kind | (a & 0xFFFF_FFFFL);
        if (cursor == RECORDING) {
            if (2 * count + 2 > facts.length) {
                facts = Arrays.copyOf(facts, 2 * facts.length);
                chunks = Arrays.copyOf(chunks, facts.length / 2);
            }
            facts[2 * count] = word;
            facts[2 * count + 1] = b;
            chunks[count++] = c;
            return true;
        }
        if (cursor == DIFFERED || cursor >= count || chunks[cursor] != c || facts[2 * cursor] != word
                || facts[2 * cursor + 1] != b) {
            cursor = DIFFERED; // the walk stops, and secondWalkAgrees fails
            return false;
        }
        cursor++;
        return true;
    }

    private boolean enter(Chunk c) {
        return fact(c, CHUNK, 0, 0);
    }

    /** @return the entry after {@code e} in {@code c}'s list ({@code NONE}: the end), recorded */
    private int link(Chunk c, int e) {
        int n = c.nextEntry(e);
        return fact(c, LINK, e, n) ? n : -1;
    }

    /** Reads and records entry {@code e}'s value reference and liveness. @return whether live, or null if the record differs */
    private Boolean entry(Chunk c, int e) {
        long v = c.valueRef(e);
        boolean live = v != Refs.NULL && values.isLiveAwaitingPoll(v);
        if (!fact(c, ENTRY, e | (live ? 1L << 31 : 0), v)) {
            return null;
        }
        if (live) {
            foundChunk = c;
            foundEntry = e;
            foundValue = v;
        }
        return live;
    }

    // ---------------------------------------------------------------- walks

    private int walk(boolean descending) {
        foundChunk = null;
        return descending ? walkDown() : walkUp();
    }

    /** Ascending: from the range's start to the first live entry in range. */
    private int walkUp() {
        runChunk = null;
        // the index, not map.locate, which may wait for a rebalance: the walk may hold a value's read
        // lock (lock-based schemes) that a writer the rebalancer waits for needs
        Chunk c = lo == null ? map.index().first() : map.index().find(lo, loPrefix, keys);
        if (released(c) || !enter(c)) {
            return RETRY;
        }
        int e;
        if (lo == null) {
            int h = c.liveFrom(); // dead before it (see the class comment): read first
            if (!fact(c, HINT, h, 0)) {
                return RETRY;
            }
            e = h != Chunk.NONE ? h : link(c, Chunk.NONE);
            runChunk = c;
            runHint = h;
            runFirst = e;
        } else {
            int s = c.floorSorted(lo, loPrefix, keys);
            int prev = s > 1 ? s - 1 : Chunk.NONE; // below lo: the walk to lo starts after it
            e = link(c, prev);
            while (e > Chunk.NONE && belowLo(c, e)) {
                e = link(c, e);
            }
        }
        while (true) {
            if (e < 0) {
                return RETRY;
            }
            if (e == Chunk.NONE) { // the end of this chunk's list: the next chunk, from its head
                Chunk n = c.nextChunk;
                if (n == null) {
                    return fact(c, CHUNK, 1, 0) ? NOT_FOUND : RETRY;
                }
                if (released(c) || released(n) || !enter(n)) {
                    return RETRY;
                }
                c = n;
                e = link(c, Chunk.NONE);
                continue;
            }
            if (hi != null && aboveHi(c, e)) {
                return NOT_FOUND;
            }
            Boolean live = entry(c, e);
            if (live == null) {
                return RETRY;
            }
            if (live) {
                return FOUND;
            }
            e = link(c, e);
        }
    }

    /**
     * Descending: bypass by bypass (the entries from a sorted entry to the next), from the range's
     * end downwards, to the last live entry in range.
     */
    private int walkDown() {
        runChunk = null;
        runDead = 0;
        Chunk c = hi == null ? map.index().last() : map.index().find(hi, hiPrefix, keys); // not locate: see walkUp
        if (released(c) || !enter(c)) {
            return RETRY;
        }
        int s;
        boolean bounded = hi != null;
        if (hi == null) {
            int t = c.deadAfter(); // dead after its bypass: read first
            if (!fact(c, HINT, t, 0)) {
                return RETRY;
            }
            s = t != Chunk.NO_HINT ? t : c.sortedCount();
            runChunk = c;
            runHint = t;
            runStart = s;
            if (t == Chunk.NO_HINT) {
                int r = peekLast(c);
                if (r == NOT_FOUND_BELOW) {
                    return NOT_FOUND;
                }
                if (r != NOT_FOUND) {
                    return r;
                }
            }
        } else {
            s = c.floorSorted(hi, hiPrefix, keys);
        }
        while (true) {
            int r = bypassDown(c, s, bounded);
            if (runChunk == c && r != RETRY) {
                runSorted = s;
            }
            if (r == NOT_FOUND_BELOW) {
                return NOT_FOUND;
            }
            if (r != NOT_FOUND) {
                return r;
            }
            bounded = false;
            if (s != Chunk.NONE) {
                if (lo != null && belowOrAtLoEnd(c, s)) {
                    return NOT_FOUND; // the sorted entry starting this bypass is at the range's start
                }
                s--;
                continue;
            }
            if (c.minKey == Refs.NULL) {
                return fact(c, CHUNK, 1, 0) ? NOT_FOUND : RETRY; // the first chunk
            }
            Chunk p = map.index().before(c);
            if (released(c) || p == null || released(p) || !enter(p)) {
                return RETRY;
            }
            c = p;
            s = c.sortedCount();
        }
    }

    /**
     * Descending from the end of chunk {@code c}: examines the list's last entry first, known from
     * the chunk's ring of recent ends without walking the bypass that holds it (keys appended in
     * order make that bypass long). The link from it to the end is recorded, so the second walk
     * also sees that nothing was appended after it. @return FOUND, RETRY, or NOT_FOUND to walk on
     */
    private int peekLast(Chunk c) {
        int last = c.lastLinked();
        if (last == Chunk.NONE || !fact(c, LAST, last, 0)) {
            return last == Chunk.NONE ? NOT_FOUND : RETRY;
        }
        int after = link(c, last);
        if (after != Chunk.NONE) {
            return RETRY; // appended to meanwhile
        }
        Boolean live = entry(c, last);
        if (live == null) {
            return RETRY;
        }
        if (!live) {
            return NOT_FOUND;
        }
        if (lo != null && belowLo(c, last)) {
            foundChunk = null;
            return NOT_FOUND_BELOW;
        }
        runSorted = runStart;
        return FOUND;
    }

    /**
     * After an answer was found by a walk from a chunk's end, what scans do to keep the ends of
     * the map cheap to reach (see {@link Chunk}, "Dead prefix", and {@link Cursor}, "The ends of
     * a chunk"): proposes a hint past the dead entries walked, and asks for the chunk's
     * compaction after many dead entries at its end, which hints cannot skip.
     */
    private void tidyEnds(boolean descending) {
        Chunk c = runChunk;
        if (c == null) {
            return;
        }
        if (!descending) {
            if (foundChunk == c && foundEntry != runFirst) {
                c.skipDeadPrefix(runHint, foundEntry, map.liveValues());
            }
            return;
        }
        if (foundChunk == c && runSorted < runStart) {
            c.skipDeadSuffix(runHint, runSorted, map.liveValues());
        }
        if (runDead >= Cursor.COMPACT_AFTER_DEAD) {
            map.compact(c);
        }
    }

    /** The walk from a chunk's end (or head, ascending), for {@link #tidyEnds}: null if it started by key. */
    private Chunk runChunk;
    /** The hint that walk started from. */
    private int runHint;
    /** Ascending: the first entry it examined. */
    private int runFirst;
    /** Descending: the sorted entry whose bypass it started with, and the one whose bypass held the answer. */
    private int runStart;
    private int runSorted;
    /** Descending: dead entries it examined in its first chunk, above the answer. */
    private int runDead;

    /**
     * Walks the bypass of sorted entry {@code s} ({@code NONE}: the head bypass) upwards,
     * recording it, and takes its last live entry in range, if any. With {@code bounded}, entries
     * above the range's end stop the walk.
     */
    private int bypassDown(Chunk c, int s, boolean bounded) {
        int e = s == Chunk.NONE ? link(c, Chunk.NONE) : s;
        int deadAbove = 0;
        int liveEntry = Chunk.NONE; // entries are numbered from 1: NONE means none found
        long liveValue = Refs.NULL;
        while (e != Chunk.NONE && (e == s || !c.isSorted(e))) {
            if (e < 0 || (bounded && aboveHi(c, e))) {
                break;
            }
            Boolean live = entry(c, e);
            if (live == null) {
                return RETRY;
            }
            if (live) {
                liveEntry = e;
                liveValue = foundValue;
                deadAbove = 0;
            } else {
                deadAbove++;
            }
            e = link(c, e);
        }
        if (c == runChunk) {
            runDead += deadAbove;
        }
        if (e < 0) {
            return RETRY;
        }
        if (liveEntry == Chunk.NONE) {
            foundChunk = null;
            return NOT_FOUND;
        }
        if (lo != null && belowLo(c, liveEntry)) {
            foundChunk = null;
            return NOT_FOUND_BELOW;
        }
        foundChunk = c;
        foundEntry = liveEntry;
        foundValue = liveValue;
        return FOUND;
    }

    private boolean released(Chunk c) {
        if (c.isReleased()) {
            replaced = true;
            return true;
        }
        return false;
    }

    private boolean belowLo(Chunk c, int e) {
        int cmp = c.compareAt(lo, loPrefix, e, keys);
        return cmp > 0 || (cmp == 0 && !loInclusive);
    }

    private boolean belowOrAtLoEnd(Chunk c, int s) {
        return c.compareAt(lo, loPrefix, s, keys) >= 0;
    }

    private boolean aboveHi(Chunk c, int e) {
        int cmp = c.compareAt(hi, hiPrefix, e, keys);
        return cmp < 0 || (cmp == 0 && !hiInclusive);
    }
}
