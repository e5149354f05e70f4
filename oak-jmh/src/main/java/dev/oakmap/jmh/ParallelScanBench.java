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
 * A whole-map aggregation, sequential and as a parallel stream (the common pool: one worker per
 * core but one, plus the caller): the sum of the first byte of every value, through Oak's
 * zero-copy values (a view per value) and value stream set (one reused view per part), and the
 * skiplist's values. Oak's spliterators split by key range at chunk
 * boundaries, so each worker scans its own part of the map; the skiplist's split its base level.
 * The score is per map scan.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
public class ParallelScanBench {

    @Benchmark
    public long oakZcValuesSequential(Maps.OakState oak) {
        return oak.map.zc().values().stream().mapToLong(v -> v.get(0)).sum();
    }

    @Benchmark
    public long oakZcValuesParallel(Maps.OakState oak) {
        return oak.map.zc().values().parallelStream().mapToLong(v -> v.get(0)).sum();
    }

    @Benchmark
    public long oakZcValueStreamSetSequential(Maps.OakState oak) {
        return oak.map.zc().valueStreamSet().stream().mapToLong(v -> v.get(0)).sum();
    }

    @Benchmark
    public long oakZcValueStreamSetParallel(Maps.OakState oak) {
        return oak.map.zc().valueStreamSet().parallelStream().mapToLong(v -> v.get(0)).sum();
    }

    @Benchmark
    public long cslmValuesSequential(Maps.CslmState cslm) {
        return cslm.map.values().stream().mapToLong(v -> v[0]).sum();
    }

    @Benchmark
    public long cslmValuesParallel(Maps.CslmState cslm) {
        return cslm.map.values().parallelStream().mapToLong(v -> v[0]).sum();
    }
}
