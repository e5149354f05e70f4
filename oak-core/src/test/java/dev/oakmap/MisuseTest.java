package dev.oakmap;

import dev.oakmap.TestMaps.Blob;
import dev.oakmap.TestMaps.Task;
import dev.oakmap.common.OakCommonTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Bad input and misuse: every case expects a clear exception and a map that afterwards holds
 * exactly what it held before (compared with a {@link TreeMap} snapshot) and is still usable.
 */
class MisuseTest {

    private static final int CHUNK = 8;

    static Stream<Long> seeds() {
        return java.util.Arrays.stream(TestMaps.seeds(11L, 0xFACEL, 31337L)).boxed();
    }

    // ------------------------------------------------------------------------------------------
    // helpers
    // ------------------------------------------------------------------------------------------

    /** Keys 0, 2, ..., 2(n-1) mapped to 10 * key, in the map and in the returned model. */
    private static TreeMap<Integer, Long> fill(ConcurrentNavigableMap<Integer, Long> map, int n) {
        TreeMap<Integer, Long> model = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            map.put(2 * i, 20L * i);
            model.put(2 * i, 20L * i);
        }
        return model;
    }

    /** Quick check: the map's entries, in both directions, and its size, equal the model's. */
    private static <V> void assertHolds(String ctx, ConcurrentNavigableMap<Integer, V> map,
                                        NavigableMap<Integer, V> model) {
        assertEquals(TestMaps.entries(model.entrySet()), TestMaps.entries(map.entrySet()), ctx + ": entries changed");
        assertEquals(TestMaps.entries(model.descendingMap().entrySet()),
                TestMaps.entries(map.descendingMap().entrySet()), ctx + ": descending entries changed");
        assertEquals(model.size(), map.size(), ctx + ": size changed");
        for (Map.Entry<Integer, V> e : model.entrySet()) {
            assertEquals(e.getValue(), map.get(e.getKey()), ctx + ": get(" + e.getKey() + ")");
        }
    }

    /** The map still takes an insert and a remove of a fresh key, and then holds the model. */
    private static void assertUsable(String ctx, OakMap<Integer, Long> map, NavigableMap<Integer, Long> model) {
        int probe = -12345;
        assertNull(map.put(probe, 4242L), ctx + ": probe put");
        assertEquals(4242L, map.get(probe), ctx + ": probe get");
        assertTrue(map.zc().computeIfPresent(probe, b -> b.putLong(0, b.getLong(0) + 1)), ctx + ": probe zc compute");
        assertEquals(4243L, map.remove(probe), ctx + ": probe remove");
        assertHolds(ctx, map, model);
    }

    private static OakMap<Integer, Long> longMap(OakSerializer<Integer> ks, OakSerializer<Long> vs,
                                                 OakComparator<Integer> cmp) {
        return new OakMapBuilder<>(ks, vs, cmp).chunkCapacity(CHUNK).memoryCapacity(TestMaps.SMALL_CAPACITY)
                .blockSize(TestMaps.SMALL_BLOCK).build();
    }

    /** Runs {@code cases}, collecting every failure, then fails with all of them. */
    private static void runCases(String what, Map<String, Executable> cases, Runnable afterEach) {
        List<String> failures = new ArrayList<>();
        for (Map.Entry<String, Executable> c : cases.entrySet()) {
            try {
                c.getValue().execute();
                afterEach.run();
            } catch (Throwable t) {
                failures.add(c.getKey() + ": " + t);
            }
        }
        if (!failures.isEmpty()) {
            fail(what + ": " + failures.size() + " of " + cases.size() + " cases failed:\n  "
                    + String.join("\n  ", failures));
        }
    }

    // ------------------------------------------------------------------------------------------
    // nulls
    // ------------------------------------------------------------------------------------------

    @Test
    void nullArgumentsThrowNpeAndChangeNothing() {
        try (OakMap<Integer, Long> map = TestMaps.intLongMap(CHUNK)) {
            TreeMap<Integer, Long> model = fill(map, 100);
            OakZeroCopyMap<Integer, Long> zc = map.zc();
            BiFunction<Integer, Long, Long> bf = (k, v) -> 1L;
            BiFunction<Long, Long, Long> mf = (a, b) -> 1L;
            Function<Integer, Long> f = k -> 1L;
            Consumer<OakScopedWriteBuffer> c = b -> b.putLong(0, 1L);
            ConcurrentNavigableMap<Integer, Long> sub = map.subMap(0, 100);
            ConcurrentNavigableMap<Integer, Long> desc = map.descendingMap();
            Map<String, Executable> cases = new java.util.LinkedHashMap<>();
            cases.put("get(null)", () -> map.get(null));
            cases.put("containsKey(null)", () -> map.containsKey(null));
            cases.put("containsValue(null)", () -> map.containsValue(null));
            cases.put("getOrDefault(null,1)", () -> map.getOrDefault(null, 1L));
            cases.put("put(null,1)", () -> map.put(null, 1L));
            cases.put("put(present,null)", () -> map.put(2, null));
            cases.put("put(absent,null)", () -> map.put(3, null));
            cases.put("putIfAbsent(null,1)", () -> map.putIfAbsent(null, 1L));
            cases.put("putIfAbsent(absent,null)", () -> map.putIfAbsent(3, null));
            cases.put("putIfAbsent(present,null)", () -> map.putIfAbsent(2, null));
            cases.put("remove(null)", () -> map.remove(null));
            cases.put("remove(null,1)", () -> map.remove(null, 1L));
            cases.put("replace(null,1)", () -> map.replace(null, 1L));
            cases.put("replace(present,null)", () -> map.replace(2, null));
            cases.put("replace(null,1,2)", () -> map.replace(null, 1L, 2L));
            cases.put("replace(present,null,1)", () -> map.replace(2, null, 1L));
            cases.put("replace(present,old,null)", () -> map.replace(2, 20L, null));
            cases.put("compute(null,f)", () -> map.compute(null, bf));
            cases.put("compute(present,null)", () -> map.compute(2, null));
            cases.put("compute(absent,null)", () -> map.compute(3, null));
            cases.put("computeIfAbsent(null,f)", () -> map.computeIfAbsent(null, f));
            cases.put("computeIfAbsent(absent,null)", () -> map.computeIfAbsent(3, null));
            cases.put("computeIfAbsent(present,null)", () -> map.computeIfAbsent(2, null));
            cases.put("computeIfPresent(null,f)", () -> map.computeIfPresent(null, bf));
            cases.put("computeIfPresent(present,null)", () -> map.computeIfPresent(2, null));
            cases.put("computeIfPresent(absent,null)", () -> map.computeIfPresent(3, null));
            cases.put("merge(null,1,f)", () -> map.merge(null, 1L, mf));
            cases.put("merge(present,null,f)", () -> map.merge(2, null, mf));
            cases.put("merge(absent,null,f)", () -> map.merge(3, null, mf));
            cases.put("merge(present,1,null)", () -> map.merge(2, 1L, null));
            cases.put("merge(absent,1,null)", () -> map.merge(3, 1L, null));
            cases.put("ceilingKey(null)", () -> map.ceilingKey(null));
            cases.put("floorKey(null)", () -> map.floorKey(null));
            cases.put("higherKey(null)", () -> map.higherKey(null));
            cases.put("lowerKey(null)", () -> map.lowerKey(null));
            cases.put("ceilingEntry(null)", () -> map.ceilingEntry(null));
            cases.put("floorEntry(null)", () -> map.floorEntry(null));
            cases.put("higherEntry(null)", () -> map.higherEntry(null));
            cases.put("lowerEntry(null)", () -> map.lowerEntry(null));
            cases.put("subMap(null,10)", () -> map.subMap(null, 10));
            cases.put("subMap(0,null)", () -> map.subMap(0, null));
            cases.put("headMap(null)", () -> map.headMap(null));
            cases.put("tailMap(null)", () -> map.tailMap(null));
            cases.put("forEach(null)", () -> map.forEach(null));
            cases.put("replaceAll(null)", () -> map.replaceAll(null));
            cases.put("keySet().contains(null)", () -> map.keySet().contains(null));
            cases.put("keySet().remove(null)", () -> map.keySet().remove(null));
            cases.put("sub.get(null)", () -> sub.get(null));
            cases.put("sub.put(null,1)", () -> sub.put(null, 1L));
            cases.put("sub.put(present,null)", () -> sub.put(2, null));
            cases.put("sub.compute(present,null)", () -> sub.compute(2, null));
            cases.put("sub.remove(null)", () -> sub.remove(null));
            cases.put("desc.put(null,1)", () -> desc.put(null, 1L));
            cases.put("desc.put(present,null)", () -> desc.put(2, null));
            cases.put("desc.get(null)", () -> desc.get(null));
            cases.put("zc.get(null)", () -> zc.get(null));
            cases.put("zc.put(null,1)", () -> zc.put(null, 1L));
            cases.put("zc.put(present,null)", () -> zc.put(2, null));
            cases.put("zc.put(absent,null)", () -> zc.put(3, null));
            cases.put("zc.putIfAbsent(null,1)", () -> zc.putIfAbsent(null, 1L));
            cases.put("zc.putIfAbsent(absent,null)", () -> zc.putIfAbsent(3, null));
            cases.put("zc.remove(null)", () -> zc.remove(null));
            cases.put("zc.computeIfPresent(null,c)", () -> zc.computeIfPresent(null, c));
            cases.put("zc.computeIfPresent(present,null)", () -> zc.computeIfPresent(2, null));
            cases.put("zc.computeIfPresent(absent,null)", () -> zc.computeIfPresent(3, null));
            cases.put("zc.putIfAbsentComputeIfPresent(null,1,c)", () -> zc.putIfAbsentComputeIfPresent(null, 1L, c));
            cases.put("zc.putIfAbsentComputeIfPresent(absent,null,c)", () -> zc.putIfAbsentComputeIfPresent(3, null, c));
            cases.put("zc.putIfAbsentComputeIfPresent(present,1,null)", () -> zc.putIfAbsentComputeIfPresent(2, 1L, null));
            cases.put("zc.putIfAbsentComputeIfPresent(absent,1,null)", () -> zc.putIfAbsentComputeIfPresent(3, 1L, null));
            cases.put("zc.get(present).transform(null)", () -> zc.get(2).transform(null));
            Map<String, Executable> wrapped = new java.util.LinkedHashMap<>();
            cases.forEach((name, e) -> wrapped.put(name, () -> assertThrows(NullPointerException.class, e)));
            runCases("null arguments", wrapped, () -> assertHolds("after null case", map, model));
            TestMaps.assertSameContents("after all null cases", map, model, new Random(1), 200);
            assertUsable("after all null cases", map, model);
        }
    }

    // ------------------------------------------------------------------------------------------
    // misbehaving serializers
    // ------------------------------------------------------------------------------------------

    static final int KEY_THROWS = 1001;
    static final int KEY_SIZE_THROWS = 1003;
    static final int KEY_OVERFLOWS = 1005;
    static final int KEY_NEGATIVE_SIZE = 1007;

    static final long VAL_THROWS = 666_666L;
    static final long VAL_SIZE_THROWS = 777_777L;
    static final long VAL_OVERFLOWS = 888_888L;
    static final long VAL_NEGATIVE_SIZE = 999_999L;

    static final class Poison extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Poison(String m) {
            super(m);
        }
    }

    static final OakSerializer<Integer> BAD_KEYS = new OakSerializer<>() {
        @Override
        public void serialize(Integer key, OakScopedWriteBuffer target) {
            if (key == KEY_THROWS) {
                target.putInt(0, 0xDEAD);
                throw new Poison("key serializer throws for " + key);
            }
            if (key == KEY_OVERFLOWS) {
                target.putInt(0, key ^ Integer.MIN_VALUE);
                target.putLong(4, 0xDEADBEEFDEADBEEFL); // 8 bytes past the promised 4
                return;
            }
            TestMaps.INT_KEY.serialize(key, target);
        }

        @Override
        public Integer deserialize(OakScopedReadBuffer source) {
            return TestMaps.INT_KEY.deserialize(source);
        }

        @Override
        public int calculateSize(Integer key) {
            if (key == KEY_SIZE_THROWS) {
                throw new Poison("key calculateSize throws for " + key);
            }
            if (key == KEY_NEGATIVE_SIZE) {
                return -4;
            }
            return 4;
        }
    };

    static final OakSerializer<Long> BAD_VALUES = new OakSerializer<>() {
        @Override
        public void serialize(Long v, OakScopedWriteBuffer target) {
            if (v == VAL_THROWS) {
                target.putLong(0, 0xBADL);
                throw new Poison("value serializer throws for " + v);
            }
            if (v == VAL_OVERFLOWS) {
                target.putLong(0, v);
                for (int i = 8; i < 64; i += 8) {
                    target.putLong(i, 0xDEADBEEFDEADBEEFL); // past the promised 8 bytes
                }
                return;
            }
            target.putLong(0, v);
        }

        @Override
        public Long deserialize(OakScopedReadBuffer source) {
            return source.getLong(0);
        }

        @Override
        public int calculateSize(Long v) {
            if (v == VAL_SIZE_THROWS) {
                throw new Poison("value calculateSize throws for " + v);
            }
            if (v == VAL_NEGATIVE_SIZE) {
                return -8;
            }
            return 8;
        }
    };

    /** Asserts the documented OakSerializationException (the user's failure may be its cause). */
    private static void assertSerializationFailure(String ctx, Executable e) {
        Throwable t = assertThrows(Throwable.class, e, ctx + ": expected an exception");
        if (!(t instanceof OakSerializationException)) {
            AssertionError err = new AssertionError(ctx + ": expected OakSerializationException (as "
                    + "OakSerializer/OakSerializationException document) but got " + t);
            err.initCause(t);
            throw err;
        }
    }

    @Test
    void misbehavingKeySerializerFailsCleanly() {
        try (OakMap<Integer, Long> map = longMap(BAD_KEYS, TestMaps.LONG_VAL, TestMaps.INT_CMP)) {
            TreeMap<Integer, Long> model = new TreeMap<>();
            // neighbours on both sides of the bad keys
            for (int k = 980; k < 1030; k += 2) {
                map.put(k, (long) k * 10);
                model.put(k, (long) k * 10);
            }
            OakZeroCopyMap<Integer, Long> zc = map.zc();
            Map<String, Executable> cases = new java.util.LinkedHashMap<>();
            for (int bad : new int[]{KEY_THROWS, KEY_SIZE_THROWS, KEY_OVERFLOWS, KEY_NEGATIVE_SIZE}) {
                String b = "key " + bad + " ";
                cases.put(b + "put", () -> assertSerializationFailure(b + "put", () -> map.put(bad, 1L)));
                cases.put(b + "putIfAbsent", () -> assertSerializationFailure(b + "putIfAbsent", () -> map.putIfAbsent(bad, 1L)));
                cases.put(b + "computeIfAbsent", () -> assertSerializationFailure(b + "computeIfAbsent",
                        () -> map.computeIfAbsent(bad, k -> 1L)));
                cases.put(b + "compute", () -> assertSerializationFailure(b + "compute", () -> map.compute(bad, (k, v) -> 1L)));
                cases.put(b + "merge", () -> assertSerializationFailure(b + "merge", () -> map.merge(bad, 1L, Long::sum)));
                cases.put(b + "zc.put", () -> assertSerializationFailure(b + "zc.put", () -> zc.put(bad, 1L)));
                cases.put(b + "zc.putIfAbsent", () -> assertSerializationFailure(b + "zc.putIfAbsent",
                        () -> zc.putIfAbsent(bad, 1L)));
                cases.put(b + "zc.putIfAbsentComputeIfPresent", () -> assertSerializationFailure(
                        b + "zc.putIfAbsentComputeIfPresent", () -> zc.putIfAbsentComputeIfPresent(bad, 1L, x -> { })));
                cases.put(b + "absent afterwards", () -> {
                    assertNull(map.get(bad));
                    assertFalse(map.containsKey(bad));
                    assertNull(map.remove(bad));
                });
            }
            runCases("bad key serializer", cases, () -> assertHolds("after bad key", map, model));
            assertUsable("bad key serializer", map, model);
        }
    }

    @Test
    void misbehavingValueSerializerFailsCleanly() {
        try (OakMap<Integer, Long> map = longMap(TestMaps.INT_KEY, BAD_VALUES, TestMaps.INT_CMP)) {
            TreeMap<Integer, Long> model = fill(map, 100);
            OakZeroCopyMap<Integer, Long> zc = map.zc();
            Map<String, Executable> cases = new java.util.LinkedHashMap<>();
            for (long bad : new long[]{VAL_THROWS, VAL_SIZE_THROWS, VAL_OVERFLOWS, VAL_NEGATIVE_SIZE}) {
                for (int key : new int[]{50, 51}) { // present, absent, between present neighbours
                    String b = "value " + bad + " key " + key + " ";
                    cases.put(b + "put", () -> assertSerializationFailure(b + "put", () -> map.put(key, bad)));
                    cases.put(b + "putIfAbsent", () -> {
                        if (key == 51) {
                            assertSerializationFailure(b + "putIfAbsent", () -> map.putIfAbsent(key, bad));
                        }
                    });
                    cases.put(b + "replace", () -> {
                        if (key == 50) {
                            assertSerializationFailure(b + "replace", () -> map.replace(key, bad));
                            assertSerializationFailure(b + "replace(k,o,n)", () -> map.replace(key, 500L, bad));
                        }
                    });
                    cases.put(b + "compute", () -> assertSerializationFailure(b + "compute", () -> map.compute(key, (k, v) -> bad)));
                    cases.put(b + "computeIfAbsent/IfPresent", () -> {
                        if (key == 51) {
                            assertSerializationFailure(b + "computeIfAbsent", () -> map.computeIfAbsent(key, k -> bad));
                        } else {
                            assertSerializationFailure(b + "computeIfPresent", () -> map.computeIfPresent(key, (k, v) -> bad));
                        }
                    });
                    cases.put(b + "merge", () -> {
                        if (key == 51) {
                            assertSerializationFailure(b + "merge", () -> map.merge(key, bad, Long::sum));
                        } else {
                            assertSerializationFailure(b + "merge", () -> map.merge(key, 1L, (x, y) -> bad));
                        }
                    });
                    cases.put(b + "zc.put", () -> assertSerializationFailure(b + "zc.put", () -> zc.put(key, bad)));
                    cases.put(b + "zc.putIfAbsent", () -> {
                        if (key == 51) {
                            assertSerializationFailure(b + "zc.putIfAbsent", () -> zc.putIfAbsent(key, bad));
                            assertSerializationFailure(b + "zc.putIfAbsentComputeIfPresent",
                                    () -> zc.putIfAbsentComputeIfPresent(key, bad, x -> { }));
                        }
                    });
                }
            }
            // an in-place compute that writes past the value's 8 bytes
            cases.put("zc.computeIfPresent writing past capacity", () -> {
                assertThrows(IndexOutOfBoundsException.class,
                        () -> zc.computeIfPresent(50, w -> w.putLong(4, -1L)));
                assertThrows(IndexOutOfBoundsException.class,
                        () -> zc.computeIfPresent(50, w -> w.putBytes(0, new byte[16], 0, 16)));
                assertThrows(IndexOutOfBoundsException.class,
                        () -> zc.putIfAbsentComputeIfPresent(50, 1L, w -> w.put(8, (byte) 1)));
            });
            runCases("bad value serializer", cases, () -> assertHolds("after bad value", map, model));
            assertUsable("bad value serializer", map, model);
        }
    }

    // ------------------------------------------------------------------------------------------
    // a compute function that accesses its own key
    // ------------------------------------------------------------------------------------------

    /**
     * A function passed to an atomic update runs under its value's lock; one that reads or writes
     * the same key would wait for itself. It fails with IllegalStateException instead of hanging,
     * the update is undone, and the key stays usable, under every value scheme.
     */
    @ParameterizedTest(name = "values={0}")
    @EnumSource(MemoryScheme.class)
    void aComputeFunctionThatAccessesItsOwnKeyFailsInsteadOfHanging(MemoryScheme scheme) {
        try (OakMap<Integer, Long> map = TestMaps.builder(TestMaps.LONG_VAL, CHUNK).valueMemory(scheme).build()) {
            TreeMap<Integer, Long> model = fill(map, 20);
            OakZeroCopyMap<Integer, Long> zc = map.zc();
            Map<String, Executable> selfAccess = new java.util.LinkedHashMap<>();
            selfAccess.put("compute reading its key", () -> map.compute(2, (k, v) -> v + map.get(2)));
            selfAccess.put("compute writing its key", () -> map.compute(4, (k, v) -> map.put(4, 1L)));
            selfAccess.put("computeIfPresent removing its key", () -> map.computeIfPresent(6, (k, v) -> map.remove(6)));
            selfAccess.put("merge reading its key", () -> map.merge(8, 1L, (a, b) -> a + map.get(8)));
            selfAccess.put("zc.computeIfPresent reading its key", () -> zc.computeIfPresent(10, b -> {
                b.putLong(0, -5L);
                b.putLong(0, map.get(10));
            }));
            selfAccess.put("zc.putIfAbsentComputeIfPresent updating its key",
                    () -> zc.putIfAbsentComputeIfPresent(12, 1L, b -> zc.computeIfPresent(12, c -> c.putLong(0, 0L))));
            // under an optimistic scheme the read holds no lock: the write succeeded, spoiled the
            // read, and ran again at every retry of it, for ever (GROW_ONLY, NOVA)
            selfAccess.put("a zero-copy read's transform writing its key",
                    () -> zc.get(14).transform(b -> map.put(14, b.getLong(0) + 100)));
            selfAccess.put("a zero-copy read's transform removing its key",
                    () -> zc.get(16).transform(b -> map.remove(16)));
            selfAccess.put("a zero-copy read's transform updating its key in place",
                    () -> zc.get(18).transform(b -> zc.computeIfPresent(18, c -> c.putLong(0, 7L))));
            Map<String, Executable> cases = new java.util.LinkedHashMap<>();
            int key = 2;
            for (Map.Entry<String, Executable> c : selfAccess.entrySet()) {
                int k = key;
                key += 2;
                cases.put(c.getKey(), () -> {
                    IllegalStateException e = assertTimeoutPreemptively(
                            Duration.ofSeconds(30), () -> assertThrows(IllegalStateException.class, c.getValue()),
                            "must fail, not hang");
                    assertTrue(e.getMessage().contains("same key"), e.getMessage());
                    assertEquals(model.get(k), map.get(k), "the update is undone");
                    assertEquals(model.get(k) + 1, map.merge(k, 1L, Long::sum), "and the key usable");
                    model.put(k, model.get(k) + 1);
                });
            }
            runCases("self access, values " + scheme, cases, () -> assertHolds("after self access", map, model));
            // another key, read or written inside the function, is fine
            assertEquals(model.get(30) + model.get(32), map.compute(30, (k, v) -> v + map.get(32)));
            model.put(30, model.get(30) + model.get(32));
            assertTrue(zc.computeIfPresent(34, b -> b.putLong(0, map.put(32, 3L))));
            model.put(34, model.get(32));
            model.put(32, 3L);
            assertEquals(model.get(36), zc.get(36).transform(b -> {
                map.put(38, 5L); // another key, from a read's function
                return b.getLong(0);
            }));
            model.put(38, 5L);
            assertHolds("after access to other keys", map, model);
        }
    }

    /**
     * A function passed to an atomic update of one map may update another map, itself atomically:
     * each update is all or nothing on its own (an inner update that throws is undone while the
     * outer one goes on; an outer update that throws is undone while the inner one it ran stays),
     * also when both write through whole-value segments (each scope restores its own snapshot), and
     * waiting for the other map's lock, held by another thread, is a wait, not a self-access error.
     */
    @ParameterizedTest(name = "values={0}")
    @EnumSource(MemoryScheme.class)
    void computesNestedAcrossTwoMapsAreEachAllOrNothing(MemoryScheme scheme) throws Exception {
        try (OakMap<Integer, Long> a = TestMaps.builder(TestMaps.LONG_VAL, CHUNK).valueMemory(scheme).build();
             OakMap<Integer, Long> b = TestMaps.builder(TestMaps.LONG_VAL, CHUNK).valueMemory(scheme).build()) {
            TreeMap<Integer, Long> modelA = fill(a, 20);
            TreeMap<Integer, Long> modelB = fill(b, 20);
            int k = 6;
            // both commit
            assertTrue(a.zc().computeIfPresent(k, x -> {
                x.putLong(0, 100L);
                assertTrue(b.zc().computeIfPresent(k, y -> y.putLong(0, 200L)));
            }));
            modelA.put(k, 100L);
            modelB.put(k, 200L);
            // the inner one throws: undone, the outer one goes on and commits
            assertTrue(a.zc().computeIfPresent(k, x -> {
                x.putLong(0, 101L);
                RuntimeException inner = assertThrows(RuntimeException.class, () -> b.zc().computeIfPresent(k, y -> {
                    y.putLong(0, 999L);
                    throw new RuntimeException("inner");
                }));
                assertEquals("inner", inner.getMessage());
                assertEquals(200L, b.get(k), "the inner update is undone at once");
                x.putLong(0, 102L);
            }));
            modelA.put(k, 102L);
            // the outer one throws after the inner one committed: only the outer one is undone
            IllegalArgumentException outer = assertThrows(IllegalArgumentException.class,
                    () -> a.zc().computeIfPresent(k, x -> {
                        x.putLong(0, 103L);
                        assertTrue(b.zc().computeIfPresent(k, y -> y.putLong(0, 201L)));
                        throw new IllegalArgumentException("outer");
                    }));
            assertEquals("outer", outer.getMessage());
            modelB.put(k, 201L);
            // both write through whole-value segments, and both throw
            IllegalStateException both = assertThrows(IllegalStateException.class, () -> a.zc().computeIfPresent(k, x -> {
                x.writableSegment().set(ValueLayout.JAVA_LONG_UNALIGNED, 0, -1L);
                assertThrows(ArithmeticException.class, () -> b.zc().computeIfPresent(k, y -> {
                    y.writableSegment().set(ValueLayout.JAVA_LONG_UNALIGNED, 0, -2L);
                    throw new ArithmeticException("inner");
                }));
                x.writableSegment().set(ValueLayout.JAVA_LONG_UNALIGNED, 0, -3L);
                throw new IllegalStateException("outer");
            }));
            assertEquals("outer", both.getMessage());
            // the legacy API, nested the same way
            assertEquals(102L + 202L, a.compute(k, (key, v) -> v + b.merge(key, 1L, Long::sum)));
            modelA.put(k, 304L);
            modelB.put(k, 202L);
            assertHolds("map a after nested updates", a, modelA);
            assertHolds("map b after nested updates", b, modelB);

            // another thread holds b's lock of the key while this one, inside a's update, waits for it
            // (own threads: the common pool may have a single worker, which the holder would block)
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CompletableFuture<Boolean> holder = new CompletableFuture<>();
            Thread holderThread = new Thread(() -> {
                try {
                    holder.complete(b.zc().computeIfPresent(k, y -> {
                        holding.countDown();
                        try {
                            assertTrue(release.await(30, TimeUnit.SECONDS));
                        } catch (InterruptedException e) {
                            throw new AssertionError(e);
                        }
                        y.putLong(0, y.getLong(0) + 10);
                    }));
                } catch (Throwable t) {
                    holder.completeExceptionally(t);
                }
            });
            holderThread.start();
            assertTrue(holding.await(30, TimeUnit.SECONDS));
            Thread releaser = new Thread(() -> {
                try {
                    Thread.sleep(200); // long past the waiter's spinning, so it checks its own holds
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                release.countDown();
            });
            releaser.start();
            assertTimeoutPreemptively(Duration.ofSeconds(30), () -> assertTrue(a.zc().computeIfPresent(k, x -> {
                assertTrue(b.zc().computeIfPresent(k, y -> y.putLong(0, y.getLong(0) + 1)));
                x.putLong(0, x.getLong(0) + 1);
            })));
            assertTrue(holder.get(30, TimeUnit.SECONDS));
            releaser.join(30_000);
            modelA.put(k, 305L);
            modelB.put(k, 213L);
            assertHolds("map a after waiting for b", a, modelA);
            assertHolds("map b after waiting for b", b, modelB);
        }
    }

    // ------------------------------------------------------------------------------------------
    // a serializer that writes fewer bytes than it said
    // ------------------------------------------------------------------------------------------

    /**
     * ASCII string keys in fixed 16-byte slots: {@code calculateSize} always says 16, the
     * serializer writes the characters only and relies on the rest reading as zeros (as a
     * C-style string), and the comparator compares all 16 bytes. That is sloppy but legal: the
     * map must store a key exactly as written, zeros after it, also in memory that a removed key
     * of another length used before.
     */
    private static final OakSerializer<String> PADDED_KEY = new OakSerializer<>() {
        @Override
        public void serialize(String key, OakScopedWriteBuffer target) {
            for (int i = 0; i < key.length(); i++) {
                target.put(i, (byte) key.charAt(i));
            }
        }

        @Override
        public String deserialize(OakScopedReadBuffer source) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < source.capacity() && source.get(i) != 0; i++) {
                b.append((char) source.get(i));
            }
            return b.toString();
        }

        @Override
        public int calculateSize(String key) {
            return 16;
        }
    };

    private static final OakComparator<String> PADDED_CMP = new OakComparator<>() {
        private byte[] bytes(String k) {
            byte[] b = new byte[16];
            for (int i = 0; i < k.length(); i++) {
                b[i] = (byte) k.charAt(i);
            }
            return b;
        }

        private byte[] bytes(OakScopedReadBuffer b) {
            byte[] a = new byte[b.capacity()];
            b.getBytes(0, a, 0, a.length);
            return a;
        }

        @Override
        public int compareKeys(String a, String b) {
            return java.util.Arrays.compareUnsigned(bytes(a), bytes(b));
        }

        @Override
        public int compareSerializedKeys(OakScopedReadBuffer a, OakScopedReadBuffer b) {
            return java.util.Arrays.compareUnsigned(bytes(a), bytes(b));
        }

        @Override
        public int compareKeyAndSerializedKey(String a, OakScopedReadBuffer b) {
            return java.util.Arrays.compareUnsigned(bytes(a), bytes(b));
        }
    };

    /**
     * Keys and values whose serializers write fewer bytes than {@code calculateSize} said: the
     * bytes left out read as zeros, never as bytes of a mapping removed before, under every
     * scheme. Long keys and values are removed first (after in-place writes fill the values'
     * tails), so that their memory is reused by shorter ones.
     */
    @ParameterizedTest(name = "scheme={0}")
    @EnumSource(MemoryScheme.class)
    void bytesASerializerLeavesOutReadAsZeros(MemoryScheme scheme) {
        OakSerializer<Long> shortValue = new OakSerializer<>() {
            @Override
            public void serialize(Long v, OakScopedWriteBuffer target) {
                target.putLong(0, v); // of 16
            }

            @Override
            public Long deserialize(OakScopedReadBuffer source) {
                return source.getLong(0);
            }

            @Override
            public int calculateSize(Long v) {
                return 16;
            }
        };
        try (OakMap<String, Long> map = new OakMapBuilder<>(PADDED_KEY, shortValue, PADDED_CMP).chunkCapacity(CHUNK)
                .memoryCapacity(TestMaps.SMALL_CAPACITY).blockSize(TestMaps.SMALL_BLOCK)
                .keyMemory(scheme).valueMemory(scheme).build()) {
            int n = 3000;
            for (int i = 0; i < n; i++) {
                String k = String.format("%015d", i); // 15 characters
                map.put(k, (long) i);
                assertTrue(map.zc().computeIfPresent(k, b -> b.putLong(8, -1L))); // the tail, in place
            }
            for (int i = 0; i < n; i++) {
                map.remove(String.format("%015d", i));
            }
            TreeMap<String, Long> model = new TreeMap<>(PADDED_CMP::compareKeys);
            for (int i = 0; i < n; i++) {
                String k = Integer.toString(i); // shorter keys, in the same 16-byte slots
                map.put(k, (long) i);
                model.put(k, (long) i);
            }
            for (int i = 0; i < n; i++) {
                String k = Integer.toString(i);
                assertEquals((long) i, map.get(k), "get(" + k + ")");
                assertEquals(0L, map.zc().get(k).getLong(8), "the value's unwritten tail of " + k);
            }
            assertEquals(new ArrayList<>(model.keySet()), new ArrayList<>(map.keySet()));
        }
    }

    // ------------------------------------------------------------------------------------------
    // a deserializer that returns null
    // ------------------------------------------------------------------------------------------

    /** The common int serializer, except that it reads 7 back as null (a broken serializer). */
    private static final OakSerializer<Integer> NULL_FOR_SEVEN = new OakSerializer<>() {
        private final OakSerializer<Integer> ints = OakCommonTypes.INTEGER_SERIALIZER;

        @Override
        public void serialize(Integer v, OakScopedWriteBuffer b) {
            ints.serialize(v, b);
        }

        @Override
        public Integer deserialize(OakScopedReadBuffer b) {
            Integer v = ints.deserialize(b);
            return v == 7 ? null : v;
        }

        @Override
        public int calculateSize(Integer v) {
            return ints.calculateSize(v);
        }
    };

    /**
     * A key or value whose promised size cannot fit in one slice is the serializer's error,
     * reported before anything is allocated, under every scheme and whatever capacity is left. A
     * slice, header included, must fit in the largest block (128 MiB); header-less keys keep their
     * length in the reference, at most 2^27 - 1. Under lock-based keys (12-byte headers) sizes
     * just below 2^27 used to pass the size check and fail in the allocator, with
     * {@link IllegalArgumentException} under a large capacity and {@link OakOutOfMemoryException}
     * under a small one. Nothing is allocated here: every size is rejected.
     */
    @ParameterizedTest(name = "memory={0}")
    @EnumSource(MemoryScheme.class)
    void sizesNoSliceCanHoldAreSerializationErrors(MemoryScheme scheme) {
        int justOverHeadered = (1 << 27) - 11; // + a 12-byte header: 4 bytes over 128 MiB
        int overAnyKey = 1 << 27;
        int tooLongKey = 1009;
        long tooLongValue = 1_009L;
        List<Integer> keySizes = new ArrayList<>(List.of(overAnyKey, Integer.MAX_VALUE));
        if (scheme == MemoryScheme.LOCK_BASED) {
            keySizes.add(justOverHeadered);
            keySizes.add((1 << 27) - 1);
        }
        for (long capacity : new long[]{TestMaps.SMALL_CAPACITY, 1L << 40}) {
            for (int keySize : keySizes) {
                OakSerializer<Integer> keys = sizedAs(TestMaps.INT_KEY, tooLongKey, 4, keySize);
                OakSerializer<Long> values = sizedAs(TestMaps.LONG_VAL, tooLongValue, 8, justOverHeadered);
                try (OakMap<Integer, Long> map = new OakMapBuilder<>(keys, values, TestMaps.INT_CMP)
                        .keyMemory(scheme).valueMemory(scheme).chunkCapacity(CHUNK).memoryCapacity(capacity)
                        .blockSize(TestMaps.SMALL_BLOCK).build()) {
                    TreeMap<Integer, Long> model = fill(map, 100);
                    String ctx = scheme + ", capacity " + capacity + ", key size " + keySize;
                    assertSerializationFailure(ctx + ": put", () -> map.put(tooLongKey, 1L));
                    assertSerializationFailure(ctx + ": zc.putIfAbsent", () -> map.zc().putIfAbsent(tooLongKey, 1L));
                    assertSerializationFailure(ctx + ": value put", () -> map.put(50, tooLongValue));
                    assertSerializationFailure(ctx + ": value zc.put", () -> map.zc().put(51, tooLongValue));
                    assertSerializationFailure(ctx + ": value compute",
                            () -> map.compute(50, (k, v) -> tooLongValue));
                    assertHolds(ctx, map, model);
                    assertUsable(ctx, map, model);
                }
            }
        }
    }

    /** @return {@code base}, except that {@code odd} claims {@code size} bytes (and writes its usual ones) */
    private static <T> OakSerializer<T> sizedAs(OakSerializer<T> base, T odd, int usual, int size) {
        return new OakSerializer<>() {
            @Override
            public void serialize(T object, OakScopedWriteBuffer target) {
                base.serialize(object, target);
            }

            @Override
            public T deserialize(OakScopedReadBuffer source) {
                return base.deserialize(source);
            }

            @Override
            public int calculateSize(T object) {
                return object.equals(odd) ? size : usual;
            }
        };
    }

    /**
     * A scoped buffer that a callback keeps (in a field, say) and uses after it returned throws
     * {@link IllegalStateException} on every access, as {@link OakScopedReadBuffer} documents:
     * buffers handed to key and value serializers, deserializers, comparators, in-place computes
     * and transforms, and the heap buffers {@link dev.oakmap.common.ByteStringComparator} hands to
     * a key serializer. The map is unharmed.
     */
    @Test
    void scopedBuffersThrowOnceTheirCallbackReturned() {
        Map<String, List<OakBuffer>> kept = new java.util.LinkedHashMap<>();
        OakSerializer<Integer> keys = keeping(TestMaps.INT_KEY, "key", kept);
        OakSerializer<Long> values = keeping(TestMaps.LONG_VAL, "value", kept);
        OakComparator<Integer> order = new OakComparator<>() {
            @Override
            public int compareKeys(Integer a, Integer b) {
                return TestMaps.INT_CMP.compareKeys(a, b);
            }

            @Override
            public int compareSerializedKeys(OakScopedReadBuffer a, OakScopedReadBuffer b) {
                keep(kept, "comparator", a);
                return TestMaps.INT_CMP.compareSerializedKeys(a, b);
            }

            @Override
            public int compareKeyAndSerializedKey(Integer key, OakScopedReadBuffer b) {
                keep(kept, "comparator", b);
                return TestMaps.INT_CMP.compareKeyAndSerializedKey(key, b);
            }
        };
        OakComparator<Integer> byBytes = dev.oakmap.common.ByteStringComparator.of(Integer::compare,
                keeping(TestMaps.INT_KEY, "byte-string comparator's key", kept));
        for (OakComparator<Integer> cmp : List.of(order, byBytes)) {
            try (OakMap<Integer, Long> map = longMap(keys, values, cmp)) {
                TreeMap<Integer, Long> model = fill(map, 200); // serializers and comparisons
                assertEquals(20L, map.get(2));                 // a deserializer
                assertEquals(model.firstKey(), map.keySet().iterator().next());
                assertTrue(map.zc().computeIfPresent(4, b -> keep(kept, "in-place compute", b)));
                assertEquals(Long.valueOf(40L), map.zc().get(4).<Long>transform(b -> {
                    keep(kept, "transform", b);
                    return b.getLong(0);
                }));
                for (Map.Entry<String, List<OakBuffer>> e : kept.entrySet()) {
                    assertFalse(e.getValue().isEmpty(), e.getKey() + ": no buffer kept");
                    for (OakBuffer b : e.getValue()) {
                        assertOutOfScope(e.getKey(), b);
                    }
                    e.getValue().clear();
                }
                assertHolds("after buffers were used out of scope", map, model);
            }
        }
        assertTrue(kept.keySet().containsAll(List.of("key", "value", "comparator", "in-place compute", "transform",
                "byte-string comparator's key")), kept.keySet().toString());
    }

    private static void keep(Map<String, List<OakBuffer>> kept, String from, OakBuffer buffer) {
        kept.computeIfAbsent(from, x -> new ArrayList<>()).add(buffer);
    }

    /** @return {@code base}, keeping every buffer it is given in {@code kept}, under {@code from} */
    private static <T> OakSerializer<T> keeping(OakSerializer<T> base, String from, Map<String, List<OakBuffer>> kept) {
        return new OakSerializer<>() {
            @Override
            public void serialize(T object, OakScopedWriteBuffer target) {
                keep(kept, from, target);
                base.serialize(object, target);
            }

            @Override
            public T deserialize(OakScopedReadBuffer source) {
                keep(kept, from, source);
                return base.deserialize(source);
            }

            @Override
            public int calculateSize(T object) {
                return base.calculateSize(object);
            }
        };
    }

    private static void assertOutOfScope(String from, OakBuffer b) {
        List<Executable> uses = new ArrayList<>(List.of(b::capacity, () -> b.get(0), () -> b.getInt(0),
                () -> b.getBytes(0, new byte[1], 0, 1)));
        if (b instanceof OakScopedReadBuffer r) {
            uses.add(r::segment);
        }
        if (b instanceof OakScopedWriteBuffer w) {
            uses.add(() -> w.put(0, (byte) 1));
            uses.add(() -> w.putLong(0, 1L));
            uses.add(w::writableSegment);
        }
        for (int i = 0; i < uses.size(); i++) {
            assertThrows(IllegalStateException.class, uses.get(i), from + ": use " + i + " of a kept buffer");
        }
    }

    @Test
    void aDeserializerReturningNullIsASerializationError() {
        try (OakMap<Integer, Integer> values = new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER,
                NULL_FOR_SEVEN, OakCommonTypes.INTEGER_COMPARATOR).build()) {
            values.put(1, 7);
            values.put(2, 2);
            assertThrows(OakSerializationException.class, () -> values.get(1));
            assertThrows(OakSerializationException.class, () -> values.put(1, 8), "the old value cannot be read");
            assertThrows(OakSerializationException.class, () -> values.compute(1, (k, v) -> v == null ? -1 : v));
            assertThrows(OakSerializationException.class, () -> values.firstEntry());
            assertThrows(OakSerializationException.class, () -> new ArrayList<>(values.entrySet()));
            assertTrue(values.containsKey(1));
            assertEquals(2, values.get(2));
            assertEquals(2, values.size());
            assertTrue(values.zc().remove(1)); // the zero-copy API does not deserialize
            assertEquals(List.of(2), new ArrayList<>(values.keySet()));
        }
        try (OakMap<Integer, Integer> keys = new OakMapBuilder<>(NULL_FOR_SEVEN,
                OakCommonTypes.INTEGER_SERIALIZER, OakCommonTypes.INTEGER_COMPARATOR)
                .build()) {
            keys.put(7, 1);
            keys.put(8, 2);
            assertThrows(OakSerializationException.class, keys::firstKey);
            assertThrows(OakSerializationException.class, () -> new ArrayList<>(keys.keySet()));
            assertEquals(8, keys.lastKey());
            assertEquals(1, keys.get(7));
            assertEquals(2, keys.size());
        }
    }

    // ------------------------------------------------------------------------------------------
    // a comparator that throws mid-search
    // ------------------------------------------------------------------------------------------

    static final class Boom extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Boom() {
            super("comparator failure injected by the test");
        }
    }

    /** Counts down on every comparison while armed and throws {@link Boom} when it reaches 0. */
    static final class ThrowingComparator implements OakComparator<Integer> {
        final AtomicInteger countdown = new AtomicInteger(-1);

        private void tick() {
            if (countdown.get() >= 0 && countdown.getAndDecrement() == 0) {
                throw new Boom();
            }
        }

        @Override
        public int compareKeys(Integer a, Integer b) {
            tick();
            return TestMaps.INT_CMP.compareKeys(a, b);
        }

        @Override
        public int compareSerializedKeys(OakScopedReadBuffer a, OakScopedReadBuffer b) {
            tick();
            return TestMaps.INT_CMP.compareSerializedKeys(a, b);
        }

        @Override
        public int compareKeyAndSerializedKey(Integer key, OakScopedReadBuffer b) {
            tick();
            return TestMaps.INT_CMP.compareKeyAndSerializedKey(key, b);
        }
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void comparatorThrowingMidSearchLeavesMapIntact(long seed) {
        ThrowingComparator cmp = new ThrowingComparator();
        Random rnd = new Random(seed);
        try (OakMap<Integer, Long> map = longMap(TestMaps.INT_KEY, TestMaps.LONG_VAL, cmp)) {
            TreeMap<Integer, Long> model = fill(map, 200);
            OakZeroCopyMap<Integer, Long> zc = map.zc();
            int booms = 0;
            int trials = 400 * TestMaps.scale();
            for (int i = 0; i < trials; i++) {
                int k = rnd.nextInt(420);
                long v = rnd.nextInt(1_000_000);
                int op = rnd.nextInt(14);
                String ctx = "seed=" + seed + " trial " + i + " op " + op + " key " + k;
                cmp.countdown.set(rnd.nextInt(40));
                Object expected;
                Object actual;
                try {
                    switch (op) {
                        case 0 -> actual = map.put(k, v);
                        case 1 -> actual = map.remove(k);
                        case 2 -> actual = map.get(k);
                        case 3 -> actual = map.putIfAbsent(k, v);
                        case 4 -> actual = map.compute(k, (x, o) -> o == null ? Long.valueOf(v) : (o % 2 == 0 ? (Long) null : Long.valueOf(o + 1)));
                        case 5 -> actual = map.merge(k, v, Long::sum);
                        case 6 -> {
                            zc.put(k, v);
                            actual = null;
                        }
                        case 7 -> actual = zc.remove(k);
                        case 8 -> actual = zc.putIfAbsentComputeIfPresent(k, v, b -> b.putLong(0, b.getLong(0) + 1));
                        case 9 -> actual = map.ceilingKey(k);
                        case 10 -> actual = TestMaps.list(map.descendingMap().headMap(k).keySet());
                        case 11 -> actual = map.subMap(k, k + 40).size();
                        case 12 -> actual = map.pollFirstEntry();
                        default -> actual = map.replace(k, v);
                    }
                } catch (Boom b) {
                    booms++;
                    cmp.countdown.set(-1);
                    try {
                        assertHolds(ctx + " (after comparator threw)", map, model);
                    } catch (Throwable t) {
                        t.addSuppressed(b);
                        throw t;
                    }
                    continue;
                } catch (Throwable t) {
                    cmp.countdown.set(-1);
                    throw new AssertionError(ctx + ": expected the comparator's own exception or success, got " + t, t);
                }
                cmp.countdown.set(-1);
                // the op succeeded: apply it to the model and compare results
                switch (op) {
                    case 0 -> expected = model.put(k, v);
                    case 1 -> expected = model.remove(k);
                    case 2 -> expected = model.get(k);
                    case 3 -> expected = model.putIfAbsent(k, v);
                    case 4 -> expected = model.compute(k, (x, o) -> o == null ? Long.valueOf(v) : (o % 2 == 0 ? (Long) null : Long.valueOf(o + 1)));
                    case 5 -> expected = model.merge(k, v, Long::sum);
                    case 6 -> {
                        model.put(k, v);
                        expected = null;
                    }
                    case 7 -> expected = model.remove(k) != null;
                    case 8 -> {
                        Long o = model.get(k);
                        model.put(k, o == null ? v : o + 1);
                        expected = o == null;
                    }
                    case 9 -> expected = model.ceilingKey(k);
                    case 10 -> expected = TestMaps.list(model.descendingMap().headMap(k).keySet());
                    case 11 -> expected = model.subMap(k, k + 40).size();
                    case 12 -> expected = model.pollFirstEntry();
                    default -> expected = model.replace(k, v);
                }
                assertEquals(expected, actual, ctx + ": result");
                if (i % 25 == 0) {
                    assertHolds(ctx, map, model);
                }
            }
            assertTrue(booms > trials / 10, "seed=" + seed + ": the comparator threw only " + booms + " times");
            TestMaps.assertSameContents("seed=" + seed + " after comparator failures", map, model, rnd, 420);
            assertUsable("seed=" + seed + " after comparator failures", map, model);
        }
    }

    // ------------------------------------------------------------------------------------------
    // throwing lambdas
    // ------------------------------------------------------------------------------------------

    static final class LambdaFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        LambdaFailure() {
            super("user function failure injected by the test");
        }
    }

    @Test
    void throwingFunctionsPropagateAndReleaseTheKey() throws Exception {
        try (OakMap<Integer, Long> map = TestMaps.intLongMap(CHUNK)) {
            TreeMap<Integer, Long> model = fill(map, 100);
            OakZeroCopyMap<Integer, Long> zc = map.zc();
            LambdaFailure boom = new LambdaFailure();
            Map<String, Executable> throwing = new java.util.LinkedHashMap<>();
            throwing.put("compute(present)", () -> map.compute(20, (k, v) -> {
                throw boom;
            }));
            throwing.put("compute(absent)", () -> map.compute(21, (k, v) -> {
                throw boom;
            }));
            throwing.put("computeIfPresent", () -> map.computeIfPresent(22, (k, v) -> {
                throw boom;
            }));
            throwing.put("computeIfAbsent(absent)", () -> map.computeIfAbsent(23, k -> {
                throw boom;
            }));
            throwing.put("merge(present)", () -> map.merge(24, 1L, (a, b) -> {
                throw boom;
            }));
            throwing.put("forEach", () -> map.forEach((k, v) -> {
                if (k == 30) {
                    throw boom;
                }
            }));
            throwing.put("zc.computeIfPresent", () -> zc.computeIfPresent(26, b -> {
                throw boom;
            }));
            throwing.put("zc.putIfAbsentComputeIfPresent(present)", () -> zc.putIfAbsentComputeIfPresent(28, 7L, b -> {
                throw boom;
            }));
            throwing.put("zc.get().transform", () -> zc.get(32).transform(b -> {
                throw boom;
            }));
            throwing.put("entryStreamSet iteration", () -> {
                for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : zc.entryStreamSet()) {
                    e.getValue().transform(b -> {
                        throw boom;
                    });
                }
            });
            Map<String, Executable> cases = new java.util.LinkedHashMap<>();
            int[] keyOf = {20, 21, 22, 23, 24, 30, 26, 28, 32, 0};
            int idx = 0;
            for (Map.Entry<String, Executable> c : throwing.entrySet()) {
                int key = keyOf[idx++];
                cases.put(c.getKey(), () -> {
                    Throwable t = assertThrows(Throwable.class, c.getValue());
                    assertSame(boom, t, "the user's exception must propagate unchanged");
                    assertHolds("after " + c.getKey(), map, model);
                    assertEquals(model.containsKey(key), map.containsKey(key), "presence of " + key);
                    // the key must not stay locked: update and read it from another thread
                    CompletableFuture<Long> other = CompletableFuture.supplyAsync(() -> {
                        map.compute(key, (k, v) -> v == null ? 1L : v + 1);
                        zc.putIfAbsentComputeIfPresent(key, 1L, b -> b.putLong(0, b.getLong(0) + 1));
                        return map.get(key);
                    });
                    Long now = other.get(10, TimeUnit.SECONDS);
                    Long before = model.get(key);
                    long expected = before == null ? 2L : before + 2;
                    assertEquals(expected, now, "updates after the failure on key " + key);
                    model.put(key, expected);
                    // and from this thread, too
                    assertEquals(expected + 1, map.merge(key, 1L, Long::sum));
                    model.put(key, expected + 1);
                });
            }
            // in-place computers are all or nothing: what a failing computer wrote is undone
            Map<String, Consumer<OakScopedWriteBuffer>> failing = new java.util.LinkedHashMap<>();
            failing.put("one write", b -> {
                b.putLong(0, 123_456L);
                throw boom;
            });
            failing.put("writes of every width", b -> {
                b.put(7, (byte) 1).putChar(0, 'x').putShort(2, (short) 3).putInt(4, 4).putFloat(1, 1f);
                b.putDouble(0, 2.5).putLong(0, b.getLong(0) + 1).putBytes(1, new byte[] {9, 9, 9}, 0, 3);
                throw boom;
            });
            failing.put("many writes", b -> {
                for (int i = 0; i < 1000; i++) {
                    b.putInt(i % 5, i);
                }
                throw boom;
            });
            failing.put("a writable segment", b -> {
                b.putLong(0, 5L);
                b.writableSegment().fill((byte) 7);
                b.putLong(0, 6L);
                throw boom;
            });
            failing.put("an error", b -> {
                b.putLong(0, 42L);
                throw new StackOverflowError("injected by the test");
            });
            failing.put("a write out of bounds after a valid one", b -> b.putLong(0, 99L).putLong(4, 1L));
            int failingKey = 40;
            for (Map.Entry<String, Consumer<OakScopedWriteBuffer>> c : failing.entrySet()) {
                int key = failingKey;
                failingKey += 2; // the map holds even keys
                cases.put("zc.computeIfPresent, " + c.getKey() + ", then throws", () -> {
                    Long before = map.get(key);
                    assertNotNull(before, "key " + key);
                    assertThrows(Throwable.class, () -> zc.computeIfPresent(key, c.getValue()));
                    assertEquals(before, map.get(key), "a failed in-place computer changes nothing");
                    assertThrows(Throwable.class, () -> zc.putIfAbsentComputeIfPresent(key, 1L, c.getValue()));
                    assertEquals(before, map.get(key), "nor through putIfAbsentComputeIfPresent");
                    assertTrue(zc.computeIfPresent(key, b -> b.putLong(0, b.getLong(0) + 1)));
                    model.put(key, before + 1);
                });
            }
            runCases("throwing functions", cases, () -> assertHolds("after throwing function", map, model));
            TestMaps.assertSameContents("after throwing functions", map, model, new Random(5), 200);
            assertUsable("after throwing functions", map, model);
        }
    }

    // ------------------------------------------------------------------------------------------
    // sub-map ranges
    // ------------------------------------------------------------------------------------------

    @Test
    void outOfRangeKeysOnSubMapsAreRejected() {
        try (OakMap<Integer, Long> map = TestMaps.intLongMap(CHUNK)) {
            TreeMap<Integer, Long> model = fill(map, 50);
            List<ConcurrentNavigableMap<Integer, Long>> views = List.of(
                    map.subMap(10, true, 20, false),
                    map.subMap(10, true, 20, false).descendingMap(),
                    map.headMap(10, false).tailMap(-5),
                    map.tailMap(10, true).headMap(20),
                    map.descendingMap().subMap(19, true, 10, true));
            Map<String, Executable> cases = new java.util.LinkedHashMap<>();
            int vi = 0;
            for (ConcurrentNavigableMap<Integer, Long> view : views) {
                int viewNo = vi++;
                for (int out : new int[]{-100, 9, 20, 21, 99}) {
                    boolean inView;
                    switch (viewNo) {
                        case 2 -> inView = out >= -5 && out < 10;
                        default -> inView = out >= 10 && out < 20;
                    }
                    if (inView) {
                        continue;
                    }
                    String b = "view " + viewNo + " key " + out + " ";
                    cases.put(b + "put", () -> assertThrows(IllegalArgumentException.class, () -> view.put(out, 1L)));
                    cases.put(b + "putIfAbsent", () -> assertThrows(IllegalArgumentException.class,
                            () -> view.putIfAbsent(out, 1L)));
                    cases.put(b + "replace", () -> assertThrows(IllegalArgumentException.class,
                            () -> view.replace(out, 1L)));
                    cases.put(b + "replace3", () -> assertThrows(IllegalArgumentException.class,
                            () -> view.replace(out, 1L, 2L)));
                    cases.put(b + "compute", () -> assertThrows(IllegalArgumentException.class,
                            () -> view.compute(out, (k, v) -> 1L)));
                    cases.put(b + "computeIfAbsent", () -> assertThrows(IllegalArgumentException.class,
                            () -> view.computeIfAbsent(out, k -> 1L)));
                    cases.put(b + "merge", () -> assertThrows(IllegalArgumentException.class,
                            () -> view.merge(out, 1L, Long::sum)));
                    cases.put(b + "reads", () -> {
                        assertNull(view.get(out), "get out of range");
                        assertFalse(view.containsKey(out), "containsKey out of range");
                        assertNull(view.remove(out), "remove out of range");
                        assertFalse(view.remove(out, 20L * out / 2), "remove(k,v) out of range");
                    });
                    if (view instanceof OakMap<Integer, Long> oak) {
                        cases.put(b + "zc.put", () -> assertThrows(IllegalArgumentException.class,
                                () -> oak.zc().put(out, 1L)));
                        cases.put(b + "zc.putIfAbsent", () -> assertThrows(IllegalArgumentException.class,
                                () -> oak.zc().putIfAbsent(out, 1L)));
                        cases.put(b + "zc.putIfAbsentComputeIfPresent", () -> assertThrows(
                                IllegalArgumentException.class,
                                () -> oak.zc().putIfAbsentComputeIfPresent(out, 1L, x -> { })));
                    }
                }
                cases.put("view " + viewNo + " subMap beyond its range", () -> {
                    assertThrows(IllegalArgumentException.class, () -> view.subMap(-1000, 1000));
                });
                cases.put("view " + viewNo + " size and contents", () -> {
                    assertEquals(5, view.size());
                });
            }
            runCases("sub-map ranges", cases, () -> assertHolds("after out-of-range op", map, model));
            assertUsable("sub-map ranges", map, model);
        }
    }

    // ------------------------------------------------------------------------------------------
    // running out of off-heap memory
    // ------------------------------------------------------------------------------------------

    private static final long OOM_CAPACITY = 4L << 20;

    private static OakMap<Integer, Blob> smallBlobMap() {
        return new OakMapBuilder<>(TestMaps.INT_KEY, TestMaps.BLOB_VAL, TestMaps.INT_CMP)
                .chunkCapacity(16).memoryCapacity(OOM_CAPACITY).blockSize(1L << 20).build();
    }

    /** Inserts a new key with one of the insertion operations. */
    private static void insert(OakMap<Integer, Blob> map, int k, Blob v, int how) {
        switch (how % 6) {
            case 0 -> assertNull(map.put(k, v));
            case 1 -> assertNull(map.putIfAbsent(k, v));
            case 2 -> map.zc().put(k, v);
            case 3 -> assertTrue(map.zc().putIfAbsent(k, v));
            case 4 -> assertEquals(v, map.computeIfAbsent(k, x -> v));
            default -> assertEquals(v, map.merge(k, v, (a, b) -> b));
        }
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void runningOutOfMemoryLeavesNoPartialMapping(long seed) {
        Random rnd = new Random(seed);
        try (OakMap<Integer, Blob> map = smallBlobMap()) {
            TreeMap<Integer, Blob> model = new TreeMap<>();
            OakOutOfMemoryException oom = null;
            int failedKey = -1;
            for (int k = 0; k < 100_000; k++) {
                Blob v = new Blob(k, k, 500 + rnd.nextInt(1000));
                try {
                    insert(map, k, v, rnd.nextInt(6));
                    model.put(k, v);
                } catch (OakOutOfMemoryException e) {
                    oom = e;
                    failedKey = k;
                    break;
                }
            }
            assertNotNull(oom, "no OakOutOfMemoryException within 100,000 insertions of ~1 KB into 4 MiB");
            String ctx = "seed=" + seed + " after OOM at key " + failedKey;
            assertEquals(OOM_CAPACITY, oom.capacity(), ctx + ": exception names the capacity");
            assertTrue(oom.getMessage().contains(Long.toString(OOM_CAPACITY)), ctx + ": message " + oom.getMessage());
            assertNull(map.get(failedKey), ctx + ": the failed insertion left a mapping");
            assertFalse(map.containsKey(failedKey), ctx);
            assertTrue(map.memoryUsed() <= map.memoryCapacity(), ctx + ": used " + map.memoryUsed());
            // more attempts (some may still fit if smaller): each either succeeds fully or not at all
            int attempts = 0;
            for (int k = failedKey; k < failedKey + 50; k++) {
                Blob v = new Blob(k, k, rnd.nextInt(2000));
                try {
                    insert(map, k, v, k);
                    model.put(k, v);
                } catch (OakOutOfMemoryException e) {
                    attempts++;
                    assertNull(map.get(k), ctx + ": failed insertion of " + k + " visible");
                }
            }
            assertTrue(attempts > 0, ctx + ": 50 more insertions of up to 2 KB all fit?");
            // growing an existing value when full: either done or nothing changed
            for (int j = 0; j < 10; j++) {
                int k = model.firstKey() + j;
                Blob big = new Blob(k, 7777, 3000 + j);
                try {
                    assertEquals(model.get(k), map.put(k, big), ctx + ": grow returned the old value");
                    model.put(k, big);
                } catch (OakOutOfMemoryException e) {
                    assertEquals(model.get(k), map.get(k), ctx + ": failed growth changed the value of " + k);
                }
                try {
                    Blob cur = model.get(k);
                    boolean present = map.zc().computeIfPresent(k, b -> b.putLong(4, Blob.read(b).seq()));
                    assertTrue(present);
                    assertEquals(cur, map.get(k));
                } catch (OakOutOfMemoryException e) {
                    fail(ctx + ": an in-place compute that does not grow needed memory", e);
                }
            }
            TestMaps.assertSameContents(ctx, map, model, rnd, failedKey + 60);
            // remove half, then insertions succeed again (values of the sizes just freed)
            int removed = 0;
            List<Integer> freedLens = new ArrayList<>();
            for (Integer k : new ArrayList<>(model.keySet())) {
                if (k % 2 == 0) {
                    Blob old = model.remove(k);
                    assertEquals(old, map.remove(k));
                    freedLens.add(old.len());
                    removed++;
                }
            }
            int reinserted = 0;
            OakOutOfMemoryException firstFailure = null;
            for (int i = 0; i < removed; i++) {
                int k = 200_000 + i;
                Blob v = new Blob(k, k, freedLens.get(i));
                try {
                    insert(map, k, v, k);
                    model.put(k, v);
                    reinserted++;
                } catch (OakOutOfMemoryException e) {
                    if (firstFailure == null) {
                        firstFailure = e;
                    }
                    assertNull(map.get(k));
                }
            }
            // for the report: re-inserting the removed keys themselves
            int sameKeys = 0;
            for (int k = 0; k < failedKey && sameKeys < 50; k += 2) {
                if (!model.containsKey(k)) {
                    Blob v = new Blob(k, 1, freedLens.get(sameKeys % freedLens.size()));
                    try {
                        map.put(k, v);
                        model.put(k, v);
                        sameKeys++;
                    } catch (OakOutOfMemoryException e) {
                        break;
                    }
                }
            }
            System.out.printf("OOM seed=%d: %d mappings fit in %d bytes (used %d, reserved %d); after removing %d, "
                            + "%d new keys with values of the freed sizes fit, and %d of 50 removed keys could be "
                            + "re-inserted%n", seed, failedKey, OOM_CAPACITY, map.memoryUsed(),
                    map.memoryReserved(), removed, reinserted, sameKeys);
            if (reinserted < removed / 4) {
                AssertionError err = new AssertionError(ctx + ": after removing " + removed + " mappings only "
                        + reinserted + " new insertions with values of the freed sizes fit again ("
                        + sameKeys + " of 50 removed keys could be re-inserted); OakOutOfMemoryException documents "
                        + "that removing mappings frees space for later insertions");
                if (firstFailure != null) {
                    err.initCause(firstFailure);
                }
                throw err;
            }
            TestMaps.assertSameContents(ctx + " after removing half", map, model, rnd, 200_000 + removed);
        }
    }

    /**
     * Removed mappings free their space for later insertions at once, even when the reclaimer
     * still holds their slices back (Nova frees deleted slices in batches: 60 KB values in 8 MiB
     * are far fewer than a batch, so no round would run). Every removed key must fit again with a
     * value of its old size, and then with one of half that size (a salvaged slice).
     */
    @ParameterizedTest(name = "memory={0}")
    @EnumSource(value = MemoryScheme.class, names = {"NOVA", "LOCK_BASED"})
    void removedLargeValuesFitAgainAtCapacity(MemoryScheme scheme) {
        int size = 60_000;
        try (OakMap<Integer, byte[]> map = new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER,
                OakCommonTypes.BYTE_ARRAY_SERIALIZER, OakCommonTypes.INTEGER_COMPARATOR)
                .memoryCapacity(8L << 20).blockSize(1 << 20).keyMemory(scheme).valueMemory(scheme).build()) {
            int full = 0;
            try {
                while (full < 1_000) {
                    map.put(full, filled(size, full));
                    full++;
                }
                fail("8 MiB held 1,000 values of 60 KB");
            } catch (OakOutOfMemoryException expected) {
                assertNull(map.get(full), "the failed insertion left a mapping");
            }
            assertTrue(full > 50, "only " + full + " values of 60 KB fit in 8 MiB");
            for (int k = 0; k < full; k += 2) {
                assertNotNull(map.remove(k));
            }
            for (int k = 0; k < full; k += 2) {
                map.put(k, filled(size, k + 1)); // throws if the removed values' memory is out of reach
            }
            for (int k = 0; k < full; k += 2) {
                assertNotNull(map.remove(k));
            }
            for (int k = 0; k < full; k += 2) {
                map.put(k, filled(size / 2, k + 2));
            }
            assertEquals(full, map.size());
            for (int k = 0; k < full; k++) {
                int len = k % 2 == 0 ? size / 2 : size;
                int fill = k % 2 == 0 ? k + 2 : k;
                assertArrayEquals(filled(len, fill), map.get(k), "value of " + k);
            }
        }
    }

    /**
     * A map filled to its capacity, cleared, and filled again with values of another size holds
     * about as many bytes each time: freed slices never merge, so the memory of 100-byte values
     * could hold no 1,000-byte value until blocks whose slices are all free were reused whole for
     * every scheme that frees (before 2026-11-28, only for Nova values with keys that are not
     * lock-based: with lock-based keys or values no 1,000-byte value fit after the first fill).
     * Then churn of sizes from 0 to 2.7 KB over a third of the capacity, keys in random order:
     * every insertion fits. Grow-only keys or values keep what they held, by design, and are not
     * checked here.
     */
    @ParameterizedTest(name = "keys={0} values={1}")
    @CsvSource({"NOVA,NOVA", "NOVA,LOCK_BASED", "LOCK_BASED,NOVA", "LOCK_BASED,LOCK_BASED"})
    void valuesOfAnotherSizeFitAfterTheMapWasCleared(MemoryScheme keys, MemoryScheme values) {
        long capacity = 16L << 20;
        try (OakMap<Integer, byte[]> map = new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER,
                OakCommonTypes.BYTE_ARRAY_SERIALIZER, OakCommonTypes.INTEGER_COMPARATOR)
                .memoryCapacity(capacity).blockSize(1 << 20).keyMemory(keys).valueMemory(values).build()) {
            int[] sizes = {100, 1_000, 100, 3_000, 30, 1_000};
            long firstBytes = 0;
            for (int phase = 0; phase < sizes.length; phase++) {
                int size = sizes[phase];
                int base = phase * 10_000_000;
                int n = 0;
                try {
                    while (true) {
                        map.put(base + n, filled(size, n));
                        n++;
                    }
                } catch (OakOutOfMemoryException expected) {
                    assertNull(map.get(base + n), "the failed insertion left a mapping");
                }
                assertEquals(n, map.size());
                long bytes = (long) n * (size + Integer.BYTES);
                if (phase == 0) {
                    firstBytes = bytes;
                    assertTrue(bytes > capacity / 2, "the first fill held " + bytes + " bytes of " + capacity);
                } else {
                    // 30-byte values carry relatively more overhead per byte of data than 100-byte ones
                    double floor = size < sizes[0] ? 0.6 : 0.9;
                    assertTrue(bytes > floor * firstBytes, "fill " + phase + " of " + size + "-byte values held "
                            + bytes + " bytes of data, the first " + firstBytes);
                }
                assertArrayEquals(filled(size, n - 1), map.get(base + n - 1));
                map.clear();
            }
            SplittableRandom rnd = new SplittableRandom(7);
            int population = 2_000; // about 2.7 MB of values in 16 MiB
            for (int i = 0; i < 300 * population; i++) {
                int k = rnd.nextInt(population);
                map.put(k, filled(rnd.nextInt(2_700), i)); // throws if churn left the free memory in pieces
            }
            assertTrue(map.size() <= population);
        }
    }

    /**
     * The maps of a process share 4,095 blocks. Once they are all taken, the insertion that needs
     * one throws {@link OutOfMemoryError} and leaves its map empty and usable; closing another map
     * gives a block back.
     */
    @Test
    void runningOutOfBlocksIsAnErrorThatChangesNothing() {
        List<OakMap<Integer, Integer>> maps = new ArrayList<>();
        try {
            OakMap<Integer, Integer> failed = null;
            OutOfMemoryError error = null;
            for (int i = 0; i < 5_000 && error == null; i++) {
                OakMap<Integer, Integer> m = new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER,
                        OakCommonTypes.INTEGER_SERIALIZER, OakCommonTypes.INTEGER_COMPARATOR).build();
                maps.add(m);
                try {
                    m.put(1, i);
                } catch (OutOfMemoryError e) {
                    error = e;
                    failed = m;
                }
            }
            assertNotNull(error, "5,000 maps each took a block");
            assertTrue(error.getMessage().contains("block"), error.getMessage());
            assertEquals(0, failed.size());
            assertNull(failed.get(1));
            assertEquals(0, failed.memoryReserved());
            maps.remove(0).close();
            failed.put(1, 7);
            assertEquals(7, failed.get(1));
            assertEquals(1, failed.size());
        } finally {
            maps.forEach(OakMap::close);
        }
    }

    private static byte[] filled(int length, int fill) {
        byte[] b = new byte[length];
        Arrays.fill(b, (byte) fill);
        return b;
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void concurrentIngestionUntilOutOfMemory(long seed) throws Exception {
        try (OakMap<Integer, Blob> map = smallBlobMap()) {
            int threads = 2;
            List<Map<Integer, Blob>> done = new ArrayList<>();
            Set<Integer> failed = ConcurrentHashMap.newKeySet();
            List<Task> tasks = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Map<Integer, Blob> mine = new TreeMap<>();
                done.add(mine);
                int tid = t;
                Random rnd = new Random(seed * 17 + t);
                tasks.add(() -> {
                    int misses = 0;
                    for (int i = 0; i < 100_000 && misses < 5; i++) {
                        int k = tid + threads * i;
                        Blob v = new Blob(k, i, 200 + rnd.nextInt(1200));
                        try {
                            insert(map, k, v, rnd.nextInt(6));
                            mine.put(k, v);
                        } catch (OakOutOfMemoryException e) {
                            failed.add(k);
                            misses++;
                        }
                    }
                    if (misses == 0) {
                        throw new AssertionError("thread " + tid + " never ran out of memory");
                    }
                });
            }
            TestMaps.runConcurrently("concurrent OOM seed=" + seed, 60, tasks);
            TreeMap<Integer, Blob> model = new TreeMap<>();
            done.forEach(model::putAll);
            String ctx = "concurrent OOM seed=" + seed;
            for (int k : failed) {
                assertNull(map.get(k), ctx + ": insertion of " + k + " failed with OOM but is visible");
            }
            TestMaps.assertSameContents(ctx, map, model, new Random(seed), model.isEmpty() ? 10 : model.lastKey() + 10);
            assertTrue(map.memoryUsed() <= map.memoryCapacity(), ctx);
        }
    }

    // ------------------------------------------------------------------------------------------
    // use after close
    // ------------------------------------------------------------------------------------------

    private static void assertClosed(String what, Executable e) {
        Throwable t = assertThrows(Throwable.class, e, what + " after close()");
        if (!(t instanceof OakClosedException)) {
            throw new AssertionError(what + " after close(): expected OakClosedException, got " + t, t);
        }
    }

    /** Steps an iterator created before close: it must fail with OakClosedException before ending. */
    private static void assertIteratorClosed(String what, Iterator<?> it, int remaining) {
        for (int i = 0; i <= remaining + 1; i++) {
            try {
                if (!it.hasNext()) {
                    throw new AssertionError(what + ": iterator ended normally after close() (" + i + " more elements)");
                }
                it.next();
            } catch (OakClosedException expected) {
                return;
            } catch (Throwable t) {
                throw new AssertionError(what + ": expected OakClosedException, got " + t, t);
            }
        }
        throw new AssertionError(what + ": iterator kept returning elements after close()");
    }

    @Test
    void everythingFailsCleanlyAfterClose() {
        OakMap<Integer, Long> map = TestMaps.intLongMap(CHUNK);
        fill(map, 1000);
        OakZeroCopyMap<Integer, Long> zc = map.zc();
        ConcurrentNavigableMap<Integer, Long> sub = map.subMap(100, 900);
        ConcurrentNavigableMap<Integer, Long> desc = map.descendingMap();
        Set<Integer> keySet = map.keySet();
        Iterator<Map.Entry<Integer, Long>> it = map.entrySet().iterator();
        for (int i = 0; i < 10; i++) {
            it.next();
        }
        Iterator<Integer> descIt = desc.keySet().iterator();
        for (int i = 0; i < 5; i++) {
            descIt.next();
        }
        Iterator<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> zcIt = zc.entryStreamSet().iterator();
        for (int i = 0; i < 3; i++) {
            zcIt.next();
        }
        Iterator<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> zcLookedAhead = zc.entryStreamSet().iterator();
        zcLookedAhead.next();
        assertTrue(zcLookedAhead.hasNext(), "moved onto the second mapping before close");
        Iterator<OakUnscopedBuffer> zcKeyIt = zc.keySet().iterator();
        OakUnscopedBuffer keyView = zcKeyIt.next();
        OakUnscopedBuffer valueView = zc.get(10);
        assertEquals(100L, valueView.getLong(0));
        long reservedBefore = map.memoryReserved();
        assertTrue(reservedBefore > 0, "reserved before close");

        map.close();

        Map<String, Executable> cases = new java.util.LinkedHashMap<>();
        cases.put("get", () -> assertClosed("get", () -> map.get(2)));
        cases.put("containsKey", () -> assertClosed("containsKey", () -> map.containsKey(2)));
        cases.put("put", () -> assertClosed("put", () -> map.put(3, 1L)));
        cases.put("putIfAbsent", () -> assertClosed("putIfAbsent", () -> map.putIfAbsent(3, 1L)));
        cases.put("remove", () -> assertClosed("remove", () -> map.remove(2)));
        cases.put("compute", () -> assertClosed("compute", () -> map.compute(2, (k, v) -> 1L)));
        cases.put("merge", () -> assertClosed("merge", () -> map.merge(2, 1L, Long::sum)));
        cases.put("size", () -> assertClosed("size", map::size));
        cases.put("isEmpty", () -> assertClosed("isEmpty", map::isEmpty));
        cases.put("firstKey", () -> assertClosed("firstKey", map::firstKey));
        cases.put("lastEntry", () -> assertClosed("lastEntry", map::lastEntry));
        cases.put("ceilingKey", () -> assertClosed("ceilingKey", () -> map.ceilingKey(5)));
        cases.put("pollFirstEntry", () -> assertClosed("pollFirstEntry", map::pollFirstEntry));
        cases.put("clear", () -> assertClosed("clear", map::clear));
        cases.put("new iterator", () -> assertClosed("entrySet().iterator().next()",
                () -> map.entrySet().iterator().next()));
        cases.put("new descending iterator", () -> assertClosed("descendingMap().keySet().iterator().next()",
                () -> map.descendingMap().keySet().iterator().next()));
        cases.put("toString", () -> assertClosed("toString", map::toString));
        cases.put("zc.get", () -> assertClosed("zc.get", () -> zc.get(2)));
        cases.put("zc.put", () -> assertClosed("zc.put", () -> zc.put(3, 1L)));
        cases.put("zc.remove", () -> assertClosed("zc.remove", () -> zc.remove(2)));
        cases.put("zc.computeIfPresent", () -> assertClosed("zc.computeIfPresent",
                () -> zc.computeIfPresent(2, b -> { })));
        cases.put("zc.keySet iterator", () -> assertClosed("zc.keySet().iterator().next()",
                () -> zc.keySet().iterator().next()));
        cases.put("map.zc().get", () -> assertClosed("map.zc().get", () -> map.zc().get(2)));
        cases.put("sub.get", () -> assertClosed("sub.get", () -> sub.get(200)));
        cases.put("sub.put", () -> assertClosed("sub.put", () -> sub.put(201, 1L)));
        cases.put("sub.size", () -> assertClosed("sub.size", sub::size));
        cases.put("sub.firstKey", () -> assertClosed("sub.firstKey", sub::firstKey));
        cases.put("desc.firstKey", () -> assertClosed("desc.firstKey", desc::firstKey));
        cases.put("keySet.contains", () -> assertClosed("keySet.contains", () -> keySet.contains(2)));
        cases.put("keySet.iterator", () -> assertClosed("keySet.iterator().next()", () -> keySet.iterator().next()));
        cases.put("iterator from before close", () -> assertIteratorClosed("entrySet iterator", it, 990));
        cases.put("descending iterator from before close", () -> assertIteratorClosed("descending keySet iterator",
                descIt, 995));
        cases.put("zc stream iterator from before close", () -> assertIteratorClosed("zc entryStreamSet iterator",
                zcIt, 997));
        cases.put("zc stream iterator, hasNext() before close", () -> assertClosed("next() after hasNext()",
                zcLookedAhead::next));
        cases.put("zc key iterator from before close", () -> assertIteratorClosed("zc keySet iterator",
                zcKeyIt, 999));
        cases.put("value view from before close", () -> {
            assertThrows(IllegalStateException.class, () -> valueView.getLong(0), "value view getLong");
            assertThrows(IllegalStateException.class, () -> valueView.transform(b -> b.getLong(0)),
                    "value view transform");
            assertThrows(IllegalStateException.class, () -> valueView.getBytes(0, new byte[8], 0, 8),
                    "value view getBytes");
        });
        cases.put("key view from before close", () -> {
            assertThrows(IllegalStateException.class, () -> keyView.getInt(0), "key view getInt");
            assertThrows(IllegalStateException.class, () -> keyView.transform(b -> b.getInt(0)),
                    "key view transform");
        });
        cases.put("close again is a no-op", map::close);
        runCases("use after close", cases, () -> { });
    }

    /**
     * An iterator whose look-ahead throws does not take the failure for the end. After close,
     * every later {@code next()} of every kind of copying iterator throws {@link OakClosedException},
     * and {@code hasNext()} never says the iteration ended (one used to answer "no more elements"
     * from its second call on, as if the iteration had ended normally). And a caller that catches a value's deserialization
     * failure and goes on gets every other mapping, once, in order: the failed look-ahead used to
     * end the iteration silently, and to throw from the {@code next()} of the mapping before, whose
     * element was lost (and which {@code remove()} then removed without it being returned).
     */
    @Test
    void iteratorsThatThrowAreNotTakenForEnded() {
        OakMap<Integer, Long> map = TestMaps.intLongMap(CHUNK);
        fill(map, 100);
        Map<String, Iterator<?>> its = new java.util.LinkedHashMap<>();
        its.put("keySet", map.keySet().iterator());
        its.put("values, one step", map.values().iterator());
        its.put("entrySet, hasNext", map.entrySet().iterator());
        its.put("descending keySet", map.descendingMap().keySet().iterator());
        its.put("descendingIterator", map.navigableKeySet().descendingIterator());
        its.put("subMap values", map.subMap(10, 90).values().iterator());
        its.put("empty subMap", map.subMap(11, 12).keySet().iterator());
        its.put("exhausted", map.headMap(3).keySet().iterator());
        its.get("values, one step").next();
        assertTrue(its.get("entrySet, hasNext").hasNext());
        Iterator<?> exhausted = its.get("exhausted");
        exhausted.next();
        exhausted.next();
        assertFalse(exhausted.hasNext());
        map.close();
        Map<String, Executable> cases = new java.util.LinkedHashMap<>();
        its.forEach((name, it) -> cases.put(name, () -> {
            for (int i = 0; i < 3; i++) {
                assertClosed(name + " next() #" + i, it::next);
                try {
                    assertTrue(it.hasNext(), name + " hasNext() #" + i + " said the iteration ended");
                } catch (OakClosedException expected) {
                    // or true, for a mapping looked ahead to before close, which next() refuses
                }
            }
        }));
        runCases("iterators after close", cases, () -> { });

        long bad = -5L;
        OakSerializer<Long> failsOnBad = new OakSerializer<>() {
            @Override
            public void serialize(Long v, OakScopedWriteBuffer target) {
                target.putLong(0, v);
            }

            @Override
            public Long deserialize(OakScopedReadBuffer source) {
                long v = source.getLong(0);
                if (v == bad) {
                    throw new Poison("cannot read " + v);
                }
                return v;
            }

            @Override
            public int calculateSize(Long v) {
                return 8;
            }
        };
        try (OakMap<Integer, Long> m = longMap(TestMaps.INT_KEY, failsOnBad, TestMaps.INT_CMP)) {
            TreeMap<Integer, Long> model = fill(m, 50);
            m.put(51, bad);
            model.remove(51);
            for (boolean descending : new boolean[] {false, true}) {
                NavigableMap<Integer, Long> view = descending ? m.descendingMap() : m;
                List<Integer> seen = new ArrayList<>();
                int failures = 0;
                Iterator<Map.Entry<Integer, Long>> it = view.entrySet().iterator();
                while (true) {
                    try {
                        if (!it.hasNext()) {
                            break;
                        }
                        seen.add(it.next().getKey());
                    } catch (Poison expected) {
                        failures++;
                        assertTrue(failures < 5, "the same failure again and again");
                    }
                }
                String ctx = descending ? "descending" : "ascending";
                assertEquals(1, failures, ctx);
                NavigableMap<Integer, Long> expected = descending ? model.descendingMap() : model;
                assertEquals(new ArrayList<>(expected.keySet()), seen, ctx + ": every readable mapping, once");
            }
            Iterator<Long> values = m.values().iterator();
            for (int i = 0; i < 26; i++) {
                assertEquals(20L * i, values.next()); // the value of key 50 last
            }
            assertThrows(Poison.class, values::hasNext);
            values.remove(); // the mapping last returned: key 50, not 51
            assertNull(m.get(50));
            assertTrue(m.containsKey(51));
            assertTrue(values.hasNext());
            assertEquals(520L, values.next());
        }
    }

    /**
     * Serializers that close their map in the middle of their work: the close another thread may do
     * at any moment, made certain. The serializer's next access to the map's memory fails, and the
     * caller must see {@link OakClosedException}, not a serialization failure blamed on the
     * serializer (CI once saw {@code OakSerializationException: serializer threw:
     * IllegalStateException: Already closed} from a put racing close), and not an arena exception.
     */
    @Test
    void closeInsideASerializerIsReportedAsClosed() {
        AtomicReference<OakMap<Integer, Long>> target =
                new AtomicReference<>();
        long closer = -7L;
        OakSerializer<Long> closingValues = new OakSerializer<>() {
            @Override
            public void serialize(Long v, OakScopedWriteBuffer buffer) {
                if (v == closer) {
                    target.get().close();
                }
                buffer.putLong(0, v);
            }

            @Override
            public Long deserialize(OakScopedReadBuffer buffer) {
                long first = buffer.getLong(0);
                if (first == 1L) { // the mapping of key 1 closes the map while being read
                    target.get().close();
                }
                return buffer.getLong(0);
            }

            @Override
            public int calculateSize(Long v) {
                return 8;
            }
        };
        int closingKey = 99;
        OakSerializer<Integer> closingKeys = new OakSerializer<>() {
            @Override
            public void serialize(Integer k, OakScopedWriteBuffer buffer) {
                if (k == closingKey) {
                    target.get().close();
                }
                TestMaps.INT_KEY.serialize(k, buffer);
            }

            @Override
            public Integer deserialize(OakScopedReadBuffer buffer) {
                return TestMaps.INT_KEY.deserialize(buffer);
            }

            @Override
            public int calculateSize(Integer k) {
                return 4;
            }
        };
        Map<String, Consumer<OakMap<Integer, Long>>> cases = new java.util.LinkedHashMap<>();
        cases.put("put of a value whose serializer closes", m -> m.put(2, closer));
        cases.put("replace of a value whose serializer closes", m -> m.replace(3, closer));
        cases.put("merge of a value whose serializer closes", m -> m.merge(3, 0L, (a, b) -> closer));
        cases.put("insertion of a key whose serializer closes", m -> m.put(closingKey, 5L));
        cases.put("copying get whose deserializer closes", m -> m.get(1));
        cases.put("copying scan whose deserializer closes", m -> m.values().forEach(v -> { }));
        cases.put("zc transform whose deserializer closes", m -> m.zc().get(1).transform(closingValues::deserialize));
        Map<String, Executable> runs = new java.util.LinkedHashMap<>();
        for (Map.Entry<String, Consumer<OakMap<Integer, Long>>> c : cases.entrySet()) {
            runs.put(c.getKey(), () -> {
                OakMap<Integer, Long> map = longMap(closingKeys, closingValues, TestMaps.INT_CMP);
                target.set(map);
                for (int k = 1; k <= 50; k++) {
                    map.put(k, (long) k);
                }
                assertClosed(c.getKey(), () -> c.getValue().accept(map));
                assertClosed(c.getKey() + ", then get", () -> map.get(5));
            });
        }
        runCases("close inside a serializer", runs, () -> { });
    }

    /**
     * A caller whose interrupt flag is set is served like any other, and keeps its flag: the map
     * never waits interruptibly (its locks ignore interrupts, its back-off parks return at once and
     * it re-checks, and the wait for a block mapped ahead restores the flag it consumed). Covers
     * writes that rebalance and take new blocks, reads, in-place computes, scans in both
     * directions, navigation, removals and clear, on every scheme, and a wait for another
     * thread's in-place write to the same value.
     */
    @ParameterizedTest(name = "memory={0}")
    @EnumSource(MemoryScheme.class)
    void interruptedCallersAreServedAndKeepTheirFlag(MemoryScheme scheme) throws Exception {
        try (OakMap<Integer, Long> map = TestMaps.builder(TestMaps.LONG_VAL, CHUNK)
                .keyMemory(scheme).valueMemory(scheme).build()) {
            TreeMap<Integer, Long> model = new TreeMap<>();
            Thread.currentThread().interrupt();
            try {
                for (int k = 0; k < 20_000; k++) { // many rebalances of 8-entry chunks, several blocks
                    map.put(k, (long) k);
                    model.put(k, (long) k);
                }
                for (int k = 0; k < 20_000; k += 3) {
                    assertEquals(k, map.remove(k));
                    model.remove(k);
                }
                for (int k = 1; k < 20_000; k += 7) {
                    int key = k;
                    assertEquals(model.containsKey(key), map.zc().computeIfPresent(key,
                            b -> b.putLong(0, b.getLong(0) + 1)));
                    model.computeIfPresent(key, (x, v) -> v + 1);
                    assertEquals(model.get(key), map.get(key));
                }
                assertEquals(model.firstEntry(), map.firstEntry());
                assertEquals(model.lastKey(), map.lastKey());
                assertEquals(model.ceilingKey(9_000), map.ceilingKey(9_000));
                assertHolds("interrupted caller", map, model);
                assertTrue(Thread.currentThread().isInterrupted(), "the flag survived the map's calls");
            } finally {
                Thread.interrupted();
            }
            // a write that waits for another thread's in-place write of the same value
            CountDownLatch inside = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Thread holder = new Thread(() -> map.zc().computeIfPresent(1, b -> {
                inside.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                b.putLong(0, 100L);
            }));
            holder.start();
            assertTrue(inside.await(10, TimeUnit.SECONDS), "holder entered its update");
            CompletableFuture<Boolean> waiterFlag = new CompletableFuture<>();
            Thread waiter = new Thread(() -> {
                Thread.currentThread().interrupt();
                try {
                    map.zc().computeIfPresent(1, b -> b.putLong(0, b.getLong(0) + 1));
                    waiterFlag.complete(Thread.currentThread().isInterrupted());
                } catch (Throwable t) {
                    waiterFlag.completeExceptionally(t);
                }
            });
            waiter.start();
            Thread.sleep(50); // the waiter spins on the held value meanwhile, interrupted
            assertFalse(waiterFlag.isDone(), "the waiter waited for the holder");
            release.countDown();
            holder.join(10_000);
            assertTrue(waiterFlag.get(10, TimeUnit.SECONDS), "the waiter kept its flag");
            waiter.join(10_000);
            assertEquals(101L, map.get(1), "both updates applied, the waiter's after the holder's");
        }
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void closeWhileOtherThreadsReadScanAndWrite(long seed) throws Exception {
        OakMap<Integer, Blob> map = TestMaps.intBlobMap(CHUNK);
        Random init = new Random(seed);
        for (int k = 0; k < 3000; k++) {
            map.put(k, new Blob(k, 0, init.nextInt(100)));
        }
        AtomicInteger started = new AtomicInteger();
        AtomicInteger endedClosed = new AtomicInteger();
        List<Task> tasks = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            int tid = t;
            Random rnd = new Random(seed * 3 + t);
            tasks.add(() -> {
                started.incrementAndGet();
                OakZeroCopyMap<Integer, Blob> zc = map.zc();
                try {
                    while (true) {
                        int k = rnd.nextInt(3000);
                        switch (tid) {
                            case 0 -> { // point reads, copying and zero-copy
                                Blob b = map.get(k);
                                if (b != null) {
                                    b.ofKey(k);
                                }
                                OakUnscopedBuffer v = zc.get(k);
                                if (v != null) {
                                    try {
                                        v.transform(Blob::read).ofKey(k);
                                    } catch (DeletedMemoryAccessException removed) {
                                        // removed by the writer meanwhile
                                    }
                                }
                            }
                            case 1 -> { // scans, both directions, copying and zero-copy
                                if (rnd.nextBoolean()) {
                                    for (Map.Entry<Integer, Blob> e : map.descendingMap().entrySet()) {
                                        e.getValue().ofKey(e.getKey());
                                    }
                                } else {
                                    for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : zc.entryStreamSet()) {
                                        int key = TestMaps.readIntKey(e.getKey());
                                        try {
                                            e.getValue().transform(Blob::read).ofKey(key);
                                        } catch (DeletedMemoryAccessException removed) {
                                            // removed by the writer meanwhile
                                        }
                                    }
                                }
                            }
                            default -> { // writes
                                if (rnd.nextBoolean()) {
                                    map.put(k, new Blob(k, 1, rnd.nextInt(300)));
                                } else {
                                    zc.remove(k);
                                }
                            }
                        }
                    }
                } catch (OakClosedException expected) {
                    endedClosed.incrementAndGet();
                }
            });
        }
        tasks.add(() -> {
            while (started.get() < 3) {
                Thread.onSpinWait();
            }
            Thread.sleep(150 + new Random(seed).nextInt(200));
            map.close();
        });
        TestMaps.runConcurrently("close while in use, seed=" + seed, 30, tasks);
        assertEquals(3, endedClosed.get(), "every worker ends with OakClosedException");
        assertClosed("get after close", () -> map.get(1));
    }

    // ------------------------------------------------------------------------------------------
    // zero-copy views of removed mappings
    // ------------------------------------------------------------------------------------------

    @Test
    void removedValueViewsThrowEvenAfterMemoryReuse() {
        try (OakMap<Integer, Long> map = TestMaps.intLongMap(CHUNK)) {
            TreeMap<Integer, Long> model = fill(map, 200);
            OakZeroCopyMap<Integer, Long> zc = map.zc();
            Map<String, Consumer<Integer>> removals = new java.util.LinkedHashMap<>();
            removals.put("remove(k)", map::remove);
            removals.put("zc.remove(k)", zc::remove);
            removals.put("remove(k,v)", k -> assertTrue(map.remove(k, 10L * k)));
            removals.put("compute->null", k -> map.compute(k, (x, v) -> null));
            removals.put("computeIfPresent->null", k -> map.computeIfPresent(k, (x, v) -> null));
            removals.put("merge->null", k -> map.merge(k, 1L, (a, b) -> null));
            removals.put("keySet().remove", k -> assertTrue(map.keySet().remove(k)));
            removals.put("iterator.remove", k -> {
                Iterator<Integer> it = map.tailMap(k, true).keySet().iterator();
                assertEquals(k, it.next());
                it.remove();
            });
            removals.put("remove then re-insert same key", k -> {
                map.remove(k);
                map.put(k, -1L);
            });
            Map<Integer, OakUnscopedBuffer> views = new TreeMap<>();
            Map<Integer, String> how = new TreeMap<>();
            int key = 20;
            for (Map.Entry<String, Consumer<Integer>> r : removals.entrySet()) {
                OakUnscopedBuffer v = zc.get(key);
                assertEquals(10L * key, v.getLong(0));
                r.getValue().accept(key);
                if (r.getKey().startsWith("remove then re-insert")) {
                    model.put(key, -1L);
                } else {
                    model.remove(key);
                }
                views.put(key, v);
                how.put(key, r.getKey());
                key += 20;
            }
            List<String> failures = new ArrayList<>();
            checkRemovedViews("right after removal", views, how, failures);
            // reuse the memory: many insertions of values of the same size
            for (int k = 1000; k < 6000; k++) {
                map.put(k, 0x0BADC0DEL + k);
                model.put(k, 0x0BADC0DEL + k);
            }
            checkRemovedViews("after 5000 insertions of same-size values", views, how, failures);
            for (int k = 1000; k < 6000; k += 2) {
                map.remove(k);
                model.remove(k);
            }
            for (int k = 6000; k < 8000; k++) {
                map.put(k, 0x0BADC0DEL + k);
                model.put(k, 0x0BADC0DEL + k);
            }
            checkRemovedViews("after more removals and insertions", views, how, failures);
            if (!failures.isEmpty()) {
                fail(failures.size() + " failures:\n  " + String.join("\n  ", failures));
            }
            TestMaps.assertSameContents("after removed-view reads", map, model, new Random(3), 8000);
        }
    }

    private static void checkRemovedViews(String phase, Map<Integer, OakUnscopedBuffer> views,
                                          Map<Integer, String> how, List<String> failures) {
        for (Map.Entry<Integer, OakUnscopedBuffer> e : views.entrySet()) {
            OakUnscopedBuffer v = e.getValue();
            String ctx = phase + ", view of key " + e.getKey() + " removed by " + how.get(e.getKey());
            for (int rep = 0; rep < 3; rep++) {
                expectDeleted(ctx + " getLong", () -> v.getLong(0), failures);
                expectDeleted(ctx + " getInt", () -> v.getInt(4), failures);
                expectDeleted(ctx + " get", () -> v.get(0), failures);
                expectDeleted(ctx + " getBytes", () -> {
                    byte[] b = new byte[8];
                    v.getBytes(0, b, 0, 8);
                    return java.util.Arrays.toString(b);
                }, failures);
                expectDeleted(ctx + " transform", () -> v.transform(b -> b.getLong(0)), failures);
            }
        }
    }

    private static void expectDeleted(String ctx, java.util.concurrent.Callable<Object> read, List<String> failures) {
        try {
            Object got = read.call();
            failures.add(ctx + ": returned " + got + " instead of throwing DeletedMemoryAccessException");
        } catch (DeletedMemoryAccessException expected) {
            // good
        } catch (Throwable t) {
            failures.add(ctx + ": threw " + t + " instead of DeletedMemoryAccessException");
        }
    }

    @Test
    void viewOfAMovedValueNeverReadsForeignBytes() {
        try (OakMap<Integer, Blob> map = TestMaps.intBlobMap(CHUNK)) {
            for (int k = 0; k < 200; k++) {
                map.put(k, new Blob(k, 0, 10));
            }
            OakZeroCopyMap<Integer, Blob> zc = map.zc();
            List<String> failures = new ArrayList<>();
            for (int k = 0; k < 200; k += 10) {
                OakUnscopedBuffer v = zc.get(k);
                assertEquals(new Blob(k, 0, 10), Blob.read(v));
                Blob bigger = new Blob(k, 1, 500);
                map.put(k, bigger); // outgrows the slice: the value moves
                for (int j = 0; j < 50; j++) {
                    map.put(1000 + k * 100 + j, new Blob(-1, j, 10)); // reuse the old slice's size
                }
                try {
                    Blob seen = v.transform(Blob::read);
                    if (!seen.equals(bigger)) {
                        failures.add("key " + k + ": view of moved value read " + seen);
                    }
                } catch (DeletedMemoryAccessException expected) {
                    // documented: the value was replaced by a different slice
                } catch (Throwable t) {
                    failures.add("key " + k + ": view of moved value threw " + t);
                }
            }
            if (!failures.isEmpty()) {
                fail(String.join("\n", failures));
            }
        }
    }
}
