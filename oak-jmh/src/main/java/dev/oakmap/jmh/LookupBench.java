package dev.oakmap.jmh;

import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakUnscopedBuffer;
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
import java.util.function.Function;

/**
 * Lookups of present keys, in random order: Oak's zero-copy get reading 8 bytes of the value,
 * Oak's zero-copy get copying the whole value out ({@code transform}), Oak's legacy get (which
 * deserializes a copy), and the skiplist's get (which hands out its stored array: no copy, so
 * both of Oak's copying variants compare with it too).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
public class LookupBench {

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private static final Function<OakScopedReadBuffer, byte[]> COPY = b -> {
        byte[] a = new byte[b.capacity()];
        b.getBytes(0, a, 0, a.length);
        return a;
    };

    /** {@code zc().get(key).getLong(0)}: no copy at all. */
    @Benchmark
    public long oakZcGet(Maps.DataState d, Maps.OakState oak, Maps.Cursor c) {
        OakUnscopedBuffer v = oak.map.zc().get(c.next(d.data));
        return v.getLong(0);
    }

    /** {@code zc().get(key).transform(copy)}: the whole value copied into a fresh array. */
    @Benchmark
    public byte[] oakZcGetCopy(Maps.DataState d, Maps.OakState oak, Maps.Cursor c) {
        return oak.map.zc().get(c.next(d.data)).transform(COPY);
    }

    /** {@code get(key)} of the ConcurrentNavigableMap API: deserializes a copy of the value. */
    @Benchmark
    public byte[] oakLegacyGet(Maps.DataState d, Maps.OakState oak, Maps.Cursor c) {
        return oak.map.get(c.next(d.data));
    }

    /** The skiplist's get, reading 8 bytes of the stored value. */
    @Benchmark
    public long cslmGet(Maps.DataState d, Maps.CslmState cslm, Maps.Cursor c) {
        return (long) LONGS.get(cslm.map.get(c.next(d.data)), 0);
    }
}
