package dev.oakmap.internal.reclaim;

import dev.oakmap.MemoryScheme;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.Refs;
import dev.oakmap.internal.wait.Backoff;
import dev.oakmap.internal.wait.HeldLocks;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * The memory-management seam: how off-heap slices (keys or values) are allocated, read, written,
 * deleted and reused while other threads may still hold references to them. One instance serves
 * one kind of slice of one map; {@link #create} picks the implementation for a
 * {@link MemoryScheme}.
 *
 * <h2>References</h2>
 * A reference is one {@code long} ({@link Refs}): block, offset, and an aux field that holds the
 * slice's version (or, for header-less slices, its length). A reference is <em>live</em> while the
 * slice's header holds the same version and no DELETED mark. Copies of a reference may be held
 * anywhere, for any time; the manager never trusts them, it checks them.
 *
 * <h2>Protocol</h2>
 * <ul>
 * <li><b>Read</b>: {@code t = readBegin(ref)} ({@link #GONE} if not live), read the length and
 *     bytes, then {@code readEnd(ref, t)}. If that returns false the bytes read may be torn or
 *     foreign: discard everything computed from them (including exceptions) and retry.
 * <li><b>Write</b>: {@code h = lockWrite(ref)} ({@link #GONE} if not live), write, then
 *     {@link #unlock} or {@link #deleteLocked}. Writers exclude each other and deleters.
 * <li><b>Private</b> slices (allocated, not yet visible to other threads) are written directly
 *     and given back with {@link #discard}.
 * </ul>
 * Subclasses say which memory orderings make each step safe.
 */
public abstract sealed class SliceManager permits OptimisticSlices, LockBasedSlices, HeaderlessSlices {

    /** Returned by {@link #readBegin} and {@link #lockWrite} when the reference is not live. */
    public static final long GONE = -1L;

    /** Returned by {@link #liveToken} for a live slice whose reads must start with {@link #readBegin}. */
    public static final long NO_TOKEN = -2L;

    /**
     * Size of a slice header that holds a state word and a length apart: an 8-byte state word,
     * aligned for atomic access, and a 4-byte length. Slices start 4-aligned, so the order
     * follows the start: the word first at an 8-aligned start, the length first otherwise (see
     * {@link #stateOffset}, {@link #lengthOffset}); the data follows either way. Immutable and
     * header-less slices have smaller headers.
     */
    public static final int HEADER_BYTES = 12;

    protected final BlockAllocator allocator;
    protected final BlockAllocator.Kind kind;

    SliceManager(BlockAllocator allocator, BlockAllocator.Kind kind) {
        this.allocator = allocator;
        this.kind = kind;
    }

    // ------------------------------------------------------------------ blocks reused whole

    /**
     * Each block's layout era (0: never reused), or null while blocks are not reused whole. Set
     * once, before the first allocation. A manager whose slices have a header that a stale
     * reference reads keeps it (see {@link #prepareWholeBlockReuse}).
     */
    private int[] layouts;
    private static final VarHandle LAYOUT = MethodHandles.arrayElementVarHandle(int[].class);

    /**
     * Lets the allocator reuse blocks whose slices are all free as fresh memory
     * ({@code BlockAllocator}, "Whole free blocks") for the slices of every manager given, each
     * sharing {@code allocator}: each is told before a block is carved again, in turn. Call from
     * the managers' owner, before the first allocation.
     */
    public static void reuseWholeBlocks(BlockAllocator allocator, SliceManager... managers) {
        BlockAllocator.ReuseGuard[] guards = new BlockAllocator.ReuseGuard[managers.length];
        int n = 0;
        for (SliceManager m : managers) {
            BlockAllocator.ReuseGuard g = m.prepareWholeBlockReuse();
            if (g != null) {
                guards[n++] = g;
            }
        }
        BlockAllocator.ReuseGuard[] all = Arrays.copyOf(guards, n);
        allocator.reuseWholeBlocks(blockId -> {
            for (BlockAllocator.ReuseGuard g : all) {
                g.beforeReuse(blockId);
            }
        });
    }

    /** {@link #reuseWholeBlocks(BlockAllocator, SliceManager...)} for this manager alone. */
    public final void reuseWholeBlocks() {
        reuseWholeBlocks(allocator, this);
    }

    /**
     * Makes this manager's slices safe in blocks reused whole.
     *
     * @return what to do before a block whose slices were all freed is carved again, or null if
     *     nothing is needed: published slices that are never freed keep their blocks from being all
     *     free (private ones given back leave no stale reference), and slices without a header are
     *     validated without their bytes (Nova keys, through their chunk)
     */
    BlockAllocator.ReuseGuard prepareWholeBlockReuse() {
        return null;
    }

    /** Starts keeping a layout era per block (from {@link #prepareWholeBlockReuse}). */
    final void trackLayouts() {
        layouts = new int[Refs.MAX_BLOCK_ID + 1];
    }

    /** @return true if this manager keeps layout eras: its slices may lie in blocks reused whole */
    final boolean tracksLayouts() {
        return layouts != null;
    }

    /**
     * Publishes {@code era} as the layout era of block {@code blockId} (a volatile store, before
     * the caller reads the announcements): every reference into the block whose version is below
     * it belongs to an earlier layout.
     */
    final void publishLayout(int blockId, int era) {
        LAYOUT.setVolatile(layouts, blockId, era);
    }

    /**
     * @return true if {@code ref} points into an earlier layout of a block reused whole (an
     *     acquire load, after the caller's read of the state word): its version lags the block's
     *     layout era, wrap-aware over a window of 2^26 versions
     */
    final boolean staleLayout(long ref) {
        int[] l = layouts;
        if (l == null) {
            return false;
        }
        int era = (int) LAYOUT.getAcquire(l, Refs.blockId(ref));
        int behind = (era - Refs.aux(ref)) & Refs.MAX_AUX; // how many versions the reference lags the layout
        return era != 0 && behind != 0 && behind < 1 << 26;
    }

    /**
     * @param scheme the scheme
     * @param allocator where slices come from
     * @param kind what the slices hold; keys are never written after they are published
     * @return a manager for slices of {@code kind} under {@code scheme}
     */
    public static SliceManager create(MemoryScheme scheme, BlockAllocator allocator, BlockAllocator.Kind kind) {
        return switch (scheme) {
            case GROW_ONLY -> kind == BlockAllocator.Kind.KEY
                    ? new HeaderlessSlices(allocator, kind, false)
                    : new OptimisticSlices(allocator, kind, null);
            case LOCK_BASED -> new LockBasedSlices(allocator, kind);
            case NOVA -> kind == BlockAllocator.Kind.KEY
                    ? new HeaderlessSlices(allocator, kind, true)
                    : new OptimisticSlices(allocator, kind, new Nova(allocator, kind));
        };
    }

    /** @return the scheme this manager implements */
    public abstract MemoryScheme scheme();

    /** @return true if deleted slices may be reused while the map lives (so stale reads can happen) */
    public abstract boolean reclaims();

    /**
     * Returns the deleted slices that no operation can still reach to the allocator now, rather
     * than once enough of them have piled up (a reclaiming scheme batches them): after a pass
     * that deleted many at once, so that the blocks they lie in can empty. Does nothing where
     * deletions are not deferred.
     */
    public void reclaimNow() {
    }

    /**
     * Gives back the pages of blocks in which nothing is in use but the given slices, which the
     * caller keeps from being deleted meanwhile (see {@code BlockAllocator#discardAllBut}). Does
     * nothing but where the slices have no header that a stale reference could read, and deleted
     * slices are reused: the blocks' other slices are then all deleted ones.
     *
     * @param pinned slices of this manager, live, that cannot be deleted yet (sorted by this call)
     * @return bytes of pages given back
     */
    public long discardAllBut(long[] pinned) {
        return 0;
    }

    /** @return bytes before the data in every slice of this manager */
    public int headerBytes() {
        return HEADER_BYTES;
    }

    /** @return bytes a slice holding {@code length} bytes of data occupies */
    public abstract long sliceBytes(int length);

    /**
     * @return the most data one slice of this manager holds: with its header, a slice must fit in
     *     the largest block ({@link Refs#MAX_BLOCK_SIZE}, a multiple of the granule, so no padding
     *     can push it over). Callers check serialized sizes against it, so that a too-long key or
     *     value is the serializer's error rather than the allocator's
     */
    public int maxLength() {
        return (int) Math.min(Integer.MAX_VALUE, Refs.MAX_BLOCK_SIZE - headerBytes());
    }

    /**
     * Allocates a private slice for {@code length} bytes of data.
     *
     * @return a live reference; the caller writes the data before publishing it
     */
    public abstract long allocate(int length);

    /**
     * Allocates like {@link #allocate}, from the bump pointer only (see
     * {@link BlockAllocator#allocateFresh}): for the rebalancer, which lays pairs out in key order.
     *
     * @throws UnsupportedOperationException if this manager's slices are never moved
     */
    public long allocateFresh(int length) {
        throw new UnsupportedOperationException(scheme() + " slices are not moved");
    }

    /** @return true if fresh allocations keep memory bounded now (see {@link BlockAllocator#fewFreeSlices}) */
    public final boolean fewFreeSlices() {
        return allocator.fewFreeSlices();
    }

    /** Gives back a slice that was never published, or is no longer reachable by anyone. */
    public abstract void discard(long ref);

    /** @return the segment holding {@code ref} */
    public final MemorySegment segment(long ref) {
        return allocator.segment(ref);
    }

    /** @return the offset of the first data byte of {@code ref} in its segment: after the header */
    public final long dataOffset(long ref) {
        return Refs.offset(ref) + headerBytes();
    }

    /**
     * @return the data length; meaningful under the write lock, for a private slice, or inside a
     *     read (to be validated like the bytes)
     */
    public final int length(long ref) {
        return length(allocator.segment(ref), ref);
    }

    /**
     * {@link #length(long)} for a caller that holds the slice's segment already (a view reading
     * in a loop): one chain of dependent loads, from the manager to the block's segment, less.
     */
    public abstract int length(MemorySegment segment, long ref);

    /** @return a token for {@link #readEnd}, or {@link #GONE} if {@code ref} is not live */
    public abstract long readBegin(long ref);

    /** Ends a read. @return true if what was read between the two calls is the slice's, untorn */
    public final boolean readEnd(long ref, long token) {
        return readEnd(allocator.segment(ref), ref, token);
    }

    /** {@link #readEnd(long, long)} for a caller that holds the slice's segment already. */
    public abstract boolean readEnd(MemorySegment segment, long ref, long token);

    /** @return true if {@code ref} is live right now (a snapshot) */
    public abstract boolean isLive(long ref);

    /**
     * A liveness check whose result can also start a read: a scan checks each value it returns,
     * and the user's first read of that value then skips its own {@link #readBegin}.
     *
     * @return {@link #GONE} if {@code ref} is not live; otherwise a token that a read may use in
     *     place of {@link #readBegin}'s, by the calling thread or one it hands the token to with a
     *     happens-before edge, or {@link #NO_TOKEN} if there is none (a writer holds the slice, or
     *     the scheme's reads must begin with {@code readBegin}, as lock-based ones take a lock there)
     */
    public long liveToken(long ref) {
        return isLive(ref) ? NO_TOKEN : GONE;
    }

    /**
     * Takes the write lock of a live slice.
     *
     * @return the locked state to pass to {@link #unlock} or {@link #deleteLocked}, or {@link #GONE}
     */
    public abstract long lockWrite(long ref);

    /** Releases the write lock, publishing what was written under it. */
    public abstract void unlock(long ref, long locked);

    /** Records a new length (same slice size) and releases the write lock. */
    public abstract void unlock(long ref, long locked, int newLength);

    /** Marks a locked slice deleted (a removal's linearization point) and retires it for reuse. */
    public abstract void deleteLocked(long ref, long locked);

    /*
     * Polls. A poll (pollFirstEntry, pollLastEntry) finds the least live mapping, takes its
     * value's write lock, checks that the mapping is still the least, and deletes it: linearized
     * at the check. Holding the lock is not enough to make that instant the one everybody sees:
     * containsKey and key-only navigation report a write-locked value as live without waiting, so
     * after a lesser key was inserted they could still see the polled key present, although the
     * poll's answer says it went before that insertion. So the poll also marks the locked slice,
     * and the checks whose answers must be linearizable wait while the mark is there
     * (isLiveAwaitingPoll). Scans, which are only weakly consistent, and the rebalancer do not
     * wait (isLive, liveToken): to them the slice is live until it is deleted.
     */

    /**
     * The poll mark in the state word of a {@link #HEADER_BYTES} header: its top bit, in the
     * version field, which versions (27 bits) never reach. Only the holder of the write lock sets
     * it, and the unlock or deletion that ends the lock clears it.
     */
    static final long POLLING = 1L << 63;

    /**
     * Takes the write lock of a live value, as {@link #lockWrite} does, and marks the slice as
     * being polled (a volatile store, after the lock is taken), until {@link #unlock} or
     * {@link #deleteLocked} with the state returned here clears the mark with the lock.
     *
     * @return the locked state without the mark, to pass to {@code unlock} or {@code deleteLocked},
     *     or {@link #GONE}
     */
    public long lockForPoll(long ref) {
        long locked = lockWrite(ref);
        if (locked != GONE) {
            // the lock holder alone writes the word now (readers, writers and movers CAS only a
            // word that no writer holds); volatile, so that a liveness check made after the
            // poll's linearization point sees the mark
            STATE_WORD.setVolatile(allocator.segment(ref), stateOffset(ref), locked | POLLING);
        }
        return locked;
    }

    /**
     * {@link #isLive}, except that while another thread's poll holds {@code ref} marked (see
     * {@link #lockForPoll}) it waits for the poll to end, and then answers: false if the poll
     * deleted it. The calling thread's own poll does not wait for itself.
     *
     * @throws HeldLocks.PollConflict if the caller is a poll that holds another value
     */
    public boolean isLiveAwaitingPoll(long ref) {
        MemorySegment seg = allocator.segment(ref);
        long off = stateOffset(ref);
        for (int spins = 0; ; spins++) {
            long h = (long) STATE_WORD.getAcquire(seg, off);
            if (!liveState(h, ref)) {
                return false;
            }
            if ((h & POLLING) == 0 || !HeldLocks.mustWaitForPoll(ref)) {
                return true;
            }
            Backoff.pause(spins);
        }
    }

    /**
     * @return whether {@code state}, the state word of {@code ref}'s {@link #HEADER_BYTES} header
     *     read with acquire, says that {@code ref} is live
     */
    boolean liveState(long state, long ref) {
        throw new UnsupportedOperationException(scheme() + " " + kind + " slices have no state word");
    }

    /** Returned by {@link #beginMove} when a writer holds the slice: it is left where it is. */
    public static final long BUSY = -3L;

    /**
     * @return true if the rebalancer may copy published slices of this manager elsewhere and
     *     delete the originals: for slices that are written, with {@link #beginMove} and
     *     {@link #endMove}
     */
    public boolean movable() {
        return false;
    }

    /**
     * Starts moving a published slice: from now on writers wait (in {@link #lockWrite}) until
     * {@link #endMove}, while readers go on reading it, so a copy taken now stays the slice's
     * contents. Does not wait for a writer: a slice being written is not moved.
     *
     * @return a token for {@link #endMove}, {@link #GONE} if {@code ref} is not live, or
     *     {@link #BUSY} if a writer holds it
     * @throws UnsupportedOperationException if this manager's slices are never moved
     */
    public long beginMove(long ref) {
        throw new UnsupportedOperationException(scheme() + " slices are not moved");
    }

    /**
     * Ends a move begun with {@link #beginMove}: if {@code moved}, deletes the slice (its
     * contents live on elsewhere; readers and waiting writers now find it gone) and retires it for
     * reuse; otherwise returns it to the state before the move, as if nothing had happened.
     */
    public void endMove(long ref, long token, boolean moved) {
        throw new UnsupportedOperationException(scheme() + " slices are not moved");
    }

    /**
     * Deletes a published slice that is never written (a key the rebalancer dropped).
     *
     * @return true if this call deleted it, false if it was not live
     */
    public boolean delete(long ref) {
        long h = lockWrite(ref);
        if (h == GONE) {
            return false;
        }
        deleteLocked(ref, h);
        return true;
    }

    /**
     * Reads, with no ordering, byte {@code at} of slice {@code ref} (counted from the slice's
     * start, header included), only to bring its cache line in early: scans touch the slices of
     * the next entries in one batch so that their misses overlap ({@link BlockAllocator#touch}).
     * The result is meaningless. {@code at} may be a guess (a typical length): reading beyond the
     * slice, or beyond its block, is harmless.
     */
    public final long touch(long ref, long at) {
        return allocator.touch(ref, at);
    }

    /** @return true if slices can be touched by their block-region positions ({@link BlockAllocator#slotted}) */
    public final boolean touchesByPosition() {
        return allocator.slotted();
    }

    /**
     * Ends an optimistic read that started from {@code token}, the state word of a
     * {@link #HEADER_BYTES} header: true if the word is unchanged, so nothing wrote, deleted or
     * reused the slice since. The acquire fence orders the reads of the data before the re-read.
     */
    static boolean stateUnchanged(MemorySegment segment, long ref, long token) {
        VarHandle.acquireFence();
        return (long) STATE_WORD.getOpaque(segment, stateOffset(ref)) == token;
    }

    /**
     * @return the offset of the 8-byte state word of a {@link #HEADER_BYTES} header: the slice's
     *     start if it is 8-aligned, else 4 bytes on (blocks are page-aligned, so offsets in a block
     *     have the alignment of addresses)
     */
    static long stateOffset(long ref) {
        long off = Refs.offset(ref);
        return off + (off & 4);
    }

    /** @return the offset of the 4-byte length of a {@link #HEADER_BYTES} header: after the word, or before it */
    static long lengthOffset(long ref) {
        long off = Refs.offset(ref);
        return off + 8 - 2 * (off & 4);
    }

    private static final VarHandle STATE_WORD = java.lang.foreign.ValueLayout.JAVA_LONG.varHandle();

    /**
     * Rethrows, unchanged, a throwable that user code raised during a read that then validated
     * (so it was raised on consistent bytes and belongs to the caller).
     */
    public static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException(t); // checked: cannot come from the functional interfaces used
    }

}
