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
 * Slices with a versioned header, optimistic (seqlock-style) readers and CAS-locked writers: the
 * {@link MemoryScheme#NOVA} scheme for values when built with a {@link Nova} reclaimer, and the
 * {@link MemoryScheme#GROW_ONLY} scheme for values when built without one (deleted slices are
 * then never reused). Keys, never written once published, have no header under Nova
 * ({@link HeaderlessSlices}).
 *
 * <h2>Layout</h2>
 * A slice is a 12-byte header followed by the data, {@code 12 + length} bytes rounded up to the
 * 4-byte granule, at any 4-aligned start. The header is an 8-byte <em>state word</em>, always
 * accessed with the aligned {@link ValueLayout#JAVA_LONG} layout (so it never straddles a cache
 * line), and the length as a plain 4-byte int, in the order that aligns the word: the word first
 * if the slice starts 8-aligned, the length first otherwise ({@link SliceManager#stateOffset}):
 * <pre>
 *  63            36  35        34       33                 0   | 4 bytes
 * +----------------+---------+--------+---------------------+  +--------+
 * | version (28)   | DELETED | MOVING | write sequence (34) |  | length |
 * +----------------+---------+--------+---------------------+  +--------+
 * </pre>
 * The version is the reclaimer's era when the slice was allocated; a reference carries it in its
 * aux field. The write sequence is odd while a writer holds the slice and grows by two with
 * every write, so a reader can tell that a write happened during its read even if the word looks
 * the same otherwise. MOVING is set while the rebalancer copies a live slice elsewhere (Nova
 * only): writers wait for it to clear, readers ignore it (the bytes do not change meanwhile).
 *
 * <h2>Protocol and memory ordering</h2>
 * <ul>
 * <li><b>Read</b> (no CAS, nothing written to shared memory): read the word with acquire; if the
 *     sequence is odd wait, if the reference is not live report {@link #GONE}; read the length and
 *     bytes; {@link VarHandle#acquireFence()} so those reads complete before the re-read; re-read
 *     the word: unchanged means the bytes were the slice's and untorn.
 * <li><b>Write</b>: announce the slice to the reclaimer (a volatile store: a full fence, so the
 *     announcement is visible before the header is checked), CAS the word from a live, even
 *     sequence to the next (odd) one, mutate, then store the following even sequence with release
 *     semantics and withdraw the announcement.
 * <li><b>Delete</b>: under the write lock, store DELETED with release semantics, then hand the
 *     slice to the reclaimer. The Nova reclaimer returns it to the allocator only after advancing
 *     its era and finding no writer announcing it; a reallocated slice gets the new era as its
 *     version, so every stale reference fails its version check. Headers never move: the
 *     allocator reuses a slice only from its start and as the same kind (whole, or split for a
 *     smaller size: see {@code BlockAllocator}), except in blocks reused whole (below).
 * <li><b>Move</b> (the rebalancer laying pairs out in key order): CAS MOVING into a live word with
 *     an even sequence (a slice being written is not moved: the mover never waits for user code),
 *     copy the bytes, and later either store DELETED with release semantics and retire the slice
 *     as a deletion does (moved: writers that waited now find it gone and look the key up again)
 *     or restore the word as it was (abandoned; readers that began before the move still
 *     validate, those that began during it read again).
 * </ul>
 * <h2>Blocks reused whole ({@link #reuseWholeBlocks})</h2>
 * With Nova, the allocator may hand out a block whose slices were all freed as fresh memory
 * ({@code BlockAllocator}, "Whole free blocks"). Its old headers may then lie under another
 * slice's payload, which can imitate a live state word; so before the block is carved again,
 * {@link #beforeReuse} advances Nova's era and publishes it as the block's <em>layout era</em>
 * (a volatile store), then waits until no writer announces a slice in the block. A reference
 * whose version is below its block's layout era is not live: {@link #liveToken} and
 * {@link #readBegin} check after reading the word, {@link #readEnd} after re-reading it (the
 * bytes read before were then possibly another slice's: the read fails and the reader retries or
 * reports GONE, as with a torn read), and {@link #lockWrite} after announcing, before its CAS:
 * either the writer sees the era and reports GONE, or the recycler sees the announcement and
 * waits until the writer, which can only find its slice deleted, withdraws. {@link #beginMove}
 * announces and checks the same way before its CAS. A reader that took
 * payload for a header may read a length of any value before {@link #readEnd} fails: every
 * optimistic read path treats an out-of-bounds access, or any exception from the bytes, as part
 * of the read, judged by {@link #readEnd}. Slices allocated after the publication get at least
 * that era as their version (the version is read after the allocation). The check is wrap-aware
 * over a window of 2^26 eras.
 *
 * <p>Versions (the 27 bits of a reference's aux field, kept in a 28-bit field) wrap after 2^27
 * eras; a reference held across that many reclamation rounds could be fooled, which we accept.
 * Write sequences wrap after 2^33 writes, far more than can happen during one read.
 */
public final class OptimisticSlices extends SliceManager {

    private static final VarHandle STATE = ValueLayout.JAVA_LONG.varHandle();
    private static final long SEQ_MASK = (1L << 34) - 1;
    private static final long MOVING = 1L << 34;
    private static final long DELETED = 1L << 35;
    private static final int VERSION_SHIFT = 36;

    /** Null for grow-only: deleted slices stay deleted. */
    private final Nova nova;
    OptimisticSlices(BlockAllocator allocator, BlockAllocator.Kind kind, Nova nova) {
        super(allocator, kind);
        this.nova = nova;
    }

    @Override public MemoryScheme scheme() { return nova == null ? MemoryScheme.GROW_ONLY : MemoryScheme.NOVA; }

    /**
     * Nova values can live in blocks reused whole (see "Blocks reused whole"); grow-only ones
     * need no guard: a published one is never freed, so its block is never all free, and a private
     * one given back ({@link #discard}) was never seen by another thread, so no stale reference
     * to it exists.
     */
    @Override
    BlockAllocator.ReuseGuard prepareWholeBlockReuse() {
        if (nova == null) {
            return null;
        }
        trackLayouts();
        return this::beforeReuse;
    }

    /** The allocator's guard: see "Blocks reused whole". */
    private void beforeReuse(int blockId) {
        publishLayout(blockId, nova.advanceEra()); // before the announcements are read
        nova.awaitWritersOutside(blockId);
    }

    @Override public boolean reclaims() { return nova != null; }

    @Override
    public void reclaimNow() {
        if (nova != null) {
            nova.reclaimNow();
        }
    }

    /** @return the reclaimer, or null (grow-only) */
    public Nova nova() { return nova; }

    @Override
    public long sliceBytes(int length) {
        return Refs.alignGranule(HEADER_BYTES + (long) length);
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
        long bytes = sliceBytes(length);
        long ref = fresh ? allocator.allocateFresh(bytes) : allocator.allocate(bytes, kind);
        MemorySegment seg = allocator.segment(ref);
        long off = stateOffset(ref);
        int version = nova == null ? 1 : nova.version();
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
        STATE.setRelease(seg, off, (h & ~SEQ_MASK) | DELETED);
        allocator.free(ref, sliceBytes(length), kind); // private: no other thread holds it
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

    private static boolean writing(long state) {
        return (state & 1) != 0;
    }

    private static long nextSeq(long state) {
        return (state & ~SEQ_MASK) | ((state + 1) & SEQ_MASK);
    }

    @Override
    public boolean isLive(long ref) {
        return liveToken(ref) != GONE;
    }

    /**
     * The state word, read with acquire as {@link #readBegin} reads it, is itself the token: any
     * later read that re-reads the same word in {@link #readEnd} saw no write and no deletion since.
     * A live state never equals {@link #GONE} or {@link #NO_TOKEN}: both have the DELETED bit set.
     */
    @Override
    public long liveToken(long ref) {
        long h = (long) STATE.getAcquire(allocator.segment(ref), stateOffset(ref));
        if (!liveFor(h, ref) || staleLayout(ref)) {
            return GONE;
        }
        return writing(h) ? NO_TOKEN : h;
    }

    @Override
    boolean liveState(long state, long ref) {
        return liveFor(state, ref) && !staleLayout(ref);
    }

    @Override
    public long readBegin(long ref) {
        MemorySegment seg = allocator.segment(ref);
        long off = stateOffset(ref);
        for (int spins = 0; ; spins++) {
            long h = (long) STATE.getAcquire(seg, off);
            if (!liveFor(h, ref) || staleLayout(ref)) {
                return GONE;
            }
            if (!writing(h)) {
                return h;
            }
            if (spins == HeldLocks.CHECK_AT) {
                HeldLocks.checkNotHeld(ref); // a compute's function reading its own key
            }
            Backoff.pause(spins);
        }
    }

    @Override
    public boolean readEnd(MemorySegment segment, long ref, long token) {
        return stateUnchanged(segment, ref, token) && !staleLayout(ref); // the era after the re-read
    }

    @Override
    public long lockWrite(long ref) {
        // Eagerly, not when a wait gets long: an optimistic reader holds no lock, so a write from
        // its own function would not wait but succeed, spoil the read's validation, and run again
        // at every retry (a livelock). A write from a function holding this slice's write lock
        // fails here too, before it announces anything. One thread-local look-up per write.
        HeldLocks.checkNotHeld(ref);
        MemorySegment seg = allocator.segment(ref);
        long off = stateOffset(ref);
        if (nova != null) {
            nova.announce(ref); // a full fence: the layout era below is read after it
        }
        if (staleLayout(ref)) { // else a recycler of its block waits for this writer's withdrawal
            withdraw(ref);
            return GONE;
        }
        for (int spins = 0; ; spins++) {
            long h = (long) STATE.getAcquire(seg, off);
            if (!liveFor(h, ref)) {
                withdraw(ref);
                return GONE;
            }
            if (!writing(h) && (h & MOVING) == 0) { // a moving slice is deleted or restored soon
                long locked = nextSeq(h);
                if (STATE.compareAndSet(seg, off, h, locked)) {
                    return locked;
                }
            }
            Backoff.pause(spins);
        }
    }

    private void withdraw(long ref) {
        if (nova != null) {
            nova.withdraw(ref);
        }
    }

    @Override
    public void unlock(long ref, long locked) {
        STATE.setRelease(allocator.segment(ref), stateOffset(ref), nextSeq(locked));
        withdraw(ref);
    }

    @Override
    public void unlock(long ref, long locked, int newLength) {
        MemorySegment seg = allocator.segment(ref);
        seg.set(ValueLayout.JAVA_INT, lengthOffset(ref), newLength);
        STATE.setRelease(seg, stateOffset(ref), nextSeq(locked));
        withdraw(ref);
    }

    @Override
    public boolean movable() {
        return nova != null; // grow-only never reuses a moved slice: moving would leak it
    }

    @Override
    public long beginMove(long ref) {
        MemorySegment seg = allocator.segment(ref);
        long off = stateOffset(ref);
        boolean announced = tracksLayouts(); // only a block reused whole needs it
        if (announced) {
            nova.announce(ref); // as lockWrite: its CAS must not reach a block reused meanwhile
        }
        try {
            if (staleLayout(ref)) {
                return GONE;
            }
            while (true) {
                long h = (long) STATE.getAcquire(seg, off);
                if (!liveFor(h, ref)) {
                    return GONE;
                }
                if (writing(h) || (h & MOVING) != 0) {
                    return BUSY;
                }
                // the CAS orders the copy's reads after it, and after the last writer's release
                if (STATE.compareAndSet(seg, off, h, h | MOVING)) {
                    return h | MOVING; // a moving slice is live: its block is not reused until endMove
                }
            }
        } finally {
            if (announced) {
                nova.withdraw(ref);
            }
        }
    }

    @Override
    public void endMove(long ref, long token, boolean moved) {
        MemorySegment seg = allocator.segment(ref);
        long off = stateOffset(ref);
        if (!moved) {
            STATE.setRelease(seg, off, token & ~MOVING); // unchanged since beginMove: nobody could write
            return;
        }
        int length = seg.get(ValueLayout.JAVA_INT, lengthOffset(ref));
        STATE.setRelease(seg, off, (token & ~MOVING) | DELETED);
        nova.retire(ref, sliceBytes(length));
    }

    @Override
    public void deleteLocked(long ref, long locked) {
        MemorySegment seg = allocator.segment(ref);
        int length = seg.get(ValueLayout.JAVA_INT, lengthOffset(ref));
        STATE.setRelease(seg, stateOffset(ref), nextSeq(locked) | DELETED);
        withdraw(ref);
        if (nova != null) {
            nova.retire(ref, sliceBytes(length));
        } // grow-only: the slice stays allocated, and deleted, until the map is closed
    }
}
