package dev.oakmap.bench.somar;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link dev.oakmap.somar.Somar} with Hazard Eras (Ramalhete and Correia, "Brief announcement:
 * Hazard Eras - non-blocking memory reclamation", SPAA 2017), adapted the Nova thesis's way
 * (§4.2.2, the "SOMAR approach"): every call is one protected region. A comparison scheme for the
 * thesis's experiments; the slice layout, read/write protocol and allocator are
 * {@link GuardedSomar}'s, shared with {@link EbrSomar}.
 *
 * <h2>State</h2>
 * <ul>
 * <li>A global <b>era clock</b> (a counter, from 1).
 * <li>Per slice: its <b>birth era</b>, the clock read when it was allocated, kept in its header
 *     (8 bytes after the state word, so an HE slice is 8 bytes longer than an EBR or Nova one:
 *     the paper's {@code newEra}); and, once deleted, its <b>retire era</b>, the clock read after
 *     the deletion (kept on the heap, in the retire list: the paper's {@code delEra}).
 * <li>Per thread: one <b>published era</b> slot ({@link #NONE} when outside a call; one slot is
 *     enough because SOMAR calls do not nest) and a retire list of (slice, birth, retire era).
 * </ul>
 *
 * <h2>Algorithm</h2>
 * <ul>
 * <li><b>Protect</b> ({@link #enter}): read the clock, store it into the slot with a volatile
 *     store. (The paper's {@code get_protected} re-reads the protected pointer until the era is
 *     stable; here the pointer is the caller's long, and its validation is the header check that
 *     every call makes right after protecting.) <b>Unprotect</b>: store {@link #NONE} with release
 *     semantics (the paper's {@code clear}).
 * <li><b>Retire</b> (after a delete, outside the region): read the clock as the retire era,
 *     append, and, as in the paper, advance the clock by one if nobody did meanwhile (CAS), so
 *     that slices allocated from now on are born in a later era than any published so far.
 *     Every {@code batch} retirements the thread adopts the lists of dead threads, reads all slots,
 *     and frees each listed slice whose interval {@code [birth, retire]} contains no published era.
 * </ul>
 *
 * <h2>Invariant and why it is safe</h2>
 * A slice is freed only if no slot read by the scan held an era in {@code [birth, retire]}. Take a
 * thread T inside a call on the slice that published era {@code E} and then found the header live
 * (same version, not deleted). The slice was allocated before T's call began (T holds its pointer),
 * so {@code birth <= E}; the header check came before the deletion, and the retire era was read
 * after the deletion, so {@code E <= retire}. T's publication precedes its header check, which
 * precedes the deletion, which precedes the scan: the scan sees {@code E} (or T has left the call).
 * So the slice stays. A thread that found the header deleted or of another version touches nothing.
 * Every step named is a volatile access (clock, slots, the header CAS), hence totally ordered
 * consistently with program order.
 *
 * <h2>Memory orderings</h2>
 * <ul>
 * <li>Protect: {@code setVolatile} on the slot, a full fence: published before the header is
 *     loaded (StoreLoad). Unprotect: {@code setRelease}, so the call's accesses happen before a
 *     reclaimer that reads {@link #NONE} (with {@code getVolatile}).
 * <li>The birth era is a plain store made before the state word's volatile store at allocation;
 *     the deleter reads it after its volatile CAS on that word, so it sees it.
 * <li>The clock is an {@link AtomicLong}: volatile reads, CAS to advance.
 * </ul>
 *
 * <h2>Robustness</h2>
 * A thread stalled inside a call holds back only the slices alive at its published era (born at or
 * before it and retired at or after it): slices allocated after the stall are freed normally, so
 * memory stays bounded, as with Nova. The price is a clock CAS per deletion and an interval test
 * per retired slice and thread at each scan.
 */
public final class HazardErasSomar extends GuardedSomar<HazardErasSomar.EraSlot> {

    /** The published era of a thread outside any call. */
    public static final long NONE = 0;

    private static final VarHandle ERA;

    static {
        try {
            ERA = MethodHandles.lookup().findVarHandle(EraSlot.class, "era", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final AtomicLong clock = new AtomicLong(1);

    /** One thread's published era and retire list (tagA: birth era, tagB: retire era). */
    static final class EraSlot extends GuardedSomar.Participant {
        @SuppressWarnings("unused") // through ERA
        volatile long era;
    }

    /** @param capacityBytes the most off-heap memory it may hold */
    public HazardErasSomar(long capacityBytes) {
        this(capacityBytes, DEFAULT_BATCH);
    }

    /**
     * @param capacityBytes the most off-heap memory it may hold
     * @param batch retire-list length between two scans of a thread
     */
    public HazardErasSomar(long capacityBytes, int batch) {
        super(capacityBytes, 8, batch);
    }

    @Override
    EraSlot newParticipant() {
        EraSlot s = new EraSlot();
        s.nextScan = batch;
        return s;
    }

    @Override
    EraSlot enter(EraSlot self) {
        ERA.setVolatile(self, clock.get()); // full fence before the header is read
        return self;
    }

    @Override
    void exit(EraSlot self) {
        ERA.setRelease(self, NONE);
    }

    @Override
    void onAllocate(MemorySegment seg, long off) {
        seg.set(ValueLayout.JAVA_LONG, off + 8, clock.get()); // birth era; published by the state word's volatile store
    }

    @Override
    boolean canDrop(EraSlot dead) {
        return (long) ERA.getVolatile(dead) == NONE;
    }

    @Override
    void retire(EraSlot self, long ref, long bytes, MemorySegment seg, long off) {
        long birth = seg.get(ValueLayout.JAVA_LONG, off + 8);
        long retired = clock.get(); // read after the deletion's CAS
        self.append(ref, bytes, birth, retired);
        if (clock.get() == retired) {
            clock.compareAndSet(retired, retired + 1);
        }
        if (self.count >= self.nextScan) {
            reclaim(self);
        }
    }

    /** Runs a scan of the calling thread's retire list now (tests, and the end of a benchmark run). */
    public void reclaimNow() {
        reclaim(self());
    }

    /** @return the era clock */
    public long era() {
        return clock.get();
    }

    private void reclaim(EraSlot self) {
        adoptDead(self); // before the scan: the scan must follow every deletion it judges
        long[] eras = new long[participants.size() + 4];
        int n = 0;
        for (EraSlot s : participants) {
            long e = (long) ERA.getVolatile(s);
            if (e != NONE) {
                if (n == eras.length) {
                    eras = java.util.Arrays.copyOf(eras, n * 2);
                }
                eras[n++] = e;
            }
        }
        int kept = 0;
        for (int i = 0; i < self.count; i++) {
            if (canFree(self.tagA[i], self.tagB[i], eras, n)) {
                free(self.refs[i], self.sizes[i]);
            } else {
                self.refs[kept] = self.refs[i];
                self.sizes[kept] = self.sizes[i];
                self.tagA[kept] = self.tagA[i];
                self.tagB[kept] = self.tagB[i];
                kept++;
            }
        }
        self.count = kept;
        self.nextScan = kept + batch;
    }

    private static boolean canFree(long birth, long retired, long[] eras, int n) {
        for (int i = 0; i < n; i++) {
            if (birth <= eras[i] && eras[i] <= retired) {
                return false;
            }
        }
        return true;
    }
}
