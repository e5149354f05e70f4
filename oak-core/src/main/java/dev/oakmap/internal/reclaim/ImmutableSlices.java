package dev.oakmap.internal.reclaim;

import dev.oakmap.MemoryScheme;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.Refs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * The {@link MemoryScheme#NOVA} scheme for keys: slices that are never written after they are
 * published, reclaimed by a {@link Nova} reclaimer, with optimistic readers.
 *
 * <h2>Layout</h2>
 * A slice is one 8-byte state word followed by the data, {@code align8(8 + length)} bytes in all,
 * starting 8-aligned. Since the data never changes there is no write sequence, and the length
 * fits in the state word beside the version; the header is two thirds the size of a value's
 * ({@link OptimisticSlices}), which saves 8 bytes on keys of most lengths:
 * <pre>
 *  63            36  35        34   31  30              0
 * +----------------+---------+-------+-----------------+
 * | version (28)   | DELETED | 0 (4) | length (31)     |
 * +----------------+---------+-------+-----------------+
 * </pre>
 * The version is the reclaimer's era when the slice was allocated; a reference carries it in its
 * aux field. A slice's word goes through two states only: live (written once, before the slice is
 * published) and deleted. Freed slices are reused only as key slices of the same size, or
 * salvaged with their first word kept as a tombstone, so the word of a slice never moves.
 *
 * <h2>Protocol and memory ordering</h2>
 * <ul>
 * <li><b>Read</b> (nothing written to shared memory): read the word with acquire, report
 *     {@link #GONE} unless it is live for the reference; the word is the read token, and the
 *     length is taken from it. Read the bytes; {@link VarHandle#acquireFence()}; re-read the
 *     word: unchanged means the slice was not deleted, and so not reused, during the read.
 * <li><b>Allocate</b>: store the new version and length (volatile), then a store-store fence so
 *     the word is visible before any byte of the new owner: a stale reader that sees new bytes
 *     sees the new word too, and fails.
 * <li><b>Delete</b> (only the rebalancer deletes a published key): CAS the word from live to
 *     DELETED, then hand the slice to the reclaimer. No thread ever writes a key, so nothing is
 *     announced: the reclaimer may reuse the slice after its next era increment, and every
 *     reader of the old slice fails its validation.
 * </ul>
 * Versions wrap after 2^28 eras, as in {@link OptimisticSlices}.
 */
public final class ImmutableSlices extends SliceManager {

    private static final VarHandle STATE = ValueLayout.JAVA_LONG.varHandle();
    /** Bytes before the data: the state word. */
    private static final int STATE_BYTES = 8;
    private static final long LENGTH_MASK = Integer.MAX_VALUE;
    private static final long DELETED = 1L << 35;
    private static final int VERSION_SHIFT = 36;

    private final Nova nova;

    ImmutableSlices(BlockAllocator allocator, BlockAllocator.Kind kind, Nova nova) {
        super(allocator, kind);
        this.nova = nova;
    }

    @Override public MemoryScheme scheme() { return MemoryScheme.NOVA; }

    @Override public boolean reclaims() { return true; }

    @Override public int headerBytes() { return STATE_BYTES; }

    @Override
    public long sliceBytes(int length) {
        return Refs.align8(STATE_BYTES + (long) length);
    }

    @Override
    public long allocate(int length) {
        if (length < 0) {
            throw new IllegalArgumentException("negative length " + length);
        }
        long ref = allocator.allocate(sliceBytes(length), kind);
        MemorySegment seg = allocator.segment(ref);
        int version = nova.version();
        STATE.setVolatile(seg, Refs.offset(ref), ((long) version << VERSION_SHIFT) | length);
        VarHandle.storeStoreFence(); // the new word is visible before any byte of the new owner
        return Refs.withAux(ref, version);
    }

    @Override
    public void discard(long ref) {
        MemorySegment seg = allocator.segment(ref);
        long off = Refs.offset(ref);
        long h = (long) STATE.getAcquire(seg, off);
        STATE.setRelease(seg, off, h | DELETED);
        allocator.free(ref, sliceBytes(lengthOf(h)), kind); // private: no other thread holds it
    }

    @Override
    public long dataOffset(long ref) {
        return Refs.offset(ref) + STATE_BYTES;
    }

    @Override
    public int length(long ref) {
        return length(allocator.segment(ref), ref);
    }

    @Override
    public int length(MemorySegment segment, long ref) {
        return lengthOf((long) STATE.get(segment, Refs.offset(ref)));
    }

    private static int lengthOf(long state) {
        return (int) (state & LENGTH_MASK);
    }

    private static boolean liveFor(long state, long ref) {
        return (state & DELETED) == 0 && (int) (state >>> VERSION_SHIFT) == Refs.aux(ref);
    }

    @Override
    public boolean isLive(long ref) {
        return liveToken(ref) != GONE;
    }

    /** The state word is the token: a live word never equals {@link #GONE} or {@link #NO_TOKEN}. */
    @Override
    public long liveToken(long ref) {
        return readBegin(ref);
    }

    @Override
    public long readBegin(long ref) {
        long h = (long) STATE.getAcquire(allocator.segment(ref), Refs.offset(ref));
        return liveFor(h, ref) ? h : GONE;
    }

    @Override
    public boolean readEnd(long ref, long token) {
        return readEnd(allocator.segment(ref), ref, token);
    }

    @Override
    public boolean readEnd(MemorySegment segment, long ref, long token) {
        return stateUnchanged(segment, ref, token);
    }

    @Override
    public boolean delete(long ref) {
        MemorySegment seg = allocator.segment(ref);
        long off = Refs.offset(ref);
        while (true) {
            long h = (long) STATE.getAcquire(seg, off);
            if (!liveFor(h, ref)) {
                return false;
            }
            if (STATE.compareAndSet(seg, off, h, h | DELETED)) {
                nova.retire(ref, sliceBytes(lengthOf(h)));
                return true;
            }
        }
    }

    @Override
    public long lockWrite(long ref) {
        throw immutable();
    }

    @Override
    public void unlock(long ref, long locked) {
        throw immutable();
    }

    @Override
    public void unlock(long ref, long locked, int newLength) {
        throw immutable();
    }

    @Override
    public void deleteLocked(long ref, long locked) {
        throw immutable();
    }

    private static UnsupportedOperationException immutable() {
        return new UnsupportedOperationException("key slices are never written after they are published");
    }
}
