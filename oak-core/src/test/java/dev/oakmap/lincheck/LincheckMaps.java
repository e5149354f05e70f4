package dev.oakmap.lincheck;

import dev.oakmap.MemoryScheme;
import dev.oakmap.OakMap;
import dev.oakmap.OakComparator;
import dev.oakmap.OakMapBuilder;
import dev.oakmap.OakScopedWriteBuffer;
import dev.oakmap.OakSerializer;
import dev.oakmap.common.OakCommonTypes;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.StressOptions;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Helpers shared by the Lincheck tests: the map under test, and the bookkeeping that keeps the
 * thousands of maps Lincheck creates (one per invocation) from leaking off-heap blocks.
 *
 * <p>Lincheck builds a fresh test instance for every invocation and offers no per-invocation
 * tear-down. Invocations of one test run one after the other, so each new instance closes the map
 * of the previous one ({@link #open}); the test closes the last one ({@link #closeLast}). Without
 * that, the 4095 process-wide block ids would run out after as many invocations.
 */
final class LincheckMaps {

    private LincheckMaps() {
    }

    /** The smallest chunk the builder allows: a chunk of 4 splits on its 3rd or 4th key. */
    static final int CHUNK = 4;

    private static final AtomicReference<OakMap<?, Long>> LAST = new AtomicReference<>();
    /** The memory schemes of the maps {@link #open} builds: Nova unless a test says otherwise. */
    private static volatile MemoryScheme keyMemory = MemoryScheme.NOVA;
    private static volatile MemoryScheme valueMemory = MemoryScheme.NOVA;
    /** Maps created since the last {@link #resetCount()}: one per invocation (plus replays). */
    private static final AtomicLong CREATED = new AtomicLong();

    /** A new tiny-chunk Integer to Long map; closes the map of the previous invocation. */
    static OakMap<Integer, Long> open() {
        return open(CHUNK);
    }

    /** A new Integer to Long map with chunks of {@code chunk} entries; closes the map of the previous invocation. */
    static OakMap<Integer, Long> open(int chunk) {
        return open(OakCommonTypes.INTEGER_SERIALIZER, OakCommonTypes.INTEGER_COMPARATOR, chunk);
    }

    /**
     * A new {@code byte[]} to Long map with the ready-made byte-wise order
     * ({@code BYTE_ARRAY_COMPARATOR}) and chunks of {@code chunk} entries; closes the previous one.
     */
    static OakMap<byte[], Long> openBytes(int chunk) {
        return open(OakCommonTypes.BYTE_ARRAY_SERIALIZER, OakCommonTypes.BYTE_ARRAY_COMPARATOR, chunk);
    }

    /**
     * A new {@code String} to Long map with the ready-made serializer and comparator and chunks of
     * {@code chunk} entries; closes the previous one.
     */
    static OakMap<String, Long> openStrings(int chunk) {
        return open(OakCommonTypes.STRING_SERIALIZER, OakCommonTypes.STRING_COMPARATOR, chunk);
    }

    private static <K> OakMap<K, Long> open(OakSerializer<K> keys, OakComparator<K> order, int chunk) {
        OakMap<K, Long> map = new OakMapBuilder<>(keys, OakCommonTypes.LONG_SERIALIZER, order)
                .chunkCapacity(chunk)
                .blockSize(4096)
                .memoryCapacity(1L << 20)
                .keyMemory(keyMemory)
                .valueMemory(valueMemory)
                .build();
        CREATED.incrementAndGet();
        OakMap<?, Long> previous = LAST.getAndSet(map);
        if (previous != null) {
            previous.close();
        }
        return map;
    }

    /** Runs {@code check} with maps built under the given schemes. */
    static void withSchemes(MemoryScheme keys, MemoryScheme values, Runnable check) {
        keyMemory = keys;
        valueMemory = values;
        try {
            check.run();
        } finally {
            keyMemory = MemoryScheme.NOVA;
            valueMemory = MemoryScheme.NOVA;
        }
    }

    /**
     * Runs {@code check} with maps whose rebalances move pairs into key order (see
     * {@code Rebalancer}, "Placement"; {@code -Doak.placePairs}, which the builder reads when it is
     * created): values then change place inside the scenarios, under readers, writers and polls.
     */
    static void withPlacement(Runnable check) {
        String before = System.getProperty(PLACE_PAIRS);
        System.setProperty(PLACE_PAIRS, "true");
        try {
            check.run();
        } finally {
            if (before == null) {
                System.clearProperty(PLACE_PAIRS);
            } else {
                System.setProperty(PLACE_PAIRS, before);
            }
        }
    }

    private static final String PLACE_PAIRS = "oak.placePairs";

    static void closeLast() {
        OakMap<?, Long> previous = LAST.getAndSet(null);
        if (previous != null) {
            previous.close();
        }
    }

    static void resetCount() {
        CREATED.set(0);
    }

    static long count() {
        return CREATED.get();
    }

    /** The in-place increment used by the zero-copy operations: value + 1, on the off-heap bytes. */
    /** The failure a test's computer throws on purpose (shared, without a stack trace). */
    static final class InjectedFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;
        static final InjectedFailure INSTANCE = new InjectedFailure();

        private InjectedFailure() {
            super("injected by the test", null, false, false);
        }
    }

    static void increment(OakScopedWriteBuffer b) {
        long v = OakCommonTypes.LONG_SERIALIZER.deserialize(b);
        OakCommonTypes.LONG_SERIALIZER.serialize(v + 1, b);
    }

    /** @return the multiplier of Lincheck iterations from {@code oak.lincheck.scale} (default 1) */
    static int scale() {
        return Math.max(1, Integer.getInteger("oak.lincheck.scale", 1));
    }

    /** Prints what a check covered, for the CI log. */
    static void report(String test, int iterations, long invocations) {
        System.out.printf("[lincheck] %s: %d scenarios, %d invocations (maps created)%n", test, iterations,
                invocations);
    }

    /**
     * Model-checks {@code test} against {@code spec}: 2 threads of 3 operations, 2 before and 1
     * after, as every map check here uses; then reports the invocations made.
     */
    static void modelCheck(Class<?> test, Class<?> spec, int iterations, int invocations) {
        new ModelCheckingOptions()
                .iterations(iterations)
                .invocationsPerIteration(invocations)
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(1)
                .sequentialSpecification(spec)
                .check(test);
        report(test.getSimpleName() + ".modelChecking", iterations, count());
    }

    /** Stress-checks {@code test} against {@code spec} with 3 threads, shaped as {@link #modelCheck}. */
    static void stress(Class<?> test, Class<?> spec, int iterations, int invocations) {
        new StressOptions()
                .iterations(iterations)
                .invocationsPerIteration(invocations)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(1)
                .sequentialSpecification(spec)
                .check(test);
        report(test.getSimpleName() + ".stress", iterations, count());
    }
}
