package dev.oakmap.internal.index;

import dev.oakmap.internal.chunk.Chunk;
import dev.oakmap.internal.chunk.KeyOps;

/**
 * The index from each chunk's minimum key to the chunk: a sorted array of chunks, replaced
 * wholesale (copy-on-write) by the rebalancer, under the map's rebalance lock.
 *
 * <p>Lookups binary-search the array, comparing the searched key with chunks' serialized minimum
 * keys; they never lock. A lookup may see a snapshot taken just before a rebalance finished; the
 * chunk it finds is then {@linkplain Chunk#isReleased() released}, and the caller waits for the
 * rebalance and searches again. Since a chunk is released before its replacements are published,
 * a chunk found not released is, at that instant, the one that holds the key's range.
 *
 * <p>A sorted array rather than a skiplist: with thousands of entries per chunk there are few
 * chunks, so republishing costs little, and a search touches one contiguous array instead of
 * a chain of nodes. The array also answers "the chunk before this one" for descending scans.
 *
 * <p>When the chunks' minimum keys share their first bytes (see {@link KeyOps}, "Prefix
 * windows"), a snapshot compares the window after that head instead of the comparator's prefix:
 * each {@link #replace} checks the head against the first and last minimum keys, and if it
 * changes, reads every minimum key's prefix in the new window, under the rebalancer's lock, which
 * keeps those keys from being deleted.
 */
public final class ChunkIndex {
    /**
     * One immutable version of the index: the chunks and, beside them, their min-key prefixes and
     * min-key references. A search step that its prefix cannot decide reads the key reference
     * from the array, so the key's miss does not wait for the chunk object's; the chunk is read
     * too, to validate the key, but in parallel with it. Searches compare {@code windowed}, the
     * min keys' prefixes in the window after {@code head} ({@code prefixes} itself when
     * {@code head} is null); {@code prefixes} are the comparator's, which find a chunk's place.
     */
    private record Snapshot(Chunk[] chunks, long[] prefixes, long[] minKeys, byte[] head, long[] windowed) {
        static Snapshot of(Chunk[] chunks) {
            long[] p = new long[chunks.length];
            long[] k = new long[chunks.length];
            for (int i = 0; i < chunks.length; i++) {
                p[i] = chunks[i].minPrefix;
                k[i] = chunks[i].minKey;
            }
            return new Snapshot(chunks, p, k, null, p);
        }
    }

    private volatile Snapshot snapshot;

    public ChunkIndex(Chunk first) {
        this.snapshot = Snapshot.of(new Chunk[] {first});
    }

    /** @return the chunk whose range holds {@code key} (prefix {@code kp}) in the current snapshot */
    public <K> Chunk find(K key, long kp, KeyOps<K> ops) {
        Snapshot s = snapshot;
        return s.chunks[floor(s, key, kp, ops, true)];
    }

    /**
     * @return the chunk with the greatest minimum key strictly below {@code key}, i.e. the one
     *     holding keys just smaller than {@code key}
     */
    public <K> Chunk findLower(K key, long kp, KeyOps<K> ops) {
        Snapshot s = snapshot;
        return s.chunks[floor(s, key, kp, ops, false)];
    }

    /**
     * A place to split the key range between {@code lo} and {@code hi} in two (a parallel scan's
     * spliterator): among the chunks of the current snapshot whose minimum key lies strictly
     * between the bounds, the middle one.
     *
     * @param lo the lower bound (prefix {@code lop}), or null for none
     * @param hi the upper bound (prefix {@code hip}), or null for none
     * @return that chunk, or null if no chunk starts strictly inside the range
     */
    public <K> Chunk middleBetween(K lo, long lop, K hi, long hip, KeyOps<K> ops) {
        Snapshot s = snapshot;
        int first = lo == null ? 1 : floor(s, lo, lop, ops, true) + 1; // the first minimum key above lo
        int last = hi == null ? s.chunks.length - 1 : floor(s, hi, hip, ops, false); // the last one below hi
        return first <= last ? s.chunks[(first + last) >>> 1] : null;
    }

    /** @return the chunk just before {@code c} in the current snapshot, or null if {@code c} is first or absent */
    public Chunk before(Chunk c) {
        Snapshot s = snapshot;
        Chunk[] a = s.chunks;
        int i = indexOf(s, c);
        return i > 0 ? a[i - 1] : null;
    }

    /** @return the first chunk */
    public Chunk first() {
        return snapshot.chunks[0];
    }

    /** @return the last chunk */
    public Chunk last() {
        Chunk[] a = snapshot.chunks;
        return a[a.length - 1];
    }

    /** @return the current number of chunks */
    public int size() {
        return snapshot.chunks.length;
    }

    /** @return a snapshot of all chunks in order (for diagnostics and clearing) */
    public Chunk[] snapshot() {
        return snapshot.chunks.clone();
    }

    /**
     * Replaces the consecutive chunks {@code old} (in order) with {@code replacements}. Called by
     * the rebalancer only, under the map's lock.
     *
     * @param ops reads the minimum keys when the snapshot's window changes
     */
    public void replace(Chunk[] old, Chunk[] replacements, KeyOps<?> ops) {
        Snapshot s = snapshot;
        Chunk[] a = s.chunks;
        int at = indexOf(s, old[0]);
        if (at < 0) {
            throw new IllegalStateException("rebalanced chunk missing from the index");
        }
        int tail = a.length - at - old.length;
        int n = a.length - old.length + replacements.length;
        Chunk[] chunks = new Chunk[n];
        long[] prefixes = new long[n];
        long[] minKeys = new long[n];
        // the prefixes and min keys are copied like the chunks: reading every chunk's fields
        // again would cost a cache miss per chunk of the whole map on every rebalance
        System.arraycopy(a, 0, chunks, 0, at);
        System.arraycopy(s.prefixes, 0, prefixes, 0, at);
        System.arraycopy(s.minKeys, 0, minKeys, 0, at);
        for (int i = 0; i < replacements.length; i++) {
            chunks[at + i] = replacements[i];
            prefixes[at + i] = replacements[i].minPrefix;
            minKeys[at + i] = replacements[i].minKey;
        }
        System.arraycopy(a, at + old.length, chunks, at + replacements.length, tail);
        System.arraycopy(s.prefixes, at + old.length, prefixes, at + replacements.length, tail);
        System.arraycopy(s.minKeys, at + old.length, minKeys, at + replacements.length, tail);
        snapshot = windowed(s, chunks, prefixes, minKeys, at, replacements.length, ops); // volatile publication
    }

    /**
     * The snapshot of the given arrays, with its window: {@code s}'s head if it still suits the
     * first and last minimum keys (then only the {@code count} new chunks from {@code at} have
     * their windowed prefixes read), else a new one, for which every minimum key's is. If a key
     * cannot be read, or the heap has no room for the window's arrays, the snapshot compares the
     * comparator's prefixes instead: the chunks are released already, so this must not fail
     * (short of the heap failing the snapshot itself, as it could before windows).
     */
    private static Snapshot windowed(Snapshot s, Chunk[] chunks, long[] prefixes, long[] minKeys, int at, int count,
                                     KeyOps<?> ops) {
        int n = chunks.length;
        try {
            // a[0] covers everything below a[1]: its minimum key is not compared
            byte[] head = n < 3 ? null : ops.windowFor(minKeys[1], minKeys[n - 1], null, s.head, KeyOps.MIN_WINDOW_GAIN);
            if (head == null) {
                return new Snapshot(chunks, prefixes, minKeys, null, prefixes);
            }
            long[] w = new long[n];
            if (head == s.head) {
                System.arraycopy(s.windowed, 0, w, 0, at);
                System.arraycopy(s.windowed, s.windowed.length - (n - at - count), w, at + count, n - at - count);
                for (int i = Math.max(at, 1); i < at + count; i++) {
                    w[i] = ops.prefixOf(minKeys[i], head);
                }
            } else {
                for (int i = 1; i < n; i++) {
                    w[i] = ops.prefixOf(minKeys[i], head);
                }
            }
            return new Snapshot(chunks, prefixes, minKeys, head, w);
        } catch (RuntimeException | Error e) {
            return new Snapshot(chunks, prefixes, minKeys, null, prefixes);
        }
    }

    /** Drops every chunk (when the map is closed), keeping one empty chunk so lookups stay safe. */
    public void clear(Chunk empty) {
        snapshot = Snapshot.of(new Chunk[] {empty});
    }

    private static <K> int floor(Snapshot s, K key, long kp, KeyOps<K> ops, boolean inclusive) {
        Chunk[] a = s.chunks;
        long[] p = s.windowed;
        long[] k = s.minKeys;
        kp = ops.prefixAt(key, kp, s.head);
        int lo = 1, hi = a.length - 1, found = 0; // a[0] covers everything below a[1]
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            long mp = p[mid];
            // the chunk object is read only on a prefix tie, to validate the key read beside it
            int c = kp != mp ? Long.compareUnsigned(kp, mp) : ops.compare(key, k[mid], a[mid]);
            if (c > 0 || (c == 0 && inclusive)) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    /**
     * @return the position of {@code c} in snapshot {@code s}, or -1. Chunks are in key order, so
     *     their min-key prefixes are non-decreasing (unsigned): a binary search finds the first
     *     chunk with {@code c}'s prefix, and only chunks sharing it are compared by identity
     *     (all chunks are, as a last resort, if that fails).
     */
    private static int indexOf(Snapshot s, Chunk c) {
        Chunk[] a = s.chunks;
        long[] p = s.prefixes;
        long target = c.minPrefix;
        int lo = 0, hi = a.length; // first position whose prefix is >= target
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(p[mid], target) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        for (int i = lo; i < a.length && p[i] == target; i++) {
            if (a[i] == c) {
                return i;
            }
        }
        for (int i = 0; i < a.length; i++) { // absent, or prefixes that break their contract
            if (a[i] == c) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public String toString() {
        return "ChunkIndex[" + size() + " chunks]";
    }
}
