package dev.oakmap;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Counters kept by the legacy atomic updates ({@code merge}, {@code compute},
 * {@code computeIfPresent}, {@code replace(k, old, new)} in a CAS loop) and by in-place zero-copy
 * increments, under every memory scheme and with placement, while a churner inserts and removes
 * the keys around them (chunks of 4: rebalances all the time) and a scanner walks the map both
 * ways. The counters' values change size as they count (a padding of 0 to 30 characters), so
 * updates alternate between copying in place and moving the value to a new slice, which races
 * the rebalances' freezes, slice reuse and (with placement) the rebalancer's own moves.
 *
 * <p>Checked: no increment is lost; the counters, present throughout, are seen exactly once by
 * every scan, in order, with a well-formed value; a zero-copy view of a counter reads either a
 * well-formed counter value or throws {@link DeletedMemoryAccessException}; quiescent size and
 * both iteration orders agree. Seeded; the interleavings are not (threads), so this is coverage.
 */
class SchemeCountersStressTest {

    private static final int[] COUNTERS = {10, 20, 30};
    private static final int KEYS = 40;

    /** A counter's value: the count, then a padding whose length changes with it. */
    static String encode(long n) {
        return n + ":" + "x".repeat((int) (n % 7) * 5);
    }

    static long decode(String s) {
        int colon = s.indexOf(':');
        if (colon < 0 || s.length() - colon - 1 != (Long.parseLong(s.substring(0, colon)) % 7) * 5) {
            throw new AssertionError("malformed counter value: " + s);
        }
        return Long.parseLong(s.substring(0, colon));
    }

    @ParameterizedTest(name = "keys={0} values={1} place={2}")
    @CsvSource({"NOVA, NOVA, false", "NOVA, NOVA, true", "LOCK_BASED, LOCK_BASED, false", "GROW_ONLY, GROW_ONLY, false",
            "NOVA, LOCK_BASED, false", "GROW_ONLY, NOVA, false"})
    void countersLoseNoIncrementAndScansSeeThemOnce(MemoryScheme keyScheme, MemoryScheme valueScheme, boolean place)
            throws Exception {
        long seed = 42;
        int incsPerThread = 6_000 * TestMaps.scale();
        String ctx = "counters keys=" + keyScheme + " values=" + valueScheme + " place=" + place;
        // small blocks, so that freed slices and whole blocks are reused soon; grow-only values
        // reuse nothing, so they get room for every version of every value
        boolean growOnly = valueScheme == MemoryScheme.GROW_ONLY;
        OakMapBuilder<Integer, String> b = TestMaps.builder(TestMaps.STRING_VAL, 4)
                .keyMemory(keyScheme).valueMemory(valueScheme)
                .blockSize(growOnly ? 1L << 20 : 4096)
                .memoryCapacity(growOnly ? 32L * TestMaps.scale() << 20 : 8L << 20);
        b.placePairs = place;
        try (OakMap<Integer, String> map = b.build()) {
            for (int k : COUNTERS) {
                map.put(k, encode(0));
            }
            AtomicLong[] counted = new AtomicLong[COUNTERS.length];
            for (int i = 0; i < counted.length; i++) {
                counted[i] = new AtomicLong();
            }
            AtomicBoolean done = new AtomicBoolean();
            List<TestMaps.Task> workers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                Random rnd = new Random(seed * 31 + t);
                workers.add(() -> {
                    for (int i = 0; i < incsPerThread; i++) {
                        int c = rnd.nextInt(COUNTERS.length);
                        int k = COUNTERS[c];
                        switch (rnd.nextInt(5)) {
                            case 0 -> map.merge(k, encode(1), (a, x) -> encode(decode(a) + decode(x)));
                            case 1 -> map.compute(k, (kk, v) -> encode(v == null ? 1 : decode(v) + 1));
                            case 2 -> assertTrue(map.computeIfPresent(k, (kk, v) -> encode(decode(v) + 1)) != null,
                                    ctx + ": counter " + k + " absent");
                            case 3 -> {
                                while (true) {
                                    String v = map.get(k);
                                    if (map.replace(k, v, encode(decode(v) + 1))) {
                                        break;
                                    }
                                }
                            }
                            default -> {
                                OakUnscopedBuffer view = map.zc().get(k);
                                try {
                                    decode(view.transform(TestMaps.STRING_VAL::deserialize));
                                } catch (DeletedMemoryAccessException movedOrReplaced) {
                                    // legitimate: the value was replaced by one of another size
                                }
                                map.merge(k, encode(1), (a, x) -> encode(decode(a) + decode(x)));
                            }
                        }
                        counted[c].incrementAndGet();
                    }
                });
            }
            List<TestMaps.Task> tasks = TestMaps.signalWhenDone(workers, done);
            tasks.add(() -> { // churn around the counters
                Random rnd = new Random(seed);
                while (!done.get()) {
                    int k = rnd.nextInt(KEYS);
                    if (k % 10 == 0) {
                        continue;
                    }
                    switch (rnd.nextInt(4)) {
                        case 0 -> map.put(k, encode(k));
                        case 1 -> map.remove(k);
                        case 2 -> map.zc().remove(k);
                        default -> map.putIfAbsent(k, encode(k));
                    }
                }
            });
            AtomicLong scans = new AtomicLong();
            tasks.add(() -> { // scans: counters, present throughout, are seen once each, in order
                Random rnd = new Random(seed + 1);
                while (!done.get() || scans.get() == 0) {
                    boolean desc = rnd.nextBoolean();
                    NavigableMap<Integer, String> view = desc ? map.descendingMap() : map;
                    List<Integer> seen = new ArrayList<>();
                    for (Map.Entry<Integer, String> e : view.entrySet()) {
                        if (!seen.isEmpty()) {
                            int prev = seen.get(seen.size() - 1);
                            assertTrue(desc ? e.getKey() < prev : e.getKey() > prev,
                                    ctx + ": scan (desc=" + desc + ") out of order: " + seen + " then " + e.getKey());
                        }
                        seen.add(e.getKey());
                        decode(e.getValue());
                    }
                    for (int k : COUNTERS) {
                        assertEquals(1, Collections.frequency(seen, k), ctx + ": scan (desc=" + desc + ") saw " + seen);
                    }
                    assertFalse(map.isEmpty(), ctx);
                    scans.incrementAndGet();
                }
            });
            TestMaps.runConcurrently(ctx, 120, tasks);
            for (int c = 0; c < COUNTERS.length; c++) {
                assertEquals(counted[c].get(), decode(map.get(COUNTERS[c])), ctx + ": counter " + COUNTERS[c]);
            }
            List<Integer> asc = new ArrayList<>(map.keySet());
            List<Integer> desc = new ArrayList<>(map.descendingKeySet());
            Collections.reverse(desc);
            assertEquals(asc, desc, ctx);
            assertEquals(asc.size(), map.size(), ctx);
            System.out.printf("%s: %d scans%n", ctx, scans.get());
        }
    }
}
