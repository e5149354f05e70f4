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
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Not the map: the floors that this machine's memory puts under any map's scan or copy of data
 * spread over a region far larger than the caches ({@code regionMiB}, 1 GiB by default, about the
 * 1M pairs of 100 B / 1 KB of the targets). Reading the results page's ratios needs these:
 * a scan step that must touch two cache lines at random places cannot cost less than two
 * {@link #independentLine} times, whatever the code does.
 * <ul>
 *   <li>{@link #dependentLine}: the latency of one miss, each load's address coming from the one
 *       before (a random cycle through the region's lines), as in a linked list or a skiplist;</li>
 *   <li>{@link #independentLine}: one line at a random place whose address is known in advance,
 *       as in a chunk's reference array; the core overlaps such misses, as many as it can track
 *       at once;</li>
 *   <li>{@link #adjacentLines}: three consecutive lines from each random place (a 100-byte key
 *       and the value header after it span about that much);</li>
 *   <li>{@link #sequentialLine}: one line after another, where the hardware prefetcher helps;</li>
 *   <li>{@link #randomCopy}: {@code copyBytes} bytes from a random place into a heap array, which
 *       a copying (legacy API) read of a value does once per pair;</li>
 *   <li>{@link #paddedLine}: {@link #independentLine} with {@code pad} short steps of arithmetic
 *       after each load. A load cannot retire before its line arrives, so the instructions
 *       behind the oldest miss fill the reorder buffer, and the more of them sit between loads,
 *       the fewer misses are in flight: a look-ahead touch must be as short as it can be;</li>
 *   <li>{@link #blockSegmentLine}: {@link #independentLine} over the same amount of memory split
 *       into 8 MiB blocks with an arena each, every load through its block's segment taken from
 *       an array, as touches through Oak's blocks did: the segment's checks (scope, bounds,
 *       address) on every load are such instructions.</li>
 * </ul>
 * Scores are per line or per copy. Run with {@code bin/jmh MemoryFloorBench}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
public class MemoryFloorBench {

    /** Loads or copies per invocation. */
    static final int BATCH = 4096;
    private static final int LINE = 64;

    /** The region, its random places, and the pointer-chasing cycle written into it. */
    @State(Scope.Benchmark)
    public static class Region {
        /** Size of the off-heap region, in MiB. */
        @Param("1024")
        public int regionMiB;
        /** Bytes copied by {@link MemoryFloorBench#randomCopy}. */
        @Param("1000")
        public int copyBytes;

        Arena arena;
        MemorySegment segment;
        /** Random line-aligned offsets, room for a copy of {@code copyBytes} after each. */
        long[] places;

        @Setup(Level.Trial)
        public void setUp() {
            long size = (long) regionMiB << 20;
            arena = Arena.ofShared();
            segment = arena.allocate(size, 4096);
            long lines = size / LINE;
            SplittableRandom random = new SplittableRandom(42);
            // one random cycle through every line: each line holds the offset of the next
            int[] order = Data.permutation((int) lines, random);
            for (int i = 0; i < order.length; i++) {
                long next = (long) order[(i + 1) % order.length] * LINE;
                segment.set(ValueLayout.JAVA_LONG, (long) order[i] * LINE, next);
            }
            places = new long[1 << 23]; // 512 MiB of distinct lines: far more than the caches hold
            long limit = lines - (copyBytes + 3L * LINE) / LINE - 1;
            for (int i = 0; i < places.length; i++) {
                places[i] = random.nextLong(limit) * LINE;
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            arena.close();
        }
    }

    /** How many short steps of arithmetic {@link #paddedLine} puts after each load. */
    @State(Scope.Benchmark)
    public static class Padding {
        @Param({"0", "4", "8"})
        public int pad;
    }

    /** The memory of {@link Region} again, as blocks of 8 MiB with an arena each. */
    @State(Scope.Benchmark)
    public static class Blocks {
        static final int BLOCK_BITS = 23;
        Arena[] arenas;
        MemorySegment[] segments;
        /** Random line-aligned places: block index in the high 32 bits, offset in the low. */
        long[] places;

        @Setup(Level.Trial)
        public void setUp(Region r) {
            int n = (int) (r.segment.byteSize() >>> BLOCK_BITS);
            arenas = new Arena[n];
            segments = new MemorySegment[n];
            for (int i = 0; i < n; i++) {
                arenas[i] = Arena.ofShared();
                segments[i] = arenas[i].allocate(1L << BLOCK_BITS, 4096);
            }
            SplittableRandom random = new SplittableRandom(43);
            places = new long[1 << 23];
            for (int i = 0; i < places.length; i++) {
                places[i] = ((long) random.nextInt(n) << 32) | ((long) random.nextInt(1 << (BLOCK_BITS - 6)) << 6);
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            for (Arena a : arenas) {
                a.close();
            }
        }
    }

    /** Where each thread is in the random places, the cycle and the sequential sweep. */
    @State(Scope.Thread)
    public static class Position {
        int place;
        long chase;
        long sweep;
        byte[] target;

        @Setup(Level.Trial)
        public void setUp(Region r) {
            target = new byte[r.copyBytes];
        }

        int nextPlaces(Region r) {
            int at = place;
            place = (at + BATCH) & (r.places.length - 1);
            return at;
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long dependentLine(Region r, Position p) {
        MemorySegment s = r.segment;
        long at = p.chase;
        for (int i = 0; i < BATCH; i++) {
            at = s.get(ValueLayout.JAVA_LONG, at);
        }
        p.chase = at;
        return at;
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long independentLine(Region r, Position p) {
        MemorySegment s = r.segment;
        long[] places = r.places;
        int from = p.nextPlaces(r);
        long sum = 0;
        for (int i = 0; i < BATCH; i++) {
            sum += s.get(ValueLayout.JAVA_LONG, places[from + i]);
        }
        return sum;
    }

    @Benchmark
    @OperationsPerInvocation(3 * BATCH)
    public long adjacentLines(Region r, Position p) {
        MemorySegment s = r.segment;
        long[] places = r.places;
        int from = p.nextPlaces(r);
        long sum = 0;
        for (int i = 0; i < BATCH; i++) {
            long at = places[from + i];
            sum += s.get(ValueLayout.JAVA_LONG, at) + s.get(ValueLayout.JAVA_LONG, at + LINE)
                    + s.get(ValueLayout.JAVA_LONG, at + 2 * LINE);
        }
        return sum;
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long sequentialLine(Region r, Position p) {
        MemorySegment s = r.segment;
        long at = p.sweep;
        long size = s.byteSize();
        long sum = 0;
        for (int i = 0; i < BATCH; i++) {
            sum += s.get(ValueLayout.JAVA_LONG, at);
            at += LINE;
            if (at >= size) {
                at = 0;
            }
        }
        p.sweep = at;
        return sum;
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long randomCopy(Region r, Position p) {
        MemorySegment s = r.segment;
        long[] places = r.places;
        byte[] target = p.target;
        int from = p.nextPlaces(r);
        long sum = 0;
        for (int i = 0; i < BATCH; i++) {
            MemorySegment.copy(s, ValueLayout.JAVA_BYTE, places[from + i], target, 0, target.length);
            sum += target[target.length - 1];
        }
        return sum;
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long paddedLine(Region r, Padding pd, Position p) {
        MemorySegment s = r.segment;
        long[] places = r.places;
        int from = p.nextPlaces(r);
        int pad = pd.pad;
        long sum = 0;
        long x = from;
        for (int i = 0; i < BATCH; i++) {
            sum += s.get(ValueLayout.JAVA_LONG, places[from + i]);
            for (int j = 0; j < pad; j++) {
                x = (x ^ j) + (x >>> 7);
            }
        }
        return sum + x;
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long blockSegmentLine(Region r, Blocks b, Position p) {
        MemorySegment[] segments = b.segments;
        long[] places = b.places;
        int from = p.nextPlaces(r);
        long sum = 0;
        for (int i = 0; i < BATCH; i++) {
            long place = places[from + i];
            sum += segments[(int) (place >>> 32)].get(ValueLayout.JAVA_LONG, (int) place);
        }
        return sum;
    }
}
