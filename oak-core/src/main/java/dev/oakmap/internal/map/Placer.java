package dev.oakmap.internal.map;

import dev.oakmap.OakClosedException;
import dev.oakmap.internal.chunk.Chunk;

import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Lays out anew, on a background thread, the chunks that scans found scattered (see
 * {@link Rebalancer}, "Placement on request"), so that the scan that asks does not pay the copy.
 *
 * <h2>Why a thread</h2>
 * Placing a chunk copies every pair of it into fresh memory: about a microsecond a pair on this
 * project's 2-core test machine, ten times what reading the pair costs the scan. Done by the scan
 * that asked, a pass over a map laid out at random slowed the scans of the first seconds to a
 * tenth of their speed, and the pass lasted as long as the slowed scans took to visit every chunk
 * (3-4 s for 1M pairs). Here a scan only records its request and goes on at full speed; one
 * thread places the chunks asked for, in the order asked. On a machine with a core to spare the
 * pass costs the scans nothing; otherwise it takes its share of the cores like any other thread.
 *
 * <h2>Requests</h2>
 * A chunk is queued once ({@link #pending} holds it until its request is done, so scans crossing
 * it meanwhile add nothing). The thread runs only while there are requests: the first request
 * starts it, and it ends once it finds the queue empty. Ending and starting race through
 * {@link #running}: the thread clears it and then looks at the queue again, and a requester adds
 * to the queue and then sets it, so every request is taken by a running thread or starts one.
 * Each request is handed to {@code place}, which checks that the chunk is still current and that
 * there is headroom; a chunk placed or refused may be asked for again by a later scan. After the
 * queue empties, {@code afterBatch} runs (the map gives back the blocks the pass emptied).
 *
 * <h2>Closing</h2>
 * The thread holds the map while it runs, and stops at the first request it finds the map closed
 * at (placing a chunk of a closed map throws {@link OakClosedException}; a copy that meets a block
 * the closing gave back throws {@link IllegalStateException}, as any access to a closed map's
 * memory does): either ends the thread quietly. It is a daemon thread and never blocks on anything
 * but the rebalancer's lock.
 */
final class Placer {
    private final Consumer<Chunk> place;
    private final Runnable afterBatch;
    private final BooleanSupplier closed;
    private final Queue<Chunk> queue = new ConcurrentLinkedQueue<>();
    /** Chunks queued or being placed: each is queued once. */
    private final Set<Chunk> pending = ConcurrentHashMap.newKeySet();
    /** Whether a thread is draining the queue (or about to). */
    private final AtomicBoolean running = new AtomicBoolean();

    /**
     * @param place lays a chunk out anew, if it is still current and the headroom allows
     * @param afterBatch runs once the queue is empty, before the thread ends
     * @param closed whether the map was closed
     */
    Placer(Consumer<Chunk> place, Runnable afterBatch, BooleanSupplier closed) {
        this.place = place;
        this.afterBatch = afterBatch;
        this.closed = closed;
    }

    /** Asks for {@code c} to be laid out anew; returns at once. */
    void request(Chunk c) {
        if (!pending.add(c)) {
            return; // already asked for
        }
        queue.add(c);
        if (running.compareAndSet(false, true)) { // after the add: see "Requests"
            Thread.ofPlatform().daemon().name("oak-placer").start(this::drain);
        }
    }

    private void drain() {
        try {
            while (true) {
                for (Chunk c; (c = queue.poll()) != null; ) {
                    try {
                        place.accept(c);
                    } finally {
                        pending.remove(c);
                    }
                }
                afterBatch.run();
                running.set(false);
                // a request added after the last poll and before the clear saw running set and
                // started no thread: take it here, unless a new thread already did
                if (queue.isEmpty() || !running.compareAndSet(false, true)) {
                    return;
                }
            }
        } catch (RuntimeException | Error e) {
            // placement is an optimization: a failure drops the requests, never the map's data
            queue.clear();
            pending.clear();
            running.set(false);
            if (!(e instanceof OakClosedException || (e instanceof IllegalStateException && closed.getAsBoolean()))) {
                throw e; // a bug: reported by the thread's uncaught-exception handler
            }
            // closed meanwhile: a copy may have met a block already given back
        }
    }

    /**
     * For tests: waits until every request made before this call was handled and the thread
     * ended (or {@code timeoutNanos} passed).
     *
     * @return true if the queue is empty and no thread runs
     */
    boolean awaitIdle(long timeoutNanos) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        while (running.get() || !queue.isEmpty()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(1);
        }
        return true;
    }
}
