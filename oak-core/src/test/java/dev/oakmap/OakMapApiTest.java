package dev.oakmap;

import dev.oakmap.common.OakCommonTypes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.Set;
import java.util.Spliterator;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The contract of {@link OakMap}'s legacy API (views, ranges, nulls, exceptions), checked against a
 * {@link ConcurrentSkipListMap} fed the same operations, plus the zero-copy API and
 * {@link OakMap#close()}.
 */
class OakMapApiTest {

    private final List<OakMap<?, ?>> maps = new ArrayList<>();

    private OakMap<Integer, String> newMap(int chunkCapacity) {
        OakMap<Integer, String> m = GuavaConformanceTest.newMap(chunkCapacity);
        maps.add(m);
        return m;
    }

    private OakMap<Integer, String> newMap() {
        return newMap(4);
    }

    @AfterEach
    void closeMaps() {
        maps.forEach(OakMap::close);
    }

    // ------------------------------------------------------------------------------------------
    // Differential test against ConcurrentSkipListMap

    /** The outcome of an operation: its result (collections as lists) or its exception class. */
    private static Object outcome(Function<ConcurrentNavigableMap<Integer, String>, Object> op,
                                  ConcurrentNavigableMap<Integer, String> m) {
        try {
            return normalize(op.apply(m));
        } catch (RuntimeException e) {
            return e.getClass();
        }
    }

    private static Object normalize(Object o) {
        if (o instanceof Map.Entry<?, ?> e) {
            return new SimpleImmutableEntry<>(e.getKey(), e.getValue());
        }
        if (o instanceof Map<?, ?> m) {
            return m.entrySet().stream().map(OakMapApiTest::normalize).collect(Collectors.toList());
        }
        if (o instanceof Collection<?> c) {
            return c.stream().map(OakMapApiTest::normalize).collect(Collectors.toList());
        }
        return o;
    }

    /** A random chain of sub-map/descending views, applied identically to both maps. */
    private static List<Function<ConcurrentNavigableMap<Integer, String>, ConcurrentNavigableMap<Integer, String>>>
            randomViewChain(Random rnd) {
        List<Function<ConcurrentNavigableMap<Integer, String>, ConcurrentNavigableMap<Integer, String>>> chain =
                new ArrayList<>();
        int depth = rnd.nextInt(4);
        for (int i = 0; i < depth; i++) {
            int a = rnd.nextInt(70) - 5;
            int b = rnd.nextInt(70) - 5;
            boolean ai = rnd.nextBoolean();
            boolean bi = rnd.nextBoolean();
            switch (rnd.nextInt(4)) {
                case 0 -> chain.add(m -> m.subMap(a, ai, b, bi));
                case 1 -> chain.add(m -> m.headMap(a, ai));
                case 2 -> chain.add(m -> m.tailMap(a, ai));
                default -> chain.add(ConcurrentNavigableMap::descendingMap);
            }
        }
        return chain;
    }

    private static ConcurrentNavigableMap<Integer, String> apply(
            List<Function<ConcurrentNavigableMap<Integer, String>, ConcurrentNavigableMap<Integer, String>>> chain,
            ConcurrentNavigableMap<Integer, String> root) {
        ConcurrentNavigableMap<Integer, String> m = root;
        for (Function<ConcurrentNavigableMap<Integer, String>, ConcurrentNavigableMap<Integer, String>> f : chain) {
            m = f.apply(m);
        }
        return m;
    }

    private static Function<ConcurrentNavigableMap<Integer, String>, Object> randomOp(Random rnd) {
        int k = rnd.nextInt(70) - 5;
        int k2 = rnd.nextInt(70) - 5;
        String v = "v" + rnd.nextInt(5);
        String v2 = "v" + rnd.nextInt(5);
        boolean inc = rnd.nextBoolean();
        return switch (rnd.nextInt(60)) {
            case 0, 1, 2, 3, 4 -> m -> m.put(k, v);
            case 5 -> m -> m.get(k);
            case 6 -> m -> m.containsKey(k);
            case 7 -> m -> m.putIfAbsent(k, v);
            case 8 -> m -> m.remove(k);
            case 9 -> m -> m.remove(k, v);
            case 10 -> m -> m.replace(k, v);
            case 11 -> m -> m.replace(k, v, v2);
            case 12 -> m -> m.lowerKey(k);
            case 13 -> m -> m.floorEntry(k);
            case 14 -> m -> m.ceilingKey(k);
            case 15 -> m -> m.higherEntry(k);
            case 16 -> m -> m.firstEntry();
            case 17 -> m -> m.lastKey();
            case 18 -> m -> m.pollFirstEntry();
            case 19 -> m -> m.pollLastEntry();
            case 20 -> m -> m.size();
            case 21 -> m -> m.isEmpty();
            case 22 -> m -> m.containsValue(v);
            case 23 -> m -> m.keySet().remove(k);
            case 24 -> m -> m.entrySet().contains(Map.entry(k, v));
            case 25 -> m -> m.entrySet().remove(Map.entry(k, v));
            case 26 -> m -> m.headMap(k, inc);
            case 27 -> m -> m.tailMap(k, inc).descendingMap();
            case 28 -> m -> m.subMap(Math.min(k, k2), inc, Math.max(k, k2), !inc);
            case 29 -> m -> m.subMap(k, k2);
            case 30 -> m -> m.computeIfPresent(k, (key, old) -> old + "p");
            case 31 -> m -> m.compute(k, (key, old) -> old == null ? "c" + key : old + "c");
            case 32 -> m -> m.computeIfAbsent(k, key -> "a" + key);
            case 33 -> m -> m.merge(k, v, (a, b) -> a + b);
            case 34 -> m -> m.getOrDefault(k, "dflt");
            case 35 -> m -> m.keySet().pollFirst();
            case 36 -> m -> m.descendingKeySet();
            case 37 -> m -> m.navigableKeySet().headSet(k, inc).descendingSet();
            case 38 -> m -> m.values();
            case 39 -> m -> {
                Iterator<Integer> it = m.keySet().iterator();
                List<Integer> removed = new ArrayList<>();
                while (it.hasNext()) {
                    Integer key = it.next();
                    if (key % 3 == 0) {
                        it.remove();
                        removed.add(key);
                    }
                }
                return removed;
            };
            case 40 -> m -> m.lowerEntry(k);
            case 41 -> m -> m.floorKey(k);
            case 42 -> m -> m.ceilingEntry(k);
            case 43 -> m -> m.higherKey(k);
            case 44 -> m -> m.firstKey();
            case 45 -> m -> m.lastEntry();
            case 46 -> m -> m.keySet().tailSet(k, inc).pollLast();
            // SequencedMap (JDK 21) and its views
            case 47 -> m -> m.reversed();
            case 48 -> m -> m.reversed().pollFirstEntry();
            case 49 -> m -> m.putFirst(k, v);
            case 50 -> m -> m.putLast(k, v);
            case 51 -> m -> m.sequencedKeySet().reversed();
            case 52 -> m -> m.sequencedValues().reversed();
            case 53 -> m -> m.sequencedEntrySet().reversed();
            case 54 -> m -> m.sequencedKeySet().removeLast();
            case 55 -> m -> m.keySet().reversed().getFirst();
            case 56 -> m -> m.sequencedValues().getLast();
            case 57 -> m -> m.sequencedEntrySet().removeFirst();
            case 58 -> m -> m.reversed().lastEntry();
            default -> m -> {
                m.replaceAll((key, old) -> old.length() > 6 ? "r" : old + "r");
                return m.toString();
            };
        };
    }

    @ParameterizedTest
    @ValueSource(ints = {4, 4096})
    void behavesLikeConcurrentSkipListMap(int chunkCapacity) {
        for (long seed = 1; seed <= 30; seed++) {
            Random rnd = new Random(seed * 7919 + chunkCapacity);
            OakMap<Integer, String> oak = newMap(chunkCapacity);
            ConcurrentSkipListMap<Integer, String> ref = new ConcurrentSkipListMap<>();
            for (int i = 0; i < 30; i++) {
                int k = rnd.nextInt(60);
                oak.put(k, "v" + i % 5);
                ref.put(k, "v" + i % 5);
            }
            for (int round = 0; round < 10; round++) {
                var chain = randomViewChain(rnd);
                Object refView = outcome(m -> apply(chain, m), ref);
                Object oakView = outcome(m -> apply(chain, m), oak);
                assertEquals(refView, oakView, "creating views, seed " + seed);
                if (refView instanceof Class<?>) {
                    continue;
                }
                ConcurrentNavigableMap<Integer, String> rv = apply(chain, ref);
                ConcurrentNavigableMap<Integer, String> ov = apply(chain, oak);
                assertTrue(ov instanceof OakMap, "views are OakMaps");
                for (int i = 0; i < 40; i++) {
                    var op = randomOp(rnd);
                    Object expected = outcome(op, rv);
                    Object actual = outcome(op, ov);
                    assertEquals(expected, actual, "seed " + seed + ", round " + round + ", op " + i);
                }
                assertEquals(rv, ov, "view contents, seed " + seed);
                assertEquals(ov, rv);
                assertEquals(rv.hashCode(), ov.hashCode());
                assertEquals(rv.toString(), ov.toString());
                assertEquals(new ArrayList<>(rv.keySet()), new ArrayList<>(ov.keySet()));
                assertEquals(new ArrayList<>(rv.descendingMap().entrySet()),
                        new ArrayList<>(ov.descendingMap().entrySet()));
                java.util.Comparator<? super Integer> rc = rv.comparator();
                assertEquals(rc == null ? -1 : Integer.signum(rc.compare(1, 2)),
                        Integer.signum(ov.comparator().compare(1, 2)));
            }
            assertEquals(ref, oak, "final contents, seed " + seed);
            assertEquals(ref.size(), oak.size());
        }
    }

    // ------------------------------------------------------------------------------------------
    // Nulls, ranges, exceptions

    @Test
    void nullsAreRejected() {
        OakMap<Integer, String> m = newMap();
        m.put(1, "one");
        OakMap<Integer, String> sub = m.subMap(0, 10);
        for (OakMap<Integer, String> v : List.of(m, sub, m.descendingMap())) {
            assertThrows(NullPointerException.class, () -> v.get(null));
            assertThrows(NullPointerException.class, () -> v.containsKey(null));
            assertThrows(NullPointerException.class, () -> v.containsValue(null));
            assertThrows(NullPointerException.class, () -> v.put(null, "x"));
            assertThrows(NullPointerException.class, () -> v.put(2, null));
            assertThrows(NullPointerException.class, () -> v.putIfAbsent(2, null));
            assertThrows(NullPointerException.class, () -> v.remove(null));
            assertThrows(NullPointerException.class, () -> v.remove(null, "x"));
            assertFalse(v.remove(1, null));
            assertThrows(NullPointerException.class, () -> v.replace(1, null));
            assertThrows(NullPointerException.class, () -> v.replace(1, "one", null));
            assertThrows(NullPointerException.class, () -> v.replace(1, null, "x"));
            assertThrows(NullPointerException.class, () -> v.compute(1, null));
            assertThrows(NullPointerException.class, () -> v.computeIfAbsent(1, null));
            assertThrows(NullPointerException.class, () -> v.computeIfPresent(1, null));
            assertThrows(NullPointerException.class, () -> v.merge(1, null, (a, b) -> a));
            assertThrows(NullPointerException.class, () -> v.merge(1, "x", null));
            assertThrows(NullPointerException.class, () -> v.ceilingKey(null));
            assertThrows(NullPointerException.class, () -> v.lowerEntry(null));
            assertThrows(NullPointerException.class, () -> v.subMap(null, 5));
            assertThrows(NullPointerException.class, () -> v.headMap(null));
            assertThrows(NullPointerException.class, () -> v.tailMap(null, true));
            assertThrows(NullPointerException.class, () -> v.forEach(null));
            assertThrows(NullPointerException.class, () -> v.replaceAll(null));
            assertThrows(NullPointerException.class, () -> v.replaceAll((k, x) -> null));
            assertThrows(NullPointerException.class, () -> v.zc().put(null, "x"));
            assertThrows(NullPointerException.class, () -> v.zc().computeIfPresent(1, null));
            assertEquals("one", v.get(1));
        }
    }

    @Test
    void subMapRangeRules() {
        OakMap<Integer, String> m = newMap();
        IntStream.range(0, 30).forEach(i -> m.put(i, "v" + i));
        OakMap<Integer, String> sub = m.subMap(10, true, 20, false);
        assertEquals(10, sub.size());
        assertThrows(IllegalArgumentException.class, () -> sub.put(20, "x"));
        assertThrows(IllegalArgumentException.class, () -> sub.putIfAbsent(9, "x"));
        assertThrows(IllegalArgumentException.class, () -> sub.replace(25, "x"));
        assertThrows(IllegalArgumentException.class, () -> sub.compute(25, (k, v) -> "x"));
        assertThrows(IllegalArgumentException.class, () -> sub.computeIfAbsent(25, k -> "x"));
        assertThrows(IllegalArgumentException.class, () -> sub.merge(25, "x", (a, b) -> a));
        assertNull(sub.computeIfPresent(25, (k, v) -> "x"));
        assertNull(sub.get(25));
        assertFalse(sub.containsKey(5));
        assertNull(sub.remove(25));
        assertFalse(sub.remove(25, "v25"));
        assertEquals("v25", m.get(25));
        assertThrows(IllegalArgumentException.class, () -> sub.subMap(5, 15));
        assertThrows(IllegalArgumentException.class, () -> sub.headMap(20, true));
        assertThrows(IllegalArgumentException.class, () -> sub.tailMap(9));
        assertThrows(IllegalArgumentException.class, () -> m.subMap(5, 3));
        assertTrue(m.subMap(5, false, 5, false).isEmpty());
        assertEquals(0, m.subMap(5, false, 5, false).size());
        assertEquals(List.of(5), new ArrayList<>(m.subMap(5, true, 5, true).keySet()));
        OakMap<Integer, String> desc = sub.descendingMap();
        assertEquals(19, desc.firstKey());
        assertEquals(10, desc.lastKey());
        assertEquals(List.of(15, 14, 13), new ArrayList<>(desc.subMap(15, true, 12, false).keySet()));
        assertEquals(List.of(19, 18), new ArrayList<>(desc.headMap(17).keySet()));
        assertThrows(IllegalArgumentException.class, () -> desc.subMap(12, 15));
        assertEquals(18, desc.higherKey(19));
        assertEquals(12, desc.ceilingKey(12));
        assertEquals(11, desc.higherKey(12));
        assertNull(desc.higherKey(10));
        assertEquals(10, desc.higherKey(-100) == null ? 10 : -1);
        assertEquals(19, desc.ceilingKey(100));
        assertTrue(desc.comparator().compare(1, 2) > 0);
        assertSame(desc.descendingMap().comparator(), m.comparator());
        assertTrue(m.comparator() instanceof OakComparator);
    }

    @Test
    void emptyViewsThrowNoSuchElement() {
        OakMap<Integer, String> m = newMap();
        assertThrows(NoSuchElementException.class, m::firstKey);
        assertThrows(NoSuchElementException.class, m::lastKey);
        assertThrows(NoSuchElementException.class, () -> m.keySet().first());
        assertNull(m.firstEntry());
        assertNull(m.pollLastEntry());
        m.put(5, "five");
        assertThrows(NoSuchElementException.class, () -> m.tailMap(6).firstKey());
        assertThrows(NoSuchElementException.class, () -> m.headMap(5).descendingMap().lastKey());
        assertThrows(NoSuchElementException.class, () -> m.headMap(5).keySet().iterator().next());
    }

    @Test
    void iteratorsAndEntries() {
        OakMap<Integer, String> m = newMap();
        IntStream.range(0, 20).forEach(i -> m.put(i, "v" + i));
        Iterator<Map.Entry<Integer, String>> it = m.entrySet().iterator();
        assertThrows(IllegalStateException.class, it::remove);
        Map.Entry<Integer, String> e = it.next();
        assertEquals("v0", e.setValue("zero"));
        assertEquals("zero", m.get(0));
        assertThrows(NullPointerException.class, () -> e.setValue(null));
        it.remove();
        assertThrows(IllegalStateException.class, it::remove);
        assertFalse(m.containsKey(0));
        // Weakly consistent: changes during iteration never throw ConcurrentModificationException;
        // like ConcurrentSkipListMap's, the iterator looks one mapping ahead.
        ConcurrentSkipListMap<Integer, String> ref = new ConcurrentSkipListMap<>(m);
        List<Integer> expected = removeAheadWhileIterating(ref);
        assertEquals(expected, removeAheadWhileIterating(m));
        assertEquals(ref, m);
        // Navigation results are immutable snapshots.
        Map.Entry<Integer, String> first = m.firstEntry();
        assertThrows(UnsupportedOperationException.class, () -> first.setValue("y"));
        // Key set views.
        NavigableSet<Integer> ks = m.navigableKeySet();
        assertThrows(UnsupportedOperationException.class, () -> ks.add(7));
        assertTrue(ks.remove(1));
        assertFalse(m.containsKey(1));
        assertEquals(m.lastKey(), m.descendingKeySet().first());
        assertEquals(m.descendingKeySet().descendingSet(), ks);
        // values().remove removes one mapping with that value.
        assertTrue(m.values().remove("x"));
        m.clear();
        assertTrue(m.isEmpty());
        assertEquals(0, m.size());
    }

    @Test
    void spliteratorsReportTheirOrder() {
        OakMap<Integer, String> m = newMap();
        IntStream.range(0, 50).forEach(i -> m.put(i, "v" + i));
        for (ConcurrentNavigableMap<Integer, String> view : List.of(m, m.descendingMap(), m.subMap(10, 30))) {
            int sortedDistinct = Spliterator.SORTED | Spliterator.DISTINCT | Spliterator.ORDERED
                    | Spliterator.NONNULL | Spliterator.CONCURRENT;
            Spliterator<Integer> keys = view.keySet().spliterator();
            Spliterator<Map.Entry<Integer, String>> entries = view.entrySet().spliterator();
            assertEquals(sortedDistinct, keys.characteristics() & sortedDistinct);
            assertEquals(sortedDistinct, entries.characteristics() & sortedDistinct);
            List<Map.Entry<Integer, String>> seen = new ArrayList<>();
            entries.forEachRemaining(e -> seen.add(Map.entry(e.getKey(), e.getValue())));
            List<Map.Entry<Integer, String>> sorted = new ArrayList<>(seen);
            sorted.sort(entries.getComparator());
            assertEquals(sorted, seen, "entries come in their spliterator's comparator order");
            assertEquals(new ArrayList<>(view.entrySet()), seen);
            List<Integer> keyList = new ArrayList<>();
            keys.forEachRemaining(keyList::add);
            List<Integer> sortedKeys = new ArrayList<>(keyList);
            sortedKeys.sort(keys.getComparator());
            assertEquals(sortedKeys, keyList);
        }
    }

    private static List<Integer> removeAheadWhileIterating(ConcurrentNavigableMap<Integer, String> m) {
        Iterator<Integer> keys = m.keySet().iterator();
        List<Integer> seen = new ArrayList<>();
        while (keys.hasNext()) {
            int k = keys.next();
            seen.add(k);
            m.remove(k + 5);
            m.put(-100 - k, "x"); // behind the iterator: must not loop forever
        }
        return seen;
    }

    @Test
    void pollReturnsTheRemovedMapping() {
        OakMap<Integer, String> m = newMap();
        IntStream.range(0, 10).forEach(i -> m.put(i, "v" + i));
        OakMap<Integer, String> d = m.subMap(2, 8).descendingMap();
        assertEquals(Map.entry(7, "v7"), d.pollFirstEntry());
        assertEquals(Map.entry(2, "v2"), d.pollLastEntry());
        assertEquals(Map.entry(0, "v0"), m.pollFirstEntry());
        assertEquals(Map.entry(9, "v9"), m.pollLastEntry());
        assertEquals(List.of(1, 3, 4, 5, 6, 8), new ArrayList<>(m.keySet()));
    }

    @Test
    void concurrentPollsReturnEachMappingOnce() throws InterruptedException {
        OakMap<Integer, String> m = newMap();
        int n = 20_000;
        IntStream.range(0, n).forEach(i -> m.put(i, "v" + i));
        List<List<Map.Entry<Integer, String>>> polled = List.of(new ArrayList<>(), new ArrayList<>());
        Thread[] threads = new Thread[2];
        for (int t = 0; t < 2; t++) {
            List<Map.Entry<Integer, String>> mine = polled.get(t);
            boolean fromTop = t == 1;
            threads[t] = new Thread(() -> {
                Map.Entry<Integer, String> e;
                while ((e = fromTop ? m.pollLastEntry() : m.pollFirstEntry()) != null) {
                    mine.add(e);
                }
            });
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        List<Map.Entry<Integer, String>> all = new ArrayList<>(polled.get(0));
        all.addAll(polled.get(1));
        all.sort(Map.Entry.comparingByKey());
        assertEquals(n, all.size());
        for (int i = 0; i < n; i++) {
            assertEquals(Map.entry(i, "v" + i), all.get(i));
        }
        assertTrue(m.isEmpty());
    }

    @Test
    void computeFamily() {
        OakMap<Integer, String> m = newMap();
        assertEquals("a1", m.computeIfAbsent(1, k -> "a" + k));
        assertEquals("a1", m.computeIfAbsent(1, k -> "b" + k));
        assertNull(m.computeIfAbsent(2, k -> null));
        assertFalse(m.containsKey(2));
        assertEquals("a1!", m.computeIfPresent(1, (k, v) -> v + "!"));
        assertNull(m.computeIfPresent(1, (k, v) -> null));
        assertFalse(m.containsKey(1));
        assertEquals("c", m.compute(3, (k, v) -> v == null ? "c" : v + "c"));
        assertEquals("cc", m.compute(3, (k, v) -> v == null ? "c" : v + "c"));
        assertNull(m.compute(3, (k, v) -> null));
        assertFalse(m.containsKey(3));
        assertEquals("x", m.merge(4, "x", String::concat));
        assertEquals("xy", m.merge(4, "y", String::concat));
        assertNull(m.merge(4, "z", (a, b) -> null));
        assertTrue(m.isEmpty());
        RuntimeException boom = new RuntimeException("boom");
        m.put(5, "five");
        assertSame(boom, assertThrows(RuntimeException.class, () -> m.compute(5, (k, v) -> {
            throw boom;
        })));
        assertEquals("five", m.get(5));
    }

    /** A remapping function may mutate the value it was given and return that same object. */
    @Test
    void computeMayReturnTheMutatedOldValue() {
        try (OakMap<Integer, byte[]> m = new OakMapBuilder<>(dev.oakmap.common.OakCommonTypes.INTEGER_SERIALIZER,
                dev.oakmap.common.OakCommonTypes.BYTE_ARRAY_SERIALIZER, dev.oakmap.common.OakCommonTypes.INTEGER_COMPARATOR)
                .memoryCapacity(16L << 20).build()) {
            m.put(1, new byte[] {1, 2, 3});
            m.compute(1, (k, v) -> { v[0] = 9; return v; });
            assertEquals(9, m.get(1)[0]);
            m.computeIfPresent(1, (k, v) -> { v[1] = 8; return v; });
            assertEquals(8, m.get(1)[1]);
            m.merge(1, new byte[0], (old, given) -> { old[2] = 7; return old; });
            assertEquals(List.of((byte) 9, (byte) 8, (byte) 7),
                    List.of(m.get(1)[0], m.get(1)[1], m.get(1)[2]));
            assertFalse(m.replace(1, new byte[] {0}, new byte[] {5}), "byte[] equality is identity");
            assertEquals(3, m.get(1).length);
        }
    }

    /**
     * Key views handed out by scans stay readable after their mapping is removed and the rebalancer
     * has dropped (and, with reclaimed keys, released) the key, under every key scheme: the
     * {@code keySet()} view over its own copy, the stream view over the key slice that the scan
     * keeps from deletion while it is on it.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(MemoryScheme.class)
    void scanKeyViewsOutliveTheirMapping(MemoryScheme keyScheme) {
        try (OakMap<Integer, String> m = new OakMapBuilder<>(new GuavaConformanceTest.IntSerializer(),
                new GuavaConformanceTest.StringSerializer(), new GuavaConformanceTest.IntComparator())
                .memoryCapacity(64L << 20).chunkCapacity(8).keyMemory(keyScheme).build()) {
            for (int i = 0; i < 64; i++) {
                m.put(i, "v" + i);
            }
            Iterator<OakUnscopedBuffer> stream = m.zc().keyStreamSet().iterator();
            OakUnscopedBuffer streamed = stream.next();
            OakUnscopedBuffer kept = m.zc().keySet().iterator().next();
            for (int round = 0; round < 50; round++) { // remove everything, rebalance, refill
                for (int i = 0; i < 64; i++) {
                    m.remove(i);
                }
                for (int i = 0; i < 64; i++) {
                    m.put(1000 + round * 64 + i, "w");
                }
                for (int i = 0; i < 64; i++) {
                    m.remove(1000 + round * 64 + i);
                }
            }
            assertEquals(0, streamed.getInt(0));
            assertEquals(4, streamed.capacity());
            assertFalse(stream.hasNext(), "everything was removed");
            // the scan has ended: its view holds a copy of the last key, which stays readable
            for (int i = 0; i < 64; i++) {
                m.put(5000 + i, "x");
                m.remove(5000 + i);
            }
            assertEquals(0, streamed.getInt(0));
            assertEquals(0, (int) streamed.transform(b -> b.getInt(0)));
            assertEquals(0, kept.getInt(0));
            assertEquals(0, (int) kept.transform(b -> b.getInt(0)));
            assertEquals(4, kept.capacity());
        }
    }

    /**
     * A stream scan, in either direction, whose current mapping and a run of mappings after it
     * are removed (their chunks split and merged around them, their key memory reused) still
     * reads its current key, then resumes at the first key still present, or ends cleanly if none
     * is left; also with a second stream scan open in the same thread. Runs of removed keys span
     * several 8-entry chunks.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(MemoryScheme.class)
    void streamScanKeepsItsKeyAndPlaceWhileTheMappingsAroundAreRemoved(MemoryScheme keyScheme) {
        int[][] cases = {{0, 47}, {5, 6}, {10, 40}, {30, 63}, {0, 63}, {62, 63}, {20, 20}};
        for (int[] c : cases) {
            for (int variant = 0; variant < 8; variant++) {
                boolean entries = (variant & 1) != 0;
                boolean nested = (variant & 2) != 0;
                boolean desc = (variant & 4) != 0;
                // descending, remove the run below the position instead
                int at = desc ? 63 - c[0] : c[0];
                int lo = desc ? 63 - c[1] : c[0];
                int hi = desc ? 63 - c[0] : c[1];
                String ctx = keyScheme + (desc ? " descending" : " ascending") + " on " + at + ", removing " + lo
                        + ".." + hi + (entries ? " (entryStreamSet)" : " (keyStreamSet)") + (nested ? ", nested scan" : "");
                try (OakMap<Integer, String> m = new OakMapBuilder<>(new GuavaConformanceTest.IntSerializer(),
                        new GuavaConformanceTest.StringSerializer(), new GuavaConformanceTest.IntComparator())
                        .memoryCapacity(64L << 20).chunkCapacity(8).keyMemory(keyScheme).build()) {
                    for (int i = 0; i < 64; i++) { // keys 100 apart: room for churn next to each
                        m.put(100 * i, "v" + i);
                    }
                    m.put(100_000, "stays"); // where the nested scan sits
                    m.put(-100_000, "stays");
                    OakMap<Integer, String> view = desc ? m.descendingMap() : m;
                    Iterator<?> it = entries ? view.zc().entryStreamSet().iterator() : view.zc().keyStreamSet().iterator();
                    if (desc) {
                        assertEquals(100_000, readStreamKey(it.next(), entries), ctx);
                    } else {
                        assertEquals(-100_000, readStreamKey(it.next(), entries), ctx);
                    }
                    OakUnscopedBuffer onKey = null;
                    int current = Integer.MIN_VALUE;
                    while (current != 100 * at) {
                        Object o = it.next();
                        onKey = streamKey(o, entries);
                        current = onKey.getInt(0);
                    }
                    Iterator<OakUnscopedBuffer> other = null;
                    if (nested) {
                        other = m.tailMap(100_000).zc().keyStreamSet().iterator();
                        assertEquals(100_000, other.next().getInt(0), ctx);
                    }
                    for (int i = lo; i <= hi; i++) {
                        m.remove(100 * i);
                    }
                    for (int round = 0; round < 10; round++) { // split and merge the chunk of each removed key
                        for (int i = lo; i <= hi; i++) {
                            for (int j = 1; j <= 9; j++) {
                                m.put(100 * i + j, "w");
                            }
                        }
                        for (int i = lo; i <= hi; i++) {
                            for (int j = 1; j <= 9; j++) {
                                m.remove(100 * i + j);
                            }
                        }
                    }
                    assertEquals(100 * at, onKey.getInt(0), ctx + ": the current key stays readable");
                    if (nested) {
                        assertFalse(other.hasNext(), ctx);
                    }
                    List<Integer> rest = new ArrayList<>();
                    while (it.hasNext()) {
                        rest.add(readStreamKey(it.next(), entries));
                    }
                    List<Integer> expected = new ArrayList<>();
                    if (desc) {
                        for (int i = lo - 1; i >= 0; i--) {
                            expected.add(100 * i);
                        }
                        expected.add(-100_000);
                    } else {
                        for (int i = hi + 1; i < 64; i++) {
                            expected.add(100 * i);
                        }
                        expected.add(100_000);
                    }
                    assertEquals(expected, rest, ctx);
                }
            }
        }
    }

    /** A stream scan's key view reads the key in place: after close() it throws, like every view. */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(MemoryScheme.class)
    void streamKeyViewsFailCleanlyAfterClose(MemoryScheme keyScheme) {
        OakMap<Integer, String> m = new OakMapBuilder<>(new GuavaConformanceTest.IntSerializer(),
                new GuavaConformanceTest.StringSerializer(), new GuavaConformanceTest.IntComparator())
                .memoryCapacity(64L << 20).chunkCapacity(8).keyMemory(keyScheme).build();
        for (int i = 0; i < 20; i++) {
            m.put(i, "v" + i);
        }
        Iterator<OakUnscopedBuffer> asc = m.zc().keyStreamSet().iterator();
        Iterator<OakUnscopedBuffer> desc = m.descendingMap().zc().keyStreamSet().iterator();
        OakUnscopedBuffer first = asc.next();
        OakUnscopedBuffer last = desc.next();
        assertEquals(0, first.getInt(0));
        assertEquals(19, last.getInt(0));
        m.close();
        for (OakUnscopedBuffer view : List.of(first, last)) {
            assertThrows(OakClosedException.class, () -> view.getInt(0));
            assertThrows(OakClosedException.class, () -> view.get(1));
            assertThrows(OakClosedException.class, view::capacity);
            assertThrows(OakClosedException.class, () -> view.transform(b -> b.getInt(0)));
            assertThrows(OakClosedException.class, () -> view.getBytes(0, new byte[4], 0, 4));
        }
        assertThrows(OakClosedException.class, asc::hasNext);
    }

    @SuppressWarnings("unchecked")
    private static OakUnscopedBuffer streamKey(Object element, boolean entries) {
        return entries ? ((Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>) element).getKey() : (OakUnscopedBuffer) element;
    }

    private static int readStreamKey(Object element, boolean entries) {
        return streamKey(element, entries).getInt(0);
    }

    // ------------------------------------------------------------------------------------------
    // Zero-copy API

    private static String str(OakBuffer b) {
        byte[] bytes = new byte[b.capacity()];
        b.getBytes(0, bytes, 0, bytes.length);
        return new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void zcGetFollowsInPlaceUpdatesAndFailsAfterRemove() {
        OakMap<Integer, String> m = newMap();
        OakZeroCopyMap<Integer, String> zc = m.zc();
        assertSame(zc, m.zc());
        zc.put(1, "aaaa");
        OakUnscopedBuffer view = zc.get(1);
        assertEquals("aaaa", str(view));
        assertTrue(zc.computeIfPresent(1, w -> w.put(0, (byte) 'b')));
        assertEquals("baaa", str(view));
        assertEquals("baaa", view.transform(OakMapApiTest::str));
        assertEquals("baaa", m.get(1));
        assertFalse(zc.computeIfPresent(2, w -> w.put(0, (byte) 'b')));
        assertTrue(zc.putIfAbsentComputeIfPresent(2, "cccc", w -> w.put(0, (byte) 'd')));
        assertFalse(zc.putIfAbsentComputeIfPresent(2, "cccc", w -> w.put(0, (byte) 'd')));
        assertEquals("dccc", m.get(2));
        assertFalse(zc.putIfAbsent(2, "eeee"));
        assertTrue(zc.putIfAbsent(3, "eeee"));
        assertNull(zc.get(4));
        assertTrue(zc.remove(1));
        assertFalse(zc.remove(1));
        assertThrows(DeletedMemoryAccessException.class, () -> view.get(0));
        assertThrows(DeletedMemoryAccessException.class, () -> view.transform(OakMapApiTest::str));
        zc.put(1, "ffff"); // a new mapping of the same key does not revive the old view
        assertThrows(DeletedMemoryAccessException.class, () -> view.getInt(0));
    }

    /**
     * The value views a scan hands out start their first read from the scan's own liveness check
     * of the value; an in-place update or a removal after that check must still be seen.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void scannedValueViewsFollowUpdatesAndRemovalsAfterTheScanReachedThem(boolean stream) {
        OakMap<Integer, String> m = newMap();
        OakZeroCopyMap<Integer, String> zc = m.zc();
        IntStream.range(0, 10).forEach(i -> m.put(i, "v" + i + "aaa"));
        int n = 0;
        for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : stream ? zc.entryStreamSet() : zc.entrySet()) {
            int k = e.getKey().getInt(0);
            OakUnscopedBuffer v = e.getValue();
            assertTrue(zc.computeIfPresent(k, w -> w.put(0, (byte) 'w')), "key " + k);
            assertEquals('w', (char) v.get(0), "the update after the scan reached key " + k);
            assertEquals("w" + k + "aaa", str(v));
            if (k % 2 == 0) {
                assertTrue(zc.remove(k));
                assertThrows(DeletedMemoryAccessException.class, () -> v.get(1), "removed after the scan reached " + k);
                assertThrows(DeletedMemoryAccessException.class, () -> v.getInt(0));
            } else {
                assertEquals("w" + k + "aaa", str(v), "and read again");
            }
            n++;
        }
        assertEquals(10, n);
        assertEquals(List.of(1, 3, 5, 7, 9), new ArrayList<>(m.keySet()));
    }

    @Test
    void zcSetsAndStreamSets() {
        OakMap<Integer, String> m = newMap();
        IntStream.range(0, 50).forEach(i -> m.put(i, "v" + i));
        OakZeroCopyMap<Integer, String> zc = m.zc();

        List<Integer> keys = new ArrayList<>();
        Set<OakUnscopedBuffer> distinct = Collections.newSetFromMap(new IdentityHashMap<>());
        for (OakUnscopedBuffer k : zc.keySet()) {
            keys.add(k.getInt(0));
            distinct.add(k);
        }
        assertEquals(IntStream.range(0, 50).boxed().toList(), keys);
        assertEquals(50, distinct.size());

        keys.clear();
        distinct.clear();
        for (OakUnscopedBuffer k : zc.keyStreamSet()) {
            keys.add(k.getInt(0));
            distinct.add(k);
        }
        assertEquals(IntStream.range(0, 50).boxed().toList(), keys);
        assertEquals(1, distinct.size(), "a stream set reuses one view object");

        List<String> values = new ArrayList<>();
        Set<Object> valueObjects = Collections.newSetFromMap(new IdentityHashMap<>());
        for (OakUnscopedBuffer v : zc.valueStreamSet()) {
            values.add(str(v));
            valueObjects.add(v);
        }
        assertEquals(IntStream.range(0, 50).mapToObj(i -> "v" + i).toList(), values);
        assertEquals(1, valueObjects.size());
        assertEquals(values, zc.values().stream().map(OakMapApiTest::str).toList());

        Set<Object> entryObjects = Collections.newSetFromMap(new IdentityHashMap<>());
        int n = 0;
        for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : zc.entryStreamSet()) {
            assertEquals("v" + e.getKey().getInt(0), str(e.getValue()));
            entryObjects.add(e);
            n++;
        }
        assertEquals(50, n);
        assertEquals(1, entryObjects.size());
        for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : zc.entrySet()) {
            assertEquals("v" + e.getKey().getInt(0), str(e.getValue()));
        }
        assertEquals(50, zc.entrySet().size());
        assertFalse(zc.keySet().isEmpty());

        // Mutation only through iterator.remove().
        assertThrows(UnsupportedOperationException.class, () -> zc.keySet().clear());
        assertThrows(UnsupportedOperationException.class, () -> zc.values().remove(null));
        assertThrows(UnsupportedOperationException.class, () -> zc.keyStreamSet().removeIf(b -> true));
        Iterator<OakUnscopedBuffer> it = zc.keyStreamSet().iterator();
        assertThrows(IllegalStateException.class, it::remove);
        while (it.hasNext()) {
            if (it.next().getInt(0) % 2 == 0) {
                it.remove();
            }
        }
        assertEquals(25, m.size());
        assertEquals(1, m.firstKey());
        Iterator<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> eit = zc.entrySet().iterator();
        eit.next();
        assertTrue(eit.hasNext()); // looked ahead: removal goes through the kept key view
        eit.remove();
        assertEquals(3, m.firstKey());
        assertThrows(IllegalStateException.class, eit::remove);
    }

    /**
     * {@link Iterator#remove()} on every zero-copy collection, in both directions, right after
     * {@code next()}, after a {@code hasNext()} that moved the iterator on (allowed by the
     * contract), and after the last element: the same mappings go as from the skiplist's
     * iterators doing the same. 60 mappings, so that scans read keys in place past their first.
     */
    @Test
    void zcIteratorsRemoveTheElementLastReturnedAlsoAfterLookingAhead() {
        for (boolean desc : new boolean[] {false, true}) {
            for (int kind = 0; kind < 6; kind++) {
                OakMap<Integer, String> m = newMap();
                ConcurrentSkipListMap<Integer, String> ref = new ConcurrentSkipListMap<>();
                IntStream.range(0, 60).forEach(i -> {
                    m.put(i, "v" + i);
                    ref.put(i, "v" + i);
                });
                OakZeroCopyMap<Integer, String> zc = (desc ? m.descendingMap() : m).zc();
                Iterator<?> it = switch (kind) {
                    case 0 -> zc.keySet().iterator();
                    case 1 -> zc.values().iterator();
                    case 2 -> zc.entrySet().iterator();
                    case 3 -> zc.keyStreamSet().iterator();
                    case 4 -> zc.valueStreamSet().iterator();
                    default -> zc.entryStreamSet().iterator();
                };
                removeInPattern(it);
                removeInPattern((desc ? ref.descendingMap() : ref).values().iterator());
                String ctx = (desc ? "descending " : "ascending ") + "kind " + kind;
                assertEquals(ref, m, ctx);
                assertEquals(19, m.size(), ctx); // 20 removed right after next(), 20 after a hasNext(), and the last
            }
        }
    }

    /**
     * Every zero-copy key view (plain and stream iterators over keys and entries, both directions)
     * reads its key's bytes: each getter at every index agrees with {@link ByteBuffer}'s
     * big-endian reads of the key, {@code getBytes} and {@code transform} see the same bytes, reads
     * past either end throw {@link IndexOutOfBoundsException}, and a plain iterator's view still
     * reads its key after the mapping is removed. 40 keys, so that scans also read keys in place.
     */
    @Test
    void zcKeyViewsReadTheKeysBytesBigEndianWithinBounds() {
        OakMap<byte[], byte[]> m = new OakMapBuilder<>(OakCommonTypes.BYTE_ARRAY_SERIALIZER,
                OakCommonTypes.BYTE_ARRAY_SERIALIZER, OakCommonTypes.BYTE_ARRAY_COMPARATOR).chunkCapacity(8).build();
        maps.add(m);
        Random rnd = new Random(7);
        List<byte[]> keys = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            byte[] k = new byte[9 + rnd.nextInt(24)];
            rnd.nextBytes(k);
            k[0] = (byte) i; // distinct keys, in this order (unsigned comparison of the first byte)
            keys.add(k);
            m.put(k, new byte[] {(byte) i});
        }
        for (boolean desc : new boolean[] {false, true}) {
            OakZeroCopyMap<byte[], byte[]> zc = (desc ? m.descendingMap() : m).zc();
            for (int kind = 0; kind < 4; kind++) {
                Iterator<?> it = switch (kind) {
                    case 0 -> zc.keySet().iterator();
                    case 1 -> zc.entrySet().iterator();
                    case 2 -> zc.keyStreamSet().iterator();
                    default -> zc.entryStreamSet().iterator();
                };
                String ctx = (desc ? "descending " : "ascending ") + "kind " + kind;
                List<OakUnscopedBuffer> held = new ArrayList<>();
                for (int i = 0; it.hasNext(); i++) {
                    Object e = it.next();
                    OakUnscopedBuffer view = e instanceof Map.Entry<?, ?> entry
                            ? (OakUnscopedBuffer) entry.getKey() : (OakUnscopedBuffer) e;
                    byte[] expected = keys.get(desc ? keys.size() - 1 - i : i);
                    assertReadsExactly(ctx + " key " + i, expected, view);
                    if (kind < 2) {
                        held.add(view);
                    }
                }
                if (kind < 2) {
                    byte[] first = keys.get(desc ? keys.size() - 1 : 0);
                    m.remove(first);
                    assertReadsExactly(ctx + " after removal", first, held.get(0));
                    m.put(first, new byte[] {0});
                }
            }
        }
    }

    private static void assertReadsExactly(String ctx, byte[] expected, OakUnscopedBuffer view) {
        ByteBuffer bb = ByteBuffer.wrap(expected); // big-endian
        int n = expected.length;
        assertEquals(n, view.capacity(), ctx);
        for (int i = 0; i < n; i++) {
            assertEquals(bb.get(i), view.get(i), ctx);
            if (i + 2 <= n) {
                assertEquals(bb.getChar(i), view.getChar(i), ctx);
                assertEquals(bb.getShort(i), view.getShort(i), ctx);
            }
            if (i + 4 <= n) {
                assertEquals(bb.getInt(i), view.getInt(i), ctx);
                assertEquals(Float.floatToRawIntBits(bb.getFloat(i)), Float.floatToRawIntBits(view.getFloat(i)), ctx);
            }
            if (i + 8 <= n) {
                assertEquals(bb.getLong(i), view.getLong(i), ctx);
                assertEquals(Double.doubleToRawLongBits(bb.getDouble(i)),
                        Double.doubleToRawLongBits(view.getDouble(i)), ctx);
            }
        }
        byte[] out = new byte[n + 2];
        view.getBytes(0, out, 1, n);
        assertEquals(Arrays.toString(expected),
                Arrays.toString(Arrays.copyOfRange(out, 1, n + 1)), ctx);
        byte[] seen = view.transform(b -> {
            byte[] a = new byte[b.capacity()];
            b.getBytes(0, a, 0, a.length);
            return a;
        });
        assertEquals(Arrays.toString(expected), Arrays.toString(seen), ctx);
        assertThrows(IndexOutOfBoundsException.class, () -> view.get(-1), ctx);
        assertThrows(IndexOutOfBoundsException.class, () -> view.get(n), ctx);
        assertThrows(IndexOutOfBoundsException.class, () -> view.getLong(n - 7), ctx);
        assertThrows(IndexOutOfBoundsException.class, () -> view.getBytes(1, new byte[n], 0, n), ctx);
        assertThrows(IndexOutOfBoundsException.class, () -> view.getBytes(0, new byte[n], 1, n), ctx);
    }

    /** Removes every third element right after next(), every third after a hasNext(), and the last. */
    private static void removeInPattern(Iterator<?> it) {
        for (int i = 0; it.hasNext(); i++) {
            it.next();
            if (i % 3 == 0) {
                it.remove();
            } else if (i % 3 == 1) {
                boolean more = it.hasNext();
                it.remove();
                assertThrows(IllegalStateException.class, it::remove);
                if (!more) {
                    return;
                }
            } else if (!it.hasNext()) {
                it.remove();
            }
        }
    }

    @Test
    void zcOfViewsRespectsRangeAndDirection() {
        OakMap<Integer, String> m = newMap();
        IntStream.range(0, 30).forEach(i -> m.put(i, "v" + i));
        OakZeroCopyMap<Integer, String> sub = m.subMap(10, true, 20, false).zc();
        assertEquals(IntStream.range(10, 20).boxed().toList(),
                sub.keySet().stream().map(b -> b.getInt(0)).toList());
        assertEquals(10, sub.keyStreamSet().size());
        assertNull(sub.get(5));
        assertEquals("v15", str(sub.get(15)));
        assertThrows(IllegalArgumentException.class, () -> sub.put(25, "x"));
        assertThrows(IllegalArgumentException.class, () -> sub.putIfAbsent(25, "x"));
        assertThrows(IllegalArgumentException.class, () -> sub.putIfAbsentComputeIfPresent(25, "x", w -> { }));
        assertFalse(sub.remove(25));
        assertFalse(sub.computeIfPresent(25, w -> w.put(0, (byte) 'z')));
        assertEquals("v25", m.get(25));

        OakZeroCopyMap<Integer, String> desc = m.headMap(5).descendingMap().zc();
        List<Integer> keys = new ArrayList<>();
        for (OakUnscopedBuffer b : desc.keyStreamSet()) {
            keys.add(b.getInt(0));
        }
        assertEquals(List.of(4, 3, 2, 1, 0), keys);
        assertEquals(List.of("v4", "v3", "v2", "v1", "v0"),
                desc.values().stream().map(OakMapApiTest::str).toList());
    }

    // ------------------------------------------------------------------------------------------
    // Memory and close

    @Test
    void memoryAccessors() {
        OakMap<Integer, String> m = newMap();
        assertEquals(64L << 20, m.memoryCapacity());
        IntStream.range(0, 1000).forEach(i -> m.put(i, "value number " + i));
        assertTrue(m.memoryUsed() > 0);
        assertTrue(m.memoryReserved() >= m.memoryUsed());
        assertEquals(m.memoryUsed(), m.subMap(1, 2).memoryUsed());
    }

    /**
     * A map that holds a few pairs reserves a small first block, not the configured block size
     * (64 MiB by default): programs that keep many small maps must not pay a block for each.
     */
    @Test
    void smallMapsReserveLittle() {
        List<OakMap<Integer, Integer>> maps = new ArrayList<>();
        try {
            for (int i = 0; i < 200; i++) {
                OakMap<Integer, Integer> m = new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER,
                        OakCommonTypes.INTEGER_SERIALIZER, OakCommonTypes.INTEGER_COMPARATOR).build();
                maps.add(m);
                for (int k = 0; k < 100; k++) {
                    m.put(k, i);
                }
                assertEquals(64 << 10, m.memoryReserved(), "a map of 100 pairs");
            }
            for (OakMap<Integer, Integer> m : maps) {
                assertEquals(100, m.size());
            }
        } finally {
            maps.forEach(OakMap::close);
        }
    }

    @Test
    void closeMakesEverythingThrow() {
        OakMap<Integer, String> m = newMap();
        IntStream.range(0, 20).forEach(i -> m.put(i, "v" + i));
        OakMap<Integer, String> sub = m.subMap(5, 10);
        OakMap<Integer, String> empty = m.subMap(7, false, 7, false);
        Iterator<Integer> it = m.keySet().iterator();
        OakUnscopedBuffer view = m.zc().get(3);
        sub.close(); // closing any view closes the map
        sub.close(); // idempotent
        List<Runnable> ops = List.of(
                () -> m.get(1), () -> m.put(1, "x"), () -> m.remove(1), () -> m.size(), () -> m.isEmpty(),
                () -> m.containsKey(1), () -> m.containsValue("v1"), () -> m.firstKey(), () -> m.pollFirstEntry(),
                () -> m.ceilingEntry(3), () -> m.compute(1, (k, v) -> "y"), () -> m.clear(),
                () -> m.keySet().iterator(), () -> m.entrySet().toString(), () -> m.values().size(),
                () -> m.descendingMap().firstEntry(), () -> m.forEach((k, v) -> { }),
                () -> sub.get(1), () -> sub.get(7), () -> sub.put(1, "x"), () -> sub.remove(100),
                () -> sub.size(), () -> empty.isEmpty(), () -> empty.size(), () -> empty.firstEntry(),
                () -> m.zc().get(1), () -> m.zc().put(1, "x"), () -> sub.zc().get(100),
                () -> m.zc().keySet().iterator().hasNext(),
                () -> {
                    while (it.hasNext()) {
                        it.next();
                    }
                },
                () -> view.getInt(0));
        for (int i = 0; i < ops.size(); i++) {
            Runnable op = ops.get(i);
            assertThrows(OakClosedException.class, op::run, "operation " + i);
        }
        // the memory accessors keep working, and report the memory given back
        assertEquals(64L << 20, m.memoryCapacity());
        assertEquals(0, m.memoryReserved(), "reserved after close");
        assertEquals(0, m.memoryUsed(), "used after close");
        assertEquals(0, sub.memoryUsed(), "used after close, through a view");
    }

    @Test
    void viewsAreOakMapsSharingData() {
        OakMap<Integer, String> m = newMap();
        OakMap<Integer, String> tail = m.tailMap(10);
        tail.put(15, "fifteen");
        assertEquals("fifteen", m.get(15));
        assertNotSame(m, tail);
        assertEquals(Integer.hashCode(15) ^ "fifteen".hashCode(), m.hashCode());
        assertEquals("{15=fifteen}", tail.descendingMap().toString());
    }

    // ------------------------------------------------------------------------------------------
    // Chunk capacity bounds
    // ------------------------------------------------------------------------------------------

    @Test
    void chunkCapacityOutsideTheLinkRangeIsRejected() {
        OakMapBuilder<Integer, Long> b = TestMaps.builder(TestMaps.LONG_VAL, 4);
        IllegalArgumentException tooBig = assertThrows(IllegalArgumentException.class, () -> b.chunkCapacity(65_536));
        assertTrue(tooBig.getMessage().contains("65535"), tooBig.getMessage());
        assertThrows(IllegalArgumentException.class, () -> b.chunkCapacity(3));
    }

    /**
     * Chunks of the largest capacity link entries whose indexes need all 16 bits of a link (above
     * 32,767 as well): random insertions fill their unsorted slots up to 65,535, then the map is
     * compared with a sorted model both ways.
     */
    @Test
    void largestChunksKeepEveryEntryInOrder() {
        OakMap<Integer, Long> map = TestMaps.builder(TestMaps.LONG_VAL, 65_535).memoryCapacity(256L << 20)
                .blockSize(4L << 20).build();
        maps.add(map);
        ConcurrentSkipListMap<Integer, Long> model = new ConcurrentSkipListMap<>();
        Random rnd = new Random(65_535);
        for (int i = 0; i < 150_000; i++) {
            int k = rnd.nextInt(1 << 20);
            map.put(k, (long) i);
            model.put(k, (long) i);
        }
        assertEquals(model.size(), map.size());
        assertEquals(new ArrayList<>(model.entrySet()), new ArrayList<>(map.entrySet()));
        assertEquals(new ArrayList<>(model.descendingMap().keySet()), new ArrayList<>(map.descendingMap().keySet()));
    }
}
