package dev.oakmap;

import dev.oakmap.common.OakCommonTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.AbstractMap.SimpleEntry;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.Spliterator;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Corners of the {@code ConcurrentNavigableMap} contract and of misuse handling that the Guava
 * suites, {@link OakMapApiTest} and {@link MisuseTest} do not reach: nested views fed operations
 * those tests leave out (computes with null results on out-of-range keys, bulk removals through
 * the value and entry collections, descending key-set iterators), out-of-range and null-value
 * queries on a closed map, snapshot entries, deserializers that throw under a value's lock, and
 * zero-copy views of values removed by every other removal path, under every memory scheme. All
 * single-threaded and seeded, compared with a {@link ConcurrentSkipListMap} where the JDK contract
 * applies.
 */
class ContractCornersTest {

    private static OakMap<Integer, String> stringMap() {
        return new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER, OakCommonTypes.STRING_SERIALIZER,
                OakCommonTypes.INTEGER_COMPARATOR).chunkCapacity(4).memoryCapacity(16L << 20)
                .blockSize(1L << 20).build();
    }

    /** The result of {@code c}, or the simple name of the exception it threw. */
    private static String outcome(Callable<Object> c) {
        try {
            return String.valueOf(c.call());
        } catch (Throwable t) {
            return "threw " + t.getClass().getSimpleName();
        }
    }

    // ------------------------------------------------------------------------------------------
    // compute on a key outside a sub-map

    /**
     * {@code ConcurrentSkipListMap}'s sub-maps inherit {@code ConcurrentMap.compute}: an
     * out-of-range key reads as absent, the function is called with a null value, and a null result
     * is returned without an exception; only a value to insert is rejected.
     */
    @Test
    void computeOfAnOutOfRangeKeyIsAbsentAsInConcurrentSkipListMap() {
        try (OakMap<Integer, String> oak = stringMap()) {
            ConcurrentSkipListMap<Integer, String> ref = new ConcurrentSkipListMap<>();
            for (int k = 0; k < 20; k++) {
                oak.put(k, "v" + k);
                ref.put(k, "v" + k);
            }
            List<Function<NavigableMap<Integer, String>, NavigableMap<Integer, String>>> views = List.of(
                    m -> m.headMap(5, false),
                    m -> m.tailMap(15, true).descendingMap(),
                    m -> m.subMap(5, true, 10, false).headMap(8, true), // [5, 8]
                    m -> m.descendingMap().subMap(12, false, 3, true)); // [3, 12)
            int[][] outOfRange = {{5, 12, 15, 19, 40}, {-3, 5, 12}, {-3, 4, 9, 12, 40}, {-3, 2, 12, 15, 40}};
            for (int vi = 0; vi < views.size(); vi++) {
                NavigableMap<Integer, String> o = views.get(vi).apply(oak);
                NavigableMap<Integer, String> c = views.get(vi).apply(ref);
                for (int key : outOfRange[vi]) {
                    assertThrows(IllegalArgumentException.class, () -> c.put(key, "x"), "the test's own range");
                    String ctx = "view " + vi + ", key " + key;
                    AtomicInteger calls = new AtomicInteger();
                    List<Object> seen = new ArrayList<>();
                    assertEquals(outcome(() -> c.compute(key, (k, v) -> {
                        seen.add(v);
                        return null;
                    })), outcome(() -> o.compute(key, (k, v) -> {
                        calls.incrementAndGet();
                        seen.add(v);
                        return null;
                    })), ctx + ": compute returning null");
                    assertEquals(1, calls.get(), ctx + ": the function is called, as by ConcurrentSkipListMap");
                    assertEquals(java.util.Arrays.asList(null, null), seen, ctx + ": with a null value");
                    assertEquals(outcome(() -> c.compute(key, (k, v) -> "x")), outcome(() -> o.compute(key, (k, v) -> "x")),
                            ctx + ": compute returning a value");
                    assertThrows(IllegalArgumentException.class, () -> o.compute(key, (k, v) -> "x"), ctx);
                }
            }
            assertEquals(ref, oak);
            assertEquals(ref.size(), oak.size());
        }
    }

    // ------------------------------------------------------------------------------------------
    // nested views fed the operations the other differential tests leave out

    private static Object apply(int op, NavigableMap<Integer, String> m, Integer k, Integer k2, String v, String v2) {
        return switch (op) {
            case 0 -> m.compute(k, (a, b) -> b == null ? null : b + "c");
            case 1 -> m.compute(k, (a, b) -> b == null ? v : null);
            case 2 -> m.computeIfAbsent(k, a -> v.equals("w0") ? null : v);
            case 3 -> m.computeIfPresent(k, (a, b) -> v.equals("w0") ? null : b + v);
            case 4 -> m.merge(k, v, (a, b) -> v2.equals("w0") ? null : a + b);
            case 5 -> m.entrySet().remove(new SimpleEntry<>(k, v)) + " " + m.entrySet().remove("not an entry");
            case 6 -> m.entrySet().contains(new SimpleEntry<>(k, v)) + " " + m.entrySet().contains(Map.entry(k, "v" + k));
            case 7 -> m.values().remove(v);
            case 8 -> m.values().removeIf(x -> x.equals(v));
            case 9 -> m.values().retainAll(List.of(v, v2, "v3", "v7"));
            case 10 -> {
                Iterator<Integer> it = m.descendingKeySet().iterator();
                List<Integer> removed = new ArrayList<>();
                while (it.hasNext()) {
                    Integer x = it.next();
                    if (x % 3 == 0) {
                        it.remove();
                        removed.add(x);
                    }
                }
                yield removed;
            }
            case 11 -> {
                Iterator<Map.Entry<Integer, String>> it = m.entrySet().iterator();
                List<Integer> removed = new ArrayList<>();
                while (it.hasNext()) {
                    Map.Entry<Integer, String> x = it.next();
                    if (x.getKey() % 4 == 1) {
                        it.remove();
                        removed.add(x.getKey());
                    }
                }
                yield removed;
            }
            case 12 -> m.hashCode() + " " + m.equals(new TreeMap<>(m)) + " " + new TreeMap<>(m).equals(m) + " "
                    + m.keySet().hashCode() + " " + m.entrySet().hashCode() + " " + m.equals(Map.copyOf(m));
            case 13 -> m.keySet().removeIf(x -> x.equals(k) || x.equals(k2)) + " " + m.keySet();
            case 14 -> m.keySet().retainAll(List.of(k, k2, 3, 5, 7));
            case 15 -> m.entrySet().removeIf(e -> e.getValue().equals(v));
            case 16 -> m.entrySet().retainAll(List.of(Map.entry(k, "v" + k), Map.entry(k2, v2)));
            case 17 -> m.navigableKeySet().subSet(k, true, k2, false) + " " + m.descendingKeySet().tailSet(k, false);
            case 18 -> m.navigableKeySet().headSet(k, true).descendingSet() + " " + m.descendingKeySet().descendingSet();
            case 19 -> m.descendingMap().descendingMap() + " " + m.headMap(k).tailMap(k2);
            case 20 -> m.descendingMap().subMap(k, k2);
            case 21 -> m.navigableKeySet().headSet(k, false).pollLast() + " " + m.descendingKeySet().pollFirst();
            case 22 -> m.keySet().removeAll(List.of(k, k2, "not a key".length()));
            case 23 -> m.values().removeAll(List.of(v));
            case 24 -> {
                Iterator<String> it = m.values().iterator();
                if (it.hasNext()) {
                    it.next();
                    it.remove();
                }
                yield m;
            }
            case 25 -> {
                m.headMap(k, true).clear();
                yield m;
            }
            case 26 -> {
                m.putAll(Map.of(k, v, k2 + 100, v2));
                yield m;
            }
            case 27 -> m.entrySet().toArray().length + " " + m.entrySet().equals(new java.util.HashSet<>(m.entrySet()))
                    + " " + new java.util.HashSet<>(m.entrySet()).equals(m.entrySet())
                    + " " + m.keySet().equals(new TreeSet<>(m.keySet())) + " " + new TreeSet<>(m.keySet()).equals(m.keySet());
            case 28 -> m.remove(k, null) + " " + m.containsValue(v) + " " + m.values().contains(v2);
            case 29 -> m.subMap(k, false, k2, true).isEmpty() + " " + m.headMap(k, true).lastKey();
            default -> {
                m.replaceAll((a, b) -> b.length() > 6 ? "r" : b + "r");
                yield m;
            }
        };
    }

    @Test
    void nestedViewsAgreeWithConcurrentSkipListMapOnBulkAndComputeOperations() {
        for (long seed = 1; seed <= 150; seed++) {
            Random r = new Random(seed);
            try (OakMap<Integer, String> oak = stringMap()) {
                ConcurrentSkipListMap<Integer, String> ref = new ConcurrentSkipListMap<>(Comparator.naturalOrder());
                for (int i = 0; i < 10; i++) {
                    int k = r.nextInt(24) - 2;
                    oak.put(k, "v" + k);
                    ref.put(k, "v" + k);
                }
                for (int step = 0; step < 60; step++) {
                    NavigableMap<Integer, String> o = oak;
                    NavigableMap<Integer, String> c = ref;
                    StringBuilder path = new StringBuilder("map");
                    for (int d = r.nextInt(4); d > 0; d--) {
                        int kind = r.nextInt(4);
                        int a = r.nextInt(24) - 2;
                        int z = r.nextInt(24) - 2;
                        boolean ai = r.nextBoolean();
                        boolean zi = r.nextBoolean();
                        NavigableMap<Integer, String> fo = o;
                        NavigableMap<Integer, String> fc = c;
                        Function<NavigableMap<Integer, String>, NavigableMap<Integer, String>> derive = m -> switch (kind) {
                            case 0 -> m.descendingMap();
                            case 1 -> m.headMap(a, ai);
                            case 2 -> m.tailMap(a, ai);
                            default -> m.subMap(a, ai, z, zi);
                        };
                        String expected = outcome(() -> derive.apply(fc).getClass().getSimpleName().isEmpty());
                        assertEquals(expected, outcome(() -> derive.apply(fo).getClass().getSimpleName().isEmpty()),
                                "seed " + seed + ": deriving a view of " + path);
                        if (expected.startsWith("threw")) {
                            continue;
                        }
                        o = derive.apply(o);
                        c = derive.apply(c);
                        path.append(switch (kind) {
                            case 0 -> ".descendingMap()";
                            case 1 -> ".headMap(" + a + ", " + ai + ")";
                            case 2 -> ".tailMap(" + a + ", " + ai + ")";
                            default -> ".subMap(" + a + ", " + ai + ", " + z + ", " + zi + ")";
                        });
                    }
                    int op = r.nextInt(31);
                    Integer k = r.nextInt(24) - 2;
                    Integer k2 = r.nextInt(24) - 2;
                    String v = "w" + r.nextInt(3);
                    String v2 = "w" + r.nextInt(3);
                    NavigableMap<Integer, String> fo = o;
                    NavigableMap<Integer, String> fc = c;
                    String ctx = "seed " + seed + ", step " + step + ": " + path + " op " + op + " k=" + k + " k2=" + k2
                            + " v=" + v + " v2=" + v2;
                    assertEquals(outcome(() -> apply(op, fc, k, k2, v, v2)), outcome(() -> apply(op, fo, k, k2, v, v2)), ctx);
                    assertEquals(ref.toString(), oak.toString(), ctx + ": contents");
                    assertEquals(ref.size(), oak.size(), ctx + ": size");
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // a closed map answers nothing, even where an open one would not touch its data

    @Test
    void closedMapThrowsAlsoForOutOfRangeComputesAndNullValueQueries() {
        OakMap<Integer, String> map = stringMap();
        for (int k = 0; k < 20; k++) {
            map.put(k, "v" + k);
        }
        OakMap<Integer, String> head = map.headMap(10);
        map.close();
        AtomicInteger calls = new AtomicInteger();
        Map<String, Callable<Object>> cases = new LinkedHashMap<>();
        cases.put("headMap.computeIfAbsent(out of range, -> null)", () -> head.computeIfAbsent(15, k -> {
            calls.incrementAndGet();
            return null;
        }));
        cases.put("headMap.computeIfAbsent(out of range, -> value)", () -> head.computeIfAbsent(15, k -> {
            calls.incrementAndGet();
            return "x";
        }));
        cases.put("headMap.compute(out of range, -> null)", () -> head.compute(15, (k, v) -> {
            calls.incrementAndGet();
            return null;
        }));
        cases.put("map.remove(k, null)", () -> map.remove(5, null));
        cases.put("headMap.remove(k, null)", () -> head.remove(5, null));
        cases.put("headMap.remove(out of range, null)", () -> head.remove(15, null));
        // calls that an empty or foreign argument would otherwise answer without reaching the map
        cases.put("map.putAll(empty)", () -> {
            map.putAll(Map.of());
            return "returned";
        });
        cases.put("headMap.putAll(empty)", () -> {
            head.putAll(Map.of());
            return "returned";
        });
        cases.put("keySet().removeAll(empty)", () -> map.keySet().removeAll(List.of()));
        cases.put("headMap.keySet().removeAll(empty)", () -> head.keySet().removeAll(List.of()));
        cases.put("entrySet().contains(not an entry)", () -> map.entrySet().contains("x"));
        cases.put("entrySet().remove(not an entry)", () -> map.entrySet().remove("x"));
        List<String> failures = new ArrayList<>();
        cases.forEach((what, c) -> {
            String got = outcome(c);
            if (!got.equals("threw OakClosedException")) {
                failures.add(what + ": " + got);
            }
        });
        assertEquals(List.of(), failures, "operations on a closed map must throw OakClosedException");
        assertEquals(0, calls.get(), "no user function runs on a closed map");
    }

    // ------------------------------------------------------------------------------------------
    // snapshot entries and spliterators

    @Test
    void navigationEntriesAreImmutableSnapshotsAndIteratorsFollowTheContract() {
        try (OakMap<Integer, String> map = stringMap()) {
            for (int k = 0; k < 20; k++) {
                map.put(k, "v" + k);
            }
            List<Function<NavigableMap<Integer, String>, Map.Entry<Integer, String>>> getters = List.of(
                    NavigableMap::firstEntry, NavigableMap::lastEntry, m -> m.ceilingEntry(5), m -> m.floorEntry(5),
                    m -> m.higherEntry(5), m -> m.lowerEntry(5), NavigableMap::pollFirstEntry,
                    NavigableMap::pollLastEntry);
            for (NavigableMap<Integer, String> view : List.<NavigableMap<Integer, String>>of(map,
                    map.descendingMap(), map.subMap(2, 17).descendingMap())) {
                for (Function<NavigableMap<Integer, String>, Map.Entry<Integer, String>> g : getters) {
                    Map.Entry<Integer, String> e = g.apply(view);
                    String before = String.valueOf(map.get(e.getKey()));
                    assertThrows(UnsupportedOperationException.class, () -> e.setValue("changed"));
                    assertEquals(before, String.valueOf(map.get(e.getKey())), "a failed setValue changes nothing");
                    assertEquals(new SimpleEntry<>(e.getKey(), e.getValue()), e, "entry equality");
                    assertEquals(new SimpleEntry<>(e.getKey(), e.getValue()).hashCode(), e.hashCode());
                }
            }
            // iterators: remove before next, twice, and next past the end
            Iterator<Integer> it = map.subMap(3, 6).descendingMap().keySet().iterator();
            assertThrows(IllegalStateException.class, it::remove);
            assertEquals(5, it.next());
            it.remove();
            assertThrows(IllegalStateException.class, it::remove);
            assertEquals(List.of(4, 3), List.of(it.next(), it.next()));
            assertFalse(it.hasNext());
            assertThrows(NoSuchElementException.class, it::next);
            assertFalse(map.containsKey(5));
            // spliterators of sorted views report their view's comparator
            Spliterator<Integer> keys = map.descendingKeySet().spliterator();
            assertTrue(keys.hasCharacteristics(Spliterator.SORTED | Spliterator.DISTINCT | Spliterator.ORDERED
                    | Spliterator.NONNULL | Spliterator.CONCURRENT));
            assertTrue(keys.getComparator().compare(1, 2) > 0, "descending order");
            Spliterator<Map.Entry<Integer, String>> entries = map.headMap(10).entrySet().spliterator();
            assertTrue(entries.getComparator().compare(Map.entry(1, "z"), Map.entry(2, "a")) < 0);
            Spliterator<String> values = map.values().spliterator();
            assertFalse(values.hasCharacteristics(Spliterator.SORTED));
            assertThrows(IllegalStateException.class, values::getComparator);
        }
    }

    // ------------------------------------------------------------------------------------------
    // a value deserializer that throws, under the value's lock

    private static final long POISON = 666L;

    /** Plain 8-byte longs whose deserializer throws for {@link #POISON}. */
    private static final OakSerializer<Long> POISONED_VALUES = new OakSerializer<>() {
        @Override
        public void serialize(Long v, OakScopedWriteBuffer target) {
            target.putLong(0, v);
        }

        @Override
        public Long deserialize(OakScopedReadBuffer source) {
            long v = source.getLong(0);
            if (v == POISON) {
                throw new MisuseTest.Poison("cannot deserialize " + v);
            }
            return v;
        }

        @Override
        public int calculateSize(Long v) {
            return 8;
        }
    };

    /**
     * The legacy API deserializes the old value of a key inside its atomic updates (to return or
     * compare it). A deserializer that throws there must leave the mapping as it was, propagate,
     * and release the key for other threads.
     */
    @Test
    void aDeserializerThrowingInsideAnUpdateLeavesTheKeyUnchangedAndUnlocked() throws Exception {
        try (OakMap<Integer, Long> map = new OakMapBuilder<>(TestMaps.INT_KEY, POISONED_VALUES, TestMaps.INT_CMP)
                .chunkCapacity(4).build()) {
            TreeMap<Integer, Long> model = new TreeMap<>();
            for (int k = 0; k < 40; k++) {
                map.put(k, 10L * k);
                model.put(k, 10L * k);
            }
            Map<String, Consumer<Integer>> ops = new LinkedHashMap<>();
            ops.put("get", map::get);
            ops.put("put", k -> map.put(k, 1L));
            ops.put("putIfAbsent", k -> map.putIfAbsent(k, 1L));
            ops.put("remove", map::remove);
            ops.put("remove(k,v)", k -> map.remove(k, POISON));
            ops.put("replace", k -> map.replace(k, 1L));
            ops.put("replace(k,o,n)", k -> map.replace(k, POISON, 1L));
            ops.put("compute", k -> map.compute(k, (x, v) -> 1L));
            ops.put("computeIfPresent", k -> map.computeIfPresent(k, (x, v) -> 1L));
            ops.put("computeIfAbsent", k -> map.computeIfAbsent(k, x -> 1L));
            ops.put("merge", k -> map.merge(k, 1L, Long::sum));
            ops.put("pollFirstEntry", k -> map.tailMap(k).pollFirstEntry());
            ops.put("pollFirstEntry of a descending view", k -> map.headMap(k, true).descendingMap().pollFirstEntry());
            ops.put("entrySet().remove", k -> map.entrySet().remove(Map.entry(k, POISON)));
            ops.put("values().remove", k -> map.values().remove(-1L));
            int key = 1;
            for (Map.Entry<String, Consumer<Integer>> op : ops.entrySet()) {
                int k = key;
                key += 2;
                map.zc().put(k, POISON); // the zero-copy API writes without reading the old value
                String ctx = op.getKey() + " on key " + k;
                assertThrows(MisuseTest.Poison.class, () -> op.getValue().accept(k), ctx);
                OakUnscopedBuffer raw = map.zc().get(k);
                assertEquals(POISON, raw == null ? null : raw.getLong(0), ctx + ": the mapping is unchanged");
                // the key is not left locked: another thread updates it
                CompletableFuture<Long> other = CompletableFuture.supplyAsync(() -> {
                    map.zc().put(k, 7L);
                    return map.merge(k, 1L, Long::sum);
                });
                assertEquals(8L, other.get(10, TimeUnit.SECONDS), ctx);
                model.put(k, 8L);
                assertEquals(model, map, ctx);
                assertEquals(model.size(), map.size(), ctx);
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // zero-copy views of values removed by the removal paths MisuseTest does not cover

    @ParameterizedTest(name = "memory={0}")
    @EnumSource(MemoryScheme.class)
    void valueViewsThrowAfterEveryKindOfRemoval(MemoryScheme scheme) {
        try (OakMap<Integer, Long> map = new OakMapBuilder<>(TestMaps.INT_KEY, TestMaps.LONG_VAL, TestMaps.INT_CMP)
                .chunkCapacity(4).keyMemory(scheme).valueMemory(scheme).build()) {
            TreeMap<Integer, Long> model = new TreeMap<>();
            for (int k = 0; k < 400; k++) {
                map.put(k, 10L * k);
                model.put(k, 10L * k);
            }
            Map<String, Consumer<Integer>> removals = new LinkedHashMap<>();
            removals.put("tailMap.pollFirstEntry", k -> map.tailMap(k).pollFirstEntry());
            removals.put("headMap.descendingMap.pollFirstEntry", k -> map.headMap(k, true).descendingMap().pollFirstEntry());
            removals.put("subMap.clear", k -> map.subMap(k, k + 1).clear());
            removals.put("entrySet.remove", k -> assertTrue(map.entrySet().remove(Map.entry(k, 10L * k))));
            removals.put("values.remove", k -> assertTrue(map.values().remove(10L * k)));
            removals.put("values.removeIf", k -> assertTrue(map.values().removeIf(v -> v == 10L * k)));
            removals.put("keySet.retainAll", k -> map.subMap(k, k + 1).keySet().retainAll(List.of()));
            removals.put("descendingKeySet iterator", k -> {
                Iterator<Integer> it = map.headMap(k, true).descendingKeySet().iterator();
                it.next();
                it.remove();
            });
            removals.put("zc.keySet iterator", k -> {
                Iterator<OakUnscopedBuffer> it = map.tailMap(k).zc().keySet().iterator();
                it.next();
                it.remove();
            });
            removals.put("zc.valueStreamSet iterator after hasNext", k -> {
                Iterator<OakUnscopedBuffer> it = map.tailMap(k).zc().valueStreamSet().iterator();
                it.next();
                assertTrue(it.hasNext());
                it.remove();
            });
            removals.put("pollFirstEntry, then re-insert", k -> {
                map.tailMap(k).pollFirstEntry();
                map.put(k, -1L);
            });
            removals.put("clear of a range, then re-insert", k -> {
                map.subMap(k, k + 5).clear();
                for (int i = k; i < k + 5; i++) {
                    map.put(i, -1L);
                }
            });
            Map<Integer, List<OakUnscopedBuffer>> views = new TreeMap<>();
            Map<Integer, String> how = new TreeMap<>();
            int key = 10;
            for (Map.Entry<String, Consumer<Integer>> removal : removals.entrySet()) {
                OakUnscopedBuffer byGet = map.zc().get(key);
                OakUnscopedBuffer byScan = map.tailMap(key).zc().values().iterator().next();
                assertEquals(10L * key, byGet.getLong(0));
                assertEquals(10L * key, byScan.getLong(0));
                removal.getValue().accept(key);
                model.remove(key);
                if (removal.getKey().startsWith("clear of a range")) {
                    for (int i = key; i < key + 5; i++) {
                        model.put(i, -1L);
                    }
                } else if (removal.getKey().endsWith("re-insert")) {
                    model.put(key, -1L);
                }
                views.put(key, List.of(byGet, byScan));
                how.put(key, removal.getKey());
                key += 20;
            }
            assertEquals(model, map);
            List<String> failures = new ArrayList<>();
            for (int round = 0; round < 2; round++) {
                for (Map.Entry<Integer, List<OakUnscopedBuffer>> e : views.entrySet()) {
                    for (OakUnscopedBuffer b : e.getValue()) {
                        String ctx = "round " + round + ", key " + e.getKey() + " removed by " + how.get(e.getKey());
                        for (Callable<Object> read : List.<Callable<Object>>of(() -> b.getLong(0),
                                () -> b.transform(x -> x.getLong(0)))) {
                            String got = outcome(read);
                            if (!got.equals("threw DeletedMemoryAccessException")) {
                                failures.add(ctx + ": " + got);
                            }
                        }
                    }
                }
                for (int k = 1000; k < 5000; k++) { // reuse the memory
                    map.put(k, 0x0BADC0DEL);
                }
                for (int k = 1000; k < 5000; k += 2) {
                    map.remove(k);
                }
            }
            assertEquals(List.of(), failures);
        }
    }

    // ------------------------------------------------------------------------------------------
    // zero-copy buffers: bounds with extreme indexes

    @Test
    void buffersRejectExtremeIndexesWithoutOverflow() {
        try (OakMap<String, String> map = new OakMapBuilder<>(OakCommonTypes.STRING_SERIALIZER,
                OakCommonTypes.STRING_SERIALIZER, OakCommonTypes.STRING_COMPARATOR).chunkCapacity(4).build()) {
            for (int i = 0; i < 10; i++) {
                map.put("key" + i, "value" + i);
            }
            List<String> failures = new ArrayList<>();
            probe("zc().get", map.zc().get("key3"), failures);
            map.zc().get("key3").transform(b -> {
                probe("transform", b, failures);
                return null;
            });
            probe("zc().keySet()", map.zc().keySet().iterator().next(), failures);
            probe("zc().keyStreamSet()", map.zc().keyStreamSet().iterator().next(), failures);
            map.zc().computeIfPresent("key3", w -> probe("computeIfPresent", w, failures));
            assertEquals(List.of(), failures);
            assertEquals("value3", map.get("key3"), "the probes wrote nothing");
        }
    }

    private static void probe(String what, OakBuffer b, List<String> failures) {
        int cap = b.capacity();
        for (int i : new int[] {-1, cap, cap - 7, Integer.MAX_VALUE, Integer.MIN_VALUE, Integer.MAX_VALUE - 3}) {
            check(what + ".getLong(" + i + ")", () -> b.getLong(i), i >= 0 && i + 8L <= cap, failures);
            check(what + ".get(" + i + ")", () -> b.get(i), i >= 0 && i + 1L <= cap, failures);
            for (int len : new int[] {-1, 1, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
                for (int off : new int[] {-1, 0, 15, Integer.MAX_VALUE}) {
                    boolean ok = i >= 0 && len >= 0 && (long) i + len <= cap && off >= 0 && (long) off + len <= 16;
                    check(what + ".getBytes(" + i + ", dst, " + off + ", " + len + ")", () -> {
                        b.getBytes(i, new byte[16], off, len);
                        return null;
                    }, ok, failures);
                    if (!ok && b instanceof OakScopedWriteBuffer w && what.startsWith("compute")) {
                        check(what + ".putBytes(" + i + ", src, " + off + ", " + len + ")", () -> {
                            byte[] src = new byte[16];
                            java.util.Arrays.fill(src, (byte) '!');
                            return w.putBytes(i, src, off, len) == null;
                        }, false, failures);
                    }
                }
            }
        }
    }

    private static void check(String what, Callable<Object> c, boolean ok, List<String> failures) {
        try {
            c.call();
            if (!ok) {
                failures.add(what + " did not throw");
            }
        } catch (IndexOutOfBoundsException e) {
            if (ok) {
                failures.add(what + " threw " + e);
            }
        } catch (Exception e) {
            failures.add(what + " threw " + e);
        }
    }

    // ------------------------------------------------------------------------------------------
    // a compute function that restructures the chunks around its own locked key

    @ParameterizedTest(name = "memory={0}")
    @EnumSource(MemoryScheme.class)
    void computesMayRestructureTheChunksAroundTheirOwnKey(MemoryScheme scheme) throws Exception {
        try (OakMap<Integer, Long> map = new OakMapBuilder<>(TestMaps.INT_KEY, TestMaps.LONG_VAL, TestMaps.INT_CMP)
                .chunkCapacity(4).valueMemory(scheme).build()) {
            TreeMap<Integer, Long> model = new TreeMap<>();
            for (int i = 0; i < 100; i++) {
                map.put(i * 100, (long) i);
                model.put(i * 100, (long) i);
            }
            CompletableFuture<Void> run = CompletableFuture.runAsync(() -> {
                // splits around the locked key
                assertEquals(51L, map.compute(5000, (k, old) -> {
                    for (int i = 1; i < 99; i++) {
                        map.put(5000 + i, 1L);
                    }
                    return old + 1;
                }));
                // merges around it
                assertTrue(map.zc().computeIfPresent(5000, w -> {
                    map.subMap(4000, 5000).clear();
                    map.subMap(5001, 6001).clear();
                    w.putLong(0, w.getLong(0) + 1);
                }));
                // an absent key, inserted after its neighbours split
                assertEquals(9L, map.compute(4999, (k, old) -> {
                    for (int i = 1; i < 300; i++) {
                        map.put(4000 + i, 2L);
                    }
                    return 9L;
                }));
            });
            run.get(60, TimeUnit.SECONDS);
            for (int i = 1; i < 99; i++) {
                model.put(5000 + i, 1L);
            }
            model.put(5000, 52L);
            model.subMap(4000, 5000).clear();
            model.subMap(5001, 6001).clear();
            for (int i = 1; i < 300; i++) {
                model.put(4000 + i, 2L);
            }
            model.put(4999, 9L);
            assertEquals(model, map);
            assertEquals(model.size(), map.size());
            assertEquals(new ArrayList<>(model.descendingKeySet()), new ArrayList<>(map.descendingKeySet()));
        } catch (java.util.concurrent.TimeoutException e) {
            fail("a compute that restructures its neighbourhood hung");
        }
    }
}
