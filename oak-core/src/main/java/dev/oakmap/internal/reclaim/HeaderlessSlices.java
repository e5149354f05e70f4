package dev.oakmap.internal.reclaim;

import dev.oakmap.MemoryScheme;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.Refs;

import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Key slices with no header at all: a reference carries the length in its aux field, and the
 * slice is just the key's bytes, rounded up to the 4-byte granule. Keys are never written after
 * they are published, so there is nothing to lock; what a header would otherwise say, whether a
 * reference still points at its key, is known from where the reference was read.
 *
 * <ul>
 * <li>Under {@link MemoryScheme#GROW_ONLY} ({@code reclaimed} false) published slices are never
 *     deleted or reused while the map lives, so reads need no checks; only slices that were
 *     never published are given back ({@link #discard}).
 * <li>Under {@link MemoryScheme#NOVA} ({@code reclaimed} true) the rebalancer deletes the keys
 *     that no chunk links any more, and {@link #delete} returns their memory to the allocator at
 *     once. Readers validate against the chunk they read the reference from instead of a
 *     version: the rebalancer marks every chunk whose keys it is about to delete (see
 *     {@code Chunk#keysIntact}), a reader re-checks that mark after its reads (with an acquire
 *     fence before, as a seqlock reader does, in {@code KeyOps}), and keys read through other
 *     references are protected from deletion ({@code KeyHazards}: the keys scans stand on) or
 *     read by the rebalance that has frozen the chunk linking them (only that rebalance could
 *     delete them). Each key is deleted once, by the rebalance that dropped
 *     it, so no era or announcement is needed: this is Nova's validation with the version kept
 *     per chunk rather than per slice, which saves the 8-byte header of every key.
 * </ul>
 */
public final class HeaderlessSlices extends SliceManager {

    private final boolean reclaimed;
    /** Slices deleted and not allocated again, when assertions are on: catches a double delete. */
    private final Set<Long> deleted;

    HeaderlessSlices(BlockAllocator allocator, BlockAllocator.Kind kind, boolean reclaimed) {
        super(allocator, kind);
        this.reclaimed = reclaimed;
        boolean checks = false;
        assert checks = true;
        this.deleted = checks && reclaimed ? ConcurrentHashMap.newKeySet() : null;
    }

    @Override public MemoryScheme scheme() { return reclaimed ? MemoryScheme.NOVA : MemoryScheme.GROW_ONLY; }

    @Override public boolean reclaims() { return reclaimed; }

    @Override public int headerBytes() { return 0; }

    /** @return also bounded by the reference's aux field, which holds the length */
    @Override public int maxLength() { return Math.min(super.maxLength(), Refs.MAX_AUX); }

    @Override
    public long sliceBytes(int length) {
        return Refs.alignGranule(Math.max(8, length));
    }

    @Override
    public long allocate(int length) {
        return allocate(length, false);
    }

    @Override
    public long allocateFresh(int length) {
        return allocate(length, true);
    }

    private long allocate(int length, boolean fresh) {
        if (length > maxLength()) {
            throw new IllegalArgumentException("a slice of " + length + " bytes is too long");
        }
        long bytes = sliceBytes(length);
        long ref = Refs.withAux(fresh ? allocator.allocateFresh(bytes) : allocator.allocate(bytes, kind), length);
        if (deleted != null) {
            deleted.remove(Refs.withAux(ref, 0));
        }
        return ref;
    }

    /**
     * Reclaimed keys can be copied elsewhere by the rebalancer, which deletes the originals as it
     * deletes dropped keys; they are never written, so no writer has to wait for a move.
     */
    @Override
    public boolean movable() {
        return reclaimed;
    }

    @Override
    public void discard(long ref) {
        allocator.free(ref, sliceBytes(Refs.aux(ref)), kind);
    }

    @Override public int length(MemorySegment segment, long ref) { return Refs.aux(ref); }

    @Override public long readBegin(long ref) { return 0; }

    @Override public boolean readEnd(MemorySegment segment, long ref, long token) { return true; }

    @Override public boolean isLive(long ref) { return true; }

    @Override public boolean isLiveAwaitingPoll(long ref) { return true; }

    @Override
    public long lockForPoll(long ref) {
        throw new UnsupportedOperationException("keys are not polled");
    }

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
        if (!reclaimed) {
            return false; // grow-only: kept until the map is closed
        }
        assert deleted.add(Refs.withAux(ref, 0)) : "key slice deleted twice: " + Long.toHexString(ref);
        allocator.free(ref, sliceBytes(Refs.aux(ref)), kind);
        return true;
    }

    /** Keys that broken-off scans still protect: the pages around them go back to the OS. */
    @Override
    public long discardAllBut(long[] pinned) {
        if (!reclaimed) {
            return 0;
        }
        return allocator.discardAllBut(pinned, ref -> sliceBytes(Refs.aux(ref)));
    }
}
