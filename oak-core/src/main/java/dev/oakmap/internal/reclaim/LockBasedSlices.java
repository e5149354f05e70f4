package dev.oakmap.internal.reclaim;

import dev.oakmap.MemoryScheme;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.wait.Backoff;
import dev.oakmap.internal.wait.HeldLocks;
import dev.oakmap.internal.memory.Refs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * The {@link MemoryScheme#LOCK_BASED} scheme, the original Oak's default for values: a read-write
 * lock in every slice header. Readers and writers lock, so a slice can be reused the moment it is
 * deleted: nobody can be inside it.
 *
 * <h2>Layout</h2>
 * A 12-byte header (an aligned 8-byte state word and the length as an int, in the order that
 * aligns the word: see {@link SliceManager#HEADER_BYTES}) before the data:
 * <pre>
 *  63            36  35        34       33              0   | 4 bytes
 * +----------------+---------+--------+-----------------+  +--------+
 * | version (28)   | DELETED | WRITER | readers (34)    |  | length |
 * +----------------+---------+--------+-----------------+  +--------+
 * </pre>
 *
 * <h2>Protocol and memory ordering</h2>
 * Every transition is a CAS on the state word (a full fence), made only if the word still holds
 * the reference's version without DELETED: a reader adds one reader if no writer holds the slice,
 * and removes it when done; a writer sets WRITER when there are no readers and clears it with a
 * release store; a deleter, holding WRITER, stores DELETED and frees the slice at once. A freed
 * slice is reused only from its start and as the same kind (whole, or split for a smaller size:
 * see {@code BlockAllocator}), so its header stays in place, and its next allocation stores
 * version + 1: stale references fail their check.
 */
public final class LockBasedSlices extends SliceManager {

    private static final VarHandle STATE = ValueLayout.JAVA_LONG.varHandle();
    private static final long READERS = (1L << 34) - 1;
    private static final long WRITER = 1L << 34;
    private static final long DELETED = 1L << 35;
    private static final int VERSION_SHIFT = 36;

    LockBasedSlices(BlockAllocator allocator, BlockAllocator.Kind kind) {
        super(allocator, kind);
    }

    @Override public MemoryScheme scheme() { return MemoryScheme.LOCK_BASED; }

    @Override public boolean reclaims() { return true; }

    @Override
    public long sliceBytes(int length) {
        return Refs.alignGranule(HEADER_BYTES + (long) length);
    }

    @Override
    public long allocate(int length) {
        long ref = allocator.allocate(sliceBytes(length), kind);
        MemorySegment seg = allocator.segment(ref);
        long off = stateOffset(ref);
        long old = (long) STATE.getVolatile(seg, off); // zero for fresh memory
        int version = (version(old) + 1) & Refs.MAX_AUX;
        if (version == 0) {
            version = 1;
        }
        STATE.setVolatile(seg, off, (long) version << VERSION_SHIFT);
        VarHandle.storeStoreFence(); // the new version is visible before any byte of the new owner
        seg.set(ValueLayout.JAVA_INT, lengthOffset(ref), length);
        return Refs.withAux(ref, version);
    }

    @Override
    public void discard(long ref) {
        MemorySegment seg = allocator.segment(ref);
        long off = stateOffset(ref);
        long h = (long) STATE.getAcquire(seg, off);
        int length = seg.get(ValueLayout.JAVA_INT, lengthOffset(ref));
        STATE.setRelease(seg, off, (h & ~(READERS | WRITER)) | DELETED);
        allocator.free(ref, sliceBytes(length), kind);
    }

    @Override
    public int length(MemorySegment segment, long ref) {
        return segment.get(ValueLayout.JAVA_INT, lengthOffset(ref));
    }

    private static int version(long state) {
        return (int) (state >>> VERSION_SHIFT) & Refs.MAX_AUX;
    }

    private static boolean liveFor(long state, long ref) {
        return (state & DELETED) == 0 && version(state) == Refs.aux(ref);
    }

    @Override
    public boolean isLive(long ref) {
        return liveFor((long) STATE.getAcquire(allocator.segment(ref), stateOffset(ref)), ref);
    }

    @Override
    boolean liveState(long state, long ref) {
        return liveFor(state, ref);
    }

    @Override
    public long readBegin(long ref) {
        MemorySegment seg = allocator.segment(ref);
        long off = stateOffset(ref);
        for (int spins = 0; ; spins++) {
            long h = (long) STATE.getVolatile(seg, off);
            if (!liveFor(h, ref)) {
                return GONE;
            }
            if ((h & WRITER) == 0 && STATE.compareAndSet(seg, off, h, h + 1)) {
                return h + 1;
            }
            if (spins == HeldLocks.CHECK_AT && (h & WRITER) != 0) {
                HeldLocks.checkNotHeld(ref); // a compute's function reading its own key
            }
            Backoff.pause(spins);
        }
    }

    @Override
    public boolean readEnd(MemorySegment seg, long ref, long token) {
        long off = stateOffset(ref);
        while (true) { // the version cannot change while we are counted: just drop our count
            long h = (long) STATE.getVolatile(seg, off);
            if (STATE.compareAndSet(seg, off, h, h - 1)) {
                return true;
            }
        }
    }

    @Override
    public long lockWrite(long ref) {
        MemorySegment seg = allocator.segment(ref);
        long off = stateOffset(ref);
        for (int spins = 0; ; spins++) {
            long h = (long) STATE.getVolatile(seg, off);
            if (!liveFor(h, ref)) {
                return GONE;
            }
            if ((h & (WRITER | READERS)) == 0 && STATE.compareAndSet(seg, off, h, h | WRITER)) {
                return h | WRITER;
            }
            if (spins == HeldLocks.CHECK_AT) {
                HeldLocks.checkNotHeld(ref); // a compute's function writing its own key
            }
            Backoff.pause(spins);
        }
    }

    @Override
    public void unlock(long ref, long locked) {
        STATE.setRelease(allocator.segment(ref), stateOffset(ref), locked & ~WRITER);
    }

    @Override
    public void unlock(long ref, long locked, int newLength) {
        MemorySegment seg = allocator.segment(ref);
        seg.set(ValueLayout.JAVA_INT, lengthOffset(ref), newLength);
        STATE.setRelease(seg, stateOffset(ref), locked & ~WRITER);
    }

    @Override
    public void deleteLocked(long ref, long locked) {
        MemorySegment seg = allocator.segment(ref);
        int length = seg.get(ValueLayout.JAVA_INT, lengthOffset(ref));
        STATE.setRelease(seg, stateOffset(ref), (locked & ~WRITER) | DELETED);
        allocator.free(ref, sliceBytes(length), kind);
    }
}
