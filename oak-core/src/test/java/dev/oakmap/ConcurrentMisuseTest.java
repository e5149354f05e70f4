package dev.oakmap;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Concurrency misuse: close() racing with updates whose lambdas are in the middle of running, a
 * compute lambda that blocks while other threads work on its key and neighbours, one iterator
 * shared by two threads, and user functions that throw an {@link Error}.
 */
class ConcurrentMisuseTest {

    private static final long SEED = 0xC0FFEEL;
    private static final Duration LIMIT = Duration.ofSeconds(10);

    private static OakMap<Integer, Long> map(MemoryScheme values) {
        return TestMaps.builder(TestMaps.LONG_VAL, 8).valueMemory(values).build();
    }

    private static void join(Thread t) throws InterruptedException {
        t.join(TimeUnit.SECONDS.toMillis(8));
        assertFalse(t.isAlive(), t.getName() + " hung: " + stack(t));
    }

    private static String stack(Thread t) {
        StringBuilder sb = new StringBuilder();
        for (StackTraceElement e : t.getStackTrace()) {
            sb.append("\n\tat ").append(e);
        }
        return sb.toString();
    }

    private static Thread start(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    // ------------------------------------------------------------------------------------------
    // 1. close() racing with updates whose lambdas are running
    // ------------------------------------------------------------------------------------------

    enum Op { COMPUTE, MERGE, COMPUTE_IF_PRESENT, COMPUTE_IF_ABSENT, ZC_COMPUTE_IF_PRESENT, ZC_PUT_OR_COMPUTE }

    /** Runs {@code op} on {@code key} of {@code map}; {@code inside} runs inside its lambda. */
    private static Object run(OakMap<Integer, Long> map, Op op, int key, Runnable inside) {
        switch (op) {
            case COMPUTE:
                return map.compute(key, (k, v) -> { inside.run(); return v == null ? 1L : v + 1; });
            case MERGE:
                return map.merge(key, 1L, (a, b) -> { inside.run(); return a + b; });
            case COMPUTE_IF_PRESENT:
                return map.computeIfPresent(key, (k, v) -> { inside.run(); return v + 1; });
            case COMPUTE_IF_ABSENT:
                return map.computeIfAbsent(key, k -> { inside.run(); return 7L; });
            case ZC_COMPUTE_IF_PRESENT:
                return map.zc().computeIfPresent(key, b -> { inside.run(); b.putLong(0, b.getLong(0) + 1); });
            case ZC_PUT_OR_COMPUTE:
                return map.zc().putIfAbsentComputeIfPresent(key, 1L,
                        b -> { inside.run(); b.putLong(0, b.getLong(0) + 1); });
            default:
                throw new AssertionError(op);
        }
    }

    /** Only normal results and OakClosedException are acceptable. */
    private static void record(Throwable t, List<Throwable> bad) {
        if (!(t instanceof OakClosedException)) {
            bad.add(t);
        }
    }

    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void closeWhileLambdasRun(MemoryScheme scheme) {
        assertTimeoutPreemptively(LIMIT, () -> {
            for (Op op : Op.values()) {
                OakMap<Integer, Long> map = map(scheme);
                for (int i = 0; i < 200; i++) {
                    if (op != Op.COMPUTE_IF_ABSENT || i % 2 == 0) {
                        map.put(i, (long) i);
                    }
                }
                List<Throwable> bad = Collections.synchronizedList(new ArrayList<>());
                CountDownLatch entered = new CountDownLatch(1);
                CountDownLatch release = new CountDownLatch(1);
                int blockedKey = op == Op.COMPUTE_IF_ABSENT ? 101 : 100;
                Thread blocked = start("blocked-" + op, () -> {
                    try {
                        run(map, op, blockedKey, () -> {
                            entered.countDown();
                            try {
                                release.await(5, TimeUnit.SECONDS);
                            } catch (InterruptedException e) {
                                throw new RuntimeException(e);
                            }
                        });
                    } catch (Throwable t) {
                        record(t, bad);
                    }
                });
                // the hammers start once the blocked lambda runs: started before, they could
                // insert or remove its key first, and its lambda would never run
                assertTrue(entered.await(5, TimeUnit.SECONDS), op + ": lambda never entered");
                AtomicBoolean stop = new AtomicBoolean();
                List<Thread> hammer = new ArrayList<>();
                for (int w = 0; w < 2; w++) {
                    int ww = w;
                    hammer.add(start("hammer-" + op + "-" + w, () -> {
                        Random rnd = new Random(SEED + ww);
                        try {
                            while (!stop.get()) {
                                int k = rnd.nextInt(200);
                                run(map, Op.values()[rnd.nextInt(Op.values().length)], k, () -> { });
                            }
                        } catch (Throwable t) {
                            record(t, bad);
                        }
                    }));
                }
                Thread.sleep(5);
                Thread closer = start("closer-" + op, map::close);
                join(closer);
                release.countDown();
                join(blocked);
                stop.set(true);
                for (Thread t : hammer) {
                    join(t);
                }
                if (!bad.isEmpty()) {
                    AssertionError e = new AssertionError(scheme + " " + op + ": unexpected " + bad.get(0), bad.get(0));
                    bad.stream().skip(1).forEach(e::addSuppressed);
                    throw e;
                }
                assertThrows(OakClosedException.class, () -> map.get(1));
            }
        });
    }

    // ------------------------------------------------------------------------------------------
    // 2. a compute lambda blocked on its key while others work on it and its neighbours
    // ------------------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void blockedComputeWhileOthersWork(MemoryScheme scheme) {
        assertTimeoutPreemptively(LIMIT, () -> {
            try (OakMap<Integer, Long> map = map(scheme)) {
                int k = 50;
                for (int i = 0; i < 100; i++) {
                    map.put(i, 0L);
                }
                CountDownLatch entered = new CountDownLatch(1);
                CountDownLatch release = new CountDownLatch(1);
                AtomicInteger calls = new AtomicInteger();
                Thread blocked = start("blocked", () -> map.compute(k, (kk, v) -> {
                    if (calls.getAndIncrement() == 0) {
                        entered.countDown();
                        try {
                            release.await(5, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            throw new RuntimeException(e);
                        }
                    }
                    return v + 1;
                }));
                assertTrue(entered.await(5, TimeUnit.SECONDS));
                List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
                AtomicBoolean stop = new AtomicBoolean();
                int incrementers = 2;
                int perIncrementer = 50;
                List<Thread> workers = new ArrayList<>();
                for (int w = 0; w < incrementers; w++) {
                    workers.add(start("inc-" + w, () -> {
                        try {
                            for (int i = 0; i < perIncrementer; i++) {
                                if (i % 2 == 0) {
                                    map.compute(k, (kk, v) -> v + 1);
                                } else {
                                    map.merge(k, 1L, Long::sum);
                                }
                            }
                        } catch (Throwable t) {
                            errors.add(t);
                        }
                    }));
                }
                Thread neighbours = start("neighbours", () -> {
                    Random rnd = new Random(SEED);
                    try {
                        while (!stop.get()) {
                            int n = k + rnd.nextInt(21) - 10;
                            if (n == k) {
                                continue;
                            }
                            switch (rnd.nextInt(4)) {
                                case 0 -> map.put(n, (long) n);
                                case 1 -> map.remove(n);
                                case 2 -> map.compute(n, (kk, v) -> v == null ? 1L : v + 1);
                                default -> map.put(1000 + rnd.nextInt(1000), 1L); // splits
                            }
                        }
                    } catch (Throwable t) {
                        errors.add(t);
                    }
                });
                Thread scanner = start("scanner", () -> {
                    try {
                        while (!stop.get()) {
                            for (Map.Entry<Integer, Long> e : map.subMap(40, 60).entrySet()) {
                                assertNotNull(e.getValue());
                            }
                            map.descendingMap().firstEntry();
                            map.zc().entryStreamSet().forEach(e -> {
                                try {
                                    e.getValue().getLong(0);
                                } catch (DeletedMemoryAccessException removedMeanwhile) {
                                    // documented: a neighbour removed or replaced meanwhile
                                }
                            });
                        }
                    } catch (Throwable t) {
                        errors.add(t);
                    }
                });
                Thread.sleep(300); // let the others run (and block) while the lambda holds the key
                release.countDown();
                join(blocked);
                for (Thread t : workers) {
                    join(t);
                }
                stop.set(true);
                join(neighbours);
                join(scanner);
                if (!errors.isEmpty()) {
                    AssertionError e = new AssertionError(scheme + ": " + errors.get(0), errors.get(0));
                    throw e;
                }
                assertEquals(1L + incrementers * perIncrementer, map.get(k), scheme + ": lost or doubled update");
            }
        });
    }

    // ------------------------------------------------------------------------------------------
    // 3. one iterator shared by two threads
    // ------------------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void sharedIterator(MemoryScheme scheme) {
        assertTimeoutPreemptively(LIMIT, () -> {
            try (OakMap<Integer, Long> map = map(scheme)) {
                TreeMap<Integer, Long> model = new TreeMap<>();
                for (int i = 0; i < 2000; i++) {
                    map.put(i, 10L * i);
                    model.put(i, 10L * i);
                }
                List<Function<OakMap<Integer, Long>, Iterator<?>>> kinds = List.of(
                        m -> m.entrySet().iterator(),
                        m -> m.descendingMap().keySet().iterator(),
                        m -> m.zc().entryStreamSet().iterator(),
                        m -> m.zc().entrySet().iterator(),
                        m -> m.zc().valueStreamSet().iterator());
                Map<String, Throwable> seen = new ConcurrentHashMap<>();
                for (int kind = 0; kind < kinds.size(); kind++) {
                    for (int round = 0; round < 5; round++) {
                        Iterator<?> it = kinds.get(kind).apply(map);
                        List<Thread> ts = new ArrayList<>();
                        AtomicInteger got = new AtomicInteger();
                        for (int w = 0; w < 2; w++) {
                            ts.add(start("it-" + kind + "-" + w, () -> {
                                try {
                                    while (true) {
                                        Object o = it.next();
                                        if (o instanceof Map.Entry<?, ?> e) {
                                            touch(e.getKey());
                                            touch(e.getValue());
                                        } else {
                                            touch(o);
                                        }
                                        got.incrementAndGet();
                                    }
                                } catch (NoSuchElementException done) {
                                    // end
                                } catch (Throwable t) {
                                    seen.putIfAbsent(t.getClass().getName(), t);
                                    if (t instanceof Error && !(t instanceof AssertionError)) {
                                        throw (Error) t;
                                    }
                                }
                            }));
                        }
                        for (Thread t : ts) {
                            join(t);
                        }
                        assertTrue(got.get() <= 2 * model.size() + 2, "iterator returned " + got.get());
                    }
                }
                // the map is intact and usable
                assertEquals(TestMaps.entries(model.entrySet()), TestMaps.entries(map.entrySet()));
                assertEquals(model.size(), map.size());
                map.put(5000, 1L);
                map.compute(7, (k, v) -> v + 1);
                assertEquals(71L, map.get(7));
                for (Throwable t : seen.values()) {
                    if (t instanceof NullPointerException || t instanceof AssertionError) {
                        // documented below: only these would point at corruption inside
                        System.err.println("shared iterator (" + scheme + "): " + t);
                    }
                }
                System.err.println("shared iterator (" + scheme + ") exceptions seen: " + seen.keySet());
                seen.values().forEach(t -> System.err.println("  " + t + " at " + List.of(t.getStackTrace()).subList(0,
                        Math.min(6, t.getStackTrace().length))));
            }
        });
    }

    private static void touch(Object o) {
        if (o instanceof OakBuffer b) {
            b.getInt(0); // keys are 4 bytes, values 8
        } else if (o instanceof Long l) {
            if (l % 10 != 0) {
                throw new AssertionError("torn value " + l);
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // 4. user functions throwing Errors
    // ------------------------------------------------------------------------------------------

    /** Value serializer that throws {@link #bomb} when asked to handle the value -1. */
    static class BombSerializer implements OakSerializer<Long> {
        volatile Error bomb;
        volatile int where; // 0 serialize, 1 deserialize, 2 calculateSize

        @Override
        public void serialize(Long v, OakScopedWriteBuffer target) {
            if (where == 0 && v == -1L) {
                throw bomb;
            }
            target.putLong(0, v);
        }

        @Override
        public Long deserialize(OakScopedReadBuffer source) {
            long v = source.getLong(0);
            if (where == 1 && v == -1L) {
                throw bomb;
            }
            return v;
        }

        @Override
        public int calculateSize(Long v) {
            if (where == 2 && v == -1L) {
                throw bomb;
            }
            return 8;
        }
    }

    /** Comparator that throws {@link #bomb} when comparing the key 666. */
    static final class BombComparator implements OakComparator<Integer> {
        volatile Error bomb;

        @Override
        public int compareKeys(Integer a, Integer b) {
            if (bomb != null && (a == 666 || b == 666)) {
                throw bomb;
            }
            return TestMaps.INT_CMP.compareKeys(a, b);
        }

        @Override
        public int compareKeyAndSerializedKey(Integer key, OakScopedReadBuffer b) {
            if (bomb != null && key == 666) {
                throw bomb;
            }
            return TestMaps.INT_CMP.compareKeyAndSerializedKey(key, b);
        }

        @Override
        public int compareSerializedKeys(OakScopedReadBuffer a, OakScopedReadBuffer b) {
            return TestMaps.INT_CMP.compareSerializedKeys(a, b);
        }
    }

    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void errorsFromUserFunctions(MemoryScheme scheme) {
        assertTimeoutPreemptively(LIMIT, () -> {
            BombSerializer ser = new BombSerializer();
            BombComparator cmp = new BombComparator();
            try (OakMap<Integer, Long> map = new OakMapBuilder<>(TestMaps.INT_KEY, ser, cmp)
                    .chunkCapacity(8).memoryCapacity(TestMaps.SMALL_CAPACITY).blockSize(TestMaps.SMALL_BLOCK)
                    .keyMemory(scheme).valueMemory(scheme).build()) {
                NavigableMap<Integer, Long> model = new TreeMap<>();
                for (int i = 0; i < 100; i++) {
                    map.put(i, (long) i);
                    model.put(i, (long) i);
                }
                List<Error> errors = List.of(new StackOverflowError("test"), new OutOfMemoryError("test"),
                        new AssertionError("test"), new ExceptionInInitializerError("test"));
                for (Error err : errors) {
                    String ctx = scheme + " " + err.getClass().getSimpleName();
                    int k = 40;
                    expect(err, ctx + " compute", () -> map.compute(k, (kk, v) -> { throw err; }));
                    expect(err, ctx + " computeIfPresent", () -> map.computeIfPresent(k, (kk, v) -> { throw err; }));
                    expect(err, ctx + " computeIfAbsent", () -> map.computeIfAbsent(500, kk -> { throw err; }));
                    expect(err, ctx + " merge", () -> map.merge(k, 1L, (a, b) -> { throw err; }));
                    expect(err, ctx + " zc.computeIfPresent", () -> map.zc().computeIfPresent(k, b -> {
                        b.putLong(0, 12345L); // a partial write, rolled back
                        throw err;
                    }));
                    expect(err, ctx + " zc.putIfAbsentComputeIfPresent", () ->
                            map.zc().putIfAbsentComputeIfPresent(k, 1L, b -> { throw err; }));
                    ser.bomb = err;
                    for (int where = 0; where < 3; where += 2) {
                        ser.where = where;
                        expect(err, ctx + " put/serializer " + where, () -> map.put(k, -1L));
                        expect(err, ctx + " put new/serializer " + where, () -> map.put(501, -1L));
                        expect(err, ctx + " compute/serializer " + where, () -> map.compute(k, (kk, v) -> -1L));
                    }
                    ser.bomb = null;
                    ser.where = -1;
                    // a value that fails to deserialize, read by get, compute, iteration
                    map.put(k + 1, -1L);
                    ser.bomb = err;
                    ser.where = 1;
                    expect(err, ctx + " get/deserializer", () -> map.get(k + 1));
                    expect(err, ctx + " compute/deserializer", () -> map.compute(k + 1, (kk, v) -> 1L));
                    expect(err, ctx + " iterate/deserializer", () -> map.values().forEach(v -> { }));
                    ser.bomb = null;
                    ser.where = -1;
                    map.put(k + 1, (long) (k + 1));
                    cmp.bomb = err;
                    expect(err, ctx + " put/comparator", () -> map.put(666, 1L));
                    expect(err, ctx + " get/comparator", () -> map.get(666));
                    cmp.bomb = null;
                    // the keys are not locked: another thread can update them at once
                    Thread other = start("other", () -> {
                        map.compute(k, (kk, v) -> v + 1);
                        map.compute(k, (kk, v) -> v - 1);
                        map.compute(k + 1, (kk, v) -> v + 1);
                        map.compute(k + 1, (kk, v) -> v - 1);
                        map.zc().computeIfPresent(k, b -> b.putLong(0, b.getLong(0)));
                    });
                    join(other);
                    assertEquals(TestMaps.entries(model.entrySet()), TestMaps.entries(map.entrySet()), ctx);
                    assertEquals(model.size(), map.size(), ctx);
                }
            }
        });
    }

    // ------------------------------------------------------------------------------------------
    // 4b. user functions throwing a checked exception they do not declare ("sneaky throw", as
    //     Kotlin, Groovy, Lombok's @SneakyThrows or a rethrowing generic helper do)
    // ------------------------------------------------------------------------------------------

    @SuppressWarnings("unchecked")
    /**
     * Runs each case, expecting it to throw {@code expected} itself, and then {@code after}; adds
     * a line to {@code failures} for each case that returned or threw something else.
     */
    private static void expectEach(Throwable expected, Map<String, Runnable> cases, Runnable after, List<String> failures) {
        for (Map.Entry<String, Runnable> c : cases.entrySet()) {
            try {
                c.getValue().run();
                failures.add(c.getKey() + ": no exception");
            } catch (Throwable t) {
                if (t != expected) {
                    failures.add(c.getKey() + ": got " + t);
                }
            }
            after.run();
        }
    }

    private static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
        throw (T) t;
    }

    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void sneakyCheckedExceptionsFromUserFunctions(MemoryScheme scheme) {
        assertTimeoutPreemptively(LIMIT, () -> {
            Exception boom = new java.io.IOException("sneaky");
            Error marker = new Error("marker"); // the serializer rethrows boom when it sees this bomb
            BombSerializer ser = new BombSerializer() {
                @Override
                public void serialize(Long v, OakScopedWriteBuffer target) {
                    if (where == 0 && v == -1L) {
                        throw ConcurrentMisuseTest.<RuntimeException>sneaky(boom);
                    }
                    target.putLong(0, v);
                }

                @Override
                public Long deserialize(OakScopedReadBuffer source) {
                    long v = source.getLong(0);
                    if (where == 1 && v == -1L) {
                        throw ConcurrentMisuseTest.<RuntimeException>sneaky(boom);
                    }
                    return v;
                }
            };
            ser.where = -1;
            try (OakMap<Integer, Long> map = new OakMapBuilder<>(TestMaps.INT_KEY, ser, TestMaps.INT_CMP)
                    .chunkCapacity(8).memoryCapacity(TestMaps.SMALL_CAPACITY).blockSize(TestMaps.SMALL_BLOCK)
                    .keyMemory(scheme).valueMemory(scheme).build()) {
                TreeMap<Integer, Long> model = new TreeMap<>();
                for (int i = 0; i < 100; i++) {
                    map.put(i, (long) i);
                    model.put(i, (long) i);
                }
                Map<String, Runnable> cases = new java.util.LinkedHashMap<>();
                cases.put("compute", () -> map.compute(40, (k, v) -> { throw sneaky(boom); }));
                cases.put("computeIfPresent", () -> map.computeIfPresent(41, (k, v) -> { throw sneaky(boom); }));
                cases.put("merge", () -> map.merge(42, 1L, (a, b) -> { throw sneaky(boom); }));
                cases.put("zc.computeIfPresent", () -> map.zc().computeIfPresent(43, b -> { throw sneaky(boom); }));
                cases.put("zc.putIfAbsentComputeIfPresent",
                        () -> map.zc().putIfAbsentComputeIfPresent(44, 1L, b -> { throw sneaky(boom); }));
                cases.put("compute/serializer", () -> { ser.where = 0; map.compute(45, (k, v) -> -1L); });
                cases.put("put/serializer", () -> { ser.where = 0; map.put(46, -1L); });
                List<String> failures = new ArrayList<>();
                ser.where = -1;
                expectEach(boom, cases, () -> ser.where = -1, failures);
                // a value that fails to deserialize under put (returning the old value) and compute
                for (int k = 47; k <= 50; k++) {
                    map.put(k, -1L);
                }
                cases.clear();
                cases.put("put/deserializer", () -> { ser.where = 1; map.put(47, 47L); });
                cases.put("compute/deserializer", () -> { ser.where = 1; map.compute(48, (k, v) -> 48L); });
                cases.put("remove/deserializer", () -> { ser.where = 1; map.remove(49); });
                cases.put("replace/deserializer", () -> { ser.where = 1; map.replace(50, 50L); });
                expectEach(boom, cases, () -> ser.where = -1, failures);
                // no key stays locked: another thread updates each one at once (restoring 47 to 50)
                for (int k = 40; k <= 50; k++) {
                    int kk = k;
                    AtomicReference<Throwable> err = new AtomicReference<>();
                    Thread other = new Thread(() -> {
                        try {
                            map.put(kk, (long) kk);
                            map.compute(kk, (x, v) -> v + 1);
                            map.compute(kk, (x, v) -> v - 1);
                        } catch (Throwable t) {
                            err.set(t);
                        }
                    }, "other-" + k);
                    other.setDaemon(true);
                    other.start();
                    other.join(1000);
                    if (other.isAlive()) {
                        failures.add("key " + k + " stayed locked: " + stack(other));
                        other.interrupt();
                    } else if (err.get() != null) {
                        failures.add("key " + k + ": " + err.get());
                    }
                }
                if (failures.isEmpty()) {
                    assertEquals(TestMaps.entries(model.entrySet()), TestMaps.entries(map.entrySet()), scheme.toString());
                }
                assertTrue(failures.isEmpty(), scheme + ": " + String.join("\n", failures));
            }
        });
    }

    /**
     * A key or value serializer that fails with an Error or an undeclared checked exception on an
     * insertion: the slice allocated for it is given back (1000 failures leak nothing).
     */
    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void failedSerializationsLeakNoMemory(MemoryScheme scheme) {
        assertTimeoutPreemptively(LIMIT, () -> {
            List<Throwable> failures = List.of(new OutOfMemoryError("test"), new java.io.IOException("sneaky"));
            for (Throwable failure : failures) {
                AtomicBoolean armed = new AtomicBoolean();
                OakSerializer<Integer> keys = new OakSerializer<>() {
                    @Override
                    public void serialize(Integer k, OakScopedWriteBuffer b) {
                        if (armed.get() && k >= 1000) {
                            throw ConcurrentMisuseTest.<RuntimeException>sneaky(failure);
                        }
                        TestMaps.INT_KEY.serialize(k, b);
                    }

                    @Override
                    public Integer deserialize(OakScopedReadBuffer b) {
                        return TestMaps.INT_KEY.deserialize(b);
                    }

                    @Override
                    public int calculateSize(Integer k) {
                        return 4;
                    }
                };
                OakSerializer<Long> vals = new OakSerializer<>() {
                    @Override
                    public void serialize(Long v, OakScopedWriteBuffer b) {
                        if (armed.get() && v < 0) {
                            throw ConcurrentMisuseTest.<RuntimeException>sneaky(failure);
                        }
                        b.putLong(0, v);
                    }

                    @Override
                    public Long deserialize(OakScopedReadBuffer b) {
                        return b.getLong(0);
                    }

                    @Override
                    public int calculateSize(Long v) {
                        return 8;
                    }
                };
                try (OakMap<Integer, Long> map = new OakMapBuilder<>(keys, vals, TestMaps.INT_CMP)
                        .chunkCapacity(8).memoryCapacity(TestMaps.SMALL_CAPACITY).blockSize(TestMaps.SMALL_BLOCK)
                        .keyMemory(scheme).valueMemory(scheme).build()) {
                    for (int i = 0; i < 100; i++) {
                        map.put(i, (long) i);
                    }
                    armed.set(true);
                    long before = map.memoryUsed();
                    for (int i = 0; i < 1000; i++) {
                        int k = i;
                        Throwable t = assertThrows(Throwable.class, () -> map.put(1000 + k, 1L));
                        assertSame(failure, t);
                        t = assertThrows(Throwable.class, () -> map.put(k % 100, -1L));
                        assertSame(failure, t);
                        t = assertThrows(Throwable.class, () -> map.put(2000 + k, -1L));
                        assertSame(failure, t);
                    }
                    long leaked = map.memoryUsed() - before;
                    assertTrue(leaked < 1000, scheme + " " + failure + ": 3000 failed insertions leaked "
                            + leaked + " bytes");
                    armed.set(false);
                    assertEquals(100, map.size());
                    for (int i = 0; i < 100; i++) {
                        assertEquals((long) i, map.get(i));
                    }
                }
            }
        });
    }

    /**
     * A comparator whose serializedKeyPrefix throws an undeclared checked exception: the map
     * falls back to prefixes of deserialized keys, as it does for exceptions (see
     * {@link OakComparator#serializedKeyPrefix}); no chunk stays frozen by a failed rebalance.
     */
    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void sneakyThrowingSerializedKeyPrefix(MemoryScheme scheme) {
        assertTimeoutPreemptively(LIMIT, () -> {
            OakComparator<Integer> cmp = new TestMaps.IntComparator() {
                @Override
                public long keyPrefix(Integer key) {
                    return (key ^ Integer.MIN_VALUE) & 0xFFFFFFFFL;
                }

                @Override
                public long serializedKeyPrefix(OakScopedReadBuffer k) {
                    throw ConcurrentMisuseTest.<RuntimeException>sneaky(new java.io.IOException("sneaky"));
                }
            };
            try (OakMap<Integer, Long> map = new OakMapBuilder<>(TestMaps.INT_KEY, TestMaps.LONG_VAL, cmp)
                    .chunkCapacity(8).memoryCapacity(TestMaps.SMALL_CAPACITY).blockSize(TestMaps.SMALL_BLOCK)
                    .keyMemory(scheme).valueMemory(scheme).build()) {
                TreeMap<Integer, Long> model = new TreeMap<>();
                Random rnd = new Random(SEED);
                AtomicReference<Throwable> err = new AtomicReference<>();
                Thread writer = start("writer", () -> {
                    try {
                        for (int i = 0; i < 2000; i++) {
                            int k = rnd.nextInt(500);
                            if (rnd.nextInt(4) == 0) {
                                map.remove(k);
                                model.remove(k);
                            } else {
                                map.put(k, (long) i);
                                model.put(k, (long) i);
                            }
                        }
                    } catch (Throwable t) {
                        err.set(t);
                    }
                });
                writer.join(8000);
                if (writer.isAlive()) {
                    fail(scheme + ": writer hung: " + stack(writer));
                }
                if (err.get() != null) {
                    throw new AssertionError(scheme + ": " + err.get(), err.get());
                }
                assertEquals(TestMaps.entries(model.entrySet()), TestMaps.entries(map.entrySet()));
            }
        });
    }

    /**
     * Two threads sharing one iterator, each calling next() then remove(). Exceptions are
     * acceptable (the iterator is not thread-safe; seen: IllegalStateException, and on some runs
     * ArrayIndexOutOfBoundsException or NullPointerException from the racing cursor), and so is
     * the removal of a key that no next() returned: unlike ConcurrentSkipListMap's iterator (whose
     * remove() takes the node its own next() returned), Oak's remove() takes the shared cursor's
     * current or previous mapping, which the other thread's hasNext() may have moved. What must
     * hold: no hang, no more removals than remove() calls, no other mapping changed, and a map
     * that stays consistent (size, both directions) and usable.
     */
    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void sharedIteratorRemove(MemoryScheme scheme) {
        assertTimeoutPreemptively(LIMIT, () -> {
            try (OakMap<Integer, Long> map = map(scheme)) {
                List<Function<OakMap<Integer, Long>, Iterator<?>>> kinds = List.of(
                        m -> m.keySet().iterator(),
                        m -> m.descendingMap().entrySet().iterator(),
                        m -> m.zc().keyStreamSet().iterator(),
                        m -> m.zc().entrySet().iterator());
                Map<String, Throwable> seen = new ConcurrentHashMap<>();
                for (int kind = 0; kind < kinds.size(); kind++) {
                    for (int round = 0; round < 5; round++) {
                        map.clear();
                        for (int i = 0; i < 1000; i++) {
                            map.put(i, 10L * i);
                        }
                        Iterator<?> it = kinds.get(kind).apply(map);
                        AtomicInteger nexts = new AtomicInteger();
                        List<Thread> ts = new ArrayList<>();
                        for (int w = 0; w < 2; w++) {
                            ts.add(start("itrm-" + kind + "-" + w, () -> {
                                int errors = 0;
                                while (errors < 1000) {
                                    try {
                                        it.next();
                                        nexts.incrementAndGet();
                                        it.remove();
                                    } catch (NoSuchElementException done) {
                                        return;
                                    } catch (Throwable t) {
                                        errors++;
                                        seen.putIfAbsent(t.getClass().getName(), t);
                                        if (t instanceof Error && !(t instanceof AssertionError)) {
                                            throw (Error) t;
                                        }
                                    }
                                }
                            }));
                        }
                        for (Thread t : ts) {
                            join(t);
                        }
                        assertTrue(1000 - map.size() <= nexts.get(), scheme + " kind " + kind + ": "
                                + (1000 - map.size()) + " removed by " + nexts.get() + " next() calls");
                        for (int i = 0; i < 1000; i++) {
                            Long v = map.get(i);
                            assertTrue(v == null || v == 10L * i, "key " + i + " holds " + v);
                            if (v != null) {
                                map.computeIfPresent(i, (k, x) -> x); // no lock left behind by a failed remove()
                            }
                        }
                        List<Map.Entry<Integer, Long>> asc = TestMaps.entries(map.entrySet());
                        List<Map.Entry<Integer, Long>> desc = new ArrayList<>(TestMaps.entries(map.descendingMap().entrySet()));
                        Collections.reverse(desc);
                        assertEquals(asc, desc, scheme + " kind " + kind);
                        assertEquals(map.size(), asc.size(), scheme + " kind " + kind);
                        map.put(5000, 1L);
                        assertEquals(1L, map.remove(5000));
                    }
                }
                System.err.println("shared iterator remove (" + scheme + ") exceptions seen: " + seen.keySet());
                seen.values().forEach(t -> System.err.println("  " + t + " at " + List.of(t.getStackTrace()).subList(0,
                        Math.min(4, t.getStackTrace().length))));
            }
        });
    }

    /**
     * A compute whose value grows (so it moves to a bigger slice, through the chunk) blocked on
     * its key while the chunk is split and merged around it and scans place values.
     */
    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void blockedGrowingComputeWhileChunksRebalance(MemoryScheme scheme) {
        assertTimeoutPreemptively(LIMIT, () -> {
            try (OakMap<Integer, String> map = TestMaps.builder(TestMaps.STRING_VAL, 8).valueMemory(scheme).build()) {
                int k = 500;
                for (int i = 0; i < 1000; i += 2) {
                    map.put(i, "v");
                }
                CountDownLatch entered = new CountDownLatch(1);
                CountDownLatch release = new CountDownLatch(1);
                AtomicInteger calls = new AtomicInteger();
                AtomicReference<Throwable> blockedErr = new AtomicReference<>();
                Thread blocked = start("blocked", () -> {
                    try {
                        map.compute(k, (kk, v) -> {
                            if (calls.getAndIncrement() == 0) {
                                entered.countDown();
                                try {
                                    release.await(5, TimeUnit.SECONDS);
                                } catch (InterruptedException e) {
                                    throw new RuntimeException(e);
                                }
                            }
                            return v + "x".repeat(40);
                        });
                    } catch (Throwable t) {
                        blockedErr.set(t);
                    }
                });
                assertTrue(entered.await(5, TimeUnit.SECONDS));
                List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
                AtomicBoolean stop = new AtomicBoolean();
                Thread inc = start("inc", () -> {
                    try {
                        for (int i = 0; i < 20; i++) {
                            map.compute(k, (kk, v) -> v + "y");
                        }
                    } catch (Throwable t) {
                        errors.add(t);
                    }
                });
                Thread churn = start("churn", () -> {
                    Random rnd = new Random(SEED);
                    try {
                        while (!stop.get()) {
                            int n = 480 + rnd.nextInt(41);
                            if (n == k) {
                                continue;
                            }
                            if (rnd.nextBoolean()) {
                                map.put(n, "n".repeat(1 + rnd.nextInt(30)));
                            } else {
                                map.remove(n);
                            }
                        }
                    } catch (Throwable t) {
                        errors.add(t);
                    }
                });
                Thread scanner = start("scanner", () -> {
                    try {
                        while (!stop.get()) {
                            map.subMap(450, 550).values().forEach(String::length);
                            map.zc().valueStreamSet().forEach(b -> {
                                try {
                                    b.getInt(0);
                                } catch (DeletedMemoryAccessException removedMeanwhile) {
                                    // documented: the churn removed or replaced this value
                                }
                            });
                        }
                    } catch (Throwable t) {
                        errors.add(t);
                    }
                });
                Thread.sleep(200);
                release.countDown();
                join(blocked);
                join(inc);
                stop.set(true);
                join(churn);
                join(scanner);
                if (blockedErr.get() != null) {
                    throw new AssertionError(scheme + ": " + blockedErr.get(), blockedErr.get());
                }
                if (!errors.isEmpty()) {
                    throw new AssertionError(scheme + ": " + errors.get(0), errors.get(0));
                }
                String v = map.get(k);
                assertEquals(1 + 40 + 20, v.length(), scheme + ": " + v);
                assertEquals(20, v.chars().filter(c -> c == 'y').count());
            }
        });
    }

    /** A lambda that closes its own map mid-update: the caller sees OakClosedException or a normal result. */
    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void lambdaClosesItsOwnMap(MemoryScheme scheme) {
        assertTimeoutPreemptively(LIMIT, () -> {
            for (Op op : Op.values()) {
                OakMap<Integer, Long> map = map(scheme);
                for (int i = 0; i < 100; i += 2) {
                    map.put(i, (long) i);
                }
                int key = op == Op.COMPUTE_IF_ABSENT ? 51 : 50;
                try {
                    run(map, op, key, map::close);
                } catch (OakClosedException expected) {
                    // fine
                } catch (Throwable t) {
                    throw new AssertionError(scheme + " " + op + ": expected OakClosedException, got " + t, t);
                }
                assertThrows(OakClosedException.class, () -> map.get(2));
            }
        });
    }

    private static void expect(Error err, String ctx, Runnable r) {
        try {
            r.run();
            fail(ctx + ": no error");
        } catch (Throwable t) {
            if (t != err) {
                throw new AssertionError(ctx + ": expected " + err + ", got " + t, t);
            }
        }
    }
}
