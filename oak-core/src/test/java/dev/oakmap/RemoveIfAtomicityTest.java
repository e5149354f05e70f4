package dev.oakmap;

import dev.oakmap.common.OakCommonTypes;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code values().removeIf} and {@code entrySet().removeIf} remove a mapping only if it still
 * holds the value the filter accepted, as {@link ConcurrentSkipListMap}'s do (they remove with
 * {@code remove(key, value)}). Through the iterator ({@code Collection.removeIf}'s default), the
 * removal was by key alone: a value updated between the filter's test and the removal was
 * removed with its key, and a concurrent update was lost (a counter reset to 0 and then
 * incremented, removed by a cleaner that saw the 0).
 */
class RemoveIfAtomicityTest {

    /** A way to remove mappings by value through a collection view of a map. */
    enum Kind {
        VALUES(m -> p -> m.values().removeIf(v -> p.test(v))),
        ENTRIES(m -> p -> m.entrySet().removeIf(e -> p.test(e.getValue()))),
        DESCENDING_SUB_MAP_VALUES(m -> p -> m.descendingMap().subMap(1000, true, -1000, true).values()
                .removeIf(v -> p.test(v))),
        DESCENDING_SUB_MAP_ENTRIES(m -> p -> m.descendingMap().subMap(1000, true, -1000, true).entrySet()
                .removeIf(e -> p.test(e.getValue())));

        final Function<ConcurrentNavigableMap<Integer, Long>, Function<Predicate<Long>, Boolean>> removeIf;

        Kind(Function<ConcurrentNavigableMap<Integer, Long>, Function<Predicate<Long>, Boolean>> removeIf) {
            this.removeIf = removeIf;
        }
    }

    static Stream<Arguments> kindsAndSchemes() {
        return Stream.of(Kind.values()).flatMap(k -> Stream.of(MemoryScheme.values()).map(s -> Arguments.of(k, s)));
    }

    /**
     * The filter accepts key 5's value 0 and, before it returns, another thread sets the value to
     * 1: the removal that follows must leave 5 = 1, as in {@link ConcurrentSkipListMap}. Repeatable:
     * the interleaving is forced from within the filter.
     */
    @ParameterizedTest(name = "{0} values={1}")
    @MethodSource("kindsAndSchemes")
    void aValueUpdatedAfterTheFilterAcceptedItStays(Kind kind, MemoryScheme scheme) throws Exception {
        ConcurrentSkipListMap<Integer, Long> reference = new ConcurrentSkipListMap<>();
        assertEquals(Map.of(4, 7L, 5, 1L, 6, 7L), updateWhileFiltering(reference, kind), "ConcurrentSkipListMap");
        try (OakMap<Integer, Long> map = TestMaps.builder(TestMaps.LONG_VAL, 4).valueMemory(scheme).build()) {
            assertEquals(Map.of(4, 7L, 5, 1L, 6, 7L), updateWhileFiltering(map, kind), "OakMap");
        }
    }

    private static Map<Integer, Long> updateWhileFiltering(ConcurrentNavigableMap<Integer, Long> map, Kind kind)
            throws Exception {
        map.put(4, 7L);
        map.put(5, 0L);
        map.put(6, 7L);
        boolean removed = kind.removeIf.apply(map).apply(v -> {
            if (v != 0L) {
                return false;
            }
            Thread t = new Thread(() -> map.put(5, 1L)); // another thread: in-place or moved, the update completes
            t.start();
            try {
                t.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            return true;
        });
        assertFalse(removed, kind + ": nothing held the accepted value when it was to be removed");
        return new java.util.TreeMap<>(map);
    }

    /**
     * {@code byte[]} values, whose deserialized copies equal nothing but themselves: removeIf
     * removes what its filter accepts (a first version removed with {@code remove(key, copy)},
     * which compares with {@code equals}, and removed nothing), on the map and on a sub-map, and
     * keeps a value updated to other bytes after the filter accepted it.
     */
    @ParameterizedTest(name = "values={0}")
    @EnumSource(MemoryScheme.class)
    void byteArrayValuesAreRemovedByTheirBytes(MemoryScheme scheme) throws Exception {
        try (OakMap<byte[], byte[]> map = new OakMapBuilder<>(OakCommonTypes.BYTE_ARRAY_SERIALIZER,
                OakCommonTypes.BYTE_ARRAY_SERIALIZER, OakCommonTypes.BYTE_ARRAY_COMPARATOR)
                .chunkCapacity(4).valueMemory(scheme).build()) {
            TreeMap<Integer, Integer> model = new TreeMap<>(); // key byte -> value class
            for (int i = 0; i < 40; i++) {
                map.put(new byte[] {(byte) i}, new byte[] {(byte) (i % 4), 9});
                model.put(i, i % 4);
            }
            assertTrue(map.values().removeIf(v -> v[0] == 0));
            model.values().removeIf(c -> c == 0);
            assertTrue(map.entrySet().removeIf(e -> e.getValue()[0] == 1));
            model.values().removeIf(c -> c == 1);
            assertTrue(map.subMap(new byte[] {10}, new byte[] {30}).values().removeIf(v -> v[0] == 2));
            model.subMap(10, 30).values().removeIf(c -> c == 2);
            assertFalse(map.values().removeIf(v -> v[0] == 7), "nothing passes");
            // the filter accepts key 3's value, and another thread rewrites it in place before the removal
            assertFalse(map.entrySet().removeIf(e -> {
                if (e.getKey()[0] != 3) {
                    return false;
                }
                Thread t = new Thread(() -> map.zc().computeIfPresent(new byte[] {3}, b -> b.put(0, (byte) 5)));
                t.start();
                try {
                    t.join();
                } catch (InterruptedException ie) {
                    throw new AssertionError(ie);
                }
                return true;
            }));
            model.put(3, 5);
            TreeMap<Integer, Integer> actual = new TreeMap<>();
            map.forEach((k, v) -> actual.put((int) k[0], (int) v[0]));
            assertEquals(model, actual);
        }
    }

    /**
     * Seeded stress: workers increment counters ({@code compute}) and move a counter's value into
     * a tally by resetting it to 0 ({@code replace(k, v, 0)}), while a cleaner removes the zeros
     * through the views. Nothing may be lost: tally + sum of the values = increments.
     */
    @ParameterizedTest(name = "values={0}")
    @EnumSource(MemoryScheme.class)
    void cleanersLoseNoIncrement(MemoryScheme scheme) throws Exception {
        for (long seed : TestMaps.seeds(11L, 42L)) {
            try (OakMap<Integer, Long> map = TestMaps.builder(TestMaps.LONG_VAL, 4).valueMemory(scheme).build()) {
                int keys = 6;
                int opsPerWorker = 20_000 * TestMaps.scale();
                AtomicLong increments = new AtomicLong();
                AtomicLong tally = new AtomicLong();
                AtomicBoolean done = new AtomicBoolean();
                List<TestMaps.Task> workers = new ArrayList<>();
                for (int w = 0; w < 2; w++) {
                    Random rnd = new Random(seed * 31 + w);
                    workers.add(() -> {
                        for (int i = 0; i < opsPerWorker; i++) {
                            int k = rnd.nextInt(keys);
                            if (rnd.nextInt(4) == 0) {
                                Long v = map.get(k);
                                if (v != null && v != 0L && map.replace(k, v, 0L)) {
                                    tally.addAndGet(v);
                                }
                            } else {
                                map.compute(k, (kk, v) -> v == null ? 1L : v + 1);
                                increments.incrementAndGet();
                            }
                        }
                    });
                }
                List<TestMaps.Task> tasks = TestMaps.signalWhenDone(workers, done);
                Random cleanerRnd = new Random(seed);
                tasks.add(() -> {
                    while (!done.get()) {
                        Kind kind = Kind.values()[cleanerRnd.nextInt(Kind.values().length)];
                        kind.removeIf.apply(map).apply(v -> v == 0L);
                    }
                });
                TestMaps.runConcurrently("seed=" + seed, 120, tasks);
                long sum = 0;
                for (long v : map.values()) {
                    sum += v;
                }
                assertEquals(increments.get(), tally.get() + sum, "seed=" + seed + " values=" + scheme
                        + ": increments lost to removeIf");
                assertTrue(map.size() <= keys);
            }
        }
    }
}
