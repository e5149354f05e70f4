package dev.oakmap.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A server that runs each request on a virtual thread of its own: every task removes a pair
 * and puts it back, on a fresh virtual thread, {@link #TASKS} tasks per invocation (the score is
 * per task, thread creation included). The map's memory manager must not keep anything per
 * thread: with a participant and a release list per thread, Oak took 7-13 s for 100,000 such
 * tasks and its memory grew with every removal.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
@OperationsPerInvocation(ThreadPerTaskBench.TASKS)
public class ThreadPerTaskBench {

    /** Tasks, each on a new virtual thread, per invocation. */
    static final int TASKS = 1000;

    private static void run(Maps.DataState d, Maps.Cursor c, Consumer<byte[]> task) {
        try (ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < TASKS; i++) {
                byte[] key = c.next(d.data);
                executor.execute(() -> task.accept(key));
            }
        }
    }

    /** {@code zc().remove(key)} then {@code zc().put(key, value)}. */
    @Benchmark
    public void oakZcRemovePut(Maps.DataState d, Maps.OakState oak, Maps.Cursor c) {
        run(d, c, key -> {
            oak.map.zc().remove(key);
            oak.map.zc().put(key, d.data.value);
        });
    }

    /** The skiplist's {@code remove(key)} then {@code put(key, copy of the value)}. */
    @Benchmark
    public void cslmRemovePut(Maps.DataState d, Maps.CslmState cslm, Maps.Cursor c) {
        Map<byte[], byte[]> map = cslm.map;
        run(d, c, key -> {
            map.remove(key);
            map.put(key, d.data.value.clone());
        });
    }
}
