package dev.oakmap.jmh;

import dev.oakmap.OakMap;
import dev.oakmap.OakMapBuilder;
import dev.oakmap.common.OakCommonTypes;
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

import java.util.Map;
import java.util.NavigableMap;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;

/**
 * Navigation and the ends of the map, on {@code Long} keys and values filled in key order (as
 * time-ordered keys arrive), one thread: {@code firstKey}, {@code lastKey}, {@code ceilingKey}
 * of a random key, and the queue and stack patterns, which take mappings off one end while
 * others are put past the last key, so that removed entries pile up at that end. Oak through
 * the {@code ConcurrentNavigableMap} API, against {@code ConcurrentSkipListMap}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
public class NavigationBench {

    /** A map of {@code pairs} keys 0, 1, 2, ... and the next key to append. */
    @State(Scope.Thread)
    public static class Ends {
        /** Pairs in the map. */
        @Param("1000000")
        public int pairs;
        /** "oak" or "cslm". */
        @Param({"oak", "cslm"})
        public String map;

        NavigableMap<Long, Long> m;
        long tail;
        final SplittableRandom random = new SplittableRandom(42);

        /** Fills the map in key order. */
        @Setup(Level.Trial)
        public void build() {
            m = map.equals("oak")
                    ? new OakMapBuilder<>(OakCommonTypes.LONG_SERIALIZER, OakCommonTypes.LONG_SERIALIZER,
                            OakCommonTypes.LONG_COMPARATOR).build()
                    : new ConcurrentSkipListMap<>();
            for (tail = 0; tail < pairs; tail++) {
                m.put(tail, tail);
            }
        }

        /** Releases Oak's off-heap memory. */
        @TearDown(Level.Trial)
        public void close() {
            if (m instanceof OakMap<Long, Long> oak) {
                oak.close();
            }
        }
    }

    /** {@code firstKey()}. */
    @Benchmark
    public Long firstKey(Ends s) {
        return s.m.firstKey();
    }

    /** {@code lastKey()}: the end that appends make long. */
    @Benchmark
    public Long lastKey(Ends s) {
        return s.m.lastKey();
    }

    /** {@code ceilingKey} of a random key. */
    @Benchmark
    public Long ceilingKey(Ends s) {
        return s.m.ceilingKey(s.random.nextLong(s.tail));
    }

    /** A queue: {@code pollFirstEntry()}, then a put past the last key. */
    @Benchmark
    public Map.Entry<Long, Long> queue(Ends s) {
        Map.Entry<Long, Long> e = s.m.pollFirstEntry();
        s.m.put(s.tail, s.tail);
        s.tail++;
        return e;
    }

    /** Entries a stack benchmark pushes, then pops. */
    static final int STACK_BATCH = 256;

    /**
     * A stack over the tail: {@value #STACK_BATCH} puts past the last key, then as many
     * {@code pollLastEntry()} calls, which leave removed entries behind the new last key; the
     * score is per call (put or poll).
     */
    @Benchmark
    @OperationsPerInvocation(2 * STACK_BATCH)
    public long stack(Ends s) {
        for (int i = 0; i < STACK_BATCH; i++) {
            s.m.put(s.tail + i, s.tail);
        }
        long sum = 0;
        for (int i = 0; i < STACK_BATCH; i++) {
            sum += s.m.pollLastEntry().getKey();
        }
        return sum;
    }
}
