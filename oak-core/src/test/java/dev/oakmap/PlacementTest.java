package dev.oakmap;

import dev.oakmap.TestMaps.Blob;
import dev.oakmap.internal.chunk.Chunk;
import dev.oakmap.internal.memory.Refs;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Placement: rebalances that move pairs into key order (an experiment behind
 * {@code -Doak.placePairs=true}). Zero-copy views must follow a moved value through any number
 * of moves, see its in-place updates, and still fail once the mapping is removed or its value
 * replaced by one of another size; the pairs of a chunk must end up in key order in memory; and
 * all of it must hold while writers race the moves. Seeded and repeatable.
 */
class PlacementTest {

    private static <V> OakMap<Integer, V> placedMap(OakSerializer<V> values, int chunkCapacity) {
        OakMapBuilder<Integer, V> b = TestMaps.builder(values, chunkCapacity);
        b.placePairs = true;
        return b.build();
    }

    static List<Integer> shuffled(int from, int to, int step, Random rnd) {
        List<Integer> keys = new ArrayList<>();
        for (int k = from; k < to; k += step) {
            keys.add(k);
        }
        Collections.shuffle(keys, rnd);
        return keys;
    }

    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {1, 42, 20261125})
    void viewsFollowMovedValuesAndFailOnceRemoved(long seed) {
        Random rnd = new Random(seed);
        try (OakMap<Integer, Long> map = placedMap(TestMaps.LONG_VAL, 8)) {
            for (int k : shuffled(0, 4000, 2, rnd)) {
                map.put(k, (long) k);
            }
            Map<Integer, OakUnscopedBuffer> views = new HashMap<>();
            for (int i = 0; i < 200; i++) {
                int k = 2 * rnd.nextInt(2000);
                views.put(k, map.zc().get(k));
            }
            long movedBefore = map.internal.pairsMoved();
            for (int k : shuffled(1, 4000, 2, rnd)) { // odd keys land between: every chunk is rebuilt, often
                map.put(k, (long) k);
            }
            assertTrue(map.internal.pairsMoved() - movedBefore > 600,
                    "rebalances moved " + (map.internal.pairsMoved() - movedBefore) + " pairs");
            for (Map.Entry<Integer, OakUnscopedBuffer> e : views.entrySet()) {
                assertEquals((long) e.getKey(), e.getValue().getLong(0), "view of " + e.getKey());
            }
            // in-place updates are seen through views taken before the moves, and after more moves
            for (int k : views.keySet()) {
                assertTrue(map.zc().computeIfPresent(k, b -> b.putLong(0, -k)));
            }
            for (int k : shuffled(4000, 6000, 1, rnd)) {
                map.put(k, (long) k);
            }
            for (int k : shuffled(0, 4000, 3, rnd)) {
                map.remove(k);
            }
            for (int k : shuffled(0, 4000, 3, rnd)) { // removals compact chunks: more moves
                map.put(k + 6000, 0L);
            }
            for (Map.Entry<Integer, OakUnscopedBuffer> e : views.entrySet()) {
                int k = e.getKey();
                OakUnscopedBuffer v = e.getValue();
                if (k % 3 == 0) {
                    assertThrows(DeletedMemoryAccessException.class, () -> v.getLong(0), "removed " + k);
                    assertThrows(DeletedMemoryAccessException.class, () -> v.transform(b -> b.getLong(0)));
                } else {
                    assertEquals(-k, v.getLong(0), "view of " + k);
                    assertEquals(-k, (long) v.transform(b -> b.getLong(0)));
                    assertEquals(8, v.capacity());
                }
            }
            // re-inserting a removed key does not revive an old view of it
            for (int k : views.keySet()) {
                if (k % 3 == 0) {
                    map.put(k, 7L);
                    assertThrows(DeletedMemoryAccessException.class, () -> views.get(k).getLong(0));
                }
            }
        }
    }

    /**
     * Keys inserted in increasing order fill chunks that are rebuilt without moving anything
     * (their pairs arrived in key order); views taken then must still follow the moves of later
     * rebalances, through the records of those that moved nothing.
     */
    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {8, 9})
    void viewsFollowThroughRebalancesThatMovedNothing(long seed) {
        Random rnd = new Random(seed);
        try (OakMap<Integer, Long> map = placedMap(TestMaps.LONG_VAL, 8)) {
            for (int k = 0; k < 1500; k += 3) {
                map.put(k, (long) k);
            }
            Map<Integer, OakUnscopedBuffer> views = new HashMap<>();
            for (int k = 0; k < 1500; k += 15) {
                views.put(k, map.zc().get(k));
            }
            for (int k = 1500; k < 3000; k += 3) { // the last chunks are rebuilt, moving nothing
                map.put(k, (long) k);
            }
            long appendedMoves = map.internal.pairsMoved();
            // only the first chunk's first build, which has no sorted entries to tell growth by, moves
            assertTrue(appendedMoves <= 8, appendedMoves + " pairs that arrived in key order were moved");
            for (int k : shuffled(1, 3000, 3, rnd)) {
                map.put(k, (long) k);
            }
            for (int k : shuffled(2, 3000, 3, rnd)) {
                map.put(k, (long) k);
            }
            assertTrue(map.internal.pairsMoved() - appendedMoves > 600, "moves: " + map.internal.pairsMoved());
            for (Map.Entry<Integer, OakUnscopedBuffer> e : views.entrySet()) {
                assertEquals((long) e.getKey(), e.getValue().getLong(0), "view of " + e.getKey());
            }
            assertEquals(3000, map.size());
        }
    }

    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {3, 77})
    void aViewOfAValueReplacedByOneOfAnotherSizeFails(long seed) {
        Random rnd = new Random(seed);
        try (OakMap<Integer, Blob> map = placedMap(TestMaps.BLOB_VAL, 8)) {
            for (int k : shuffled(0, 2000, 2, rnd)) {
                map.put(k, new Blob(k, 1, 16));
            }
            List<Integer> keys = shuffled(0, 2000, 2, rnd).subList(0, 100);
            Map<Integer, OakUnscopedBuffer> views = new HashMap<>();
            for (int k : keys) {
                views.put(k, map.zc().get(k));
            }
            for (int k : keys.subList(0, 50)) {
                map.put(k, new Blob(k, 2, 200)); // another slice size: the view's value is gone
            }
            for (int k : shuffled(1, 2000, 2, rnd)) {
                map.put(k, new Blob(k, 1, 16));
            }
            for (int i = 0; i < keys.size(); i++) {
                int k = keys.get(i);
                OakUnscopedBuffer v = views.get(k);
                if (i < 50) {
                    assertThrows(DeletedMemoryAccessException.class, () -> v.transform(Blob::read), "replaced " + k);
                } else {
                    assertEquals(new Blob(k, 1, 16), v.transform(Blob::read), "view of " + k);
                }
            }
            assertEquals(2000, map.size());
        }
    }

    /** Bytes within which consecutive keys count as near each other in memory (a page). */
    private static final long NEAR = 4096;

    /** Sorted entries before the one checked whose keys count as recent: the streams a scan reads at once. */
    private static final int STREAMS = 8;

    /** @return true if the key of sorted entry {@code ei} lies near that of one of the {@link #STREAMS} before it */
    static boolean nearARecentKey(Chunk c, int ei) {
        long z = c.keyRef(ei);
        for (int j = Math.max(1, ei - STREAMS); j < ei; j++) {
            long a = c.keyRef(j);
            if (Refs.blockId(a) == Refs.blockId(z) && Math.abs(Refs.offset(z) - Refs.offset(a)) < NEAR) {
                return true;
            }
        }
        return false;
    }

    /**
     * After random ingestion, each chunk's sorted entries must lie in a few sequential runs: each
     * key near one of the few keys before it (each rebalance lays out the entries inserted since
     * the last one as a run in key order, so a chunk interleaves a few runs).
     */
    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {5, 6})
    void pairsOfAChunkLieInKeyOrder(long seed) {
        Random rnd = new Random(seed);
        for (boolean placed : new boolean[] {true, false}) {
            OakMapBuilder<Integer, Long> b = TestMaps.builder(TestMaps.LONG_VAL, 256);
            b.placePairs = placed;
            try (OakMap<Integer, Long> map = b.build()) {
                for (int k : shuffled(0, 20_000, 1, rnd)) {
                    map.put(k, (long) k);
                }
                long inOrder = 0, pairs = 0;
                for (Chunk c : map.internal.index().snapshot()) {
                    for (int ei = 2; ei <= c.sortedCount(); ei++) {
                        pairs++;
                        if (nearARecentKey(c, ei)) {
                            inOrder++;
                        }
                    }
                }
                double f = (double) inOrder / pairs;
                System.out.printf("[placement] placed=%s: %.3f of sorted keys within %d bytes of one of the %d before%n",
                        placed, f, NEAR, STREAMS);
                if (placed) {
                    assertTrue(f > 0.4, "placed: " + f + " of sorted keys near a recent one");
                } else {
                    assertTrue(f < 0.2, "not placed: " + f + " (the check must be able to fail)");
                }
                TreeMap<Integer, Long> model = new TreeMap<>();
                for (int k = 0; k < 20_000; k++) {
                    model.put(k, (long) k);
                }
                assertEquals(TestMaps.entries(model.entrySet()), TestMaps.entries(map.entrySet()));
            }
        }
    }

    /**
     * Writers increment counters in place and insert and remove noise keys (which keeps the
     * counters' chunks being rebuilt, and their values moved), while two readers share zero-copy
     * views of the counters taken once: every read through an old view must succeed and never go back,
     * and no increment may be lost. A stream scan runs alongside and must see every counter.
     */
    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {11, 12, 13})
    void viewsFollowMovesWhileWritersRace(long seed) throws Exception {
        int[] counters = {100, 200, 300, 400};
        int incsPerThread = 30_000 * TestMaps.scale();
        try (OakMap<Integer, Long> map = placedMap(TestMaps.LONG_VAL, 8)) {
            for (int c : counters) {
                map.put(c, 0L);
            }
            OakUnscopedBuffer[] views = new OakUnscopedBuffer[counters.length];
            for (int i = 0; i < counters.length; i++) {
                views[i] = map.zc().get(counters[i]);
            }
            AtomicBoolean done = new AtomicBoolean();
            AtomicLong reads = new AtomicLong();
            List<TestMaps.Task> all = TestMaps.signalWhenDone(counterWriters(map, counters, 100, incsPerThread, seed), done);
            for (int r = 0; r < 2; r++) { // two readers share the views, and may follow a move at once
                long readerSeed = seed + r;
                all.add(() -> {
                long[] last = new long[counters.length];
                Random rnd = new Random(readerSeed);
                while (!done.get()) {
                    int i = rnd.nextInt(counters.length);
                    long v = rnd.nextBoolean() ? views[i].getLong(0) : views[i].transform(b -> b.getLong(0));
                    assertTrue(v >= last[i], "counter " + counters[i] + " went back from " + last[i] + " to " + v);
                    last[i] = v;
                    reads.incrementAndGet();
                }
                });
            }
            all.add(() -> {
                while (!done.get()) {
                    int seen = 0;
                    for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : map.zc().entryStreamSet()) {
                        int k = e.getKey().getInt(0) ^ Integer.MIN_VALUE;
                        if (k % 100 == 0) {
                            e.getValue().getLong(0); // a counter is never removed: must not throw
                            seen++;
                        }
                    }
                    assertEquals(counters.length, seen, "counters seen by a scan");
                }
            });
            TestMaps.runConcurrently("placement seed=" + seed, 120, all);
            assertCounters(map, counters, views, 2L * incsPerThread);
            assertTrue(map.internal.pairsMoved() > 300, "moves: " + map.internal.pairsMoved());
            assertTrue(reads.get() > 0);
        }
    }

    /**
     * Two writers that each increment {@code counters} (keys that are multiples of {@code stride})
     * in place {@code incsPerThread} times, and after each increment insert or remove a random key
     * below {@code 5 * stride} that is not a multiple of it, so the counters' chunks keep being
     * rebuilt around them.
     */
    static List<TestMaps.Task> counterWriters(OakMap<Integer, Long> map, int[] counters, int stride,
                                              int incsPerThread, long seed) {
        List<TestMaps.Task> writers = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            long s = seed * 31 + t;
            writers.add(() -> {
                Random rnd = new Random(s);
                for (int i = 0; i < incsPerThread; i++) {
                    int c = counters[rnd.nextInt(counters.length)];
                    map.zc().putIfAbsentComputeIfPresent(c, 1L, b -> b.putLong(0, b.getLong(0) + 1));
                    int k = rnd.nextInt(5 * stride);
                    if (k % stride != 0) {
                        if (rnd.nextBoolean()) {
                            map.put(k, (long) -k);
                        } else {
                            map.remove(k);
                        }
                    }
                }
            });
        }
        return writers;
    }

    /** Asserts that the counters add up to {@code increments} and that each view reads its counter. */
    static void assertCounters(OakMap<Integer, Long> map, int[] counters, OakUnscopedBuffer[] views, long increments) {
        long total = 0;
        for (int i = 0; i < counters.length; i++) {
            total += map.get(counters[i]);
            assertEquals(map.get(counters[i]), views[i].getLong(0), "view of counter " + counters[i]);
        }
        assertEquals(increments, total, "increments lost");
    }

    /**
     * In-place increments racing the moves themselves: keys are inserted one after another (in
     * random order) while two threads increment the keys inserted so far, so that each key is
     * incremented around the rebalance that first moves it. A write into a value while it is
     * being copied would be lost; the sum of the values must equal the increments made.
     */
    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {31, 32, 33})
    void noIncrementIsLostToAMove(long seed) throws Exception {
        int n = 3000;
        List<Integer> order = shuffled(0, n, 1, new Random(seed));
        java.util.concurrent.atomic.AtomicInteger inserted = new java.util.concurrent.atomic.AtomicInteger();
        AtomicLong increments = new AtomicLong();
        try (OakMap<Integer, Long> map = placedMap(TestMaps.LONG_VAL, 8)) {
            List<TestMaps.Task> tasks = new ArrayList<>();
            tasks.add(() -> {
                for (int k : order) {
                    map.putIfAbsent(k, 0L);
                    inserted.incrementAndGet();
                }
            });
            for (int t = 0; t < 2; t++) {
                long s = seed * 7 + t;
                tasks.add(() -> {
                    Random rnd = new Random(s);
                    while (inserted.get() < n) {
                        int upTo = inserted.get();
                        if (upTo == 0) {
                            continue;
                        }
                        // mostly the newest keys: those the next rebalances move
                        int k = order.get(Math.max(0, upTo - 1 - rnd.nextInt(Math.min(upTo, 64))));
                        map.zc().putIfAbsentComputeIfPresent(k, 1L, b -> b.putLong(0, b.getLong(0) + 1));
                        increments.incrementAndGet();
                    }
                });
            }
            TestMaps.runConcurrently("increments seed=" + seed, 120, tasks);
            long sum = 0;
            for (long v : map.values()) {
                sum += v;
            }
            assertEquals(increments.get(), sum, "increments lost");
            assertEquals(n, map.size());
            assertTrue(map.internal.pairsMoved() > 300, "moves: " + map.internal.pairsMoved());
        }
    }

    /**
     * A rebalance does not wait for a value that a writer holds: while a zero-copy compute's
     * function is blocked inside a freshly inserted value (a candidate for moving), another
     * thread's insertions rebuild that value's chunk and finish; the value stays where it is and
     * gets the write once the function returns.
     */
    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {41, 42})
    void aRebalanceDoesNotWaitForAWriter(long seed) throws Exception {
        Random rnd = new Random(seed);
        try (OakMap<Integer, Long> map = placedMap(TestMaps.LONG_VAL, 8)) {
            for (int k : shuffled(0, 400, 4, rnd)) {
                map.put(k, (long) k);
            }
            int held = 201; // lands among sorted entries: unsorted until its chunk is rebuilt
            map.put(held, 0L);
            java.util.concurrent.CountDownLatch inside = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            Thread writer = new Thread(() -> map.zc().computeIfPresent(held, b -> {
                inside.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                b.putLong(0, 7L);
            }));
            writer.start();
            try {
                assertTrue(inside.await(10, java.util.concurrent.TimeUnit.SECONDS));
                long before = map.internal.pairsMoved();
                java.util.concurrent.Future<?> inserts = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()
                        .submit(() -> {
                            for (int k = 190; k < 212; k++) { // the held value's neighbours: its chunk is rebuilt
                                if (k != held) { // (a read of the held value itself waits for the writer)
                                    map.putIfAbsent(k, (long) k);
                                }
                            }
                        });
                inserts.get(30, java.util.concurrent.TimeUnit.SECONDS); // a rebalance waiting for the writer would hang here
                assertTrue(map.internal.pairsMoved() > before, "the neighbours' rebalances moved nothing");
            } finally {
                release.countDown();
                writer.join(10_000);
            }
            assertEquals(7L, map.get(held));
            assertEquals(7L, map.zc().get(held).getLong(0));
        }
    }

    /** An iterator's views of values that a rebalance moves mid-scan keep reading them. */
    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {21, 22})
    void scanViewsFollowMoves(long seed) {
        Random rnd = new Random(seed);
        try (OakMap<Integer, Long> map = placedMap(TestMaps.LONG_VAL, 8)) {
            for (int k : shuffled(0, 3000, 3, rnd)) {
                map.put(k, (long) k);
            }
            List<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> held = new ArrayList<>();
            Iterator<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> it = map.zc().entrySet().iterator();
            for (int i = 0; i < 500; i++) {
                held.add(it.next());
            }
            for (int k : shuffled(1, 3000, 3, rnd)) {
                map.put(k, (long) k);
            }
            for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : held) {
                int k = e.getKey().getInt(0) ^ Integer.MIN_VALUE;
                assertEquals(k, e.getValue().getLong(0));
            }
            int n = 500;
            while (it.hasNext()) {
                Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e = it.next();
                assertEquals(e.getKey().getInt(0) ^ Integer.MIN_VALUE, e.getValue().getLong(0));
                n++;
            }
            assertTrue(n >= 1000, "the scan saw " + n + " of the 1000 keys present throughout");
        }
    }
}
