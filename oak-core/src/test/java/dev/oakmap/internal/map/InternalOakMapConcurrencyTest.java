package dev.oakmap.internal.map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import static dev.oakmap.internal.map.InternalOakMapModelTest.box;
import static dev.oakmap.internal.map.InternalOakMapModelTest.newMap;
import static dev.oakmap.internal.map.InternalOakMapModelTest.val;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Multi-threaded checks of the core with tiny chunks (constant rebalancing): per-thread
 * sequential models over disjoint keys, lost-update detection on shared counters, and the scan
 * guarantee in both directions under concurrent insertions and removals.
 */
class InternalOakMapConcurrencyTest {

    static void runAll(List<Runnable> tasks) throws InterruptedException {
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (Runnable r : tasks) {
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    r.run();
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
            t.start();
            threads.add(t);
        }
        start.countDown();
        for (Thread t : threads) {
            t.join(120_000);
            if (t.isAlive()) {
                fail("thread hung: " + java.util.Arrays.toString(t.getStackTrace()));
            }
        }
        if (!errors.isEmpty()) {
            AssertionError e = new AssertionError("worker failed: " + errors.peek(), errors.peek());
            throw e;
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {11, 12, 13, 14, 15})
    void disjointKeysMatchSequentialModels(long seed) throws Exception {
        int threads = 4;
        InternalOakMap<Integer, int[]> map = newMap(seed % 2 == 0 ? 8 : 7);
        List<TreeMap<Integer, List<Integer>>> models = new ArrayList<>();
        List<Runnable> tasks = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            TreeMap<Integer, List<Integer>> model = new TreeMap<>();
            models.add(model);
            int id = t;
            tasks.add(() -> {
                Random rnd = new Random(seed * 31 + id);
                for (int step = 0; step < 20_000; step++) {
                    int k = rnd.nextInt(500) * threads + id;
                    String ctx = "seed " + seed + " thread " + id + " step " + step + " key " + k;
                    switch (rnd.nextInt(6)) {
                        case 0, 1 -> {
                            int[] v = val(rnd.nextInt(), 1 + rnd.nextInt(5));
                            assertEquals(model.put(k, box(v)), box(map.put(k, v, true)), ctx);
                        }
                        case 2 -> assertEquals(model.remove(k), box(map.remove(k)), ctx);
                        case 3 -> assertEquals(model.get(k), box(map.get(k)), ctx);
                        case 4 -> {
                            int[] v = val(rnd.nextInt(), 1);
                            boolean ins = map.putIfAbsentComputeIfPresent(k, v, b -> b.putInt(0, b.getInt(0) + 1));
                            assertEquals(!model.containsKey(k), ins, ctx);
                            if (ins) model.put(k, box(v)); else model.get(k).set(0, model.get(k).get(0) + 1);
                        }
                        default -> {
                            int[] v = val(rnd.nextInt(), 1 + rnd.nextInt(5));
                            assertEquals(model.putIfAbsent(k, box(v)), box(map.putIfAbsent(k, v)), ctx);
                        }
                    }
                }
            });
        }
        try {
            runAll(tasks);
            TreeMap<Integer, List<Integer>> all = new TreeMap<>();
            models.forEach(all::putAll);
            assertEquals(new ArrayList<>(all.entrySet()), InternalOakMapModelTest.collect(map.cursor(null, false, null, false, false)));
            assertEquals(new ArrayList<>(all.descendingMap().entrySet()), InternalOakMapModelTest.collect(map.cursor(null, false, null, false, true)));
            assertEquals(all.size(), map.size());
        } finally {
            map.close();
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {21, 22, 23})
    void inPlaceIncrementsAreNotLost(long seed) throws Exception {
        InternalOakMap<Integer, int[]> map = newMap(8);
        int keys = 4, perThread = 20_000, threads = 3;
        AtomicBoolean stop = new AtomicBoolean();
        List<Runnable> tasks = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            tasks.add(() -> {
                Random rnd = new Random(seed + id);
                for (int i = 0; i < perThread; i++) {
                    int k = rnd.nextInt(keys) * 1000;
                    if (i % 2 == 0) {
                        map.putIfAbsentComputeIfPresent(k, val(1, 1), b -> b.putInt(0, b.getInt(0) + 1));
                    } else if (!map.computeIfPresentZc(k, b -> b.putInt(0, b.getInt(0) + 1))) {
                        map.putIfAbsentComputeIfPresent(k, val(1, 1), b -> b.putInt(0, b.getInt(0) + 1));
                    }
                }
            });
        }
        Runnable churn = () -> {
            Random rnd = new Random(seed);
            while (!stop.get()) {
                int k = rnd.nextInt(4000);
                if (k % 1000 == 0) continue;
                if (rnd.nextBoolean()) map.put(k, val(k, 1 + rnd.nextInt(3)), false); else map.remove(k);
            }
        };
        List<Runnable> all = new ArrayList<>(tasks);
        Thread churner = new Thread(churn);
        churner.start();
        try {
            runAll(all);
            stop.set(true);
            churner.join();
            long total = 0;
            for (int k = 0; k < keys; k++) total += map.get(k * 1000)[0];
            assertEquals((long) threads * perThread, total);
        } finally {
            stop.set(true);
            map.close();
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {31, 32, 33})
    void scansReturnStableKeysExactlyOnceInOrder(long seed) throws Exception {
        InternalOakMap<Integer, int[]> map = newMap(8);
        // stable keys: multiples of 3; volatile keys: the others, inserted and removed concurrently
        int range = 3000;
        for (int k = 0; k < range; k += 3) map.put(k, val(k, 1), false);
        AtomicBoolean stop = new AtomicBoolean();
        Runnable writer = () -> {
            Random rnd = new Random(seed);
            while (!stop.get()) {
                int k = rnd.nextInt(range);
                if (k % 3 == 0) continue;
                if (rnd.nextBoolean()) map.put(k, val(k, 1 + rnd.nextInt(4)), false); else map.remove(k);
            }
        };
        Runnable scanner = () -> {
            Random rnd = new Random(seed + 1);
            try {
                for (int i = 0; i < 200; i++) {
                    boolean desc = rnd.nextBoolean();
                    Integer lo = rnd.nextBoolean() ? null : rnd.nextInt(range);
                    Integer hi = rnd.nextBoolean() || lo == null ? null : lo + rnd.nextInt(range);
                    Cursor<Integer, int[]> c = map.cursor(lo, true, hi, false, desc);
                    Integer prev = null;
                    List<Integer> stableSeen = new ArrayList<>();
                    while (c.advance()) {
                        int k = c.key();
                        if (prev != null) {
                            assertTrue(desc ? k < prev : k > prev, "order: " + prev + " then " + k + " desc=" + desc);
                        }
                        prev = k;
                        assertTrue(k >= 0 && k < range, "never inserted: " + k);
                        int[] v = c.value();
                        if (v != null) assertEquals(k, v[0], "value of " + k);
                        if (k % 3 == 0) stableSeen.add(k);
                    }
                    List<Integer> expected = new ArrayList<>();
                    for (int k = 0; k < range; k += 3) {
                        if ((lo == null || k >= lo) && (hi == null || k < hi)) expected.add(k);
                    }
                    if (desc) java.util.Collections.reverse(expected);
                    assertEquals(expected, stableSeen, "stable keys, desc=" + desc + " lo=" + lo + " hi=" + hi);
                }
            } finally {
                stop.set(true);
            }
        };
        try {
            runAll(List.of(writer, scanner, scanner));
        } finally {
            stop.set(true);
            map.close();
        }
    }
}
