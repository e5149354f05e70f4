package dev.oakmap.jmh;

import dev.oakmap.internal.buffer.Bytes;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;

/**
 * Not the map: the copies between off-heap slices and byte arrays ({@code Bytes}), by size.
 * {@code out*} copy a slice into an array (a key view's copy, a legacy get), {@code in*} an array
 * into a slice (a legacy put's serialization); {@code *Oak} is {@code Bytes} as the map uses it,
 * {@code *Segment} the JDK's segment-to-segment {@code MemorySegment.copy} over a wrapped array
 * (what {@code Bytes} did for every length until 2026-11-28). Each invocation copies one of 64
 * slices spread over 64 KB (cached), so the score is the copy's own cost. Alone, the JDK's copy
 * is the faster at every length; {@code Bytes} still uses its loop from 65 to 256 bytes, where a
 * scan's copies find their lines in flight and the stub waits for them (see its class comment).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@State(Scope.Thread)
public class CopyBench {

    /** Bytes copied. */
    @Param({"8", "16", "64", "100", "256", "512", "1024", "4096"})
    public int size;

    private static final int SLICES = 64;
    private Arena arena;
    private MemorySegment memory;
    private byte[] array;
    private long stride;
    private int next;

    @Setup(Level.Trial)
    public void build() {
        arena = Arena.ofShared();
        stride = Math.max(1024, size + 4L);
        memory = arena.allocate(stride * SLICES, 8);
        for (long i = 0; i < memory.byteSize(); i++) {
            memory.set(ValueLayout.JAVA_BYTE, i, (byte) i);
        }
        array = new byte[size];
    }

    @TearDown(Level.Trial)
    public void close() {
        arena.close();
    }

    /** Slices start 4 bytes into their place, as off-heap slices are 4-aligned only. */
    private long nextSlice() {
        next = (next + 1) & (SLICES - 1);
        return next * stride + 4;
    }

    @Benchmark
    public byte[] outOak() {
        Bytes.copyOut(memory, nextSlice(), array, 0, size);
        return array;
    }

    @Benchmark
    public byte[] outSegment() {
        MemorySegment.copy(memory, nextSlice(), MemorySegment.ofArray(array), 0, size);
        return array;
    }

    @Benchmark
    public MemorySegment inOak() {
        Bytes.copyIn(array, 0, memory, nextSlice(), size);
        return memory;
    }

    @Benchmark
    public MemorySegment inSegment() {
        MemorySegment.copy(MemorySegment.ofArray(array), 0, memory, nextSlice(), size);
        return memory;
    }
}
