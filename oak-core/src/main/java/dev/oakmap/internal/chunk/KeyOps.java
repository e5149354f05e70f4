package dev.oakmap.internal.chunk;

import dev.oakmap.OakComparator;
import dev.oakmap.OakSerializer;
import dev.oakmap.common.ByteStringComparator;
import dev.oakmap.internal.buffer.Bytes;
import dev.oakmap.internal.buffer.Codec;
import dev.oakmap.internal.buffer.Layouts;
import dev.oakmap.internal.buffer.SliceBuffer;
import dev.oakmap.internal.memory.Refs;
import dev.oakmap.internal.reclaim.SliceManager;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Everything the chunks need to know about keys: writing a key off-heap, reading it back, and
 * comparing a key object with a serialized key.
 *
 * <p>Keys are immutable once published. Their slices are managed by a {@link SliceManager}: under
 * the grow-only scheme they are never reused; under the others the rebalancer deletes the keys it
 * drops, and their memory may be reused while other threads still compare against them. Every
 * read of a key is therefore a validated read: begin, read (comparator or deserializer on the
 * bytes), end; if validation fails the result, even an exception from user code, is discarded and
 * {@link StaleKeyException} is thrown instead. Validation asks the slice manager (lock-based key
 * slices have a header) and the chunk the reference was read from, its <em>guard</em>: a key
 * read through a chunk whose keys the rebalancer has begun to delete is stale (see
 * {@link Chunk#keysIntact}; Nova keys have no header and rely on this alone). A read without a
 * guard is for keys protected from deletion: the one a scan stands on, or keys read by the
 * rebalance that has frozen the chunk linking them (only that rebalance could delete them).
 *
 * <h2>Prefix windows</h2>
 * The comparator's 64-bit key prefix decides most search steps on-heap, unless the keys share
 * their first bytes: keys such as {@code "user1234..."}, or a tenant id followed by a row id,
 * all tie on it, and every search step then reads a key off-heap. When the comparator orders
 * serialized keys byte-wise (a {@link ByteStringComparator}), chunks and the index may instead
 * compare a <em>window</em>: the 8 bytes after a <em>head</em> that the keys they hold share. A
 * key's windowed prefix ({@link #windowed}) is those 8 bytes (big-endian, zero-padded) if its
 * serialized form starts with the head, 0 if it orders below the head, and all ones above. That
 * is monotone in the key order for any head, so a window is as sound a prefix as the
 * comparator's own for every key, whether or not the key shares the head: keys that do not
 * only tie at the ends, and compare in full. Each chunk picks its head when it is built, from
 * its bounds ({@link #windowFor}), and so does each index snapshot from its first and last
 * minimum keys; a {@code null} head stands for the comparator's own prefix, the only one for
 * comparators that are not byte-wise.
 */
public final class KeyOps<K> {
    /** Bytes a longer shared head must gain over the current one before a chunk changes windows. */
    public static final int MIN_WINDOW_GAIN = 4;
    /** The longest head kept: longer shared runs are rare, and each search compares the head. */
    private static final int MAX_HEAD = 256;
    private final OakSerializer<K> serializer;
    private final OakComparator<K> comparator;
    private final SliceManager slices;
    /**
     * Header and data bytes of a recently written key. Racy by design (plain reads and writes, a
     * lost update only changes a hint); written only when it changes, so fixed-size keys never
     * write it again and the line stays shared between cores.
     */
    private int typicalSpan;
    /**
     * Set once the comparator's serialized prefix was seen to disagree with its object prefix
     * (see {@link #prefixOf}). Racy by design: until a thread sees it, it checks again.
     */
    private volatile boolean prefixFromObjects;
    /**
     * Keys written so far, counted racily for {@link #checkPrefixAgreement} up to
     * {@link #CHECKED_WRITES} only: after that the field is only read, so its line stays shared.
     */
    private int writes;
    /** Whether dropped keys are reused while the map lives: the slice manager's answer, kept. */
    private final boolean reclaims;
    /** Whether serialized keys order byte-wise, so that prefix windows apply (see "Prefix windows"). */
    private final boolean byteOrdered;
    /** Whether key objects are their own serialized form ({@code byte[]} keys), so that windows read them directly. */
    private final boolean rawKeys;
    private static final int CHECKED_WRITES = 64;
    private static final int CHECK_EVERY = 1024;

    public KeyOps(OakSerializer<K> serializer, OakComparator<K> comparator, SliceManager slices) {
        this.serializer = serializer;
        this.comparator = comparator;
        this.slices = slices;
        this.reclaims = slices.reclaims();
        this.byteOrdered = comparator instanceof ByteStringComparator;
        this.rawKeys = comparator == (Object) ByteStringComparator.forByteArrays();
    }

    public OakComparator<K> comparator() {
        return comparator;
    }

    /** @return the manager of the key slices */
    public SliceManager slices() {
        return slices;
    }

    /** @return true if dropped keys are reused while the map lives (so key reads can go stale) */
    public boolean reclaims() {
        return reclaims;
    }

    /**
     * Compares a key object with the serialized key {@code keyRef}, read from chunk {@code guard}
     * (or protected from deletion otherwise, when {@code guard} is null).
     *
     * @throws StaleKeyException if the key may have been deleted during the read
     */
    public int compare(K key, long keyRef, Chunk guard) {
        MemorySegment seg = slices.segment(keyRef);
        long t = begin(keyRef);
        SliceBuffer b = window(seg, keyRef);
        int r = 0;
        Throwable failure = null;
        try {
            r = comparator.compareKeyAndSerializedKey(key, b);
        } catch (Throwable e) {
            failure = e; // maybe raised by foreign bytes: judged after validation
        } finally {
            b.close();
        }
        end(seg, keyRef, t, guard, failure);
        return r;
    }

    /** @return the comparator's order-preserving prefix of {@code key} */
    public long prefix(K key) {
        return comparator.keyPrefix(key);
    }

    /**
     * The prefix of a key already in the map, for a rebalance that must rebuild prefixes (see
     * {@link Chunk}, "Prefixes"): the comparator's {@code serializedKeyPrefix}, unless this map has
     * seen it disagree with {@code keyPrefix} (or throw), in which case the key is deserialized
     * and given to {@code keyPrefix}, which is what searches use.
     *
     * @throws StaleKeyException if the key was deleted
     */
    public long prefixOf(long keyRef) {
        if (!prefixFromObjects) {
            try {
                return serializedPrefix(keyRef);
            } catch (StaleKeyException e) {
                throw e;
            } catch (RuntimeException | Error e) {
                prefixFromObjects = true; // a contract breach: fall back to the prefix searches use
            }
        }
        return comparator.keyPrefix(read(keyRef, null));
    }

    private long serializedPrefix(long keyRef) {
        MemorySegment seg = slices.segment(keyRef);
        long t = begin(keyRef);
        SliceBuffer b = window(seg, keyRef);
        long p = 0;
        Throwable failure = null;
        try {
            p = comparator.serializedKeyPrefix(b);
        } catch (Throwable e) {
            failure = e;
        } finally {
            b.close();
        }
        end(seg, keyRef, t, null, failure);
        return p;
    }

    // ---------------------------------------------------------------- prefix windows

    /**
     * @return the prefix of {@code key} (whose comparator prefix is {@code kp}) in the window after
     *     {@code head}, or {@code kp} if {@code head} is null (see "Prefix windows")
     * @throws dev.oakmap.OakSerializationException if the key must be serialized and its serializer fails
     */
    public long prefixAt(K key, long kp, byte[] head) {
        if (head == null) {
            return kp;
        }
        if (rawKeys) {
            return windowed(MemorySegment.ofArray((byte[]) key), 0, ((byte[]) key).length, head);
        }
        MemorySegment bytes = Codec.toHeap(serializer, key, Refs.MAX_AUX); // no map holds a longer key
        return windowed(bytes, 0, bytes.byteSize(), head);
    }

    /**
     * The prefix of a key already in the map in the window after {@code head}: {@link #prefixOf(long)}
     * if {@code head} is null. Reads the serialized bytes only, never user code.
     *
     * @throws StaleKeyException if the key was deleted
     */
    public long prefixOf(long keyRef, byte[] head) {
        if (head == null) {
            return prefixOf(keyRef);
        }
        MemorySegment seg = slices.segment(keyRef);
        long t = begin(keyRef);
        long p = 0;
        Throwable failure = null;
        try {
            p = windowed(seg, slices.dataOffset(keyRef), slices.length(seg, keyRef), head);
        } catch (Throwable e) {
            failure = e;
        }
        end(seg, keyRef, t, null, failure);
        return p;
    }

    /**
     * The head to compare prefixes after, for keys between {@code lowerRef} and {@code upperRef}
     * (a chunk's bounds, or the index's first and last minimum keys): {@code current} while both
     * start with it and a longer shared head would not gain {@link #MIN_WINDOW_GAIN} bytes, so
     * that a rebalance can keep the prefixes it copies; otherwise the bytes the two share (every
     * key between them shares them too), or null (the comparator's prefix) if they share fewer
     * than {@code minHead} or a bound is {@link Refs#NULL} (unbounded). Always {@code current}
     * for comparators that are not byte-wise. Reads at most {@link #MAX_HEAD} bytes of each key.
     *
     * @param minHead the fewest shared bytes worth a window: {@link #MIN_WINDOW_GAIN} between
     *     true bounds; 8 where later keys may fall outside them (the map's first and last
     *     chunks), since a key that leaves the head ties at an end, where the comparator's prefix
     *     might have told it apart unless the head is at least that prefix's length
     * @param upperGuard the chunk {@code upperRef} is read from, or null if it is protected
     *     ({@code lowerRef} must be)
     * @throws StaleKeyException if {@code upperRef} was read through a chunk being deleted
     */
    public byte[] windowFor(long lowerRef, long upperRef, Chunk upperGuard, byte[] current, int minHead) {
        if (!byteOrdered) {
            return current;
        }
        if (lowerRef == Refs.NULL || upperRef == Refs.NULL) {
            return null;
        }
        int[] len = new int[1];
        byte[] a = copy(lowerRef, new byte[64], len, null, MAX_HEAD);
        int alen = len[0];
        byte[] b = copy(upperRef, new byte[64], len, upperGuard, MAX_HEAD);
        int blen = len[0];
        int shared = Arrays.mismatch(a, 0, alen, b, 0, blen);
        shared = Math.min(shared < 0 ? alen : shared, MAX_HEAD);
        int d = current == null ? 0 : current.length;
        boolean holds = current == null
                || (startsWith(a, alen, current) && startsWith(b, blen, current));
        if (holds && shared < d + MIN_WINDOW_GAIN) {
            return current;
        }
        return shared >= minHead ? Arrays.copyOf(a, shared) : null;
    }

    private static boolean startsWith(byte[] a, int len, byte[] head) {
        return len >= head.length && Arrays.equals(a, 0, head.length, head, 0, head.length);
    }

    /**
     * The windowed prefix of the serialized key {@code [off, off + len)} of {@code s}: the 8 bytes
     * after {@code head}, big-endian and zero-padded, if the key starts with it; 0 if the key
     * orders below it (it differs by a smaller byte, or is a proper prefix of it); all ones above.
     */
    static long windowed(MemorySegment s, long off, long len, byte[] head) {
        int d = head.length;
        long m = MemorySegment.mismatch(s, off, off + Math.min(len, d), MemorySegment.ofArray(head), 0, d);
        if (m >= 0) {
            if (m == len) {
                return 0L; // a proper prefix of the head
            }
            return Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, off + m)) < Byte.toUnsignedInt(head[(int) m]) ? 0L : -1L;
        }
        return Layouts.leadingLong(s, off + d, len - d);
    }

    /**
     * Checks, for the first {@link #CHECKED_WRITES} keys written and about one in
     * {@link #CHECK_EVERY} after (chosen at random), that the comparator's {@code serializedKeyPrefix} of the
     * written key is its {@code keyPrefix}; a comparator that overrides only the latter would
     * otherwise corrupt the prefixes a rebalance rebuilds. On a disagreement (or an exception)
     * this map takes prefixes from deserialized keys from then on ({@link #prefixOf}).
     */
    private void checkPrefixAgreement(long ref, long kp) {
        if (writes < CHECKED_WRITES) {
            writes++; // racy: a lost update only checks a key more
        } else if ((ThreadLocalRandom.current().nextInt() & (CHECK_EVERY - 1)) != 0) {
            return; // sampled per thread: no shared write on the insertion path
        }
        if (prefixFromObjects) {
            return;
        }
        boolean agrees;
        try {
            agrees = serializedPrefix(ref) == kp; // a private slice: validation cannot fail
        } catch (RuntimeException | Error e) {
            agrees = false;
        }
        if (!agrees) {
            prefixFromObjects = true;
        }
    }

    /** Compares two key objects. */
    public int compareKeys(K a, K b) {
        return comparator.compareKeys(a, b);
    }

    /** Writes {@code key}, whose prefix is {@code kp}, to a new slice. @return its reference */
    public long write(K key, long kp) {
        int len = Codec.sizeOf(serializer, key, slices.maxLength());
        long ref = slices.allocate(len);
        try {
            Codec.write(serializer, key, slices.segment(ref), slices.dataOffset(ref), len);
        } catch (Throwable e) { // an Error or undeclared checked exception from the serializer too
            slices.discard(ref);
            throw e;
        }
        checkPrefixAgreement(ref, kp);
        int span = (int) (slices.dataOffset(ref) - Refs.offset(ref)) + len;
        if (span != typicalSpan) {
            typicalSpan = span;
        }
        return ref;
    }

    /** Frees a key slice that was never published. */
    public void discard(long keyRef) {
        slices.discard(keyRef);
    }

    /** Deletes a published key that no chunk links any more; readers may still hold it. */
    public void delete(long keyRef) {
        slices.delete(keyRef);
    }

    /**
     * @return the bytes from the start of a recently written key slice to its last data byte: a
     *     hint of how many cache lines a key spans, for scan look-ahead
     */
    public int typicalSpan() {
        return typicalSpan;
    }

    /**
     * @param guard the chunk {@code keyRef} was read from, or null if the key is protected from
     *     deletion (see {@link #compare})
     * @return a deserialized copy of the key
     * @throws StaleKeyException if the key may have been deleted during the read
     */
    public K read(long keyRef, Chunk guard) {
        MemorySegment seg = slices.segment(keyRef);
        long t = begin(keyRef);
        SliceBuffer b = window(seg, keyRef);
        K k = null;
        Throwable failure = null;
        try {
            k = Codec.deserialize(serializer, b);
        } catch (Throwable e) {
            failure = e;
        } finally {
            b.close();
        }
        end(seg, keyRef, t, guard, failure);
        return k;
    }

    /**
     * Copies the key's bytes into {@code dst} (grown if needed).
     *
     * @param guard the chunk {@code keyRef} was read from, or null if the key is protected from
     *     deletion (see {@link #compare})
     * @return the array holding the copy, its length in {@code lengthOut[0]}
     * @throws StaleKeyException if the key may have been deleted during the read
     */
    public byte[] copy(long keyRef, byte[] dst, int[] lengthOut, Chunk guard) {
        return copy(keyRef, dst, lengthOut, guard, Integer.MAX_VALUE);
    }

    /** {@link #copy(long, byte[], int[], Chunk)} of the key's first {@code limit} bytes at most. */
    private byte[] copy(long keyRef, byte[] dst, int[] lengthOut, Chunk guard, int limit) {
        MemorySegment seg = slices.segment(keyRef);
        long t = begin(keyRef);
        int len = Math.min(slices.length(seg, keyRef), limit);
        byte[] out = dst;
        Throwable failure = null;
        try {
            if (len < 0) {
                throw new IndexOutOfBoundsException("length " + len);
            }
            if (out.length < len) {
                out = new byte[Math.max(len, out.length * 2)];
            }
            Bytes.copyOut(seg, slices.dataOffset(keyRef), out, 0, len);
        } catch (Throwable e) {
            failure = e;
        }
        end(seg, keyRef, t, guard, failure);
        lengthOut[0] = len;
        return out;
    }

    /** @return a deserialized copy of a key from bytes copied on-heap */
    public K readCopy(byte[] bytes, int length) {
        return Codec.read(serializer, MemorySegment.ofArray(bytes), 0, length);
    }

    private long begin(long keyRef) {
        long t = slices.readBegin(keyRef);
        if (t == SliceManager.GONE) {
            throw StaleKeyException.INSTANCE;
        }
        return t;
    }

    private void end(MemorySegment seg, long keyRef, long token, Chunk guard, Throwable failure) {
        if (!slices.readEnd(seg, keyRef, token)) {
            throw StaleKeyException.INSTANCE;
        }
        if (guard != null && reclaims) {
            // the seqlock reader's order: the key's bytes are read before the chunk's mark, which
            // the rebalancer sets (volatile) before deleting any key of the chunk
            VarHandle.acquireFence();
            if (!guard.keysIntact()) {
                throw StaleKeyException.INSTANCE;
            }
        }
        if (failure != null) {
            throw SliceManager.rethrow(failure);
        }
    }

    private SliceBuffer window(MemorySegment seg, long keyRef) {
        return new SliceBuffer(seg, slices.dataOffset(keyRef), slices.length(seg, keyRef), false);
    }
}
