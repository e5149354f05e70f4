package dev.oakmap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Spliterator;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.StreamSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Parallel streams over the collection views: spliterators split by key range at chunk
 * boundaries before they start, every part scans its own range, and together they return what a
 * sequential scan does, in order; while writers churn, every mapping present throughout is
 * returned exactly once. Seeded and repeatable.
 */
class ParallelScanTest {

    private static OakMap<Integer, Long> filled(int n, int chunk) {
        OakMap<Integer, Long> m = TestMaps.builder(TestMaps.LONG_VAL, chunk).build();
        List<Integer> keys = IntStream.range(0, n).boxed().collect(Collectors.toList());
        java.util.Collections.shuffle(keys, new Random(n));
        for (int k : keys) {
            m.put(k, 10L * k);
        }
        return m;
    }

    /** Every collection view's parallel stream equals its sequential one, in order. */
    @Test
    void parallelStreamsReturnWhatSequentialOnesDo() {
        try (OakMap<Integer, Long> m = filled(5000, 16)) {
            ConcurrentSkipListMap<Integer, Long> ref = new ConcurrentSkipListMap<>(m);
            for (int variant = 0; variant < 5; variant++) {
                OakMap<Integer, Long> view = switch (variant) {
                    case 0 -> m;
                    case 1 -> m.descendingMap();
                    case 2 -> m.subMap(700, true, 3100, false);
                    case 3 -> m.descendingMap().headMap(1200, true);
                    default -> m.subMap(10, 20); // within one chunk
                };
                var expect = switch (variant) {
                    case 0 -> ref;
                    case 1 -> ref.descendingMap();
                    case 2 -> ref.subMap(700, true, 3100, false);
                    case 3 -> ref.descendingMap().headMap(1200, true);
                    default -> ref.subMap(10, 20);
                };
                String ctx = "variant " + variant;
                assertEquals(new ArrayList<>(expect.keySet()), view.keySet().parallelStream().toList(), ctx);
                assertEquals(new ArrayList<>(expect.values()), view.values().parallelStream().toList(), ctx);
                assertEquals(expect.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList(),
                        view.entrySet().parallelStream().map(e -> e.getKey() + "=" + e.getValue()).toList(), ctx);
                assertEquals(new ArrayList<>(expect.keySet()), view.navigableKeySet().parallelStream().toList(), ctx);
                assertEquals(new ArrayList<>(expect.descendingKeySet()),
                        view.descendingKeySet().parallelStream().toList(), ctx);
                OakZeroCopyMap<Integer, Long> zc = view.zc();
                assertEquals(new ArrayList<>(expect.keySet()),
                        zc.keySet().parallelStream().map(TestMaps::readIntKey).toList(), ctx);
                assertEquals(new ArrayList<>(expect.values()),
                        zc.values().parallelStream().map(b -> b.getLong(0)).toList(), ctx);
                assertEquals(new ArrayList<>(expect.keySet()),
                        zc.entrySet().parallelStream().map(e -> TestMaps.readIntKey(e.getKey())).toList(), ctx);
                // stream sets reuse their elements: they split by range only, each part reusing its own
                assertEquals(new ArrayList<>(expect.values()),
                        zc.valueStreamSet().parallelStream().map(b -> b.getLong(0)).toList(), ctx);
                assertEquals(new ArrayList<>(expect.keySet()),
                        zc.keyStreamSet().parallelStream().map(TestMaps::readIntKey).toList(), ctx);
                assertEquals(expect.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList(),
                        zc.entryStreamSet().parallelStream()
                                .map(e -> TestMaps.readIntKey(e.getKey()) + "=" + e.getValue().getLong(0)).toList(), ctx);
            }
        }
    }

    /**
     * A fresh spliterator splits by key range: the part handed out is another view spliterator
     * (not a batch of elements), holding keys before all of those that remain, and the two cover
     * the view; splitting goes on down to single chunks, and stops there. A view within one chunk
     * hands out batches instead.
     */
    @ParameterizedTest(name = "descending={0}")
    @ValueSource(booleans = {false, true})
    void aFreshSpliteratorSplitsByKeyRangeAtChunkBoundaries(boolean descending) {
        try (OakMap<Integer, Long> m = filled(4000, 16)) {
            OakMap<Integer, Long> view = descending ? m.descendingMap() : m;
            Spliterator<Integer> rest = view.keySet().spliterator();
            Spliterator<Integer> before = rest.trySplit();
            assertNotNull(before);
            assertInstanceOf(OakMap.ViewSpliterator.class, before, "a range, not a batch");
            List<Integer> first = StreamSupport.stream(before, false).toList();
            List<Integer> second = StreamSupport.stream(rest, false).toList();
            assertTrue(!first.isEmpty() && !second.isEmpty(), first.size() + " / " + second.size());
            List<Integer> all = new ArrayList<>(first);
            all.addAll(second);
            assertEquals(new ArrayList<>(view.keySet()), all);

            // split all the way down: ranges of single chunks, each in order, covering the view
            List<Spliterator<Integer>> parts = new ArrayList<>();
            splitAll(view.keySet().spliterator(), parts);
            assertTrue(parts.size() >= m.internal.chunkCount() / 2,
                    parts.size() + " ranges for " + m.internal.chunkCount() + " chunks");
            assertTrue(parts.stream().allMatch(p -> p instanceof OakMap.ViewSpliterator),
                    "parts of a range split hand out no batches (their own thread would iterate them)");
            List<Integer> joined = new ArrayList<>();
            for (Spliterator<Integer> p : parts) {
                p.forEachRemaining(joined::add);
            }
            assertEquals(new ArrayList<>(view.keySet()), joined);
            // a range within one chunk, or a started spliterator, splits off a batch instead
            Spliterator<Integer> small = m.subMap(100, 105).keySet().spliterator();
            assertTrue(small.tryAdvance(k -> assertEquals(100, k)));
            Spliterator<Integer> batch = small.trySplit();
            assertNotNull(batch);
            assertEquals(List.of(101, 102, 103, 104), StreamSupport.stream(batch, false).toList());
            assertNull(small.trySplit());
            // a stream set's spliterator (its elements reused) splits by range, never into batches
            Spliterator<OakUnscopedBuffer> streamed = view.zc().keyStreamSet().spliterator();
            assertInstanceOf(OakMap.ViewSpliterator.class, streamed.trySplit());
            assertNull(m.subMap(100, 105).zc().keyStreamSet().spliterator().trySplit());
        }
    }

    /**
     * Splits {@code s} while it splits by key range, adding the parts to {@code out} in order; a
     * part that splits off a batch instead (a range within one chunk) is added with its batch.
     */
    private static void splitAll(Spliterator<Integer> s, List<Spliterator<Integer>> out) {
        Spliterator<Integer> before = s.trySplit();
        if (before instanceof OakMap.ViewSpliterator) {
            splitAll(before, out);
            splitAll(s, out);
        } else {
            if (before != null) {
                out.add(before);
            }
            out.add(s);
        }
    }

    /**
     * Writers insert and remove odd keys (rebalancing chunks under the scans) while parallel
     * streams scan the map on a pool of four: every even key, present throughout, is returned
     * exactly once, and every stream returns keys in order.
     */
    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {3, 4})
    void parallelScansUnderChurnReturnEveryStableKeyOnce(long seed) throws Exception {
        int n = 3000;
        try (OakMap<Integer, Long> m = TestMaps.builder(TestMaps.LONG_VAL, 16).build()) {
            for (int k = 0; k < n; k += 2) {
                m.put(k, (long) k);
            }
            AtomicBoolean done = new AtomicBoolean();
            List<TestMaps.Task> writers = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                Random rnd = new Random(seed * 31 + w);
                writers.add(() -> {
                    for (int i = 0; i < 60_000 && !done.get(); i++) {
                        int k = 2 * rnd.nextInt(n / 2) + 1;
                        if (rnd.nextBoolean()) {
                            m.put(k, (long) k);
                        } else {
                            m.remove(k);
                        }
                    }
                });
            }
            ForkJoinPool pool = new ForkJoinPool(4);
            try {
                List<TestMaps.Task> tasks = new ArrayList<>(TestMaps.signalWhenDone(writers, done));
                tasks.add(() -> {
                    for (int round = 0; !done.get() || round < 6; round++) {
                        boolean desc = round / 3 % 2 == 1;
                        int kind = round % 3; // legacy keys, zero-copy key views, a zero-copy stream set
                        OakMap<Integer, Long> view = desc ? m.descendingMap() : m;
                        List<Integer> keys = pool.submit(() -> switch (kind) {
                            case 0 -> view.keySet().parallelStream().toList();
                            case 1 -> view.zc().keySet().parallelStream().map(TestMaps::readIntKey).toList();
                            default -> view.zc().keyStreamSet().parallelStream().map(TestMaps::readIntKey).toList();
                        }).get();
                        checkScan("round " + round + " kind " + kind + (desc ? " descending" : ""), keys, n, desc);
                    }
                });
                TestMaps.runConcurrently("parallel scans under churn", 120, tasks);
            } finally {
                pool.shutdown();
            }
        }
    }

    private static void checkScan(String ctx, List<Integer> keys, int n, boolean desc) {
        int evens = 0;
        for (int i = 0; i < keys.size(); i++) {
            if (i > 0) {
                int c = Integer.compare(keys.get(i - 1), keys.get(i));
                assertTrue(desc ? c > 0 : c < 0, ctx + ": out of order at " + i + ": " + keys.get(i - 1)
                        + " then " + keys.get(i));
            }
            if (keys.get(i) % 2 == 0) {
                evens++;
            }
        }
        assertEquals(n / 2, evens, ctx + ": every stable key once");
    }

    /**
     * Spliterators, and the parts split off them, fail with {@link OakClosedException} once the
     * map is closed, as iterators do; so does a parallel stream.
     */
    @Test
    void spliteratorsOfAClosedMapThrow() {
        OakMap<Integer, Long> m = filled(2000, 16);
        Spliterator<Integer> fresh = m.keySet().spliterator();
        Spliterator<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> rest = m.zc().entrySet().spliterator();
        Spliterator<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> part = rest.trySplit();
        assertNotNull(part);
        m.close();
        assertThrows(OakClosedException.class, fresh::trySplit);
        assertThrows(OakClosedException.class, () -> fresh.tryAdvance(k -> { }));
        assertThrows(OakClosedException.class, () -> part.tryAdvance(e -> { }));
        assertThrows(OakClosedException.class, () -> rest.forEachRemaining(e -> { }));
        assertThrows(OakClosedException.class,
                () -> m.values().parallelStream().count());
    }

    /** The entries' values follow their keys in the parallel entry stream. */
    @Test
    void parallelEntryStreamsPairKeysWithTheirValues() {
        try (OakMap<Integer, Long> m = filled(3000, 16)) {
            Map<Integer, Long> seen = m.entrySet().parallelStream()
                    .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
            assertEquals(3000, seen.size());
            seen.forEach((k, v) -> assertEquals(10L * k, v));
            long sum = m.zc().entrySet().parallelStream()
                    .mapToLong(e -> e.getValue().getLong(0) - 10L * TestMaps.readIntKey(e.getKey()))
                    .sum();
            assertEquals(0, sum);
        }
    }
}
