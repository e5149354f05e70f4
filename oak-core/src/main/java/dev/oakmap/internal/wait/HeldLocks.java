package dev.oakmap.internal.wait;

import java.util.Arrays;

/**
 * The value locks a thread holds while it runs a user function under them (the function of a
 * {@code compute}, {@code merge} or in-place compute), so that a wait which only this same thread
 * could end fails at once instead of hanging: the function accessed its own key.
 *
 * <p>A waiter checks once, when it stops spinning ({@link #checkNotHeld}); an uncontended lock is
 * never waited for, so the check costs nothing on the fast path. Holding costs a thread-local
 * look-up per user function. References are unique to a slice's life (block, offset and
 * version), so a match is the same value, never a neighbour or a successor.
 */
public final class HeldLocks {
    private static final ThreadLocal<HeldLocks> LOCAL = new ThreadLocal<>();

    private long[] refs = new long[4];
    private int depth;

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
                        + "computeIfPresent, zc().computeIfPresent, ...) accessed that same key of the same map, "
                        + "or a function passed to a SOMAR read or write accessed that same slice: "
                        + "it would wait for itself forever");
            }
        }
    }

    /** The spin count at which a waiter checks (see {@link Backoff}: when it stops spinning). */
    public static final int CHECK_AT = Backoff.SPINS;
}
