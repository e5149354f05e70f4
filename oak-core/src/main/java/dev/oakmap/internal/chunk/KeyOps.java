package dev.oakmap.internal.chunk;

import dev.oakmap.OakComparator;
import dev.oakmap.OakSerializer;
import dev.oakmap.internal.buffer.Bytes;
import dev.oakmap.internal.buffer.Codec;
import dev.oakmap.internal.buffer.SliceBuffer;
import dev.oakmap.internal.memory.Refs;
import dev.oakmap.internal.reclaim.SliceManager;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
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
 */
public final class KeyOps<K> {
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
    private static final int CHECKED_WRITES = 64;
    private static final int CHECK_EVERY = 1024;

    public KeyOps(OakSerializer<K> serializer, OakComparator<K> comparator, SliceManager slices) {
        this.serializer = serializer;
        this.comparator = comparator;
        this.slices = slices;
        this.reclaims = slices.reclaims();
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
        MemorySegment seg = slices.segment(keyRef);
        long t = begin(keyRef);
        int len = slices.length(seg, keyRef);
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
