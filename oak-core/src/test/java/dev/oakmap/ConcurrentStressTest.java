package dev.oakmap;

import dev.oakmap.TestMaps.Blob;
import dev.oakmap.TestMaps.Task;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Multi-threaded stress tests with tiny chunks (capacity 8), so that splits, merges and
 * compactions run all the time under the operations.
 *
 * <ul>
 *   <li>{@link #disjointKeysMatchSequentialModels}: each thread owns the keys congruent to its
 *       index modulo the thread count, interleaved over one key range, and checks every result
 *       against its own sequential model; the final map must equal the union of the models.</li>
 *   <li>{@link #sharedKeyContentionKeepsInvariants}: all threads hammer the same few keys; every
 *       value seen must be well-formed and the final map consistent.</li>
 *   <li>{@link #inPlaceCountersLoseNoIncrement}: threads increment counters in place while
 *       another thread forces rebalances; no increment may be lost.</li>
 * </ul>
 *
 * Every scenario is seeded ({@code -Doak.test.seed=...} to replay) and sized by
 * {@code -Doak.stress.scale}.
 */
class ConcurrentStressTest {

    private static final int CHUNK = 8;
    private static final long TIMEOUT_S = 120;

    // ------------------------------------------------------------------------------------------
    // Value kinds: the same harness runs with fixed-size longs and variable-size blobs
    // ------------------------------------------------------------------------------------------

    /** What the harness needs to know about a value type. */
    interface Kind<V> {
        String name();

        OakMap<Integer, V> newMap();

        /** A fresh random value for {@code key}. */
        V random(Random r, int key);

        /** A deterministic combination (used by compute and merge). */
        V combine(int key, V old, V arg);

        /** An in-place update of the serialized value by {@code d}, for zc compute. */
        Consumer<OakScopedWriteBuffer> inPlace(int key, long d);

        /** The model's view of {@link #inPlace}. */
        V applyInPlace(int key, V old, long d);

        /** Reads (and validates) a value from a buffer. */
        V read(OakBuffer b);

        /** Validates a value returned by the map for {@code key}; throws if malformed. */
        void check(int key, V v);
    }

    static final Kind<Long> LONGS = new Kind<>() {
        public String name() {
            return "Long";
        }

        public OakMap<Integer, Long> newMap() {
            return TestMaps.intLongMap(CHUNK);
        }

        public Long random(Random r, int key) {
            return (long) r.nextInt(1000);
        }

        public Long combine(int key, Long old, Long arg) {
            return old * 3 + arg;
        }

        public Consumer<OakScopedWriteBuffer> inPlace(int key, long d) {
            return b -> b.putLong(0, b.getLong(0) + d);
        }

        public Long applyInPlace(int key, Long old, long d) {
            return old + d;
        }

        public Long read(OakBuffer b) {
            assertEquals(8, b.capacity(), "long value capacity");
            return b.getLong(0);
        }

        public void check(int key, Long v) {
        }

        public String toString() {
            return name();
        }
    };

    static final Kind<Blob> BLOBS = new Kind<>() {
        public String name() {
            return "Blob";
        }

        public OakMap<Integer, Blob> newMap() {
            return TestMaps.intBlobMap(CHUNK);
        }

        public Blob random(Random r, int key) {
            // mostly small, sometimes large, so puts and merges move values to bigger slices
            int len = r.nextInt(8) == 0 ? 100 + r.nextInt(400) : r.nextInt(40);
            return new Blob(key, r.nextInt(1 << 20), len);
        }

        public Blob combine(int key, Blob old, Blob arg) {
            return new Blob(key, old.seq() * 7 + arg.seq(), (old.len() + arg.len()) % 300);
        }

        public Consumer<OakScopedWriteBuffer> inPlace(int key, long d) {
            return b -> {
                Blob old = Blob.read(b).ofKey(key);
                new Blob(key, old.seq() + d, old.len()).write(b);
            };
        }

        public Blob applyInPlace(int key, Blob old, long d) {
            return new Blob(key, old.seq() + d, old.len());
        }

        public Blob read(OakBuffer b) {
            return Blob.read(b);
        }

        public void check(int key, Blob v) {
            if (v != null) {
                v.ofKey(key);
            }
        }

        public String toString() {
            return name();
        }
    };

    static Stream<Arguments> kindsAndSeeds() {
        long[] seeds = TestMaps.seeds(1L, 0x5EEDL, 20240611L);
        List<Arguments> out = new ArrayList<>();
        for (Kind<?> k : List.of(LONGS, BLOBS)) {
            for (long s : seeds) {
                out.add(Arguments.of(k, s));
            }
        }
        return out.stream();
    }

    static Stream<Long> seeds() {
        return java.util.Arrays.stream(TestMaps.seeds(7L, 0xC0FFEEL, 99991L)).boxed();
    }

    // ------------------------------------------------------------------------------------------
    // 1. Disjoint keys, per-thread sequential models
    // ------------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0} seed={1}")
    @MethodSource("kindsAndSeeds")
    void disjointKeysMatchSequentialModels(Kind<Object> kind, long seed) throws Exception {
        final int threads = 3;
        final int keyRange = 600;
        final int opsPerThread = 40_000 * TestMaps.scale();
        String ctx = "disjoint[" + kind + "] seed=" + seed;
        List<TreeMap<Integer, Object>> models = new ArrayList<>();
        try (OakMap<Integer, Object> map = kind.newMap()) {
            List<Task> tasks = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                TreeMap<Integer, Object> model = new TreeMap<>();
                models.add(model);
                final int tid = t;
                tasks.add(() -> new ModelChecker<>(kind, map, model, new Random(seed * 1_000_003L + tid),
                        ctx + " thread=" + tid, tid, threads, keyRange).run(opsPerThread));
            }
            long t0 = System.nanoTime();
            TestMaps.runConcurrently(ctx, TIMEOUT_S, tasks);
            TreeMap<Integer, Object> union = new TreeMap<>();
            models.forEach(union::putAll);
            TestMaps.assertSameContents(ctx, map, union, new Random(seed), keyRange);
            // every value well-formed
            for (Map.Entry<Integer, Object> e : map.entrySet()) {
                kind.check(e.getKey(), e.getValue());
            }
            System.out.printf("%s: %d ops in %d ms, final size %d%n", ctx, threads * opsPerThread,
                    (System.nanoTime() - t0) / 1_000_000, union.size());
        }
    }

    /** One thread's random operations on its own keys, each checked against its own model. */
    static final class ModelChecker<V> {
        private final Kind<V> kind;
        private final OakMap<Integer, V> map;
        private final OakZeroCopyMap<Integer, V> zc;
        private final TreeMap<Integer, V> model;
        private final Random rnd;
        private final String ctx;
        private final int tid;
        private final int threads;
        private final int keyRange;
        private final ArrayDeque<String> recent = new ArrayDeque<>();

        ModelChecker(Kind<V> kind, OakMap<Integer, V> map, TreeMap<Integer, V> model, Random rnd, String ctx,
                     int tid, int threads, int keyRange) {
            this.kind = kind;
            this.map = map;
            this.zc = map.zc();
            this.model = model;
            this.rnd = rnd;
            this.ctx = ctx;
            this.tid = tid;
            this.threads = threads;
            this.keyRange = keyRange;
        }

        private void expect(Object expected, Object actual, int op, String what) {
            if (!Objects.equals(expected, actual)) {
                throw new AssertionError(ctx + " op#" + op + " " + what + ": expected " + expected
                        + " but was " + actual + "\n  recent ops of this thread (oldest first): " + recent);
            }
        }

        private void note(String s) {
            if (recent.size() == 12) {
                recent.removeFirst();
            }
            recent.addLast(s);
        }

        void run(int ops) {
            for (int i = 0; i < ops; i++) {
                int k = tid + threads * rnd.nextInt(keyRange / threads);
                V v = kind.random(rnd, k);
                int op = rnd.nextInt(20);
                String what;
                V cur = model.get(k);
                switch (op) {
                    case 0 -> {
                        what = "get(" + k + ")";
                        expect(cur, map.get(k), i, what);
                    }
                    case 1 -> {
                        what = "containsKey(" + k + ")";
                        expect(cur != null, map.containsKey(k), i, what);
                    }
                    case 2, 3 -> {
                        what = "put(" + k + "," + v + ")";
                        expect(model.put(k, v), map.put(k, v), i, what);
                    }
                    case 4 -> {
                        what = "putIfAbsent(" + k + "," + v + ")";
                        expect(model.putIfAbsent(k, v), map.putIfAbsent(k, v), i, what);
                    }
                    case 5 -> {
                        what = "remove(" + k + ")";
                        expect(model.remove(k), map.remove(k), i, what);
                    }
                    case 6 -> {
                        V arg = (cur != null && rnd.nextBoolean()) ? cur : v;
                        what = "remove(" + k + "," + arg + ")";
                        expect(model.remove(k, arg), map.remove(k, arg), i, what);
                    }
                    case 7 -> {
                        what = "replace(" + k + "," + v + ")";
                        expect(model.replace(k, v), map.replace(k, v), i, what);
                    }
                    case 8 -> {
                        V old = (cur != null && rnd.nextBoolean()) ? cur : kind.random(rnd, k);
                        what = "replace(" + k + "," + old + "," + v + ")";
                        expect(model.replace(k, old, v), map.replace(k, old, v), i, what);
                    }
                    case 9 -> {
                        boolean toNull = rnd.nextInt(5) == 0;
                        what = "compute(" + k + ", toNull=" + toNull + ")";
                        java.util.function.BiFunction<Integer, V, V> fn = (kk, old) -> {
                            if (!kk.equals(k)) {
                                throw new AssertionError("compute called with key " + kk + " for " + k);
                            }
                            kind.check(k, old);
                            return toNull ? null : (old == null ? v : kind.combine(k, old, v));
                        };
                        expect(model.compute(k, fn), map.compute(k, fn), i, what);
                    }
                    case 10 -> {
                        boolean toNull = rnd.nextInt(10) == 0;
                        what = "computeIfAbsent(" + k + ", toNull=" + toNull + ")";
                        java.util.function.Function<Integer, V> fn = kk -> toNull ? null : v;
                        expect(model.computeIfAbsent(k, fn), map.computeIfAbsent(k, fn), i, what);
                    }
                    case 11 -> {
                        boolean toNull = rnd.nextInt(5) == 0;
                        what = "computeIfPresent(" + k + ", toNull=" + toNull + ")";
                        java.util.function.BiFunction<Integer, V, V> fn = (kk, old) -> {
                            kind.check(k, old);
                            return toNull ? null : kind.combine(k, old, v);
                        };
                        expect(model.computeIfPresent(k, fn), map.computeIfPresent(k, fn), i, what);
                    }
                    case 12 -> {
                        boolean toNull = rnd.nextInt(5) == 0;
                        what = "merge(" + k + "," + v + ", toNull=" + toNull + ")";
                        java.util.function.BiFunction<V, V, V> fn = (a, b) -> {
                            kind.check(k, a);
                            return toNull ? null : kind.combine(k, a, b);
                        };
                        expect(model.merge(k, v, fn), map.merge(k, v, fn), i, what);
                    }
                    case 13 -> {
                        what = "zc.put(" + k + "," + v + ")";
                        zc.put(k, v);
                        model.put(k, v);
                    }
                    case 14 -> {
                        what = "zc.putIfAbsent(" + k + "," + v + ")";
                        expect(cur == null, zc.putIfAbsent(k, v), i, what);
                        model.putIfAbsent(k, v);
                    }
                    case 15 -> {
                        what = "zc.remove(" + k + ")";
                        expect(cur != null, zc.remove(k), i, what);
                        model.remove(k);
                    }
                    case 16 -> {
                        long d = 1 + rnd.nextInt(100);
                        what = "zc.computeIfPresent(" + k + ",+" + d + ")";
                        expect(cur != null, zc.computeIfPresent(k, kind.inPlace(k, d)), i, what);
                        if (cur != null) {
                            model.put(k, kind.applyInPlace(k, cur, d));
                        }
                    }
                    case 17 -> {
                        long d = 1 + rnd.nextInt(100);
                        what = "zc.putIfAbsentComputeIfPresent(" + k + "," + v + ",+" + d + ")";
                        expect(cur == null, zc.putIfAbsentComputeIfPresent(k, v, kind.inPlace(k, d)), i, what);
                        model.put(k, cur == null ? v : kind.applyInPlace(k, cur, d));
                    }
                    case 18 -> {
                        what = "zc.get(" + k + ")";
                        OakUnscopedBuffer b = zc.get(k);
                        expect(cur != null, b != null, i, what + " != null");
                        if (b != null) {
                            expect(cur, kind.read(b), i, what + " read");
                            expect(cur, b.transform(kind::read), i, what + " transform");
                        }
                    }
                    default -> {
                        what = "getOrDefault(" + k + ")";
                        expect(cur == null ? v : cur, map.getOrDefault(k, v), i, what);
                    }
                }
                note(what);
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // 2. Shared-key contention
    // ------------------------------------------------------------------------------------------

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void sharedKeyContentionKeepsInvariants(long seed) throws Exception {
        final int threads = 3;
        final int keys = 40;
        final int opsPerThread = 40_000 * TestMaps.scale();
        String ctx = "contention seed=" + seed;
        Kind<Blob> kind = BLOBS;
        try (OakMap<Integer, Blob> map = kind.newMap()) {
            OakZeroCopyMap<Integer, Blob> zc = map.zc();
            AtomicBoolean done = new AtomicBoolean();
            List<Task> tasks = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Random rnd = new Random(seed * 7919L + t);
                tasks.add(() -> {
                    for (int i = 0; i < opsPerThread; i++) {
                        int k = rnd.nextInt(keys);
                        Blob v = kind.random(rnd, k);
                        try {
                            switch (rnd.nextInt(14)) {
                                case 0 -> kind.check(k, map.get(k));
                                case 1, 2 -> kind.check(k, map.put(k, v));
                                case 3 -> kind.check(k, map.putIfAbsent(k, v));
                                case 4 -> kind.check(k, map.remove(k));
                                case 5 -> kind.check(k, map.compute(k, (kk, o) -> {
                                    kind.check(k, o);
                                    return o == null ? v : (o.seq() % 3 == 0 ? null : kind.combine(k, o, v));
                                }));
                                case 6 -> kind.check(k, map.merge(k, v, (a, b) -> kind.combine(k, a, b)));
                                case 7 -> kind.check(k, map.replace(k, v));
                                case 8 -> kind.check(k, map.computeIfPresent(k, (kk, o) -> kind.combine(k, o, v)));
                                case 9 -> zc.put(k, v);
                                case 10 -> zc.remove(k);
                                case 11 -> zc.computeIfPresent(k, kind.inPlace(k, 1));
                                case 12 -> zc.putIfAbsentComputeIfPresent(k, v, kind.inPlace(k, 1));
                                default -> {
                                    OakUnscopedBuffer b = zc.get(k);
                                    if (b != null) {
                                        try {
                                            b.transform(Blob::read).ofKey(k);
                                        } catch (DeletedMemoryAccessException removedMeanwhile) {
                                            // legitimate: another thread removed or moved it
                                        }
                                    }
                                }
                            }
                        } catch (TestMaps.CorruptValueException e) {
                            throw new AssertionError(ctx + " op#" + i + " key " + k + ": " + e.getMessage(), e);
                        }
                    }
                });
            }
            // a reader checking sortedness and well-formedness while the writers run
            tasks.add(() -> {
                Random rnd = new Random(seed);
                int scans = 0;
                while (!done.get() || scans == 0) {
                    boolean desc = rnd.nextBoolean();
                    ConcurrentNavigableMap<Integer, Blob> view = desc ? map.descendingMap() : map;
                    Integer prev = null;
                    for (Map.Entry<Integer, Blob> e : view.entrySet()) {
                        int k = e.getKey();
                        assertNotNull(e.getValue(), ctx + ": null value in scan");
                        e.getValue().ofKey(k);
                        if (prev != null) {
                            assertTrue(desc ? k < prev : k > prev,
                                    ctx + ": scan (desc=" + desc + ") not strictly ordered: " + prev + " then " + k);
                        }
                        prev = k;
                    }
                    scans++;
                }
            });
            List<Task> all = TestMaps.signalWhenDone(tasks.subList(0, threads), done);
            all.addAll(tasks.subList(threads, tasks.size()));
            long t0 = System.nanoTime();
            TestMaps.runConcurrently(ctx, TIMEOUT_S, all);
            done.set(true);

            // quiescent invariants
            List<Integer> asc = new ArrayList<>();
            for (Map.Entry<Integer, Blob> e : map.entrySet()) {
                e.getValue().ofKey(e.getKey());
                asc.add(e.getKey());
            }
            for (int i = 1; i < asc.size(); i++) {
                assertTrue(asc.get(i - 1) < asc.get(i), ctx + ": ascending not strictly ordered: " + asc);
            }
            List<Integer> desc = TestMaps.list(map.descendingKeySet());
            List<Integer> rev = new ArrayList<>(asc);
            java.util.Collections.reverse(rev);
            assertEquals(rev, desc, ctx + ": descending != reverse(ascending)");
            assertEquals(asc.size(), map.size(), ctx + ": size vs iteration count");
            TreeMap<Integer, Blob> snapshot = new TreeMap<>();
            for (int k = 0; k < keys; k++) {
                Blob b = map.get(k);
                assertEquals(asc.contains(k), b != null, ctx + ": get vs iteration for key " + k);
                if (b != null) {
                    snapshot.put(k, b.ofKey(k));
                }
            }
            TestMaps.assertSameContents(ctx, map, snapshot, new Random(seed), keys);
            System.out.printf("%s: %d ops in %d ms, final size %d%n", ctx, threads * opsPerThread,
                    (System.nanoTime() - t0) / 1_000_000, asc.size());
        }
    }

    /**
     * Short scans from both ends of the map while two writers churn its few keys: the first steps
     * of a scan (the peek at the last chunk's last entry, the dead-prefix and dead-suffix hints,
     * re-locating before anything was returned) meet rebalances of the chunks they start in all
     * the time, which long scans rarely do. Each scan must be strictly ordered, hold only keys of
     * the range. (A descending scan that re-located at its first key could return keys twice:
     * about once in 10M scans of this shape, so this is coverage, not that bug's regression test;
     * {@code CursorRelocationTest} drives its exact interleaving.) No key is kept present at the
     * ends: a live last entry would keep scans off the dead-suffix paths.
     */
    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void shortScansFromTheEndsStayOrdered(long seed) throws Exception {
        final int keys = 16;
        final int opsPerThread = 300_000 * TestMaps.scale();
        String ctx = "short scans seed=" + seed;
        try (OakMap<Integer, Long> map = TestMaps.intLongMap(CHUNK)) {
            AtomicBoolean done = new AtomicBoolean();
            List<Task> writers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                Random rnd = new Random(seed * 31 + t);
                writers.add(() -> {
                    for (int i = 0; i < opsPerThread; i++) {
                        int k = rnd.nextInt(keys);
                        if (rnd.nextBoolean()) {
                            map.put(k, (long) k);
                        } else {
                            map.remove(k);
                        }
                    }
                });
            }
            AtomicLong scans = new AtomicLong();
            Task reader = () -> {
                Random rnd = new Random(seed);
                while (!done.get()) {
                    boolean desc = rnd.nextBoolean();
                    Iterator<Integer> it = (desc ? map.descendingKeySet() : map.navigableKeySet()).iterator();
                    int take = 1 + rnd.nextInt(4);
                    int prev = desc ? keys : -1;
                    for (int i = 0; i < take && it.hasNext(); i++) {
                        int k = it.next();
                        assertTrue(desc ? k < prev && k >= 0 : k > prev && k < keys,
                                ctx + ": scan (desc=" + desc + ") not strictly ordered: " + prev + " then " + k);
                        prev = k;
                    }
                    scans.incrementAndGet();
                }
            };
            List<Task> all = TestMaps.signalWhenDone(writers, done);
            all.add(reader);
            long t0 = System.nanoTime();
            TestMaps.runConcurrently(ctx, TIMEOUT_S, all);
            assertTrue(scans.get() > 0, ctx + ": the reader ran");
            System.out.printf("%s: %d ops and %d scans in %d ms%n", ctx, 2 * opsPerThread, scans.get(),
                    (System.nanoTime() - t0) / 1_000_000);
        }
    }

    // ------------------------------------------------------------------------------------------
    // 3. In-place counters under rebalances
    // ------------------------------------------------------------------------------------------

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void inPlaceCountersLoseNoIncrement(long seed) throws Exception {
        final int incrementers = 2;
        final int incsPerThread = 100_000 * TestMaps.scale();
        final int[] counters = {100, 200, 300, 400};
        final int keyRange = 500;
        String ctx = "counters seed=" + seed;
        Consumer<OakScopedWriteBuffer> inc = b -> b.putLong(0, b.getLong(0) + 1);
        try (OakMap<Integer, Long> map = TestMaps.intLongMap(CHUNK)) {
            OakZeroCopyMap<Integer, Long> zc = map.zc();
            // counters 100 and 200 exist from the start; 300 and 400 are created by the increments
            map.put(100, 0L);
            map.put(200, 0L);
            for (int k = 0; k < keyRange; k += 3) {
                if (k % 100 != 0) {
                    map.put(k, -1L);
                }
            }
            AtomicLong[] counted = new AtomicLong[counters.length];
            for (int i = 0; i < counted.length; i++) {
                counted[i] = new AtomicLong();
            }
            AtomicBoolean done = new AtomicBoolean();
            AtomicLong noiseOps = new AtomicLong();
            List<Task> tasks = new ArrayList<>();
            for (int t = 0; t < incrementers; t++) {
                Random rnd = new Random(seed * 31 + t);
                tasks.add(() -> {
                    long[] mine = new long[counters.length];
                    for (int i = 0; i < incsPerThread; i++) {
                        int c = rnd.nextInt(counters.length);
                        int k = counters[c];
                        boolean did;
                        switch (rnd.nextInt(4)) {
                            case 0 -> did = zc.computeIfPresent(k, inc);
                            case 1 -> {
                                zc.putIfAbsentComputeIfPresent(k, 1L, inc);
                                did = true;
                            }
                            case 2 -> {
                                map.merge(k, 1L, Long::sum);
                                did = true;
                            }
                            default -> {
                                map.compute(k, (kk, v) -> v == null ? 1L : v + 1);
                                did = true;
                            }
                        }
                        if (did) {
                            mine[c]++;
                        }
                    }
                    for (int c = 0; c < counters.length; c++) {
                        counted[c].addAndGet(mine[c]);
                    }
                });
            }
            // noise: inserts and removes around the counters, forcing splits, merges, compactions
            tasks.add(() -> {
                Random rnd = new Random(seed ^ 0xABCDEF);
                while (!done.get()) {
                    for (int j = 0; j < 64; j++) {
                        int k = rnd.nextInt(keyRange);
                        if (k % 100 == 0) {
                            continue;
                        }
                        if (rnd.nextBoolean()) {
                            map.put(k, (long) -k);
                        } else {
                            map.remove(k);
                        }
                        noiseOps.incrementAndGet();
                    }
                }
            });
            // a reader: each counter, as seen by one thread, never decreases
            tasks.add(() -> {
                long[] last = new long[counters.length];
                Random rnd = new Random(seed ^ 0x1234);
                while (!done.get()) {
                    int c = rnd.nextInt(counters.length);
                    Long v;
                    if (rnd.nextBoolean()) {
                        v = map.get(counters[c]);
                    } else {
                        OakUnscopedBuffer b = zc.get(counters[c]);
                        v = b == null ? null : b.transform(x -> x.getLong(0));
                    }
                    long val = v == null ? 0 : v;
                    assertTrue(val >= last[c], ctx + ": counter " + counters[c] + " went back from "
                            + last[c] + " to " + val);
                    last[c] = val;
                }
            });
            List<Task> all = TestMaps.signalWhenDone(tasks.subList(0, incrementers), done);
            all.addAll(tasks.subList(incrementers, tasks.size()));
            long t0 = System.nanoTime();
            TestMaps.runConcurrently(ctx, TIMEOUT_S, all);
            for (int c = 0; c < counters.length; c++) {
                assertEquals(counted[c].get(), map.get(counters[c]),
                        ctx + ": counter " + counters[c] + " lost increments");
            }
            // noise keys well-formed
            for (Map.Entry<Integer, Long> e : map.entrySet()) {
                if (e.getKey() % 100 != 0) {
                    long v = e.getValue();
                    assertTrue(v == -1L || v == -(long) e.getKey(), ctx + ": noise key " + e.getKey() + " has " + v);
                }
            }
            System.out.printf("%s: %d increments, %d noise ops in %d ms%n", ctx, incrementers * incsPerThread,
                    noiseOps.get(), (System.nanoTime() - t0) / 1_000_000);
        }
    }

    // ------------------------------------------------------------------------------------------
    // 4. Same-size in-place updates are atomic for readers
    // ------------------------------------------------------------------------------------------

    /**
     * Writers rewrite a few large values in place with values of the same size (so the slice and
     * its length never change) while readers read them through every read path. A reader must
     * never get a value mixing two writes: the optimistic read must notice every write that
     * overlapped it, even one that leaves the header's length and version as they were. Some
     * in-place computers write half a new value and throw: their writes must be undone before any
     * reader sees them.
     */
    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void sameSizeInPlaceUpdatesAreAtomicForReaders(long seed) throws Exception {
        final int keys = 4;
        final int len = 4000;
        final int writesPerWriter = 8_000 * TestMaps.scale();
        String ctx = "same-size updates seed=" + seed;
        try (OakMap<Integer, Blob> map = TestMaps.intBlobMap(CHUNK)) {
            OakZeroCopyMap<Integer, Blob> zc = map.zc();
            for (int k = 0; k < keys; k++) {
                map.put(k, new Blob(k, 0, len));
            }
            AtomicBoolean done = new AtomicBoolean();
            AtomicLong reads = new AtomicLong();
            List<Task> writers = new ArrayList<>();
            Random wr = new Random(seed);
            for (int w = 0; w < 1; w++) {
                writers.add(() -> {
                    for (int i = 0; i < writesPerWriter; i++) {
                        int k = wr.nextInt(keys);
                        switch (i % 4) {
                            case 0 -> zc.computeIfPresent(k, b -> {
                                Blob o = Blob.read(b).ofKey(k);
                                new Blob(k, o.seq() + 1, len).write(b);
                            });
                            case 1 -> map.put(k, new Blob(k, i, len)).ofKey(k);
                            case 2 -> map.compute(k, (x, o) -> new Blob(k, o.seq() + 1, len));
                            default -> writeHalfAndThrow(zc, k, len, wr.nextInt(len));
                        }
                    }
                });
            }
            List<Task> all = TestMaps.signalWhenDone(writers, done);
            all.add(() -> {
                Random rnd = new Random(seed + 1);
                long n = 0;
                while (!done.get()) {
                    int k = rnd.nextInt(keys);
                    int path = rnd.nextInt(3);
                    try {
                        switch (path) {
                            case 0 -> map.get(k).ofKey(k);
                            case 1 -> {
                                try {
                                    zc.get(k).transform(Blob::read).ofKey(k);
                                } catch (DeletedMemoryAccessException moved) {
                                    // a put may move the value; legitimate
                                }
                            }
                            default -> {
                                for (Map.Entry<Integer, Blob> e : map.entrySet()) {
                                    e.getValue().ofKey(e.getKey());
                                }
                            }
                        }
                    } catch (TestMaps.CorruptValueException e) {
                        String how = switch (path) {
                            case 0 -> "map.get(" + k + ")";
                            case 1 -> "zc.get(" + k + ").transform(...)";
                            default -> "an entrySet() iteration";
                        };
                        throw new AssertionError(ctx + ": read #" + n + " through " + how
                                + " returned a value mixing two writes: " + e.getMessage(), e);
                    }
                    n++;
                }
                reads.addAndGet(n);
            });
            long t0 = System.nanoTime();
            TestMaps.runConcurrently(ctx, TIMEOUT_S, all);
            System.out.printf("%s: %d writes, %d reads in %d ms%n", ctx, writesPerWriter, reads.get(),
                    (System.nanoTime() - t0) / 1_000_000);
        }
    }

    /**
     * An in-place computer that starts a new blob (header and the first {@code upTo} filler
     * bytes) and then throws: its writes must be undone before any reader sees them.
     */
    private static void writeHalfAndThrow(OakZeroCopyMap<Integer, Blob> zc, int k, int len, int upTo) {
        IllegalStateException injected = new IllegalStateException("injected by the test");
        try {
            zc.computeIfPresent(k, b -> {
                Blob next = new Blob(k, Blob.read(b).ofKey(k).seq() + 1, len);
                b.putLong(4, next.seq());
                for (int i = 0; i < upTo; i++) {
                    b.put(16 + i, Blob.filler(k, next.seq(), i));
                }
                throw injected;
            });
            throw new AssertionError("the computer's exception did not propagate");
        } catch (IllegalStateException e) {
            if (e != injected) {
                throw e;
            }
        }
    }

    @SuppressWarnings("unused")
    private static <T> int count(Iterator<T> it) {
        int n = 0;
        while (it.hasNext()) {
            it.next();
            n++;
        }
        return n;
    }
}
