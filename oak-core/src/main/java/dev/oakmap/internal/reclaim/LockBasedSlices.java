package dev.oakmap.internal.reclaim;

import dev.oakmap.MemoryScheme;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.wait.Backoff;
import dev.oakmap.internal.wait.HeldLocks;
import dev.oakmap.internal.memory.Refs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;

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
 * release store; a deleter, holding WRITER, stores DELETED and frees the slice at once.
 *
 * <h2>Versions</h2>
 * A slice's version is drawn from a counter of this manager at its allocation, so a slice
 * allocated where a deleted one was gets a version no reference to the deleted one carries:
 * stale references fail their check. A counter rather than the previous version at the same
 * place plus one: it makes versions comparable across places, which blocks reused whole need.
 * Versions wrap after 2^27 allocations; a reference held that long could be
 * fooled by a slice allocated at its place with the same version, which we accept, as Nova does.
 *
 * <h2>Blocks reused whole ({@link #prepareWholeBlockReuse})</h2>
 * Without it, a freed slice is reused only from its start and as the same kind (whole, or split
 * for a smaller size: see {@code BlockAllocator}), so every place where a header ever was still
 * holds one. With it, a block whose slices were all freed is carved afresh, and its old headers
 * may lie under another slice's payload, which can imitate a live state word; a stale reference
 * that CASed it would corrupt that payload. So, as {@code OptimisticSlices} does for Nova writers:
 * before the block is carved again, {@link #beforeReuse} draws a version and publishes it as the
 * block's layout era (a volatile store), then waits until no thread announces a slice of the
 * block; a reference whose version is below its block's layout era is not live. Every CAS that
 * takes a lock ({@link #readBegin}, {@link #lockWrite}) is preceded by an announcement (a full
 * fence) and a check of the layout era: either the locker sees the era and reports GONE, or the
 * recycler sees the announcement and waits until the locker, which can only find its slice
 * deleted, withdraws. Releases need neither: a lock holder's slice is live, so its block is not
 * all free. The liveness checks ({@link #isLive}, {@link #liveState}) check the era after
 * reading the word. Readers never read a slice's bytes without its lock, so no read sees payload
 * taken for a header. The check is wrap-aware over a window of 2^26 versions: a reference held
 * across that many allocations is checked by its header alone, as without reuse.
 */
public final class LockBasedSlices extends SliceManager {

    private static final VarHandle STATE = ValueLayout.JAVA_LONG.varHandle();
    private static final long READERS = (1L << 34) - 1;
    private static final long WRITER = 1L << 34;
    private static final long DELETED = 1L << 35;
    private static final int VERSION_SHIFT = 36;

    /** Hands out versions: see "Versions". */
    private final AtomicInteger versions = new AtomicInteger();
    /**
     * Lockers about to CAS a slice's header, while blocks are reused whole (see "Blocks reused
     * whole"), else null. Set before the first allocation, by the map's constructor: plain reads.
     */
    private Announcements announcements;

    LockBasedSlices(BlockAllocator allocator, BlockAllocator.Kind kind) {
        super(allocator, kind);
    }

    @Override
    BlockAllocator.ReuseGuard prepareWholeBlockReuse() {
        announcements = new Announcements();
        trackLayouts();
        return this::beforeReuse;
    }

    /** The allocator's guard: see "Blocks reused whole". */
    private void beforeReuse(int blockId) {
        publishLayout(blockId, nextVersion()); // before the announcements are read
        announcements.awaitOutside(blockId);
    }

    /** @return the lockers' announcements, or null while blocks are not reused whole (for tests) */
    Announcements announcements() {
        return announcements;
    }

    /** @return a version no slice allocated before carries (within the wrap): never 0 */
    private int nextVersion() {
        int v = versions.incrementAndGet() & Refs.MAX_AUX;
        return v != 0 ? v : nextVersion();
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
        int version = nextVersion();
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
        return liveState((long) STATE.getAcquire(allocator.segment(ref), stateOffset(ref)), ref);
    }

    @Override
    boolean liveState(long state, long ref) {
        return liveFor(state, ref) && !staleLayout(ref); // the era after the word
    }

    @Override
    public long readBegin(long ref) {
        return lock(ref, false);
    }

    /**
     * Takes the read or the write lock of {@code ref}, announcing it first while blocks are reused
     * whole (see "Blocks reused whole").
     *
     * @return the locked state, or {@link #GONE}
     */
    private long lock(long ref, boolean write) {
        MemorySegment seg = allocator.segment(ref);
        long off = stateOffset(ref);
        Announcements a = announcements;
        if (a != null) {
            a.announce(ref); // a full fence: the layout era in the loop is read after it
        }
        try {
            return write ? lockWrite(seg, off, ref) : lockRead(seg, off, ref);
        } finally {
            if (a != null) {
                a.withdraw(ref); // locked or not, the CAS is over
            }
        }
    }

    private long lockRead(MemorySegment seg, long off, long ref) {
        for (int spins = 0; ; spins++) {
            long h = (long) STATE.getVolatile(seg, off);
            if (!liveState(h, ref)) {
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
        return lock(ref, true);
    }

    private long lockWrite(MemorySegment seg, long off, long ref) {
        for (int spins = 0; ; spins++) {
            long h = (long) STATE.getVolatile(seg, off);
            if (!liveState(h, ref)) {
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
