package dev.oakmap.internal.wait;

import java.util.concurrent.locks.LockSupport;

/**
 * How a thread waits for another thread's short critical section (a slice's write lock, a
 * chunk's pending publications): spin first, then give the processor away.
 *
 * <p>Platform threads yield, which the operating system schedules fairly. Virtual threads must
 * not: {@link Thread#yield} puts a virtual thread straight back in its carrier's queue, and when
 * the thread they wait for is unmounted (a {@code compute} function that sleeps or blocks on I/O),
 * waiters that keep yielding keep the carriers busy, and the woken holder, submitted from the
 * timer or I/O poller, was measured waiting over 60 s behind 400 of them (2 carriers). So a
 * virtual thread parks instead, for a time that doubles from a microsecond to a millisecond:
 * parked, it leaves its carrier to whoever can make progress.
 */
public final class Backoff {
    private Backoff() {}

    /** Spins before giving the processor away. */
    static final int SPINS = 128;
    /** The longest park of a waiting virtual thread, in nanoseconds. */
    private static final long MAX_PARK_NANOS = 1_000_000;

    /**
     * Waits a little, the {@code spins}-th time in a row that the caller found what it waits for
     * not ready yet (0 the first time).
     */
    public static void pause(int spins) {
        if (spins < SPINS) {
            Thread.onSpinWait();
        } else if (!Thread.currentThread().isVirtual()) {
            Thread.yield();
        } else {
            int doublings = Math.min(10, spins - SPINS);
            LockSupport.parkNanos(Math.min(MAX_PARK_NANOS, 1_000L << doublings));
        }
    }
}
