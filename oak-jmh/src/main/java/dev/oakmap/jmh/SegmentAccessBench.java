package dev.oakmap.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
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
import java.lang.invoke.VarHandle;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Not the map: a probe of the off-heap reads one scan step makes, to price the form of the memory
 * (docs/placement.md, "The CPU of a scan step"). Pairs of 64 bytes (a 4-byte length and a key
 * byte, then an aligned 8-byte header word, a value length and a value byte) sit at shuffled
 * places; a step reads the header with acquire, the key's length and first byte, the value's
 * length and first byte, then re-reads the header after an acquire fence (an optimistic read),
 * as a zero-copy stream scan does. {@code perBlock} resolves each reference to one of several
 * 64 MiB segments through an array, as the allocator does today; {@code whole} reads the same
 * layout through one segment. The score is per pair, over runs of {@link #LENGTH} pairs.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
@OperationsPerInvocation(SegmentAccessBench.LENGTH)
public class SegmentAccessBench {

    /** Pairs read per invocation. */
    static final int LENGTH = 1000;

    private static final VarHandle STATE = ValueLayout.JAVA_LONG.varHandle();
    private static final long BLOCK = 64L << 20;
    private static final int PAIR = 64;
    private static final int HEADER = 24;
    private static final int VALUE = 32;
    private static final long OFFSET_MASK = (1L << 40) - 1;

    /** The pairs, laid out twice: across blocks and in one segment. */
    @State(Scope.Benchmark)
    public static class Layout {
        /** Pairs in the layout (4,000 fit in L2; 1M do not fit in any cache). */
        @Param({"4000", "1000000"})
        public int pairs;

        Arena arena;
        MemorySegment[] blocks;
        MemorySegment whole;
        /** Block id (from 1) in the top bits, offset in the low 40: the per-block references. */
        long[] refs;
        /** The same pairs' offsets in {@link #whole}. */
        long[] offsets;

        /** Lays the pairs out at shuffled places, the same places in both forms. */
        @Setup(Level.Trial)
        public void build() {
            int count = (int) ((long) pairs * PAIR / BLOCK + 1);
            arena = Arena.ofShared();
            blocks = new MemorySegment[count + 1];
            for (int b = 1; b <= count; b++) {
                blocks[b] = arena.allocate(BLOCK, 64);
            }
            whole = arena.allocate(BLOCK * count, 64);
            int[] place = Data.permutation(pairs, new SplittableRandom(3));
            refs = new long[pairs];
            offsets = new long[pairs];
            for (int i = 0; i < pairs; i++) {
                long at = (long) place[i] * PAIR;
                int block = (int) (at / BLOCK) + 1;
                long off = at % BLOCK;
                refs[i] = ((long) block << 40) | off;
                offsets[i] = at;
                write(blocks[block], off, i);
                write(whole, at, i);
            }
        }

        private static void write(MemorySegment s, long at, int i) {
            s.set(ValueLayout.JAVA_INT, at, 16);
            s.set(ValueLayout.JAVA_BYTE, at + 4, (byte) i);
            STATE.setRelease(s, at + HEADER, 2L);
            s.set(ValueLayout.JAVA_INT, at + VALUE, 16);
            s.set(ValueLayout.JAVA_BYTE, at + VALUE + 4, (byte) (i >>> 8));
        }

        /** Frees the segments. */
        @TearDown(Level.Trial)
        public void free() {
            arena.close();
        }
    }

    /** A thread's random start positions. */
    @State(Scope.Thread)
    public static class Start {
        private final SplittableRandom random = new SplittableRandom(5);

        int next(Layout l) {
            return random.nextInt(l.pairs - LENGTH);
        }
    }

    /** Every read resolves its reference to a block's segment, as the allocator does today. */
    @Benchmark
    public long perBlock(Layout l, Start s) {
        int from = s.next(l);
        long sum = 0;
        for (int i = from; i < from + LENGTH; i++) {
            sum += stepPerBlock(l.blocks, l.refs[i]);
        }
        return sum;
    }

    /** The same reads through one segment. */
    @Benchmark
    public long whole(Layout l, Start s) {
        int from = s.next(l);
        long sum = 0;
        for (int i = from; i < from + LENGTH; i++) {
            sum += stepWhole(l.whole, l.offsets[i]);
        }
        return sum;
    }

    private static MemorySegment segment(MemorySegment[] blocks, long ref) {
        return blocks[(int) (ref >>> 40)];
    }

    private static long stepPerBlock(MemorySegment[] blocks, long ref) {
        long at = ref & OFFSET_MASK;
        long h = (long) STATE.getAcquire(segment(blocks, ref), at + HEADER);
        MemorySegment k = segment(blocks, ref);
        byte kb = k.get(ValueLayout.JAVA_INT, at) > 0 ? k.get(ValueLayout.JAVA_BYTE, at + 4) : 0;
        MemorySegment v = segment(blocks, ref);
        byte vb = v.get(ValueLayout.JAVA_INT, at + VALUE) > 0 ? v.get(ValueLayout.JAVA_BYTE, at + VALUE + 4) : 0;
        VarHandle.acquireFence();
        return (long) STATE.getAcquire(segment(blocks, ref), at + HEADER) == h ? kb + vb : -1;
    }

    private static long stepWhole(MemorySegment whole, long at) {
        long h = (long) STATE.getAcquire(whole, at + HEADER);
        byte kb = whole.get(ValueLayout.JAVA_INT, at) > 0 ? whole.get(ValueLayout.JAVA_BYTE, at + 4) : 0;
        byte vb = whole.get(ValueLayout.JAVA_INT, at + VALUE) > 0 ? whole.get(ValueLayout.JAVA_BYTE, at + VALUE + 4) : 0;
        VarHandle.acquireFence();
        return (long) STATE.getAcquire(whole, at + HEADER) == h ? kb + vb : -1;
    }
}
