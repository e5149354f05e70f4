package dev.oakmap.internal.chunk;

import dev.oakmap.internal.memory.Refs;
import dev.oakmap.internal.wait.Backoff;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.LongPredicate;

/**
 * A chunk: the on-heap metadata of a contiguous key range {@code [minKey, next.minKey)}.
 *
 * <h2>Entries</h2>
 * Entries live in primitive arrays, indexed from 1: {@code refs} holds each entry's key and value
 * references side by side (a lookup that finds an entry reads both, and they share a cache line),
 * {@code prefixes} (32-bit, see below) and {@code next} (16-bit links) one element per entry: 22
 * bytes per slot.
 * Index 0 is the head of the entries' linked list and {@link #NONE} (0) also ends the list. The
 * list links every published entry in increasing key order. When a chunk is created (by a
 * rebalance), its entries {@code 1..sortedCount} hold its keys in order, each linked to the
 * one after it, so this <em>sorted prefix</em> can be binary searched. Later insertions take the
 * next free array slot ({@code allocated}, fetch-and-add) and are linked into the list with a CAS
 * on their predecessor's {@code next}, forming short "bypasses" between sorted entries. A key
 * appears in at most one linked entry: linking re-checks the successor under the CAS.
 *
 * <p>A key reference is written before its entry is linked and never changes; the linking CAS
 * (release) and the acquire reads of {@code next} make it visible to traversals. The value
 * reference of an entry starts as {@link Refs#NULL} and is changed only by CAS between
 * {@link #publish()} and {@link #unpublish()}; whether a value is present is decided by the value
 * header (see {@code SliceManager}), not by the entry alone.
 *
 * <h2>Summary</h2>
 * A binary search over 4,096 sorted prefixes touches about ten cache lines of the prefix array,
 * most of them outside the core's caches in a large map. So a chunk also keeps a
 * <em>summary</em>, the prefix of every {@link #SUMMARY_STRIDE}-th sorted entry: a sixteenth of
 * the size, small enough that the summaries of a whole map stay in the L2 cache. A search first
 * narrows its range with the summary, by prefix comparisons alone (strict ones: prefixes are
 * monotone in key order but may tie), then finishes in a span of {@code SUMMARY_STRIDE} entries,
 * two lines of prefixes. The sorted prefix never changes, so neither does the summary.
 *
 * <h2>Prefixes</h2>
 * The comparator's 64-bit key prefix decides most comparisons on-heap, but a chunk keeps only 32
 * bits of it per entry: {@code (p >>> prefixShift) - prefixBase}, clamped to {@code [0, 2^32)}.
 * That map is monotone, so comparing two 32-bit forms is as sound as comparing the prefixes
 * (strictly: a tie decides nothing), and a search converts its key's prefix once per chunk. The
 * shift and base fit the keys a chunk is built with: they span under a quarter of the 32 bits,
 * with a quarter below them and half above as room for insertions (keys that arrive in order,
 * such as timestamps, land above); keys beyond the room clamp, and compare in full on a tie.
 * Since the form drops low bits, a rebalance cannot recompute a finer one from it: it copies
 * {@link #prefixFloor} (the prefix with the bits below the shift zeroed) and builds chunks with a
 * shift no smaller ({@link #prefixShift}). It reads a key's exact prefix when the form was clamped
 * ({@link #prefixKnown}), and for all of a new chunk's keys when the inherited shift leaves many
 * ties; so precision is regained where it matters (the first chunk is built empty, with the top
 * 32 bits, which cannot tell small integers apart). 32 bits instead of 64 save 4 bytes per slot
 * and halve the lines a binary search touches.
 *
 * <p>The 64-bit prefix is the comparator's, or, when the chunk has a {@link #head()}, the
 * window after that head (see {@code KeyOps}, "Prefix windows"): keys that share their first
 * bytes tie on the comparator's prefix, so a chunk whose keys share a head compares the bytes
 * after it instead. The head is fixed when the chunk is built; every prefix of the chunk, stored
 * or searched, is taken in its window ({@link #localPrefix(Object, long, KeyOps)}).
 *
 * <h2>Freezing</h2>
 * {@code pending} counts published operations, with the {@link #FROZEN} bit on top. A rebalance
 * claims the chunk by setting the bit ({@link #tryFreeze}: whoever sets it first owns the chunk)
 * and waits for the count to drain; after that no value reference of this chunk changes again,
 * so a copy taken then is exact. Entries may still be linked into a frozen
 * chunk, but they cannot receive a value, so copies ignore them. Lookups and scans go on reading
 * frozen and even released chunks: their contents stay valid.
 *
 * <h2>Dead prefix</h2>
 * Removing a mapping leaves its entry linked (without a live value) until a rebalance compacts
 * the chunk, which waits until half of the entries are removed. A queue-like use (take the first
 * key, remove it, repeat) would then walk an ever longer run of dead entries at the head of the
 * list on every call. So the chunk keeps a hint, {@code liveFrom}: an entry before which every
 * entry of the list is known to hold no live value; a search for the first live entry starts
 * there instead of at the head. Two rules keep it sound, with {@code liveFrom}, {@code pending}
 * and the value references accessed as volatile (sequentially consistent) variables:
 * <ul>
 * <li>A cursor that walked from the hint {@code h} (or from the head, {@code h == NONE}) past
 *     dead entries to the first live entry {@code e} <em>proposes</em> {@code e} by a CAS from
 *     {@code h} to a tentative {@code e}, which searches ignore. Then, if no installation is
 *     published in the chunk ({@code pending} is zero), it walks again from {@code h} (or from
 *     the head) to {@code e}, and only if every entry is still dead does it make the hint
 *     {@code e}, by a CAS from the tentative value ({@link #skipDeadPrefix}).
 * <li>Whoever installs a value into an entry (a new entry, or one whose value was removed)
 *     publishes, then withdraws the hint, proposed or made, if the entry may come before it,
 *     and only then CASes the value in ({@link #beforeInstall}).
 * </ul>
 * If the installer reads the hint after the proposal, it withdraws it before its value is
 * visible, and the proposer's last CAS fails. Otherwise it published before the proposal; then
 * either it is still published when the proposer checks, which gives up, or it has installed by
 * then, and the proposer's second walk sees the value. So no hint that is made ever covers a live
 * entry, and no search, by any thread, skips a value once it is visible. (Lincheck found the
 * histories that ruled out simpler orders: a hint made before the second walk could be used by
 * the installing thread itself; a hint withdrawn after the value's CAS could be used by a thread
 * that had already seen the value.) An entry linked before the cursor's first walk started is
 * met by its second walk, which starts from the head when the hint did. The hint is only an
 * optimization: a proposal that fails leaves it to a later cursor.
 *
 * <p>The end of the list has the mirror hint for descending searches (a stack-like use, or
 * removals of the newest keys), {@code deadAfter}: a sorted entry {@code t} such that the sorted
 * entries after it, and the entries inserted after those, hold no live value, so a search for
 * the last live entry starts at the bypass of {@code t} instead of that of the last sorted entry.
 * It follows the same two rules ({@link #skipDeadSuffix}, {@link #beforeInstall}).
 *
 * <h2>Lifecycle</h2>
 * NORMAL → frozen (being rebalanced) → released (replaced in the list and the index) → keys
 * deleted. Released chunks are left to the garbage collector. Their keys stay readable until the
 * rebalancer, once the replacements are in the index, marks the chunk ({@link #markKeysDeleted})
 * and deletes the keys no replacement links; under a reclaiming key scheme their memory may then
 * be reused, so every key read through a chunk is validated against that mark
 * ({@link #keysIntact}), and fails as stale once it is set, whether or not that key was among
 * those deleted.
 *
 * <h2>Moves</h2>
 * A rebalance may also move the live pairs of the chunks it replaces into fresh memory in key
 * order (see {@code Rebalancer}, "Placement"). It then records here, before {@link #release()},
 * where each moved value went: the replacement chunk, its entry there and the new value
 * reference ({@link #recordMove}); values it left in place are recorded too, with their own
 * reference, since a later rebalance may move them. The record is written once, under the
 * rebalancer's lock, and read only by threads that saw the chunk released (the volatile
 * {@code released} orders it), so that a zero-copy view of a moved value can follow it
 * ({@link #movedValue}).
 */
public final class Chunk {
    /** The null entry index: the list head, and the end of the list. */
    public static final int NONE = 0;
    /** The value of {@link #deadAfter()} when there is no dead-suffix hint. */
    public static final int NO_HINT = -1;
    /** Marks a hint that is only proposed: searches ignore it (see "Dead prefix"). */
    private static final int TENTATIVE = 1 << 30;

    private static final int FROZEN = 1 << 31;
    /** Size of the ring of recent list ends (a power of two). */
    private static final int ENDS = 8;
    /** Largest 32-bit form of a prefix (see "Prefixes"), unbiased. */
    private static final long MAX_LOCAL = 0xFFFF_FFFFL;
    /** A chunk's entries span less than this of the 32-bit range when it is built: the rest is room to grow. */
    private static final long SPAN = 1L << 30;
    /** The largest shift a chunk needs: {@code 64 - 34} bits span less than {@link #SPAN}. */
    private static final int MAX_SHIFT = 34;
    /** The shift of a chunk built empty: the top 32 bits of a prefix. */
    private static final int EMPTY_SHIFT = 32;
    /** Sorted entries per summary element. */
    static final int SUMMARY_STRIDE = 16;

    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle INTS = MethodHandles.arrayElementVarHandle(int[].class);
    /**
     * List links as unsigned 16-bit entry indexes: 2 bytes per slot instead of 4, about 2.5 bytes
     * per pair at the usual 1.28 slots per pair. Hence {@link #MAX_CAPACITY}.
     */
    private static final VarHandle LINKS = MethodHandles.arrayElementVarHandle(char[].class);
    /** The most entries a chunk may hold: entry indexes, from 1, must fit the 16-bit links. */
    public static final int MAX_CAPACITY = Character.MAX_VALUE;
    private static final VarHandle ALLOCATED;
    private static final VarHandle PENDING;
    private static final VarHandle REMOVED;
    private static final VarHandle LIVE_FROM;
    private static final VarHandle DEAD_AFTER;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            ALLOCATED = l.findVarHandle(Chunk.class, "allocated", int.class);
            PENDING = l.findVarHandle(Chunk.class, "pending", int.class);
            REMOVED = l.findVarHandle(Chunk.class, "removed", int.class);
            LIVE_FROM = l.findVarHandle(Chunk.class, "liveFrom", int.class);
            DEAD_AFTER = l.findVarHandle(Chunk.class, "deadAfter", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Reference of the smallest key this chunk may hold; {@link Refs#NULL} for the first chunk. */
    public final long minKey;
    /** The comparator prefix of {@link #minKey} (0 for the first chunk). */
    public final long minPrefix;
    private final int capacity;
    private final int sortedCount;
    /** Key reference of entry {@code ei} at {@code 2 * ei}, its value reference at {@code 2 * ei + 1}. */
    private final long[] refs;
    /** Each entry's key prefix in this chunk's 32-bit form (see "Prefixes"). */
    private final int[] prefixes;
    /** The prefix of sorted entry {@code 1 + j * SUMMARY_STRIDE} at {@code j} (see the class comment). */
    private final int[] summary;
    /** The 32-bit form of a prefix {@code p} is {@code (p >>> prefixShift) - prefixBase}, clamped (see "Prefixes"). */
    private final int prefixShift;
    private final long prefixBase;
    /** The entries list: the entry after entry {@code ei}, as an unsigned index (see {@link #LINKS}). */
    private final char[] next;
    /** The bytes this chunk's keys share, whose window its prefixes are taken in; null: the comparator's prefix. */
    private final byte[] head;

    private volatile int allocated;
    /**
     * The last {@link #ENDS} entries linked at the end of the list (and, first, the last sorted
     * entry), a ring written at {@code endCount}: see {@link #startPoint}. Racy by design: writers
     * may overwrite each other's slots and leave them out of key order, but every slot holds a
     * linked entry (written with release after its linking CAS), and any linked entry with a key
     * below the searched one is a valid place to start walking.
     */
    private final int[] ends = new int[ENDS];
    private volatile int endCount;
    private volatile int pending;
    private volatile int removed;
    private volatile boolean released;
    /** Set before the rebalancer deletes any key this chunk links (see "Lifecycle"). */
    private volatile boolean keysDeleted;
    /** Every entry before this one in the list holds no live value; {@link #NONE}: no such hint (see "Dead prefix"). */
    private volatile int liveFrom;
    /**
     * The sorted entries after this one, and their bypasses, hold no live value; {@link #NO_HINT}:
     * no such hint (see "Dead prefix").
     */
    private volatile int deadAfter = NO_HINT;
    /** The next chunk in key order; changed only by the rebalancer, under the map's lock. */
    public volatile Chunk nextChunk;

    /**
     * Creates a chunk with {@code capacity} entry slots whose sorted prefix is {@code count}
     * entries copied from the given arrays, which must be in increasing key order.
     *
     * @param srcPrefixes the entries' key prefixes, exact in their bits from {@code minShift} up
     *     (lower bits are ignored: see "Prefixes")
     * @param minShift the least shift the chunk's 32-bit prefixes may use
     * @param head the head whose window {@code srcPrefixes} are taken in, or null for the
     *     comparator's prefix (see "Prefixes"); not copied, never changed
     */
    public Chunk(long minKey, long minPrefix, int capacity, long[] srcKeys, long[] srcPrefixes, long[] srcValues,
                 int from, int count, int minShift, byte[] head) {
        if (count > capacity || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException(count + " entries, capacity " + capacity + " (at most " + MAX_CAPACITY + ")");
        }
        this.minKey = minKey;
        this.minPrefix = minPrefix;
        this.capacity = capacity;
        this.sortedCount = count;
        this.head = head;
        if (count == 0) {
            this.prefixShift = Math.max(minShift, EMPTY_SHIFT);
            this.prefixBase = 0;
        } else {
            long lo = srcPrefixes[from];
            this.prefixShift = shiftFor(lo, srcPrefixes[from + count - 1], minShift);
            this.prefixBase = baseFor(lo, prefixShift);
        }
        this.refs = new long[2 * (capacity + 1)];
        this.prefixes = new int[capacity + 1];
        this.next = new char[capacity + 1];
        for (int i = 0; i < count; i++) {
            refs[2 * (i + 1)] = srcKeys[from + i];
            refs[2 * (i + 1) + 1] = srcValues[from + i];
            prefixes[i + 1] = localPrefix(srcPrefixes[from + i]);
        }
        this.summary = new int[(count + SUMMARY_STRIDE - 1) / SUMMARY_STRIDE];
        for (int j = 0; j < summary.length; j++) {
            summary[j] = prefixes[1 + j * SUMMARY_STRIDE];
        }
        for (int i = 0; i < count; i++) {
            next[i] = (char) (i + 1);
        }
        next[count] = (char) NONE;
        this.allocated = count;
        ends[0] = count;
        this.endCount = 1;
    }

    /** @return an empty chunk covering the whole key space (the initial chunk of a map) */
    public static Chunk empty(int capacity) {
        return new Chunk(Refs.NULL, 0L, capacity, new long[0], new long[0], new long[0], 0, 0, 0, null);
    }

    // ---------------------------------------------------------------- prefixes

    /**
     * The shift for a chunk whose entries' prefixes run from {@code lo} to {@code hi}: the least
     * one, at least {@code minShift}, that spans them in under a quarter of the 32-bit range.
     */
    public static int shiftFor(long lo, long hi, int minShift) {
        int s = minShift;
        // ends by MAX_SHIFT, where any two prefixes in order are less than 2^30 apart (and
        // prefixes out of order, from a comparator that breaks its contract, stop there too)
        while (s < MAX_SHIFT && Long.compareUnsigned((hi >>> s) - (lo >>> s), SPAN) >= 0) {
            s++;
        }
        return s;
    }

    /** @return the base that puts {@code lo} a quarter of the 32-bit range up (or at 0 if it is that small) */
    private static long baseFor(long lo, int shift) {
        long u = lo >>> shift;
        return Long.compareUnsigned(u, SPAN) < 0 ? 0 : u - SPAN;
    }

    /**
     * @return the 32-bit form of prefix {@code p} in this chunk, biased so that signed comparison
     *     orders it: monotone in {@code p}, clamped below 0 and above {@link #MAX_LOCAL}
     */
    int localPrefix(long p) {
        long u = p >>> prefixShift;
        long d = Long.compareUnsigned(u, prefixBase) < 0 ? 0 : u - prefixBase;
        if (Long.compareUnsigned(d, MAX_LOCAL) > 0) {
            d = MAX_LOCAL;
        }
        return (int) d ^ Integer.MIN_VALUE;
    }

    /**
     * @return the 32-bit form, in this chunk, of {@code key}, whose comparator prefix is {@code kp}:
     *     in the window after the chunk's head if it has one (which may serialize the key), so a
     *     caller that compares one key with many entries computes it once ({@link #compareLocal})
     */
    public <K> int localPrefix(K key, long kp, KeyOps<K> ops) {
        return localPrefix(head == null ? kp : ops.prefixAt(key, kp, head));
    }

    /** @return the head whose window this chunk's prefixes are taken in, or null for the comparator's prefix */
    public byte[] head() { return head; }

    /** @return the shift of this chunk's 32-bit prefixes: the rebalancer's copies keep at least this one */
    public int prefixShift() { return prefixShift; }

    /**
     * @return whether {@link #prefixFloor} knows the prefix of entry {@code ei}'s key, that is, its
     *     32-bit form was not clamped
     */
    public boolean prefixKnown(int ei) {
        long q = unbiased(prefixes[ei]);
        boolean clampsAbove = Long.compareUnsigned((-1L >>> prefixShift) - prefixBase, MAX_LOCAL) >= 0;
        return !(q == 0 && prefixBase != 0) && !(q == MAX_LOCAL && clampsAbove);
    }

    /**
     * @return the prefix of entry {@code ei}'s key with its bits below {@link #prefixShift} zeroed;
     *     meaningful if {@link #prefixKnown}
     */
    public long prefixFloor(int ei) {
        return (unbiased(prefixes[ei]) + prefixBase) << prefixShift;
    }

    private static long unbiased(int local) {
        return (local ^ Integer.MIN_VALUE) & MAX_LOCAL;
    }

    // ---------------------------------------------------------------- entry accessors

    public int capacity() { return capacity; }

    public int sortedCount() { return sortedCount; }

    /** @return the number of allocated entries (may exceed capacity after failed allocations) */
    public int allocatedCount() { return Math.min(allocated, capacity); }

    /** @return the key reference of entry {@code ei} (immutable once linked) */
    public long keyRef(int ei) { return refs[2 * ei]; }

    /** Compares {@code key} (prefix {@code kp}) with the key of entry {@code ei}. */
    public <K> int compareAt(K key, long kp, int ei, KeyOps<K> ops) {
        return compareLocal(key, localPrefix(key, kp, ops), ei, ops);
    }

    /** {@link #compareAt} with the key's prefix in this chunk's 32-bit form ({@link #localPrefix(Object, long, KeyOps)}). */
    public <K> int compareLocal(K key, int lp, int ei, KeyOps<K> ops) {
        int p = prefixes[ei];
        if (lp != p) {
            return Integer.compare(lp, p); // decided on-heap: the refs array is not touched
        }
        return ops.compare(key, refs[2 * ei], this);
    }

    /** @return the value reference of entry {@code ei}, read with acquire */
    public long valueRef(int ei) { return (long) LONGS.getAcquire(refs, 2 * ei + 1); }

    /** @return the successor of entry {@code ei} (or of the head, for {@link #NONE}), read with acquire */
    public int nextEntry(int ei) { return (char) LINKS.getAcquire(next, ei); }

    /** CAS of an entry's value reference; the caller must have {@linkplain #publish() published}. */
    public boolean casValue(int ei, long expected, long update) {
        return LONGS.compareAndSet(refs, 2 * ei + 1, expected, update);
    }

    /** @return true if {@code ei} belongs to the sorted prefix */
    public boolean isSorted(int ei) { return ei >= 1 && ei <= sortedCount; }

    // ---------------------------------------------------------------- search

    /**
     * @return the sorted entry with the greatest key ≤ {@code key}, or {@link #NONE} if every
     *     sorted key is greater (then the search starts at the head)
     */
    public <K> int floorSorted(K key, long kp, KeyOps<K> ops) {
        return floorSorted(key, localPrefix(key, kp, ops), sortedCount, ops);
    }

    /** {@link #floorSorted(Object, long, KeyOps)} among the sorted entries {@code 1..hi}. */
    private <K> int floorSorted(K key, int lp, int hi, KeyOps<K> ops) {
        int lo = 1, found = NONE;
        if (hi > 2 * SUMMARY_STRIDE) {
            // narrow [lo, hi] by the summary: an entry whose prefix is below the key's has a smaller key
            // (a floor candidate), one whose prefix is above it a greater key (an upper bound)
            int last = (hi - 1) / SUMMARY_STRIDE; // the summary elements of entries 1..hi
            int below = lastSummaryBelow(lp, last);
            if (below >= 0) {
                found = 1 + below * SUMMARY_STRIDE;
                lo = found + 1;
            }
            int above = firstSummaryAbove(lp, below + 1, last);
            if (above <= last) {
                hi = Math.min(hi, above * SUMMARY_STRIDE);
            }
        }
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int c = compareLocal(key, lp, mid, ops);
            if (c == 0) {
                return mid;
            }
            if (c > 0) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    /** @return the greatest {@code j <= last} whose summary prefix is below {@code lp}, or -1 */
    private int lastSummaryBelow(int lp, int last) {
        int lo = 0, hi = last, found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (summary[mid] < lp) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    /**
     * @return the least {@code j} in {@code [from, last]} whose summary prefix is above {@code lp}, or {@code last + 1}
     */
    private int firstSummaryAbove(int lp, int from, int last) {
        int lo = from, hi = last, found = last + 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (summary[mid] > lp) {
                found = mid;
                hi = mid - 1;
            } else {
                lo = mid + 1;
            }
        }
        return found;
    }

    /**
     * Where a search for {@code key} starts. Keys within the sorted range are binary searched.
     * Keys above the last sorted key fall in the region that grows by insertions since the chunk
     * was built, where a walk from the last sorted entry could be long (keys arriving roughly in
     * order, such as timestamps, all land there): the ring of recent list ends is checked from
     * the newest, and the walk starts at the first end below the key. One comparison (with the
     * last sorted key) is all this costs keys within the sorted range.
     *
     * @return {@code ~ei} (negative) if entry {@code ei} holds {@code key}; otherwise a linked
     *     entry whose key is below {@code key}, or {@link #NONE} for the head
     */
    private <K> int startPoint(K key, int lp, KeyOps<K> ops) {
        int s = sortedCount;
        if (s > 0) {
            int c = compareLocal(key, lp, s, ops);
            if (c == 0) {
                return ~s;
            }
            if (c < 0) {
                int f = floorSorted(key, lp, s - 1, ops);
                return f != NONE && compareLocal(key, lp, f, ops) == 0 ? ~f : f;
            }
        }
        int n = endCount;
        for (int i = 1; i <= ENDS; i++) {
            int e = (int) INTS.getAcquire(ends, (n - i) & (ENDS - 1)); // acquire: e's key is visible
            if (e == NONE || e == s) {
                break; // older ends are below the last sorted key too
            }
            int c = compareLocal(key, lp, e, ops);
            if (c == 0) {
                return ~e;
            }
            if (c > 0) {
                return e;
            }
        }
        return s;
    }

    /**
     * @return the last entry of the list now, if the ring of recent list ends holds it (an entry
     *     there whose successor is {@link #NONE}), else {@link #NONE}
     */
    public int lastLinked() {
        int n = endCount;
        for (int i = 1; i <= ENDS; i++) {
            int e = (int) INTS.getAcquire(ends, (n - i) & (ENDS - 1)); // acquire: e is linked
            if (e != NONE && nextEntry(e) == NONE) {
                return e;
            }
        }
        return NONE;
    }

    /** Records {@code ei}, just linked at the end of the list, in the ring of recent ends. */
    private void recordEnd(int ei) {
        int n = endCount; // racy increment: a lost update only overwrites a hint
        INTS.setRelease(ends, n & (ENDS - 1), ei);
        endCount = n + 1;
    }

    /** @return the linked entry holding {@code key}, or {@link #NONE} */
    public <K> int lookUp(K key, long kp, KeyOps<K> ops) {
        int lp = localPrefix(key, kp, ops);
        int start = startPoint(key, lp, ops);
        return start < 0 ? ~start : walk(key, lp, nextEntry(start), ops);
    }

    /** @return the entry holding {@code key}, walking the list from {@code cur}, or {@link #NONE} */
    private <K> int walk(K key, int lp, int cur, KeyOps<K> ops) {
        while (cur != NONE) {
            int c = compareLocal(key, lp, cur, ops);
            if (c == 0) {
                return cur;
            }
            if (c < 0) {
                return NONE;
            }
            cur = nextEntry(cur);
        }
        return NONE;
    }

    /**
     * @return the linked entry with the smallest key ≥ {@code key} (or &gt; if not inclusive),
     *     or {@link #NONE}
     */
    public <K> int ceilingEntry(K key, long kp, boolean inclusive, KeyOps<K> ops) {
        int lp = localPrefix(key, kp, ops);
        int cur = floorSorted(key, lp, sortedCount, ops);
        if (cur == NONE) {
            cur = nextEntry(NONE);
        }
        while (cur != NONE) {
            int c = compareLocal(key, lp, cur, ops);
            if (c < 0 || (c == 0 && inclusive)) {
                return cur;
            }
            cur = nextEntry(cur);
        }
        return NONE;
    }

    // ---------------------------------------------------------------- dead prefix

    /** @return the dead-prefix hint (see "Dead prefix"): an entry, or {@link #NONE} for the head */
    public int liveFrom() {
        int h = liveFrom;
        return (h & TENTATIVE) != 0 ? NONE : h;
    }

    /**
     * Called by a cursor that started at hint {@code from} ({@link #NONE}: at the head) and found
     * entry {@code live} to be the first with a live value, all entries before it being dead:
     * proposes {@code live} as the hint, checks the skipped entries again, and makes the proposal
     * the hint only if none of them became live and no installation withdrew it meanwhile (see
     * "Dead prefix").
     *
     * @param isLive whether a value reference is live (its header says so)
     */
    public void skipDeadPrefix(int from, int live, LongPredicate isLive) {
        int proposed = live | TENTATIVE;
        if (live == NONE || !LIVE_FROM.compareAndSet(this, from, proposed)) {
            return;
        }
        boolean dead = false;
        try {
            dead = noInstallPublished() && deadBetween(from == NONE ? nextEntry(NONE) : from, live, isLive);
        } finally {
            LIVE_FROM.compareAndSet(this, proposed, dead ? live : NONE); // fails if an installation withdrew it
        }
    }

    /**
     * @return the dead-suffix hint (see "Dead prefix"): a sorted entry whose successors in the
     *     sorted prefix, with their bypasses, hold no live value, or {@link #NO_HINT}
     */
    public int deadAfter() {
        int t = deadAfter;
        return (t & TENTATIVE) != 0 ? NO_HINT : t;
    }

    /**
     * Called by a descending cursor that started at the bypass of sorted entry {@code from}
     * (the hint it read, or the last sorted entry for {@link #NO_HINT}) and found the last live
     * entry in the bypass of sorted entry {@code s < from}, every entry after it being dead:
     * proposes {@code s} as the hint, checks the entries it newly covers again (from sorted entry
     * {@code s + 1} to the region the old hint covered), and makes the proposal the hint only if
     * none of them became live and no installation withdrew it meanwhile.
     *
     * @param hint the hint the cursor read ({@link #NO_HINT} if none)
     */
    public void skipDeadSuffix(int hint, int s, LongPredicate isLive) {
        int proposed = s | TENTATIVE;
        if (s < NONE || s >= sortedCount || !DEAD_AFTER.compareAndSet(this, hint, proposed)) {
            return;
        }
        boolean dead = false;
        try {
            dead = noInstallPublished() && deadBetween(s + 1, hint == NO_HINT ? NONE : hint + 1, isLive);
        } finally {
            DEAD_AFTER.compareAndSet(this, proposed, dead ? s : NO_HINT); // fails if an installation withdrew it
        }
    }

    /**
     * @return true if no operation that may install a value is published now (a volatile read,
     *     after the proposal's CAS: see "Dead prefix")
     */
    private boolean noInstallPublished() {
        return (pending & ~FROZEN) == 0;
    }

    /**
     * The second walk of a hint's proposer, after its CAS: whether the entries from {@code from}
     * (inclusive) to {@code to} (exclusive, {@link #NONE} for the list's end) all hold no live
     * value. The value references are read with volatile semantics, after the proposal and the
     * check of {@code pending}, so that they come after both in the total order.
     */
    private boolean deadBetween(int from, int to, LongPredicate isLive) {
        for (int e = from; e != to; e = nextEntry(e)) {
            if (e == NONE) {
                return false; // "to" is not ahead: cannot happen, as lists only grow; no hint then
            }
            long v = (long) LONGS.getVolatile(refs, 2 * e + 1);
            if (v != Refs.NULL && isLive.test(v)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Called by an operation that is about to install a value into entry {@code ei}: after it
     * {@linkplain #publish() published}, before the CAS that makes the value visible. Withdraws
     * the dead-prefix hint, proposed or made, if {@code ei} may come before it in key order, and
     * the dead-suffix hint if {@code ei} may lie in the region it covers, so that no search skips
     * the value (see "Dead prefix"). Prefixes decide; a tie counts against the hint.
     */
    public void beforeInstall(int ei) {
        int p = prefixes[ei];
        for (int h = liveFrom; h != NONE; h = liveFrom) {
            int e = h & ~TENTATIVE;
            if (e == ei || p > prefixes[e]) {
                break; // ei is the hint (searches start there), or lies after it
            }
            if (LIVE_FROM.compareAndSet(this, h, NONE)) {
                break;
            }
        }
        for (int t = deadAfter; t != NO_HINT; t = deadAfter) {
            if (p < prefixes[(t & ~TENTATIVE) + 1]) {
                break; // ei lies before the region the hint covers
            }
            if (DEAD_AFTER.compareAndSet(this, t, NO_HINT)) {
                break;
            }
        }
    }

    // ---------------------------------------------------------------- insertion

    /** Claims a free entry slot. @return its index, or {@link #NONE} if the chunk is full */
    public int allocateEntry() {
        if (allocated >= capacity || isFrozen()) {
            return NONE;
        }
        int ei = (int) ALLOCATED.getAndAdd(this, 1) + 1;
        return ei <= capacity ? ei : NONE;
    }

    /**
     * Links the allocated entry {@code ei}, holding {@code keyRef} for {@code key}, into the list,
     * unless an entry with an equal key is already linked.
     *
     * @return {@code ei} if it was linked, otherwise the existing entry for the key
     */
    public <K> int link(int ei, long keyRef, K key, long kp, KeyOps<K> ops) {
        refs[2 * ei] = keyRef; // published by the linking CAS below
        int lp = localPrefix(key, kp, ops);
        prefixes[ei] = lp;
        int prev = startPoint(key, lp, ops);
        if (prev < 0) {
            return ~prev;
        }
        while (true) {
            int cur = nextEntry(prev);
            while (cur != NONE) {
                int c = compareLocal(key, lp, cur, ops);
                if (c == 0) {
                    return cur;
                }
                if (c < 0) {
                    break;
                }
                prev = cur;
                cur = nextEntry(cur);
            }
            LINKS.setRelease(next, ei, (char) cur);
            if (LINKS.compareAndSet(next, prev, (char) cur, (char) ei)) { // release: key and next of ei visible
                if (cur == NONE) {
                    recordEnd(ei);
                }
                return ei;
            }
            // a concurrent insertion after prev: rescan from prev, whose key is still < key
        }
    }

    // ---------------------------------------------------------------- publish / freeze

    /** Announces an operation that will CAS a value reference. @return false if frozen */
    public boolean publish() {
        while (true) {
            int p = pending;
            if ((p & FROZEN) != 0) {
                return false;
            }
            if (PENDING.compareAndSet(this, p, p + 1)) {
                return true;
            }
        }
    }

    /** Ends a published operation. */
    public void unpublish() {
        PENDING.getAndAdd(this, -1);
    }

    /**
     * Claims this chunk for a rebalance: stops new publications and waits for pending ones to
     * finish (they are a CAS each, and wait for nothing). Only one caller can claim a chunk, and a
     * released chunk stays frozen, so it cannot be claimed again.
     *
     * @return false, at once, if the chunk was already frozen (another rebalance has it, or had it)
     */
    public boolean tryFreeze() {
        int before = (int) PENDING.getAndBitwiseOr(this, FROZEN);
        if ((before & FROZEN) != 0) {
            return false;
        }
        for (int spins = 0; (pending & ~FROZEN) != 0; spins++) {
            Backoff.pause(spins);
        }
        return true;
    }

    /** Undoes a {@link #tryFreeze()} whose rebalance failed, so the chunk stays usable and can be claimed again. */
    public void unfreeze() {
        PENDING.getAndBitwiseAnd(this, ~FROZEN);
    }

    public boolean isFrozen() { return (pending & FROZEN) != 0; }

    public boolean isReleased() { return released; }

    /** Marks this chunk replaced; done before its replacements are linked. */
    public void release() { released = true; }

    /** Moves recorded by the rebalance that replaced this chunk (see "Moves"); null if none. */
    private long[] movedRefs;
    private Chunk[] movedChunks;
    private int[] movedEntries;

    /**
     * Records that the value of entry {@code ei} is now reference {@code ref} (the same one, if
     * it was not moved), held by entry {@code toEi} of chunk {@code to}. Called by the
     * rebalancer, before {@link #release()}.
     */
    public void recordMove(int ei, Chunk to, int toEi, long ref) {
        if (movedRefs == null) {
            movedRefs = new long[capacity + 1];
            movedChunks = new Chunk[capacity + 1];
            movedEntries = new int[capacity + 1];
        }
        movedRefs[ei] = ref;
        movedChunks[ei] = to;
        movedEntries[ei] = toEi;
    }

    /**
     * @return the reference that value {@code ref}, read from entry {@code ei} of this chunk, has
     *     in the chunk that replaced this one ({@code ref} itself if it was not moved), or
     *     {@link Refs#NULL} if there is no record of it (it was removed or replaced before the
     *     rebalance, or this chunk was not replaced, or not by a rebalance that records); then
     *     {@link #movedChunk} and {@link #movedEntry} say where it is linked now
     */
    public long movedValue(int ei, long ref) {
        if (!released || movedRefs == null || valueRef(ei) != ref) {
            return Refs.NULL; // the entry holds another value since: ref was replaced, not moved
        }
        return movedRefs[ei];
    }

    /** @return the chunk that entry {@code ei}'s moved value is linked from (see {@link #movedValue}) */
    public Chunk movedChunk(int ei) {
        return movedChunks[ei];
    }

    /** @return the entry, in {@link #movedChunk}, that links entry {@code ei}'s moved value */
    public int movedEntry(int ei) {
        return movedEntries[ei];
    }

    /**
     * Marks that keys this chunk links may be deleted from now on: a volatile store, made by the
     * rebalancer after {@link #release()} and before it deletes any of them.
     */
    public void markKeysDeleted() { keysDeleted = true; }

    /**
     * @return true if no key this chunk links was deleted yet; read (volatile) after reading a key
     *     through this chunk, behind an acquire fence, it validates that read (see {@code KeyOps})
     */
    public boolean keysIntact() { return !keysDeleted; }

    // ---------------------------------------------------------------- rebalance policy

    /** Counts a removal of a mapping of this chunk. @return the new count */
    public int countRemoval() {
        return (int) REMOVED.getAndAdd(this, 1) + 1;
    }

    /** @return removals counted so far */
    public int removals() { return removed; }

    /**
     * @return true if every slot is taken: the chunk was built with room for just as many
     *     unsorted entries as keep its searches fast (see {@code Rebalancer#slotsFor})
     */
    public boolean needsReorganization() {
        return allocated >= capacity;
    }

    /** @return true if removals suggest the chunk is mostly garbage and should be compacted/merged */
    public boolean needsCompaction() {
        int r = removed;
        return r >= Math.max(1, Math.min(8, capacity / 4)) && r * 2 > allocatedCount();
    }
}
