package dev.oakmap.bench.somar;

import dev.oakmap.DeletedMemoryAccessException;
import dev.oakmap.OakClosedException;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakScopedWriteBuffer;
import dev.oakmap.internal.buffer.SliceBuffer;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.BlockPool;
import dev.oakmap.internal.memory.Refs;
import dev.oakmap.somar.Somar;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * The part that {@link EbrSomar} and {@link HazardErasSomar} share: a {@link Somar} over Oak's
 * {@link BlockAllocator} (the allocator Nova uses, so that only reclamation differs), with
 * versioned slice headers, where every call is one <em>protected region</em> of a classic safe
 * memory reclamation (SMR) scheme: {@link #enter()} at the start, {@link #exit} at the end, and
 * deleted slices handed to {@link #retire} after the region. This is what the Nova thesis (§4.2.2)
 * calls the <em>SOMAR approach</em> to adapting an SMR scheme: the scheme's protection wraps each
 * access to one slice, since safe pointers outlive any data-structure operation.
 *
 * <h2>Why a header is still needed</h2>
 * SMR protection only says that memory is not <em>freed</em> while a region that could reach it is
 * open. A SOMAR safe pointer is held outside any region (in a node, an array, another thread's
 * stack), for any time, so a call may start long after its slice was deleted and reused. Each slice
 * therefore starts with a header that tells a stale pointer so:
 * <pre>
 *  state word (8 bytes, aligned):                      then scheme fields, then length (4 bytes)
 *  63            36  35        34                 0
 * +----------------+---------+---------------------+  +--------------+  +--------+  +------+
 * | version (28)   | DELETED | write sequence (35) |  | (HE: birth)  |  | length |  | data |
 * +----------------+---------+---------------------+  +--------------+  +--------+  +------+
 * </pre>
 * The layout of the state word is Nova's (and the allocator's salvage path relies on it: a slice
 * given up as a tombstone keeps its state word, with DELETED set). A safe pointer is a {@link Refs}
 * long whose aux field holds the version. Each allocation of a slice stores the version its
 * previous incarnation had, plus one (fresh memory reads as version 0), so a pointer to any earlier
 * incarnation fails the check; versions wrap after 2^28 reuses of one slice, which we accept.
 *
 * <h2>Protocol</h2>
 * <ul>
 * <li><b>read</b>: enter; loop { load the state word (acquire); not DELETED and same version, else
 *     {@link DeletedMemoryAccessException}; if a writer holds it (odd sequence) spin; run the
 *     function; {@link VarHandle#acquireFence()}; reload the word (opaque): unchanged means the
 *     bytes were not torn by a concurrent writer } ; exit. Because the region is protected the
 *     slice cannot be freed and reused during the loop, so unlike Nova the function never sees
 *     another slice's bytes; it may still see a torn concurrent write, which the sequence check
 *     catches (the run is discarded, exception included, and repeated).
 * <li><b>write</b>: enter; CAS the word from a live, even sequence to the next (odd) one; run the
 *     function; store the following even sequence with release semantics; exit.
 * <li><b>delete</b>: enter; CAS the word from live and not being written to the same word plus
 *     DELETED (a volatile CAS: the linearization point, and ordered before everything
 *     {@link #retire} reads); exit; then {@link #retire} the slice.
 * <li><b>private</b> methods touch no protection: writePrivate runs the function directly,
 *     deletePrivate stores DELETED (release) and frees at once (no other thread holds the pointer).
 * </ul>
 *
 * <h2>What the protection buys, given this contract</h2>
 * The {@link Somar} contract makes writes atomic with respect to reads and to each other, which
 * needs the write sequence and its validation whatever the reclamation scheme; and a reallocation
 * always changes the state word (new version). So a read whose slice is freed and reused under it
 * would fail its validation even without protection, and a slice cannot be deleted (hence freed)
 * while a writer holds it. Here the SMR protection is therefore what the thesis's adaptation
 * <em>costs</em> (a published word and a full fence per call, a scan per batch) and how it
 * <em>holds memory back</em> (a stalled thread), not what keeps accesses safe; what it adds is that
 * a read function never runs over another slice's bytes. (The same reasoning applies to oak-core's
 * Nova, whose writers also CAS-lock the header, so that a deleter, which must take the same lock,
 * never deletes a slice being written: its writer announcement holds back nothing the lock does
 * not already protect.)
 *
 * @param <P> the scheme's per-thread record
 */
public abstract sealed class GuardedSomar<P extends GuardedSomar.Participant> implements Somar
        permits EbrSomar, HazardErasSomar {

    static final VarHandle STATE = ValueLayout.JAVA_LONG.varHandle();
    static final long SEQ_MASK = (1L << 35) - 1;
    static final long DELETED = 1L << 35;
    static final int VERSION_SHIFT = 36;
    /** Retire-list length between two reclamation attempts, by default (Nova's default too). */
    public static final int DEFAULT_BATCH = 1024;

    private static final long BLOCK_SIZE = 8L << 20;
    private static final int SPINS_BEFORE_YIELD = 128;

    /** Where slices come from and go back to: the same allocator Nova uses. */
    protected final BlockAllocator allocator;
    /** Retire-list length between two reclamation attempts of one thread. */
    protected final int batch;
    /** Every thread that has called in, until its thread dies and its lists are adopted. */
    protected final CopyOnWriteArrayList<P> participants = new CopyOnWriteArrayList<>();
    private final ThreadLocal<P> local = ThreadLocal.withInitial(this::register);
    private final int headerBytes;
    private final int lengthOffset;
    private volatile boolean closed;

    /**
     * One thread's record: the scheme's announcement fields (in the subclass) and its retire list.
     * The list is touched only by its owner, and by another thread only after the owner died (see
     * {@link #adoptDead}).
     */
    protected abstract static class Participant {
        final WeakReference<Thread> owner = new WeakReference<>(Thread.currentThread());
        long[] refs = new long[16];
        long[] sizes = new long[16];
        /** Scheme data per entry: EBR the retire epoch; HE the birth era and the retire era. */
        long[] tagA = new long[16];
        long[] tagB = new long[16];
        int count;
        int nextScan;

        void append(long ref, long bytes, long a, long b) {
            if (count == refs.length) {
                int n = count * 2;
                refs = Arrays.copyOf(refs, n);
                sizes = Arrays.copyOf(sizes, n);
                tagA = Arrays.copyOf(tagA, n);
                tagB = Arrays.copyOf(tagB, n);
            }
            refs[count] = ref;
            sizes[count] = bytes;
            tagA[count] = a;
            tagB[count] = b;
            count++;
        }

        boolean ownerDead() {
            Thread t = owner.get();
            return t == null || !t.isAlive();
        }
    }

    /**
     * @param capacityBytes the most off-heap memory the allocator may take
     * @param schemeHeaderBytes header bytes between the state word and the length
     * @param batch retire-list length between two reclamation attempts
     */
    GuardedSomar(long capacityBytes, int schemeHeaderBytes, int batch) {
        if (batch < 1) {
            throw new IllegalArgumentException("batch must be positive: " + batch);
        }
        this.allocator = new BlockAllocator(BlockPool.shared(), Math.min(BLOCK_SIZE, Math.max(4096, capacityBytes)),
                capacityBytes);
        this.batch = batch;
        this.lengthOffset = 8 + schemeHeaderBytes;
        this.headerBytes = lengthOffset + 4;
    }

    /** @return a new record for the calling thread (registered on its first call) */
    abstract P newParticipant();

    /**
     * Opens the calling thread's protected region: from its return until {@link #exit}, no slice
     * that was live at any point of the region is freed.
     *
     * @return the calling thread's record
     */
    abstract P enter(P self);

    /** Closes the protected region opened by {@link #enter}. */
    abstract void exit(P self);

    /** Called at allocation, before the state word is published, to fill the scheme's header fields. */
    abstract void onAllocate(MemorySegment seg, long off);

    /**
     * Takes a slice that this thread deleted (its DELETED mark stored by a volatile CAS before this
     * call), outside any protected region, and frees it once the scheme allows.
     */
    abstract void retire(P self, long ref, long bytes, MemorySegment seg, long off);

    private P register() {
        P p = newParticipant();
        participants.add(p);
        return p;
    }

    final P self() {
        return local.get();
    }

    /**
     * Moves the retire lists of participants whose thread has died into {@code into}'s list, and
     * drops them. Thread death is observed with {@link Thread#isAlive()}, which orders everything
     * the dead thread did before this; two adopters exclude each other on the dead record.
     */
    final void adoptDead(P into) {
        for (P q : participants) {
            if (q != into && q.ownerDead() && canDrop(q)) {
                synchronized (q) {
                    for (int i = 0; i < q.count; i++) {
                        into.append(q.refs[i], q.sizes[i], q.tagA[i], q.tagB[i]);
                    }
                    q.count = 0;
                }
                participants.remove(q);
            }
        }
    }

    /** @return true if a dead thread's record announces nothing (its last region was closed) */
    abstract boolean canDrop(P dead);

    final void free(long ref, long bytes) {
        allocator.free(ref, bytes, BlockAllocator.Kind.VALUE);
    }

    final long sliceBytes(int length) {
        // multiples of 8 from an 8-aligned start keep every state word 8-aligned (see BlockAllocator)
        return (headerBytes + (long) length + 7) & ~7L;
    }

    final int lengthAt(MemorySegment seg, long off) {
        return seg.get(ValueLayout.JAVA_INT, off + lengthOffset);
    }

    static int version(long state) {
        return (int) (state >>> VERSION_SHIFT) & Refs.MAX_AUX;
    }

    static boolean liveFor(long state, long ref) {
        return (state & DELETED) == 0 && version(state) == Refs.aux(ref);
    }

    static boolean writing(long state) {
        return (state & 1) != 0;
    }

    static long nextSeq(long state) {
        return (state & ~SEQ_MASK) | ((state + 1) & SEQ_MASK);
    }

    @Override
    public long allocate(int length) {
        checkOpen();
        if (length < 0) {
            throw new IllegalArgumentException("negative length: " + length);
        }
        try {
            long ref = allocator.allocate(sliceBytes(length), BlockAllocator.Kind.VALUE);
            MemorySegment seg = allocator.segment(ref);
            long off = Refs.offset(ref);
            // nobody can be inside this slice: it was freed only after no region could reach it
            int v = (version((long) STATE.getAcquire(seg, off)) + 1) & Refs.MAX_AUX;
            if (v == 0) {
                v = 1;
            }
            onAllocate(seg, off);
            STATE.setVolatile(seg, off, (long) v << VERSION_SHIFT);
            VarHandle.storeStoreFence(); // the new version is visible before any byte of the new owner
            seg.set(ValueLayout.JAVA_INT, off + lengthOffset, length);
            return Refs.withAux(ref, v);
        } catch (IllegalStateException e) {
            throw closedOr(e);
        }
    }

    @Override
    public <R> R read(long pointer, Function<? super OakScopedReadBuffer, ? extends R> reader) {
        Objects.requireNonNull(reader, "reader");
        checkOpen();
        P p = enter(self());
        try {
            MemorySegment seg = allocator.segment(pointer);
            long off = Refs.offset(pointer);
            SliceBuffer b = new SliceBuffer();
            for (int spins = 0; ; spins++) {
                long h = (long) STATE.getAcquire(seg, off);
                if (!liveFor(h, pointer)) {
                    throw deleted();
                }
                if (writing(h)) {
                    backOff(spins);
                    continue;
                }
                R r = null;
                Throwable failure = null;
                b.open(seg, off + headerBytes, lengthAt(seg, off), false);
                try {
                    r = reader.apply(b);
                } catch (Throwable e) {
                    failure = e; // judged after validation
                } finally {
                    b.close();
                }
                VarHandle.acquireFence(); // the reads of the data happen before the re-read of the state
                if ((long) STATE.getOpaque(seg, off) == h) {
                    if (failure != null) {
                        throw rethrow(failure);
                    }
                    return r;
                }
            }
        } catch (IllegalStateException e) {
            throw closedOr(e);
        } finally {
            exit(p);
        }
    }

    @Override
    public <R> R write(long pointer, Function<? super OakScopedWriteBuffer, ? extends R> writer) {
        Objects.requireNonNull(writer, "writer");
        checkOpen();
        P p = enter(self());
        try {
            MemorySegment seg = allocator.segment(pointer);
            long off = Refs.offset(pointer);
            long locked;
            for (int spins = 0; ; spins++) {
                long h = (long) STATE.getAcquire(seg, off);
                if (!liveFor(h, pointer)) {
                    throw deleted();
                }
                if (!writing(h) && STATE.compareAndSet(seg, off, h, nextSeq(h))) {
                    locked = nextSeq(h);
                    break;
                }
                backOff(spins);
            }
            SliceBuffer b = new SliceBuffer(seg, off + headerBytes, lengthAt(seg, off), true);
            try {
                return writer.apply(b);
            } finally {
                b.close();
                STATE.setRelease(seg, off, nextSeq(locked)); // the writes happen before the unlock
            }
        } catch (IllegalStateException e) {
            throw closedOr(e);
        } finally {
            exit(p);
        }
    }

    @Override
    public boolean delete(long pointer) {
        checkOpen();
        P p = enter(self());
        MemorySegment seg;
        long off;
        long bytes;
        try {
            seg = allocator.segment(pointer);
            off = Refs.offset(pointer);
            for (int spins = 0; ; spins++) {
                long h = (long) STATE.getAcquire(seg, off);
                if (!liveFor(h, pointer)) {
                    return false;
                }
                if (!writing(h) && STATE.compareAndSet(seg, off, h, h | DELETED)) {
                    break; // volatile CAS: ordered before the scheme's reads in retire
                }
                backOff(spins);
            }
            bytes = sliceBytes(lengthAt(seg, off)); // ours now: nobody else can delete or reuse it
        } catch (IllegalStateException e) {
            throw closedOr(e);
        } finally {
            exit(p);
        }
        retire(p, pointer, bytes, seg, off);
        return true;
    }

    @Override
    public <R> R writePrivate(long pointer, Function<? super OakScopedWriteBuffer, ? extends R> writer) {
        Objects.requireNonNull(writer, "writer");
        checkOpen();
        MemorySegment seg = allocator.segment(pointer);
        long off = Refs.offset(pointer);
        SliceBuffer b = new SliceBuffer(seg, off + headerBytes, lengthAt(seg, off), true);
        try {
            return writer.apply(b);
        } finally {
            b.close();
        }
    }

    @Override
    public void deletePrivate(long pointer) {
        checkOpen();
        MemorySegment seg = allocator.segment(pointer);
        long off = Refs.offset(pointer);
        long h = (long) STATE.getAcquire(seg, off);
        long bytes = sliceBytes(lengthAt(seg, off));
        STATE.setRelease(seg, off, (h & ~SEQ_MASK) | DELETED);
        free(pointer, bytes); // never published: no other thread can be inside it
    }

    @Override
    public int length(long pointer) {
        return read(pointer, OakScopedReadBuffer::capacity);
    }

    @Override
    public long memoryUsed() {
        return allocator.usedBytes();
    }

    @Override
    public long memoryReserved() {
        return allocator.reservedBytes();
    }

    /** @return deleted slices not yet given back to the allocator, over all threads (racy snapshot) */
    public long pendingSlices() {
        long n = 0;
        for (P p : participants) {
            n += p.count;
        }
        return n;
    }

    @Override
    public synchronized void close() {
        closed = true;
        allocator.close();
    }

    final void checkOpen() {
        if (closed) {
            throw new OakClosedException();
        }
    }

    private RuntimeException closedOr(IllegalStateException e) {
        return closed ? new OakClosedException(e) : e;
    }

    static DeletedMemoryAccessException deleted() {
        return new DeletedMemoryAccessException("the slice was deleted");
    }

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException(t);
    }

    static void backOff(int spins) {
        if (spins < SPINS_BEFORE_YIELD) {
            Thread.onSpinWait();
        } else {
            Thread.yield();
        }
    }
}
