package dev.oakmap.internal.reclaim;

import dev.oakmap.MemoryScheme;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.Refs;

import java.lang.foreign.MemorySegment;

/**
 * The {@link MemoryScheme#GROW_ONLY} scheme for keys: immutable slices with no header at all; a
 * reference carries the length in its aux field. Published slices are never deleted or reused
 * while the map lives, so reads need no checks; only slices that were never published are given
 * back ({@link #discard}).
 */
public final class HeaderlessSlices extends SliceManager {

    HeaderlessSlices(BlockAllocator allocator, BlockAllocator.Kind kind) {
        super(allocator, kind);
    }

    @Override public MemoryScheme scheme() { return MemoryScheme.GROW_ONLY; }

    @Override public boolean reclaims() { return false; }

    @Override public int headerBytes() { return 0; }

    @Override
    public long sliceBytes(int length) {
        return Refs.alignGranule(Math.max(8, length));
    }

    @Override
    public long allocate(int length) {
        if (length > Refs.MAX_AUX) {
            throw new IllegalArgumentException("a slice of " + length + " bytes is too long");
        }
        return Refs.withAux(allocator.allocate(sliceBytes(length), kind), length);
    }

    @Override
    public void discard(long ref) {
        allocator.free(ref, sliceBytes(Refs.aux(ref)), kind);
    }

    @Override public int length(MemorySegment segment, long ref) { return Refs.aux(ref); }

    @Override public long readBegin(long ref) { return 0; }

    @Override public boolean readEnd(MemorySegment segment, long ref, long token) { return true; }

    @Override public boolean isLive(long ref) { return true; }

    @Override
    public long lockWrite(long ref) {
        throw new UnsupportedOperationException("header-less slices are immutable");
    }

    @Override
    public void unlock(long ref, long locked) {
        throw new UnsupportedOperationException("header-less slices are immutable");
    }

    @Override
    public void unlock(long ref, long locked, int newLength) {
        throw new UnsupportedOperationException("header-less slices are immutable");
    }

    @Override
    public void deleteLocked(long ref, long locked) {
        throw new UnsupportedOperationException("header-less slices are immutable");
    }

    @Override
    public boolean delete(long ref) {
        return false; // grow-only: kept until the map is closed
    }
}
