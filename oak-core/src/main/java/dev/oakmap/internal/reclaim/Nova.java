package dev.oakmap.internal.reclaim;

import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.Refs;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The reclamation side of Nova (the Nova thesis, Ch. 3): when a deleted slice may be handed out
 * again, given that other threads may still be reading or writing it.
 *
 * <h2>State</h2>
 * <ul>
 * <li>The <b>era</b>, a counter that versions newly allocated slices ({@link #version()}).
 * <li>One {@link Participant} per thread that writes or deletes, registered on first use. It
 *     holds the thread's <b>announcement</b> (the slice it is writing, or {@link Refs#NULL}: the
 *     thesis's TAP entry, a hazard pointer used by writers only) and its <b>release list</b> of
 *     deleted slices not yet returned to the allocator.
 * </ul>
 *
 * <h2>Reclamation</h2>
 * A deleted slice goes to its deleter's release list ({@link #retire}). When a list reaches
 * {@link #batch} slices, its owner runs a reclamation round: it locks its own list and every
 * other non-empty list it can lock without waiting (helping, so a thread that stalls never holds
 * back more than the slice it announces), increments the era, reads every announcement, and gives
 * the allocator every listed slice that no thread announces; announced slices stay listed.
 *
 * <p>Why this is safe: each listed slice was marked deleted, then appended to a list under that
 * list's lock, before the round locked the list; so the era increment comes after the slice's
 * allocation, and its next allocation gets a different version: every old reference fails
 * validation, whether its reader started before or after the reuse. Readers need nothing more,
 * since they validate after reading. A writer stores its announcement with a volatile store (a
 * full fence) before it checks the header; a round reads announcements (volatile loads) after
 * the slices were marked deleted. Either the round sees the announcement and keeps the slice, or
 * the writer's check comes after the deletion and fails.
 *
 * <p>Participants of threads that died are dropped once their lists are empty; until then other
 * threads' rounds drain them.
 */
public final class Nova {
    /** Release-list length that triggers a reclamation round. */
    public static final int DEFAULT_BATCH = Integer.getInteger("oak.nova.batch", 1024);

    private static final VarHandle ANNOUNCED;

    static {
        try {
            ANNOUNCED = MethodHandles.lookup().findVarHandle(Participant.class, "announced", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final BlockAllocator allocator;
    private final BlockAllocator.Kind kind;
    private final int batch;
    private final AtomicInteger era = new AtomicInteger(1);
    private final CopyOnWriteArrayList<Participant> participants = new CopyOnWriteArrayList<>();
    private final ThreadLocal<Participant> local = ThreadLocal.withInitial(this::register);
    private final AtomicLong rounds = new AtomicLong();

    /** One thread's announcement and release list. */
    static final class Participant {
        final WeakReference<Thread> owner = new WeakReference<>(Thread.currentThread());
        final ReentrantLock lock = new ReentrantLock();
        @SuppressWarnings("unused") // accessed through ANNOUNCED
        volatile long announced;
        long[] refs = new long[16];
        long[] sizes = new long[16];
        int count; // guarded by lock

        void append(long ref, long bytes) {
            if (count == refs.length) {
                refs = Arrays.copyOf(refs, count * 2);
                sizes = Arrays.copyOf(sizes, count * 2);
            }
            refs[count] = ref;
            sizes[count] = bytes;
            count++;
        }
    }

    Nova(BlockAllocator allocator, BlockAllocator.Kind kind) {
        this(allocator, kind, DEFAULT_BATCH);
    }

    /**
     * @param allocator where reclaimed slices go
     * @param kind the kind they are freed as
     * @param batch release-list length that triggers a reclamation round
     */
    public Nova(BlockAllocator allocator, BlockAllocator.Kind kind, int batch) {
        if (batch < 1) {
            throw new IllegalArgumentException("batch must be positive: " + batch);
        }
        this.allocator = allocator;
        this.kind = kind;
        this.batch = batch;
    }

    private Participant register() {
        Participant p = new Participant();
        participants.add(p);
        return p;
    }

    /** @return the version for a slice allocated now: the era, in the 27 bits a reference holds (never 0) */
    public int version() {
        int v = era.get() & Refs.MAX_AUX;
        return v == 0 ? 1 : v;
    }

    /**
     * Announces that the calling thread is about to write {@code ref}. A volatile store: a full
     * fence, so the announcement is visible before the caller checks the slice's header.
     */
    public void announce(long ref) {
        ANNOUNCED.setVolatile(local.get(), ref);
    }

    /** Withdraws the calling thread's announcement (release: after its writes). */
    public void withdraw() {
        ANNOUNCED.setRelease(local.get(), Refs.NULL);
    }

    /** Queues a deleted slice of {@code bytes} bytes for reuse, running a round if the list is full. */
    public void retire(long ref, long bytes) {
        Participant me = local.get();
        boolean full;
        me.lock.lock();
        try {
            me.append(ref, bytes);
            full = me.count >= batch;
        } finally {
            me.lock.unlock();
        }
        if (full) {
            reclaim(me);
        }
    }

    /** Runs a reclamation round now, over the caller's list and every other it can lock. */
    public void reclaimNow() {
        reclaim(local.get());
    }

    private void reclaim(Participant me) {
        Participant[] all = participants.toArray(new Participant[0]);
        boolean[] held = new boolean[all.length];
        me.lock.lock();
        try {
            for (int i = 0; i < all.length; i++) {
                held[i] = all[i] != me && all[i].count > 0 && all[i].lock.tryLock();
            }
            try {
                era.incrementAndGet(); // after every listed slice was allocated and deleted (see the class comment)
                Set<Long> announced = announcements(all);
                freeUnannounced(me, announced);
                for (int i = 0; i < all.length; i++) {
                    if (held[i]) {
                        freeUnannounced(all[i], announced);
                    }
                }
            } finally {
                for (int i = 0; i < all.length; i++) {
                    if (held[i]) {
                        all[i].lock.unlock();
                    }
                }
            }
        } finally {
            me.lock.unlock();
        }
        rounds.incrementAndGet();
        pruneDead(all);
    }

    private static Set<Long> announcements(Participant[] all) {
        Set<Long> out = new HashSet<>();
        for (Participant p : all) {
            long a = (long) ANNOUNCED.getVolatile(p);
            if (a != Refs.NULL) {
                out.add(Refs.withAux(a, 0));
            }
        }
        return out;
    }

    private void freeUnannounced(Participant p, Set<Long> announced) {
        int kept = 0;
        for (int i = 0; i < p.count; i++) {
            long ref = p.refs[i];
            if (!announced.isEmpty() && announced.contains(Refs.withAux(ref, 0))) {
                p.refs[kept] = ref;
                p.sizes[kept] = p.sizes[i];
                kept++;
            } else {
                allocator.free(ref, p.sizes[i], kind);
            }
        }
        p.count = kept;
        if (kept == 0 && p.refs.length > 4 * batch) {
            p.refs = new long[16]; // a burst grew the list: give the heap back
            p.sizes = new long[16];
        }
    }

    private void pruneDead(Participant[] all) {
        for (Participant p : all) {
            if (p.owner.get() == null || !p.owner.get().isAlive()) {
                if (p.lock.tryLock()) {
                    try {
                        if (p.count == 0 && (long) ANNOUNCED.getVolatile(p) == Refs.NULL) {
                            participants.remove(p);
                        }
                    } finally {
                        p.lock.unlock();
                    }
                }
            }
        }
    }

    /** @return slices deleted and not yet returned to the allocator, over all threads (a snapshot) */
    public long pendingSlices() {
        long n = 0;
        for (Participant p : participants) {
            p.lock.lock();
            try {
                n += p.count;
            } finally {
                p.lock.unlock();
            }
        }
        return n;
    }

    /** @return reclamation rounds run so far */
    public long rounds() {
        return rounds.get();
    }

    /** @return the current era */
    public int era() {
        return era.get();
    }
}
