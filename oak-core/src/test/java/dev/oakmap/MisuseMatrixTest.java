package dev.oakmap;

import dev.oakmap.common.OakCommonTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Misuse cases found by crossing the map's mutating entry points with the failures a user can
 * cause (see {@link MisuseTest} for the ones covered before).
 */
class MisuseMatrixTest {

    private static OakMap<Integer, byte[]> byteArrayMap() {
        return new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER, OakCommonTypes.BYTE_ARRAY_SERIALIZER,
                OakCommonTypes.INTEGER_COMPARATOR).chunkCapacity(8).memoryCapacity(TestMaps.SMALL_CAPACITY)
                .blockSize(TestMaps.SMALL_BLOCK).build();
    }

    /**
     * {@code replaceAll} over values whose type has no value equality ({@code byte[]}, the common
     * types' own): it replaced each key with {@code replace(key, copy, new)}, which compares with
     * {@code equals}, so the fresh copy never matched and it called the function again, for ever.
     * Each key is now replaced if its value still has the bytes the function saw: once per key,
     * on the map and on its range and descending views; and a value changed between the read and
     * the replacement (here by the function itself) is seen again, not overwritten.
     */
    @Test
    void replaceAllOverValuesWithoutValueEqualityTerminates() {
        try (OakMap<Integer, byte[]> map = byteArrayMap()) {
            TreeMap<Integer, byte[]> model = new TreeMap<>();
            for (int k = 0; k < 100; k++) {
                map.put(k, new byte[] {(byte) k, 0});
                model.put(k, new byte[] {(byte) k, 0});
            }
            List<Integer> calls = new ArrayList<>();
            assertTimeoutPreemptively(Duration.ofSeconds(10), () -> map.replaceAll((k, v) -> {
                calls.add(k);
                if (calls.size() > 1000) {
                    throw new AssertionError("replaceAll called its function " + calls.size() + " times for 100 keys");
                }
                return new byte[] {v[0], (byte) (v[1] + 1)};
            }));
            assertEquals(100, calls.size(), "one call per key");
            model.replaceAll((k, v) -> new byte[] {v[0], (byte) (v[1] + 1)});
            assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
                map.subMap(10, 20).replaceAll((k, v) -> new byte[] {v[0], (byte) (v[1] + 1)});
                map.descendingMap().headMap(89).replaceAll((k, v) -> new byte[] {v[0], (byte) (v[1] + 1)});
            });
            model.subMap(10, 20).replaceAll((k, v) -> new byte[] {v[0], (byte) (v[1] + 1)});
            model.descendingMap().headMap(89).replaceAll((k, v) -> new byte[] {v[0], (byte) (v[1] + 1)});
            // the function itself changes its key's value the first time: that value is not lost,
            // the function runs again on it
            List<byte[]> seen = new ArrayList<>();
            assertTimeoutPreemptively(Duration.ofSeconds(10), () -> map.subMap(50, true, 50, true).replaceAll((k, v) -> {
                seen.add(v);
                if (seen.size() == 1) {
                    map.put(50, new byte[] {7, 7, 7});
                }
                return new byte[] {v[0], (byte) (v.length)};
            }));
            assertEquals(2, seen.size(), "the function ran again on the value changed meanwhile");
            assertArrayEquals(new byte[] {7, 7, 7}, seen.get(1));
            model.put(50, new byte[] {7, 3});
            assertEquals(model.size(), map.size());
            for (Map.Entry<Integer, byte[]> e : model.entrySet()) {
                assertArrayEquals(e.getValue(), map.get(e.getKey()), "value of " + e.getKey());
            }
        }
    }

    /** Long values whose deserializer runs, once, the action armed in {@link #inDeserializer}. */
    private static OakSerializer<Long> reentrantValues(AtomicReference<Runnable> inDeserializer) {
        return new OakSerializer<>() {
            @Override
            public void serialize(Long v, OakScopedWriteBuffer target) {
                target.putLong(0, v);
            }

            @Override
            public Long deserialize(OakScopedReadBuffer source) {
                Runnable action = inDeserializer.getAndSet(null);
                if (action != null) {
                    action.run();
                }
                return source.getLong(0);
            }

            @Override
            public int calculateSize(Long v) {
                return 8;
            }
        };
    }

    /**
     * A value deserializer that reads or writes its own key through the map, called by an
     * operation that holds the value's lock (put returning the old value, remove, remove(k, v))
     * or its read (the navigation queries' value): it waited for its own thread for ever (the
     * put and removals under every scheme, the navigation under lock-based values). It now fails
     * with the IllegalStateException a compute function that touches its own key gets, and the
     * mapping is unchanged and unlocked. (A deserializer that only reads its key inside a read
     * waits for nothing, and works.)
     */
    @ParameterizedTest(name = "values={0}")
    @EnumSource(MemoryScheme.class)
    void aDeserializerThatAccessesItsOwnKeyFailsInsteadOfHanging(MemoryScheme scheme) {
        AtomicReference<Runnable> inDeserializer = new AtomicReference<>();
        try (OakMap<Integer, Long> map = TestMaps.builder(reentrantValues(inDeserializer), 8)
                .keyMemory(scheme).valueMemory(scheme).build()) {
            TreeMap<Integer, Long> model = new TreeMap<>();
            for (int k = 0; k < 50; k++) {
                map.put(k, 10L * k);
                model.put(k, 10L * k);
            }
            Map<String, Executable> cases = new java.util.LinkedHashMap<>();
            Map<String, Integer> keyOf = new java.util.LinkedHashMap<>();
            Map<String, Consumer<Integer>> inside = Map.of(
                    "reading", k -> map.get(k),
                    "writing", k -> map.put(k, -1L),
                    "removing", k -> map.remove(k));
            for (Map.Entry<String, Consumer<Integer>> in : inside.entrySet()) {
                String how = " whose deserializer is " + in.getKey() + " its key";
                addCase(cases, keyOf, "put" + how, 10, () -> map.put(10, 1L));
                addCase(cases, keyOf, "remove" + how, 20, () -> map.remove(20));
                addCase(cases, keyOf, "remove(k, v)" + how, 30, () -> map.remove(30, 300L));
                addCase(cases, keyOf, "firstEntry" + how, 0, map::firstEntry);
                addCase(cases, keyOf, "lastEntry" + how, 49, map::lastEntry);
                addCase(cases, keyOf, "ceilingEntry" + how, 40, () -> map.ceilingEntry(40));
                addCase(cases, keyOf, "descending floorEntry" + how, 45, () -> map.descendingMap().floorEntry(45));
                for (Map.Entry<String, Executable> c : cases.entrySet()) {
                    if (c.getKey().endsWith(how)) {
                        int k = keyOf.get(c.getKey());
                        Executable op = c.getValue();
                        c.setValue(() -> {
                            inDeserializer.set(() -> in.getValue().accept(k));
                            op.execute();
                        });
                    }
                }
            }
            List<String> failures = new ArrayList<>();
            for (Map.Entry<String, Executable> c : cases.entrySet()) {
                int k = keyOf.get(c.getKey());
                try {
                    if (c.getKey().contains("Entry") && c.getKey().contains("reading")) {
                        // a read inside a read waits for nothing: it works
                        assertTimeoutPreemptively(Duration.ofSeconds(10), c.getValue(), "a read inside a read");
                    } else {
                        IllegalStateException e = assertTimeoutPreemptively(Duration.ofSeconds(10),
                                () -> assertThrows(IllegalStateException.class, c.getValue()), "must fail, not hang");
                        assertTrue(e.getMessage().contains("same key"), e.getMessage());
                    }
                    assertEquals(model.get(k), map.get(k), "the mapping is unchanged");
                    // and not locked: another thread updates it at once
                    Long updated = CompletableFuture.supplyAsync(() -> map.merge(k, 1L, Long::sum))
                            .get(10, TimeUnit.SECONDS);
                    assertEquals(model.get(k) + 1, updated);
                    model.put(k, updated);
                } catch (Throwable t) {
                    failures.add(scheme + ", " + c.getKey() + ": " + t);
                } finally {
                    inDeserializer.set(null);
                }
            }
            if (!failures.isEmpty()) {
                fail(failures.size() + " of " + cases.size() + " cases failed:\n  " + String.join("\n  ", failures));
            }
            assertEquals(model, new TreeMap<>(map));
        }
    }

    private static void addCase(Map<String, Executable> cases, Map<String, Integer> keyOf, String name, int key,
                                Executable op) {
        cases.put(name, op);
        keyOf.put(name, key);
    }

    /** A value its serializer fails on, and one that claims more bytes than the map's capacity. */
    private static final long FAILS = -1L;
    private static final long HUGE = -2L;

    private static final OakSerializer<Long> FAILING_VALUES = new OakSerializer<>() {
        @Override
        public void serialize(Long v, OakScopedWriteBuffer target) {
            if (v == FAILS) {
                throw new IllegalStateException("value serializer failure injected by the test");
            }
            target.putLong(0, v);
        }

        @Override
        public Long deserialize(OakScopedReadBuffer source) {
            return source.getLong(0);
        }

        @Override
        public int calculateSize(Long v) {
            return v == HUGE ? 4 << 20 : 8;
        }
    };

    /**
     * Insertions of absent keys that insert nothing: a compute whose function returns null or
     * throws, a value whose serializer fails or that does not fit in the capacity, through every
     * entry point that may insert. They linked the key before they had the value, and under
     * GROW_ONLY keys a linked key's memory is never given back: each distinct key tried held its
     * bytes for good (127,000 such calls filled a 1 MiB map, which then refused every insertion).
     * Now the key is linked only with a value to install: they leave the memory in use, the
     * mappings and the size exactly as they were, and the map takes new keys up to its capacity.
     */
    @Test
    void insertionsThatInsertNothingHoldNoMemoryUnderGrowOnlyKeys() {
        try (OakMap<Integer, Long> map = TestMaps.builder(FAILING_VALUES, 8).keyMemory(MemoryScheme.GROW_ONLY)
                .valueMemory(MemoryScheme.GROW_ONLY).memoryCapacity(1 << 20).blockSize(1 << 18).build()) {
            TreeMap<Integer, Long> model = new TreeMap<>();
            for (int k = 0; k < 1000; k += 10) {
                map.put(k, (long) k);
                model.put(k, (long) k);
            }
            long used = map.memoryUsed();
            OakZeroCopyMap<Integer, Long> zc = map.zc();
            Map<String, Consumer<Integer>> nothing = new java.util.LinkedHashMap<>();
            nothing.put("compute returning null", k -> assertEquals(null, map.compute(k, (x, v) -> null)));
            nothing.put("computeIfAbsent returning null", k -> assertEquals(null, map.computeIfAbsent(k, x -> null)));
            nothing.put("compute throwing", k -> assertThrows(ArithmeticException.class, () -> map.compute(k, (x, v) -> {
                throw new ArithmeticException("injected by the test");
            })));
            nothing.put("compute of a failing value", k -> assertThrows(OakSerializationException.class,
                    () -> map.compute(k, (x, v) -> FAILS)));
            nothing.put("merge of a failing value", k -> assertThrows(OakSerializationException.class,
                    () -> map.merge(k, FAILS, Long::sum)));
            nothing.put("putIfAbsent of a failing value", k -> assertThrows(OakSerializationException.class,
                    () -> map.putIfAbsent(k, FAILS)));
            nothing.put("computeIfAbsent of a failing value", k -> assertThrows(OakSerializationException.class,
                    () -> map.computeIfAbsent(k, x -> FAILS)));
            nothing.put("zc.putIfAbsent of a failing value", k -> assertThrows(OakSerializationException.class,
                    () -> zc.putIfAbsent(k, FAILS)));
            nothing.put("zc.putIfAbsentComputeIfPresent of a failing value", k -> assertThrows(
                    OakSerializationException.class, () -> zc.putIfAbsentComputeIfPresent(k, FAILS, b -> { })));
            nothing.put("compute of a value beyond capacity", k -> assertThrows(OakOutOfMemoryException.class,
                    () -> map.compute(k, (x, v) -> HUGE)));
            nothing.put("merge of a value beyond capacity", k -> assertThrows(OakOutOfMemoryException.class,
                    () -> map.merge(k, HUGE, Long::sum)));
            nothing.put("putIfAbsent of a value beyond capacity", k -> assertThrows(OakOutOfMemoryException.class,
                    () -> map.putIfAbsent(k, HUGE)));
            nothing.put("zc.putIfAbsentComputeIfPresent of a value beyond capacity", k -> assertThrows(
                    OakOutOfMemoryException.class, () -> zc.putIfAbsentComputeIfPresent(k, HUGE, b -> { })));
            List<String> failures = new ArrayList<>();
            for (Map.Entry<String, Consumer<Integer>> c : nothing.entrySet()) {
                for (int k = 1; k < 1000; k++) { // every absent key between the present ones
                    if (k % 10 != 0) {
                        c.getValue().accept(k);
                    }
                }
                if (map.memoryUsed() != used) {
                    failures.add(c.getKey() + " on 900 absent keys: memory in use went from " + used + " to "
                            + map.memoryUsed());
                    used = map.memoryUsed();
                }
                if (!model.equals(new TreeMap<>(map)) || map.size() != model.size()) {
                    failures.add(c.getKey() + ": the mappings changed");
                }
            }
            if (!failures.isEmpty()) {
                fail(String.join("\n", failures));
            }
            for (int k = 0; k < 1000; k++) { // and the absent keys insert normally
                if (k % 10 != 0) {
                    assertEquals(k % 3 == 0 ? null : 1000L + k, map.compute(k, (x, v) -> x % 3 == 0 ? null : 1000L + x));
                    if (k % 3 != 0) {
                        model.put(k, 1000L + k);
                    }
                }
            }
            assertEquals(model, new TreeMap<>(map));
            assertEquals(model.size(), map.size());
        }
    }

    /**
     * The key sets' remove needs no value, and no longer reads one: a mapping whose value its
     * deserializer cannot read is removed through any key set (before, the removal deserialized
     * the old value and failed with the deserializer's exception, leaving the mapping).
     */
    @Test
    void keySetRemovalsDoNotReadTheValue() {
        AtomicReference<Runnable> inDeserializer = new AtomicReference<>();
        try (OakMap<Integer, Long> m = new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER,
                reentrantValues(inDeserializer), OakCommonTypes.INTEGER_COMPARATOR).build()) {
            for (int k = 0; k < 4; k++) {
                m.put(k, (long) k);
            }
            inDeserializer.set(() -> {
                throw new IllegalStateException("unreadable value");
            });
            assertTrue(m.keySet().remove(0));
            assertTrue(m.descendingKeySet().remove(1));
            assertTrue(m.navigableKeySet().headSet(3).remove(2));
            assertFalse(m.navigableKeySet().headSet(3).remove(3)); // out of the view's range
            assertFalse(m.keySet().remove(9));
            assertTrue(inDeserializer.getAndSet(null) != null, "no value was deserialized");
            assertEquals(Map.of(3, 3L), Map.copyOf(m));
        }
    }

    /**
     * A comparator whose {@code keyPrefix} breaks its contract by reversing the key order (while
     * agreeing with {@code serializedKeyPrefix}, so the map's sample check cannot tell). Results
     * may then be wrong, but the map must not hang. Under lock-based keys and values, seed 5 of
     * this mix hung every scan after the pollFirstEntry of step 58, spinning in
     * {@code Cursor.advanceOnce}: each re-location read a key whose slice was deleted
     * ({@code StaleKeyException}) and re-located again (seeds 0, 2 and 3, each after a
     * pollFirstEntry too, deleted the minimum key of a chunk still in the index instead, which the
     * index's searches read on a prefix tie). The garbled lists had led a rebalance to hand the
     * entry holding the minimum key that its first replacement inherits to a later replacement, so
     * two chunks referenced one key slice, and the rebalance that dropped it from one deleted it
     * under the other (under Nova keys, a double deletion). A rebalance now puts that entry in the
     * first replacement (see {@code Rebalancer}, "Key ownership"), so a contract-breaking prefix
     * can give wrong answers but no chunk links a deleted key: under each reclaiming scheme and
     * under grow-only keys, these seeds run to the end and a full scan each way finishes.
     */
    @ParameterizedTest
    @EnumSource(value = MemoryScheme.class, names = {"LOCK_BASED", "NOVA", "GROW_ONLY"})
    void aKeyPrefixThatReversesTheOrderDoesNotHangScans(MemoryScheme scheme) {
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            for (int seed : new int[] {5, 0, 2, 3}) {
                try (OakMap<Integer, Long> map = reversedPrefixMap(scheme, 4)) {
                    java.util.Random rnd = new java.util.Random(seed);
                    for (int i = 0; i < 5000; i++) {
                        anyOperation(map, rnd, i);
                    }
                    scanBothWays(map);
                }
            }
        });
    }

    /**
     * The same comparator and mix on three threads at once, six seeded rounds per scheme: no
     * operation hangs, no internal assertion trips, and full scans finish afterwards. Before the
     * rebalancer kept one owner per key slice, the LOCK_BASED run hung (the 60 s timeout) and the
     * NOVA run tripped "key slice deleted twice" in its first round.
     */
    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void aKeyPrefixThatReversesTheOrderDoesNotHangConcurrentUse(MemoryScheme scheme) {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            for (int round = 0; round < 6; round++) {
                try (OakMap<Integer, Long> map = reversedPrefixMap(scheme, 4 + round % 3)) {
                    java.util.concurrent.ConcurrentLinkedQueue<Throwable> failures = new java.util.concurrent.ConcurrentLinkedQueue<>();
                    List<Thread> threads = new ArrayList<>();
                    for (int t = 0; t < 3; t++) {
                        long seed = 10L * round + t;
                        threads.add(Thread.ofPlatform().daemon().start(() -> {
                            java.util.Random rnd = new java.util.Random(seed);
                            try {
                                for (int i = 0; i < 20_000; i++) {
                                    anyOperation(map, rnd, i);
                                }
                            } catch (Throwable e) { // an internal assertion, not a wrong answer
                                failures.add(e);
                            }
                        }));
                    }
                    for (Thread t : threads) {
                        t.join();
                    }
                    if (!failures.isEmpty()) {
                        fail(scheme + ", round " + round + ": " + failures.peek(), failures.peek());
                    }
                    scanBothWays(map);
                }
            }
        });
    }

    /**
     * A comparator whose key prefixes reverse the key order (see the tests above), agreeing with
     * its serialized prefixes.
     */
    private static final OakComparator<Integer> REVERSED_PREFIX = new TestMaps.IntComparator() {
        @Override
        public long keyPrefix(Integer k) {
            return -k;
        }

        @Override
        public long serializedKeyPrefix(OakScopedReadBuffer b) {
            return -TestMaps.readIntKey(b);
        }
    };

    private static OakMap<Integer, Long> reversedPrefixMap(MemoryScheme scheme, int chunk) {
        return new OakMapBuilder<>(TestMaps.INT_KEY, TestMaps.LONG_VAL, REVERSED_PREFIX)
                .chunkCapacity(chunk).memoryCapacity(8 << 20).blockSize(64 << 10)
                .keyMemory(scheme).valueMemory(scheme).build();
    }

    /** One random operation of the mix over keys 0..299; the exceptions of a broken comparator are allowed. */
    private static void anyOperation(OakMap<Integer, Long> map, java.util.Random rnd, int i) {
        int k = rnd.nextInt(300);
        int op = rnd.nextInt(14);
        try {
            switch (op) {
                case 0, 1, 2 -> map.put(k, (long) i);
                case 3 -> map.remove(k);
                case 4 -> map.get(k);
                case 5 -> map.ceilingEntry(k);
                case 6 -> map.floorKey(k);
                case 7 -> map.higherEntry(k);
                case 8 -> map.lowerKey(k);
                case 9 -> map.subMap(k, k + 50).entrySet().forEach(e -> { });
                case 10 -> map.descendingMap().keySet().forEach(e -> { });
                case 11 -> map.pollFirstEntry();
                case 12 -> map.compute(k, (x, v) -> v == null ? 1L : null);
                default -> map.zc().putIfAbsentComputeIfPresent(k, 1L, b -> { });
            }
        } catch (RuntimeException wrongButAllowed) {
            // a comparator that breaks its contract may get any exception, not a hang
        }
    }

    private static void scanBothWays(OakMap<Integer, Long> map) {
        try {
            map.keySet().forEach(k -> { });
            map.descendingMap().keySet().forEach(k -> { });
        } catch (RuntimeException wrongButAllowed) {
            // as above
        }
    }
}
