package dev.oakmap;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Keys inserted in increasing order (time-ordered keys), the pattern the chunk's ring of recent
 * list ends serves: every insertion lands past the chunk's last sorted entry, either past its
 * last entry or among the last few inserted ones. Threads append interleaved
 * increasing keys while others insert below the tail, remove, and look up keys already appended;
 * with small chunks the appends split the last chunk again and again. Every appended key must be
 * found from the moment its put returned, and the map must end equal to a model. Seeded.
 */
class AppendOrderTest {

    @ParameterizedTest
    @ValueSource(ints = {4, 16, 512})
    void sequentialAppendsAndInsertsBelowTheTail(int chunk) {
        try (OakMap<Long, Long> m = TestMaps.longMap(chunk)) {
            ConcurrentSkipListMap<Long, Long> model = new ConcurrentSkipListMap<>();
            Random r = new Random(chunk);
            for (long k = 0; k < 5_000; k++) {
                long key = 10 * k;
                assertEquals(model.putIfAbsent(key, k), m.putIfAbsent(key, k));
                if (r.nextInt(4) == 0) { // below the tail: into a bypass or an earlier chunk
                    long below = r.nextLong(key + 1);
                    assertEquals(model.put(below, -k), m.put(below, -k), "put " + below);
                }
                if (r.nextInt(8) == 0) {
                    long gone = 10L * r.nextLong(k + 1);
                    assertEquals(model.remove(gone), m.remove(gone), "remove " + gone);
                }
                assertEquals(model.get(key), m.get(key));
            }
            assertEquals(new ArrayList<>(model.entrySet()), new ArrayList<>(m.entrySet()));
            assertEquals(new ArrayList<>(model.descendingMap().entrySet()), new ArrayList<>(m.descendingMap().entrySet()));
            for (Map.Entry<Long, Long> e : model.entrySet()) {
                assertEquals(e.getValue(), m.get(e.getKey()));
            }
        }
    }

    /** Groups of keys (one "millisecond" each) in increasing order, each group shuffled. */
    @ParameterizedTest
    @ValueSource(ints = {4, 32, 4096})
    void shuffledGroupsInIncreasingOrder(int chunk) throws Exception {
        try (OakMap<Long, Long> m = TestMaps.longMap(chunk)) {
            ConcurrentSkipListMap<Long, Long> model = new ConcurrentSkipListMap<>();
            Random r = new Random(chunk + 1);
            List<Long> group = new ArrayList<>();
            for (long g = 0; g < 400; g++) {
                group.clear();
                int size = 1 + r.nextInt(40);
                for (int i = 0; i < size; i++) {
                    group.add(g * 1000 + r.nextInt(1000));
                }
                java.util.Collections.shuffle(group, r);
                for (long k : group) {
                    assertEquals(model.putIfAbsent(k, g), m.putIfAbsent(k, g), "putIfAbsent " + k);
                    assertEquals(model.get(k), m.get(k));
                    long probe = g * 1000 + r.nextInt(1000); // present or absent, above or below ends
                    assertEquals(model.get(probe), m.get(probe), "get " + probe);
                }
            }
            assertEquals(new ArrayList<>(model.entrySet()), new ArrayList<>(m.entrySet()));
            assertEquals(new ArrayList<>(model.descendingMap().entrySet()), new ArrayList<>(m.descendingMap().entrySet()));
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {8, 64})
    void concurrentAppendersAndReaders(int chunk) throws Exception {
        int appenders = 2;
        int perThread = 20_000;
        long seed = Long.getLong("oak.test.seed", 7L);
        try (OakMap<Long, Long> m = TestMaps.longMap(chunk)) {
            AtomicLongArray progress = new AtomicLongArray(appenders); // keys appended so far, per thread
            ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
            CyclicBarrier start = new CyclicBarrier(appenders + 2);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < appenders; t++) {
                int id = t;
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        start.await(10, TimeUnit.SECONDS);
                        for (long i = 0; i < perThread; i++) {
                            long key = 4 * (i * appenders + id); // interleaved, increasing per thread
                            if (m.putIfAbsent(key, key) != null) {
                                failures.add("append " + key + " found a value");
                                return;
                            }
                            progress.set(id, i + 1);
                        }
                    } catch (Throwable e) {
                        failures.add("appender " + id + ": " + e);
                    }
                }));
            }
            threads.add(Thread.ofPlatform().start(() -> { // reads what was appended, and inserts odd keys below
                try {
                    start.await(10, TimeUnit.SECONDS);
                    Random r = new Random(seed);
                    while (progress.get(0) < perThread || progress.get(1) < perThread) {
                        int id = r.nextInt(appenders);
                        long done = progress.get(id);
                        if (done == 0) {
                            continue;
                        }
                        long key = 4 * (r.nextLong(done) * appenders + id);
                        Long v = m.get(key);
                        if (v == null || v != key) {
                            failures.add("appended key " + key + " read as " + v);
                            return;
                        }
                        long odd = 4 * r.nextLong(done * appenders + 1) + 1;
                        m.put(odd, odd);
                    }
                } catch (Throwable e) {
                    failures.add("reader: " + e);
                }
            }));
            threads.add(Thread.ofPlatform().start(() -> { // removes the odd keys again
                try {
                    start.await(10, TimeUnit.SECONDS);
                    Random r = new Random(seed + 1);
                    while (progress.get(0) < perThread || progress.get(1) < perThread) {
                        long odd = 4 * r.nextLong(Math.max(1, progress.get(0) * appenders)) + 1;
                        m.remove(odd);
                    }
                } catch (Throwable e) {
                    failures.add("remover: " + e);
                }
            }));
            for (Thread th : threads) {
                th.join(TimeUnit.SECONDS.toMillis(120));
                assertFalse(th.isAlive(), "a thread hung");
            }
            assertTrue(failures.isEmpty(), () -> String.join("\n", failures));
            long expectKey = 0;
            int appended = 0;
            Long prev = null;
            for (Map.Entry<Long, Long> e : m.entrySet()) {
                assertTrue(prev == null || e.getKey() > prev, "order");
                prev = e.getKey();
                assertEquals(e.getKey(), e.getValue());
                if (e.getKey() % 4 == 0) {
                    assertEquals(expectKey, (long) e.getKey(), "appended keys are all there, once");
                    expectKey += 4;
                    appended++;
                }
            }
            assertEquals(appenders * perThread, appended);
        }
    }
}
