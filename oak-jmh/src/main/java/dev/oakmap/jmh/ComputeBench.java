package dev.oakmap.jmh;

import dev.oakmap.OakScopedWriteBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * Atomic updates of present keys, adding 1 to the big-endian long in the value's first 8 bytes:
 * Oak's {@code zc().computeIfPresent} in place, and {@code compute} with a copied, incremented
 * array for Oak's legacy API and for the skiplist (neither can update in place).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
public class ComputeBench {

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private static final Consumer<OakScopedWriteBuffer> INCREMENT = b -> b.putLong(0, b.getLong(0) + 1);

    /** A fresh array (OakMap ignores a result identical to the function's argument). */
    private static final BiFunction<byte[], byte[], byte[]> INCREMENTED_COPY = (k, v) -> {
        byte[] next = v.clone();
        LONGS.set(next, 0, (long) LONGS.get(next, 0) + 1);
        return next;
    };

    /** {@code zc().computeIfPresent(key, b -> b.putLong(0, b.getLong(0) + 1))}: 8 bytes written in place. */
    @Benchmark
    public boolean oakZcComputeIfPresent(Maps.DataState d, Maps.OakState oak, Maps.Cursor c) {
        return oak.map.zc().computeIfPresent(c.next(d.data), INCREMENT);
    }

    /** {@code compute(key, copy + 1)} of the ConcurrentNavigableMap API. */
    @Benchmark
    public byte[] oakLegacyCompute(Maps.DataState d, Maps.OakState oak, Maps.Cursor c) {
        return oak.map.compute(c.next(d.data), INCREMENTED_COPY);
    }

    /** The skiplist's {@code compute(key, copy + 1)}. */
    @Benchmark
    public byte[] cslmCompute(Maps.DataState d, Maps.CslmState cslm, Maps.Cursor c) {
        return cslm.map.compute(c.next(d.data), INCREMENTED_COPY);
    }
}
