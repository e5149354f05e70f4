package dev.oakmap.internal.reclaim;

import dev.oakmap.internal.memory.Refs;
import dev.oakmap.internal.wait.Backoff;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The slices that threads are about to change a header of, announced so that whoever would reuse
 * their memory can see them: the thesis's TAP entries (hazard pointers used by writers only),
 * shared by {@link Nova} (writers, against its reclamation rounds) and {@link LockBasedSlices}
 * (lockers, against blocks reused whole).
 *
 * <p>Each announcement is a {@link Participant}: {@link Refs#NULL} while free, else the slice its
 * thread is about to write or lock. A thread takes a free participant for each announcement, by
 * a CAS from {@code NULL} to the slice, trying first the one it used last, and frees it when
 * done; so there are never more participants than announcements that were in progress at the
 * same time, however many threads come and go (a thread per task costs nothing lasting).
 *
 * <p>Memory ordering: {@link #announce} is a CAS (or, for a new participant, a volatile store):
 * a full fence, so the announcement is visible before the caller goes on to read the header or
 * a block's layout era. Readers of the announcements ({@link #snapshot}, {@link #awaitOutside})
 * read the participant array and each announcement with volatile loads, after their own volatile
 * store (a deletion, an era): either they see the announcement, or the announcer sees their store.
 * {@link #withdraw} is a release store, after everything the announcer did under it.
 */
final class Announcements {
    private static final VarHandle ANNOUNCED;

    static {
        try {
            ANNOUNCED = MethodHandles.lookup().findVarHandle(Participant.class, "announced", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** An announcement: free while {@link Refs#NULL}, else the slice its thread announces. */
    static final class Participant {
        /** Through {@link #ANNOUNCED}, but written plainly once, before the participant is published. */
        volatile long announced;
    }

    /** Every participant ever added (copy-on-write, grown under {@link #adding}). */
    private volatile Participant[] participants = new Participant[0];
    private final ReentrantLock adding = new ReentrantLock();
    /** The participant each thread used last, tried first by its next announcement. */
    private final ThreadLocal<Participant[]> last = ThreadLocal.withInitial(() -> new Participant[1]);

    /**
     * Announces that the calling thread is about to write or lock {@code ref}: takes a free
     * participant (the one it used last, if free) with a CAS, a full fence, so the announcement is
     * visible before the caller checks the slice's header. Each call must be followed by
     * {@link #withdraw} of the same reference.
     */
    void announce(long ref) {
        Participant[] mine = last.get();
        Participant p = mine[0];
        if (p == null || !ANNOUNCED.compareAndSet(p, Refs.NULL, ref)) {
            mine[0] = lease(ref);
        }
    }

    /**
     * Withdraws the calling thread's announcement of {@code ref} (a release store: after its
     * writes), freeing its participant. If a nested announcement took another participant, frees
     * any that announces {@code ref}: as many participants announce a slice as threads are
     * between announcing and withdrawing it, which is all a reader of the announcements needs.
     *
     * @throws IllegalStateException if no participant announces {@code ref} (a bug)
     */
    void withdraw(long ref) {
        Participant p = last.get()[0];
        if (p != null && (long) ANNOUNCED.getOpaque(p) == ref) { // held since announce: nobody else writes it
            ANNOUNCED.setRelease(p, Refs.NULL);
            return;
        }
        for (Participant q : participants) {
            if ((long) ANNOUNCED.getOpaque(q) == ref && ANNOUNCED.compareAndSet(q, ref, Refs.NULL)) {
                return;
            }
        }
        throw new IllegalStateException("withdrawing a slice that no participant announces");
    }

    /**
     * @return a free participant, now announcing {@code ref}: the first free one found, else a
     *     new one, appended to the array
     */
    private Participant lease(long ref) {
        Participant p = leaseFree(ref);
        if (p != null) {
            return p;
        }
        adding.lock();
        try {
            p = leaseFree(ref); // threads that queued here look again: others may have finished meanwhile
            if (p != null) {
                return p;
            }
            Participant[] all = participants;
            p = new Participant();
            p.announced = ref; // taken before anyone can see it
            Participant[] grown = Arrays.copyOf(all, all.length + 1);
            grown[all.length] = p;
            participants = grown; // volatile: a reader of the array from now on sees p
            ANNOUNCED.setVolatile(p, ref); // the full fence that the other paths get from their CAS
            return p;
        } finally {
            adding.unlock();
        }
    }

    /** @return a participant that was free, taken with a CAS to announce {@code ref}, or null */
    private Participant leaseFree(long ref) {
        for (Participant p : participants) {
            if ((long) ANNOUNCED.getOpaque(p) == Refs.NULL && ANNOUNCED.compareAndSet(p, Refs.NULL, ref)) {
                return p;
            }
        }
        return null;
    }

    /** @return the slices announced now, without their versions (aux fields zeroed) */
    Set<Long> snapshot() {
        Set<Long> out = new HashSet<>();
        for (Participant p : participants) { // volatile read of the array
            long a = (long) ANNOUNCED.getVolatile(p);
            if (a != Refs.NULL) {
                out.add(Refs.withAux(a, 0));
            }
        }
        return out;
    }

    /**
     * Waits until no participant announces a slice of block {@code blockId}: called after the
     * block's layout era was published (a volatile store before these volatile loads), so that
     * every thread that announced before reading the era has withdrawn, and later ones see it.
     */
    void awaitOutside(int blockId) {
        for (Participant p : participants) {
            for (int spins = 0; inBlock((long) ANNOUNCED.getVolatile(p), blockId); spins++) {
                Backoff.pause(spins); // a thread between its announcement and its check
            }
        }
    }

    private static boolean inBlock(long announced, int blockId) {
        return announced != Refs.NULL && Refs.blockId(announced) == blockId;
    }

    /** @return participants added so far: at most the announcements that were in progress at once */
    int count() {
        return participants.length;
    }
}
