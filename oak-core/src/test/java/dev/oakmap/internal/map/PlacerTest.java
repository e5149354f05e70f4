package dev.oakmap.internal.map;

import dev.oakmap.internal.chunk.Chunk;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The placer's start and stop handshake ({@link Placer}, "Requests"): rounds of requests from
 * several threads, in bursts with pauses, so that the placer thread ends and starts again many
 * times, and requests arrive just as it ends (its after-batch work, as in a map, takes a few
 * microseconds). After each round, every chunk asked for must have been placed, once (each is
 * asked for once), by at most one placer thread at a time: a request lost at the end of a round
 * would wait in the queue with no thread to take it. Seeded and repeatable.
 */
class PlacerTest {

    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {1, 2, 3})
    void everyRequestIsPlacedOnceByOneThreadAtATime(long seed) throws Exception {
        int rounds = 200;
        int threads = 3;
        int perThread = 40;
        Map<Chunk, Integer> placed = new ConcurrentHashMap<>();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger batches = new AtomicInteger();
        AtomicReference<String> failure = new AtomicReference<>();
        Placer placer = new Placer(c -> {
            if (inside.incrementAndGet() != 1) {
                failure.compareAndSet(null, "two placer threads at once");
            }
            placed.merge(c, 1, Integer::sum);
            inside.decrementAndGet();
        }, () -> {
            batches.incrementAndGet();
            long until = System.nanoTime() + 5_000; // the map gives blocks back here
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
        }, () -> false);
        List<Chunk> asked = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int round = 0; round < rounds; round++) {
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> requesters = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Random rnd = new Random(seed * 1_000_003 + round * 31L + t);
                requesters.add(Thread.ofPlatform().start(() -> {
                    try {
                        start.await();
                        for (int i = 0; i < perThread; i++) {
                            Chunk c = Chunk.empty(1);
                            asked.add(c);
                            placer.request(c);
                            if (rnd.nextInt(8) == 0) {
                                Thread.sleep(0, rnd.nextInt(100_000)); // let the placer drain and end
                            }
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }));
            }
            start.countDown();
            for (Thread t : requesters) {
                t.join();
            }
            assertTrue(placer.awaitIdle(2_000_000_000L), "round " + round + ": a request waits with no placer thread");
        }
        assertNull(failure.get());
        assertEquals(rounds * threads * perThread, asked.size());
        for (Chunk c : asked) {
            assertEquals(1, placed.getOrDefault(c, 0), "a request placed other than once");
        }
        System.out.printf("[placer] seed=%d: %d requests, %d batches%n", seed, asked.size(), batches.get());
        assertTrue(batches.get() > 1, "the placer never ended and started again: the handshake was not exercised");
    }
}
