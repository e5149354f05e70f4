package dev.oakmap.bench.somar;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link dev.oakmap.somar.Somar} with epoch-based reclamation (Fraser, "Practical lock-freedom",
 * 2004), adapted the Nova thesis's way (§4.2.2, the "SOMAR approach"): every call is one protected
 * region. A comparison scheme for the thesis's experiments; the slice layout, read/write protocol
 * and allocator are {@link GuardedSomar}'s, shared with {@link HazardErasSomar}.
 *
 * <h2>State</h2>
 * <ul>
 * <li>A global <b>epoch</b> {@code E} (a counter, from 1).
 * <li>Per thread: an <b>announcement</b> word {@code (epoch << 1) | active}, written only by its
 *     thread, and a <b>limbo list</b> of slices it deleted, each tagged with the epoch read right
 *     after the deletion.
 * </ul>
 *
 * <h2>Algorithm</h2>
 * <ul>
 * <li><b>Protect</b> ({@link #enter}): read {@code E}, store {@code (E << 1) | 1} into the
 *     announcement with a volatile store. <b>Unprotect</b> ({@link #exit}): store
 *     {@code E << 1} (inactive) with release semantics.
 * <li><b>Retire</b> (after a delete, outside the region): append the slice with tag
 *     {@code e = E}. Every {@code batch} retirements the thread runs a round: it adopts the lists
 *     of dead threads, reads {@code E} as {@code g}, reads every announcement; if every active
 *     thread announces {@code g}, it tries to advance {@code E} from {@code g} to {@code g + 1}
 *     (CAS); then it frees each listed slice whose tag is below the smallest epoch any active
 *     thread announces (all of them if no thread is active).
 * </ul>
 *
 * <h2>Invariant and why it is safe</h2>
 * A slice tagged {@code e} is freed only if, at the round's scan, every thread was inactive or
 * announced an epoch {@code > e}. Take a thread T that could still touch the slice:
 * <ul>
 * <li>T was inactive at the scan: its next region's announcement, and the header check that
 *     follows it, come after the scan, which comes after the deletion; the check sees DELETED (or
 *     a newer version once the slice is reused) and the call fails cleanly.
 * <li>T announced {@code a > e}: T read {@code E = a} after {@code E} was advanced past
 *     {@code e}, which happened after the retirer read {@code e}, which happened after the
 *     deletion. So T's region began after the deletion, and its header check fails likewise.
 * </ul>
 * A region that began before the deletion announces at most {@code e}, and holds the slice back.
 * All the steps named are volatile accesses (the epoch is an {@link AtomicLong}, announcements are
 * read with {@code getVolatile}, the deletion is a volatile CAS on the header), so they are totally
 * ordered consistently with each thread's program order, which is what the argument uses.
 *
 * <h2>Memory orderings</h2>
 * <ul>
 * <li>Protect: the announcement is a volatile store ({@code setVolatile}), i.e. followed by a full
 *     fence: it is visible before the header is loaded (StoreLoad). This is the fence per call that
 *     the thesis's EBR and HE pay and Nova's reads do not.
 * <li>Unprotect: {@code setRelease}: every load and store of the region happens before a reclaimer
 *     that reads the inactive word (it reads with {@code getVolatile}, an acquire).
 * <li>Retire reads the epoch (volatile) after the deletion's volatile CAS.
 * </ul>
 *
 * <h2>Robustness</h2>
 * None, by design of EBR: a thread that stalls inside a call (a slow write function, a descheduled
 * thread) keeps announcing its old epoch, the epoch can advance at most once more, and from then on
 * no slice deleted by anyone is freed until the thread leaves its region. Memory in use grows
 * without bound meanwhile. (Nova holds back only the one slice the stalled thread is writing.)
 */
public final class EbrSomar extends GuardedSomar<EbrSomar.EpochSlot> {

    private static final VarHandle ANNOUNCED;

    static {
        try {
            ANNOUNCED = MethodHandles.lookup().findVarHandle(EpochSlot.class, "announced", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final AtomicLong epoch = new AtomicLong(1);

    /** One thread's announcement and limbo list (tagA: the retire epoch). */
    static final class EpochSlot extends GuardedSomar.Participant {
        /** {@code (epoch << 1) | active}; written by the owner only. */
        @SuppressWarnings("unused") // through ANNOUNCED
        volatile long announced;
    }

    /** @param capacityBytes the most off-heap memory it may hold */
    public EbrSomar(long capacityBytes) {
        this(capacityBytes, DEFAULT_BATCH);
    }

    /**
     * @param capacityBytes the most off-heap memory it may hold
     * @param batch limbo-list length between two reclamation rounds of a thread
     */
    public EbrSomar(long capacityBytes, int batch) {
        super(capacityBytes, 0, batch);
    }

    @Override
    EpochSlot newParticipant() {
        EpochSlot t = new EpochSlot();
        t.nextScan = batch;
        return t;
    }

    @Override
    EpochSlot enter(EpochSlot self) {
        ANNOUNCED.setVolatile(self, (epoch.get() << 1) | 1); // full fence before the header is read
        return self;
    }

    @Override
    void exit(EpochSlot self) {
        ANNOUNCED.setRelease(self, (long) ANNOUNCED.getOpaque(self) & ~1L);
    }

    @Override
    void onAllocate(MemorySegment seg, long off) {
        // no scheme fields in the header
    }

    @Override
    boolean canDrop(EpochSlot dead) {
        return ((long) ANNOUNCED.getVolatile(dead) & 1) == 0;
    }

    @Override
    void retire(EpochSlot self, long ref, long bytes, MemorySegment seg, long off) {
        self.append(ref, bytes, epoch.get(), 0); // the epoch is read after the deletion's CAS
        if (self.count >= self.nextScan) {
            reclaim(self);
        }
    }

    /** Runs a reclamation round for the calling thread now (tests, and the end of a benchmark run). */
    public void reclaimNow() {
        reclaim(self());
    }

    /** @return the global epoch */
    public long epoch() {
        return epoch.get();
    }

    private void reclaim(EpochSlot self) {
        adoptDead(self); // before the scan: the scan must follow every deletion it judges
        long g = epoch.get();
        long min = Long.MAX_VALUE;
        boolean allSeenG = true;
        for (EpochSlot t : participants) {
            long a = (long) ANNOUNCED.getVolatile(t);
            if ((a & 1) != 0) {
                long e = a >>> 1;
                min = Math.min(min, e);
                allSeenG &= e == g;
            }
        }
        if (allSeenG) {
            epoch.compareAndSet(g, g + 1);
        }
        int kept = 0;
        for (int i = 0; i < self.count; i++) {
            if (self.tagA[i] < min) {
                free(self.refs[i], self.sizes[i]);
            } else {
                self.refs[kept] = self.refs[i];
                self.sizes[kept] = self.sizes[i];
                self.tagA[kept] = self.tagA[i];
                kept++;
            }
        }
        self.count = kept;
        self.nextScan = kept + batch; // a blocked list is rescanned every batch retirements, not on each
    }
}
