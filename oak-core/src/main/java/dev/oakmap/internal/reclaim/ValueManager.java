package dev.oakmap.internal.reclaim;

import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.Refs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Off-heap value slices with a versioned header word: writers lock, readers are optimistic, and
 * freed slices are reused safely while stale references still float around.
 *
 * <h2>Layout</h2>
 * A value slice is a 12-byte header followed by the value's bytes, {@code align8(12 + length)}
 * bytes in all, starting 8-aligned. The header is an 8-byte <em>state word</em>, always accessed
 * with the aligned {@link ValueLayout#JAVA_LONG} layout (so it never straddles a cache line),
 * then the value's length as a plain 4-byte int:
 * <pre>
 *  63            36  35        34                 0   | 4 bytes
 * +----------------+---------+---------------------+  +--------+
 * | version (28)   | DELETED | write sequence (35) |  | length |
 * +----------------+---------+---------------------+  +--------+
 * </pre>
 * A value reference ({@link Refs}) carries the version in its aux field; the reference is
 * <em>live</em> while the state word has the same version and no DELETED bit. The write sequence
 * is odd while a writer holds the slice and grows by two with every write, so an optimistic
 * reader can tell that a write happened during its read even if the word looks the same
 * otherwise.
 *
 * <h2>Protocol</h2>
 * <ul>
 * <li><b>Write</b> (update in place, compute, delete): CAS the state word from a live, even
 *     sequence to the next (odd) one: a full fence, and the lock. Mutate the bytes (and length),
 *     then store the word with the following even sequence with release semantics.
 * <li><b>Read</b> (seqlock style: no CAS, nothing written to shared memory): read the word with
 *     acquire; if the sequence is odd wait, if the reference is not live report deletion; read the
 *     length and bytes; {@link VarHandle#acquireFence()}; re-read the word: if it changed, retry.
 *     Readers never block writers and never write a shared cache line. Anything a reader computed
 *     from bytes that fail validation (including exceptions) is thrown away.
 * <li><b>Delete</b>: under the write lock, store DELETED (releasing the lock), then return the
 *     slice to the allocator at once. That is safe because the allocator reuses value slices only
 *     as value slices of the same size, so a state word always sits at the same address, and a
 *     reused slice gets version + 1 before its new bytes are written (store-store fence): a stale
 *     reference then fails the version check, whether it reads before, during or after reuse.
 *     Versions wrap after 2^28 reuses of the same slice; a view held across that many reuses of
 *     its slice could be fooled, which we accept. Write sequences wrap after 2^34 writes, far more
 *     than can happen during one read.
 * </ul>
 */
public final class ValueManager {

    /** Header size in bytes: the state word and the length. */
    public static final int HEADER_BYTES = 12;

    private static final VarHandle STATE = ValueLayout.JAVA_LONG.varHandle();
    private static final long SEQ_MASK = (1L << 35) - 1;
    private static final long DELETED = 1L << 35;
    private static final int VERSION_SHIFT = 36;

    /** Returned by {@link #lockWrite} and {@link #readBegin} when the reference is not live. */
    public static final long GONE = -1L;

    private static final int SPINS_BEFORE_YIELD = 128;

    private final BlockAllocator allocator;

    public ValueManager(BlockAllocator allocator) {
        this.allocator = allocator;
    }

    /**
     * Allocates a slice for {@code length} value bytes and stamps a fresh version in its header.
     *
     * @return a live reference to an unlocked slice whose bytes are to be written by the caller
     *     before it is published
     */
    public long allocate(int length) {
        long ref = allocator.allocate(sliceBytes(length), BlockAllocator.Kind.VALUE);
        MemorySegment seg = allocator.segment(ref);
        long off = Refs.offset(ref);
        long old = (long) STATE.getVolatile(seg, off);
        int version = (version(old) + 1) & Refs.MAX_AUX;
        if (version == 0) {
            version = 1;
        }
        STATE.setVolatile(seg, off, (long) version << VERSION_SHIFT);
        VarHandle.storeStoreFence(); // the new version is visible before any byte of the new owner
        seg.set(ValueLayout.JAVA_INT, off + 8, length);
        return Refs.withAux(ref, version);
    }

    /** Returns a slice that was never published (or no longer is) to the allocator. */
    public void discard(long ref) {
        MemorySegment seg = allocator.segment(ref);
        long off = Refs.offset(ref);
        long h = (long) STATE.getAcquire(seg, off);
        int length = seg.get(ValueLayout.JAVA_INT, off + 8);
        STATE.setRelease(seg, off, (h & ~SEQ_MASK) | DELETED);
        allocator.free(ref, sliceBytes(length), BlockAllocator.Kind.VALUE);
    }

    /** @return bytes a slice holding {@code length} value bytes occupies */
    public static long sliceBytes(int length) {
        return Refs.align8(HEADER_BYTES + (long) length);
    }

    /** @return true if a value of {@code newLength} bytes fits the slice of one of {@code oldLength} */
    public static boolean fitsInPlace(int oldLength, int newLength) {
        return sliceBytes(oldLength) == sliceBytes(newLength);
    }

    /** @return the segment holding {@code ref} */
    public MemorySegment segment(long ref) {
        return allocator.segment(ref);
    }

    /** @return the offset of the first value byte of {@code ref} in its segment */
    public static long dataOffset(long ref) {
        return Refs.offset(ref) + HEADER_BYTES;
    }

    /**
     * @return the value's length; meaningful under the write lock, for a fresh slice, or inside an
     *     optimistic read (to be validated like the bytes)
     */
    public int readLength(long ref) {
        return allocator.segment(ref).get(ValueLayout.JAVA_INT, Refs.offset(ref) + 8);
    }

    private static int version(long state) {
        return (int) (state >>> VERSION_SHIFT) & Refs.MAX_AUX;
    }

    private static boolean liveFor(long state, long ref) {
        return (state & DELETED) == 0 && version(state) == Refs.aux(ref);
    }

    private static boolean writing(long state) {
        return (state & 1) != 0;
    }

    private static long nextSeq(long state) {
        return (state & ~SEQ_MASK) | ((state + 1) & SEQ_MASK);
    }

    /**
     * Reads the state word with no ordering, only to bring its cache line in early: scans call
     * this a few entries ahead so that the misses of consecutive values overlap.
     *
     * @return the state word (meaningless to the caller)
     */
    public long touch(long ref) {
        return allocator.segment(ref).get(ValueLayout.JAVA_LONG, Refs.offset(ref));
    }

    /** @return true if {@code ref} is live right now (a snapshot; ignores writers) */
    public boolean isLive(long ref) {
        return liveFor((long) STATE.getAcquire(allocator.segment(ref), Refs.offset(ref)), ref);
    }

    /**
     * Begins an optimistic read: waits while a writer holds the slice.
     *
     * @return the state word to pass to {@link #readValidate}, or {@link #GONE}
     */
    public long readBegin(long ref) {
        MemorySegment seg = allocator.segment(ref);
        long off = Refs.offset(ref);
        for (int spins = 0; ; spins++) {
            long h = (long) STATE.getAcquire(seg, off);
            if (!liveFor(h, ref)) {
                return GONE;
            }
            if (!writing(h)) {
                return h;
            }
            backOff(spins);
        }
    }

    /** Ends an optimistic read. @return true if no writer touched the slice since {@code state} */
    public boolean readValidate(long ref, long state) {
        VarHandle.acquireFence(); // the reads of the value happen before the re-read of the state
        return (long) STATE.getOpaque(allocator.segment(ref), Refs.offset(ref)) == state;
    }

    /**
     * Takes the write lock of a live slice.
     *
     * @return the locked state word (pass it to {@link #unlock} or {@link #deleteLocked}), or
     *     {@link #GONE} if {@code ref} is not live
     */
    public long lockWrite(long ref) {
        MemorySegment seg = allocator.segment(ref);
        long off = Refs.offset(ref);
        for (int spins = 0; ; spins++) {
            long h = (long) STATE.getAcquire(seg, off);
            if (!liveFor(h, ref)) {
                return GONE;
            }
            if (!writing(h)) {
                long locked = nextSeq(h);
                if (STATE.compareAndSet(seg, off, h, locked)) {
                    return locked;
                }
            }
            backOff(spins);
        }
    }

    /** Releases the write lock, publishing the writes made under it. */
    public void unlock(long ref, long lockedState) {
        STATE.setRelease(allocator.segment(ref), Refs.offset(ref), nextSeq(lockedState));
    }

    /** Records a new (same-slice) length and releases the write lock. */
    public void unlock(long ref, long lockedState, int newLength) {
        MemorySegment seg = allocator.segment(ref);
        seg.set(ValueLayout.JAVA_INT, Refs.offset(ref) + 8, newLength);
        STATE.setRelease(seg, Refs.offset(ref), nextSeq(lockedState));
    }

    /**
     * Marks a locked slice deleted (the linearization point of a removal) and frees it for reuse.
     */
    public void deleteLocked(long ref, long lockedState) {
        MemorySegment seg = allocator.segment(ref);
        int length = seg.get(ValueLayout.JAVA_INT, Refs.offset(ref) + 8);
        STATE.setRelease(seg, Refs.offset(ref), nextSeq(lockedState) | DELETED);
        allocator.free(ref, sliceBytes(length), BlockAllocator.Kind.VALUE);
    }

    private static void backOff(int spins) {
        if (spins < SPINS_BEFORE_YIELD) {
            Thread.onSpinWait();
        } else {
            Thread.yield();
        }
    }
}
