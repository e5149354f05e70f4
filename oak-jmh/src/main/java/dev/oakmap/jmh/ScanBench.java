package dev.oakmap.jmh;

import dev.oakmap.OakMap;
import dev.oakmap.OakUnscopedBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.TimeUnit;

/**
 * One step of a scan, per pair: each invocation opens an iterator at a random key (with at least
 * {@link #LENGTH} pairs after it in the scan's direction) and visits {@link #LENGTH} pairs, reading
 * the first byte of each key and value; the score is per pair, iterator creation amortized. Oak
 * through its zero-copy stream entry set (one reused entry), its zero-copy entry set (a view per
 * pair) and its legacy entry set (deserialized copies); the skiplist through its entry set.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
@OperationsPerInvocation(ScanBench.LENGTH)
public class ScanBench {

    /** Pairs visited per invocation. */
    static final int LENGTH = 1000;

    private static byte[] start(Maps.DataState d, Maps.Cursor c, boolean descending) {
        int n = d.data.sorted.length;
        int i = descending ? c.nextIn(d.data, LENGTH - 1, n) : c.nextIn(d.data, 0, n - LENGTH + 1);
        return d.data.sorted[i];
    }

    private static long zc(OakMap<byte[], byte[]> view, byte[] from, boolean stream) {
        var tail = view.tailMap(from, true).zc();
        Iterator<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> it =
                (stream ? tail.entryStreamSet() : tail.entrySet()).iterator();
        long sum = 0;
        for (int i = 0; i < LENGTH; i++) {
            Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e = it.next();
            sum += e.getKey().get(0) + e.getValue().get(0);
        }
        return sum;
    }

    private static long copies(NavigableMap<byte[], byte[]> view, byte[] from) {
        Iterator<Map.Entry<byte[], byte[]>> it = view.tailMap(from, true).entrySet().iterator();
        long sum = 0;
        for (int i = 0; i < LENGTH; i++) {
            Map.Entry<byte[], byte[]> e = it.next();
            sum += e.getKey()[0] + e.getValue()[0];
        }
        return sum;
    }

    /** Ascending, {@code zc().entryStreamSet()}. */
    @Benchmark
    public long oakZcStreamAscending(Maps.DataState d, Maps.OakState oak, Maps.Cursor c) {
        return zc(oak.map, start(d, c, false), true);
    }

    /** What {@link #oakZcStreamAscendingParts} reads of each pair. */
    @State(Scope.Benchmark)
    public static class Parts {
        /**
         * {@code none} (the iterator's step alone), {@code key} (the first byte of the key),
         * {@code wholeKey} (every whole 8-byte word of the key, as a reader of whole rows would),
         * {@code value} (the first byte of the value), {@code both} (as {@link #oakZcStreamAscending})
         */
        @Param("both")
        public String reads;
    }

    /**
     * Ascending, {@code zc().entryStreamSet()}, reading what {@link Parts#reads} says of each
     * pair: with {@code -p reads=none,key,value,both}, where a step's time goes (the cursor, the
     * key view's read, the value view's validated read).
     */
    @Benchmark
    public long oakZcStreamAscendingParts(Maps.DataState d, Maps.OakState oak, Maps.Cursor c, Parts p) {
        if (p.reads.equals("both")) {
            return zc(oak.map, start(d, c, false), true); // the step of oakZcStreamAscending itself
        }
        var it = oak.map.tailMap(start(d, c, false), true).zc().entryStreamSet().iterator();
        long sum = 0;
        switch (p.reads) {
            case "none" -> {
                for (int i = 0; i < LENGTH; i++) {
                    sum += it.next() == null ? 0 : 1;
                }
            }
            case "key" -> {
                for (int i = 0; i < LENGTH; i++) {
                    sum += it.next().getKey().get(0);
                }
            }
            case "wholeKey" -> {
                for (int i = 0; i < LENGTH; i++) {
                    OakUnscopedBuffer k = it.next().getKey();
                    int n = k.capacity();
                    for (int j = 0; j + Long.BYTES <= n; j += Long.BYTES) {
                        sum += k.getLong(j);
                    }
                }
            }
            case "value" -> {
                for (int i = 0; i < LENGTH; i++) {
                    sum += it.next().getValue().get(0);
                }
            }
            default -> throw new IllegalArgumentException("reads: none, key, wholeKey, value or both, not " + p.reads);
        }
        return sum;
    }

    /** Descending, {@code descendingMap().zc().entryStreamSet()}. */
    @Benchmark
    public long oakZcStreamDescending(Maps.DataState d, Maps.OakState oak, Maps.Cursor c) {
        return zc(oak.map.descendingMap(), start(d, c, true), true);
    }

    /** Ascending, {@code zc().entrySet()}: a view object per pair. */
    @Benchmark
    public long oakZcIteratorAscending(Maps.DataState d, Maps.OakState oak, Maps.Cursor c) {
        return zc(oak.map, start(d, c, false), false);
    }

    /** Descending, {@code zc().entrySet()}. */
    @Benchmark
    public long oakZcIteratorDescending(Maps.DataState d, Maps.OakState oak, Maps.Cursor c) {
        return zc(oak.map.descendingMap(), start(d, c, true), false);
    }

    /** Ascending, the legacy {@code entrySet()}: a deserialized key and value per pair. */
    @Benchmark
    public long oakLegacyAscending(Maps.DataState d, Maps.OakState oak, Maps.Cursor c) {
        return copies(oak.map, start(d, c, false));
    }

    /** Descending, the legacy {@code descendingMap().entrySet()}. */
    @Benchmark
    public long oakLegacyDescending(Maps.DataState d, Maps.OakState oak, Maps.Cursor c) {
        return copies(oak.map.descendingMap(), start(d, c, true));
    }

    /** Ascending, the skiplist's {@code entrySet()}. */
    @Benchmark
    public long cslmAscending(Maps.DataState d, Maps.CslmState cslm, Maps.Cursor c) {
        return copies(cslm.map, start(d, c, false));
    }

    /** Descending, the skiplist's {@code descendingMap().entrySet()}. */
    @Benchmark
    public long cslmDescending(Maps.DataState d, Maps.CslmState cslm, Maps.Cursor c) {
        return copies(cslm.map.descendingMap(), start(d, c, true));
    }
}
