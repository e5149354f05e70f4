package dev.oakmap.internal.wait;

import java.util.Arrays;

/**
 * The values a thread runs a user function over (the function of a {@code compute},
 * {@code merge} or in-place compute, under the value's write lock, and that of a read, such as a
 * zero-copy view's {@code transform}), so that an access of the same value from inside the
 * function fails at once instead of hanging.
 *
 * <p>Two ways to hang, one check. A function under a lock that reads or writes its own value
 * waits for a lock only its own thread can release: a waiter checks once, when it stops spinning
 * ({@link #checkNotHeld} at {@link #CHECK_AT}), so an uncontended lock costs no check. A read's
 * function that writes its own value does not wait under an optimistic scheme (the reader holds
 * no lock): the write succeeds, spoils the read's validation, and runs again at every retry, for
 * ever. So optimistic writers check eagerly, at every lock, a thread-local look-up.
 *
 * <p>Holding costs a thread-local look-up per user function. References are unique to a slice's
 * life (block, offset and version), so a match is the same value, never a neighbour or a
 * successor.
 */
public final class HeldLocks {
    private static final ThreadLocal<HeldLocks> LOCAL = new ThreadLocal<>();

    private long[] refs = new long[4];
    private int depth;
    /** How many of {@link #refs} are held by a poll (see {@link #holdForPoll}). */
    private int polls;

    private HeldLocks() {}

    /**
     * Records that the calling thread runs user code holding the lock of {@code ref}.
     *
     * @return the record, to {@link #release()} when the user code returns or throws
     */
    public static HeldLocks hold(long ref) {
        HeldLocks h = LOCAL.get();
        if (h == null || h.depth == h.refs.length) {
            h = room(h);
        }
        h.refs[h.depth++] = ref;
        return h;
    }

    /** The calling thread's record with room for one more lock, created or grown (off the fast path). */
    private static HeldLocks room(HeldLocks h) {
        if (h == null) {
            h = new HeldLocks();
            LOCAL.set(h);
        } else {
            h.refs = Arrays.copyOf(h.refs, 2 * h.depth);
        }
        return h;
    }

    /** Ends the latest {@link #hold} of this thread. */
    public void release() {
        depth--;
    }

    /**
     * Records that the calling thread holds the write lock of {@code ref} with the slice marked
     * as being polled (see {@code SliceManager#lockForPoll}): its own liveness checks of
     * {@code ref} do not wait for the mark, and it gives up when it meets another poll's mark
     * instead of waiting for it ({@link #mustWaitForPoll}).
     *
     * @return the record, to {@link #releasePoll()} when the poll is over
     */
    public static HeldLocks holdForPoll(long ref) {
        HeldLocks h = hold(ref);
        h.polls++;
        return h;
    }

    /** Ends the latest {@link #holdForPoll} of this thread. */
    public void releasePoll() {
        polls--;
        depth--;
    }

    /**
     * Called by a liveness check that found {@code ref} marked as being polled by a thread that
     * holds its write lock.
     *
     * @return true if the caller must wait until the mark is gone; false if the calling thread is
     *     the one that holds it (its poll checks its own key)
     * @throws PollConflict if the calling thread is itself in a poll that holds another slice:
     *     two polls waiting for each other's marks (a first and a last one over ranges that cross)
     *     would wait for ever, so the one that meets the other's mark starts over
     */
    public static boolean mustWaitForPoll(long ref) {
        HeldLocks h = LOCAL.get();
        if (h == null) {
            return true;
        }
        for (int i = 0; i < h.depth; i++) {
            if (h.refs[i] == ref) {
                return false;
            }
        }
        if (h.polls > 0) {
            throw PollConflict.INSTANCE;
        }
        return true;
    }

    /**
     * Thrown to a poll that met another poll's mark while holding its own: it releases its key
     * and starts over. Internal, never seen by users; no stack trace.
     */
    public static final class PollConflict extends RuntimeException {
        private static final PollConflict INSTANCE = new PollConflict();

        private PollConflict() {
            super("a poll met another poll's key", null, false, false);
        }
    }

    /**
     * Called by a thread about to wait for the lock of {@code ref} to be released (a writer's or,
     * for read locks, the readers').
     *
     * @throws IllegalStateException if the calling thread itself holds it, inside a user function
     */
    public static void checkNotHeld(long ref) {
        HeldLocks h = LOCAL.get();
        for (int i = 0; h != null && i < h.depth; i++) {
            if (h.refs[i] == ref) {
                throw new IllegalStateException("a function passed to an atomic update of a key (compute, merge, "
                        + "computeIfPresent, zc().computeIfPresent, ...) or to a read of its value (a zero-copy "
                        + "view's transform) accessed that same key of the same map, or a function passed to a "
                        + "SOMAR read or write accessed that same slice: it would wait for itself, or spoil its "
                        + "own read, forever");
            }
        }
    }

    /** The spin count at which a waiter checks (see {@link Backoff}: when it stops spinning). */
    public static final int CHECK_AT = Backoff.SPINS;
}
