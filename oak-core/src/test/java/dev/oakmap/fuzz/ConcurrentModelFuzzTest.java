package dev.oakmap.fuzz;

import dev.oakmap.OakMap;
import dev.oakmap.OakZeroCopyMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Model-based fuzzing, multi-threaded: each thread owns the keys congruent to its index modulo the
 * thread count and runs its own random operation sequence on the shared OakMap and on its own
 * TreeMap model. Because nobody else touches a thread's keys, every result a thread gets for its
 * own keys must match its model exactly, even while the other threads' operations split, merge
 * and compact the chunks around them; and in a full scan (ascending or descending, legacy or
 * zero-copy) the thread's own keys must appear exactly as in its model (they are stable for the
 * length of its own scan). At the end the map must equal the union of the models.
 *
 * <p>Seeded (fixed seed, printed by jqwik); the interleavings, of course, are not reproducible.
 */
class ConcurrentModelFuzzTest {

    static final int THREADS = 3;
    static final int KEYS_PER_THREAD = 16;

    enum Kind { GET, PUT, PUT_IF_ABSENT, REMOVE, REPLACE, COMPUTE, MERGE, ZC_GET, ZC_PUT, ZC_REMOVE, ZC_INCREMENT,
        ZC_COMPUTE_IF_PRESENT, SCAN_ASC, SCAN_DESC, ZC_SCAN }

    record Op(Kind kind, int key, long value) {
    }

    @Property(tries = 20, seed = "20250602", shrinking = ShrinkingMode.BOUNDED)
    void disjointKeysMatchPerThreadModels(@ForAll("perThreadOps") List<List<Op>> programs) throws Exception {
        try (OakMap<Integer, Long> oak = FuzzOps.newOak()) {
            List<TreeMap<Integer, Long>> models = new ArrayList<>();
            ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
            CyclicBarrier start = new CyclicBarrier(THREADS);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                TreeMap<Integer, Long> model = new TreeMap<>();
                models.add(model);
                int id = t;
                List<Op> program = programs.get(t);
                threads.add(Thread.ofPlatform().name("fuzz-" + t).start(() -> {
                    try {
                        start.await(10, TimeUnit.SECONDS);
                        for (int i = 0; i < program.size(); i++) {
                            String err = step(oak, model, id, program.get(i));
                            if (err != null) {
                                failures.add("thread " + id + " op #" + i + " " + program.get(i) + ": " + err);
                                return;
                            }
                        }
                    } catch (Throwable e) {
                        failures.add("thread " + id + ": " + e);
                    }
                }));
            }
            for (Thread th : threads) {
                th.join(TimeUnit.SECONDS.toMillis(60));
                assertTrue(!th.isAlive(), "thread " + th.getName() + " hung");
            }
            assertTrue(failures.isEmpty(), () -> String.join("\n", failures));
            TreeMap<Integer, Long> union = new TreeMap<>();
            models.forEach(union::putAll);
            assertEquals(FuzzOps.describe(union), FuzzOps.describe(oak), "final state vs union of the models");
        }
    }

    /** Runs one operation of thread {@code id}; @return an error, or null if it matched the model. */
    static String step(OakMap<Integer, Long> oak, TreeMap<Integer, Long> model, int id, Op op) {
        int k = op.key() * THREADS + id;
        long v = op.value();
        OakZeroCopyMap<Integer, Long> zc = oak.zc();
        Object expected;
        Object actual;
        switch (op.kind()) {
            case GET -> {
                expected = model.get(k);
                actual = oak.get(k);
            }
            case PUT -> {
                expected = model.put(k, v);
                actual = oak.put(k, v);
            }
            case PUT_IF_ABSENT -> {
                expected = model.putIfAbsent(k, v);
                actual = oak.putIfAbsent(k, v);
            }
            case REMOVE -> {
                expected = model.remove(k);
                actual = oak.remove(k);
            }
            case REPLACE -> {
                expected = model.replace(k, v);
                actual = oak.replace(k, v);
            }
            case COMPUTE -> {
                expected = model.compute(k, FuzzOps::computeFn);
                actual = oak.compute(k, FuzzOps::computeFn);
            }
            case MERGE -> {
                expected = model.merge(k, v, FuzzOps::mergeFn);
                actual = oak.merge(k, v, FuzzOps::mergeFn);
            }
            case ZC_GET -> {
                expected = model.get(k);
                actual = FuzzOps.zcGetOrNull(zc, k);
            }
            case ZC_PUT -> {
                model.put(k, v);
                zc.put(k, v);
                expected = actual = null;
            }
            case ZC_REMOVE -> {
                expected = model.remove(k) != null;
                actual = zc.remove(k);
            }
            case ZC_INCREMENT -> {
                Long old = model.get(k);
                model.put(k, old == null ? v : old + 1);
                expected = old == null;
                actual = zc.putIfAbsentComputeIfPresent(k, v, FuzzOps::increment);
            }
            case ZC_COMPUTE_IF_PRESENT -> {
                expected = model.computeIfPresent(k, (kk, old) -> old + 1) != null;
                actual = zc.computeIfPresent(k, FuzzOps::increment);
            }
            case SCAN_ASC, SCAN_DESC -> {
                boolean desc = op.kind() == Kind.SCAN_DESC;
                NavigableMap<Integer, Long> view = desc ? oak.descendingMap() : oak;
                List<String> mine = new ArrayList<>();
                Integer prev = null;
                for (Map.Entry<Integer, Long> e : view.entrySet()) {
                    int key = e.getKey();
                    if (prev != null && (desc ? key >= prev : key <= prev)) {
                        return "scan out of order: " + prev + " then " + key;
                    }
                    prev = key;
                    if (Math.floorMod(key, THREADS) == id) {
                        mine.add(key + "=" + e.getValue());
                    }
                }
                expected = FuzzOps.norm(new ArrayList<>((desc ? model.descendingMap() : model).entrySet()));
                actual = mine;
            }
            case ZC_SCAN -> {
                List<String> mine = new ArrayList<>();
                for (var e : zc.entryStreamSet()) {
                    int key = FuzzOps.readInt(e.getKey());
                    if (Math.floorMod(key, THREADS) == id) {
                        mine.add(key + "=" + FuzzOps.readLong(e.getValue()));
                    }
                }
                expected = FuzzOps.norm(new ArrayList<>(model.entrySet()));
                actual = mine;
            }
            default -> throw new AssertionError(op);
        }
        return Objects.equals(expected, actual) ? null : "expected " + expected + " but got " + actual;
    }

    @Provide
    Arbitrary<List<List<Op>>> perThreadOps() {
        Arbitrary<Op> op = Combinators.combine(Arbitraries.of(Kind.class),
                Arbitraries.integers().between(0, KEYS_PER_THREAD - 1),
                Arbitraries.longs().between(1, 5)).as(Op::new);
        return op.list().ofMinSize(500).ofMaxSize(3000).list().ofSize(THREADS);
    }
}
