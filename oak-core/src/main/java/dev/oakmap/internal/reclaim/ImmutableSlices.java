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
 * A slice is a 4-byte state word, the 4-byte length, then the data: {@code 8 + length} bytes
 * rounded up to the 4-byte granule, at any 4-aligned start. Since the data never changes there is
 * no write sequence, and the header is two thirds the size of a value's ({@link OptimisticSlices}):
 * <pre>
 *  31    28   27        26                0   | 4 bytes
 * +---------+---------+--------------------+  +--------+
 * | 0 (4)   | DELETED | version (27)       |  | length |
 * +---------+---------+--------------------+  +--------+
 * </pre>
 * The version is the reclaimer's era when the slice was allocated; a reference carries it in its
 * aux field. A slice's word goes through two states only: live (written once, before the slice is
 * published) and deleted. Freed slices are reused only as key slices of the same size, or
 * salvaged with their first words kept as a tombstone, so the word of a slice never moves.
 *
 * <h2>Protocol and memory ordering</h2>
 * <ul>
 * <li><b>Read</b> (nothing written to shared memory): read the word with acquire, report
 *     {@link #GONE} unless it is live for the reference; the word is the read token. Read the
 *     length and the bytes; {@link VarHandle#acquireFence()}; re-read the word: unchanged means
 *     the slice was not deleted, and so not reused, during the read.
 * <li><b>Allocate</b>: store the new version (volatile), then a store-store fence so the word is
 *     visible before the length or any byte of the new owner: a stale reader that sees new bytes
 *     sees the new word too, and fails.
 * <li><b>Delete</b> (only the rebalancer deletes a published key): CAS the word from live to
 *     DELETED, then hand the slice to the reclaimer. No thread ever writes a key, so nothing is
 *     announced: the reclaimer may reuse the slice after its next era increment, and every
 *     reader of the old slice fails its validation.
 * </ul>
 * Versions wrap after 2^27 eras, as in {@link OptimisticSlices}.
 */
public final class ImmutableSlices extends SliceManager {

    private static final VarHandle STATE = ValueLayout.JAVA_INT.varHandle();
    /** Bytes before the data: the state word and the length. */
    private static final int STATE_BYTES = 8;
    /** Where the length sits, after the 4-byte state word. */
    private static final int LENGTH_AT = 4;
    private static final int DELETED = 1 << 27;

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
        return Refs.alignGranule(STATE_BYTES + (long) length);
    }

    @Override
    public long allocate(int length) {
        if (length < 0) {
            throw new IllegalArgumentException("negative length " + length);
        }
        long ref = allocator.allocate(sliceBytes(length), kind);
        MemorySegment seg = allocator.segment(ref);
        int version = nova.version();
        long off = Refs.offset(ref);
        STATE.setVolatile(seg, off, version);
        VarHandle.storeStoreFence(); // the new word is visible before the length or any byte of the new owner
        seg.set(ValueLayout.JAVA_INT, off + LENGTH_AT, length);
        return Refs.withAux(ref, version);
    }

    @Override
    public void discard(long ref) {
        MemorySegment seg = allocator.segment(ref);
        long off = Refs.offset(ref);
        int h = (int) STATE.getAcquire(seg, off);
        int length = seg.get(ValueLayout.JAVA_INT, off + LENGTH_AT);
        STATE.setRelease(seg, off, h | DELETED);
        allocator.free(ref, sliceBytes(length), kind); // private: no other thread holds it
    }

    @Override
    public int length(MemorySegment segment, long ref) {
        return segment.get(ValueLayout.JAVA_INT, Refs.offset(ref) + LENGTH_AT);
    }

    /** A live word is the reference's version alone: no DELETED bit, nothing else set. */
    private static boolean liveFor(int state, long ref) {
        return state == Refs.aux(ref);
    }

    @Override
    public boolean isLive(long ref) {
        return liveToken(ref) != GONE;
    }

    /**
     * The state word is the token, as a non-negative long: it never equals {@link #GONE} or
     * {@link #NO_TOKEN}.
     */
    @Override
    public long liveToken(long ref) {
        return readBegin(ref);
    }

    @Override
    public long readBegin(long ref) {
        int h = (int) STATE.getAcquire(allocator.segment(ref), Refs.offset(ref));
        return liveFor(h, ref) ? h : GONE;
    }

    @Override
    public boolean readEnd(MemorySegment segment, long ref, long token) {
        VarHandle.acquireFence(); // the reads of the length and data complete before the re-read
        return (int) STATE.getOpaque(segment, Refs.offset(ref)) == token;
    }

    @Override
    public boolean delete(long ref) {
        MemorySegment seg = allocator.segment(ref);
        long off = Refs.offset(ref);
        while (true) {
            int h = (int) STATE.getAcquire(seg, off);
            if (!liveFor(h, ref)) {
                return false;
            }
            // fixed while the slice is live; a successful CAS proves it still was, unreused
            int length = seg.get(ValueLayout.JAVA_INT, off + LENGTH_AT);
            if (STATE.compareAndSet(seg, off, h, h | DELETED)) {
                nova.retire(ref, sliceBytes(length));
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
