package dev.oakmap.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * Puts of a full value over present keys, in random order (the map's size stays put): Oak's
 * zero-copy put (no result), Oak's legacy put (which deserializes the previous value it returns),
 * and the skiplist's put of a fresh copy of the value (the map must own its value; the key is
 * present, so the skiplist keeps its own key array).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
public class PutBench {

    /** {@code zc().put(key, value)}. */
    @Benchmark
    public void oakZcPut(Maps.DataState d, Maps.OakState oak, Maps.Cursor c) {
        oak.map.zc().put(c.next(d.data), d.data.value);
    }

    /** {@code put(key, value)} of the ConcurrentNavigableMap API, returning the previous value. */
    @Benchmark
    public byte[] oakLegacyPut(Maps.DataState d, Maps.OakState oak, Maps.Cursor c) {
        return oak.map.put(c.next(d.data), d.data.value);
    }

    /** The skiplist's put of a copy of the value. */
    @Benchmark
    public byte[] cslmPut(Maps.DataState d, Maps.CslmState cslm, Maps.Cursor c) {
        return cslm.map.put(c.next(d.data), d.data.value.clone());
    }
}
