package dev.oakmap.examples.druid.bench;

import dev.oakmap.OakOutOfMemoryException;
import dev.oakmap.examples.druid.EventGenerator;
import dev.oakmap.examples.druid.GeneratedEvents;
import dev.oakmap.examples.druid.GeneratorConfig;
import dev.oakmap.examples.druid.Granularity;
import dev.oakmap.examples.druid.IncrementalIndex;
import dev.oakmap.examples.druid.IndexSchema;
import dev.oakmap.examples.druid.LegacyIncrementalIndex;
import dev.oakmap.examples.druid.OakIncrementalIndex;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One benchmark point, run in its own JVM by {@link DruidBench}: generate the events in advance,
 * warm up on a throwaway index, then ingest every event into a fresh index on N threads (thread
 * t takes events t, t + N, ...) and measure the time, the collections, and the memory the index
 * holds beyond what the JVM held before it was built (heap after full collections, plus off-heap
 * bytes used). Prints {@code @@result key=value} lines for the parent.
 */
public final class IngestPoint {

    /** Prefix of the result lines. */
    static final String RESULT = "@@result ";

    /** Rollup input: 4 dimensions of 4, 16, 64 and 256 values (Zipf 1.0), minute buckets. */
    static final int ROLLUP_DIMS = 4;

    private IngestPoint() {
    }

    /**
     * Arguments: {@code impl mode rows threads offHeapCapacity} then the input options of
     * {@link BenchOptions#inputArgs()}.
     */
    public static void main(String[] args) {
        Map<String, String> r = new LinkedHashMap<>();
        int code = 0;
        try {
            run(args, r);
        } catch (OutOfMemoryError e) {
            r.clear();
            r.put("error", "heap exhausted (OutOfMemoryError: " + e.getMessage() + ")");
            code = 3;
        } catch (OakOutOfMemoryException e) {
            r.clear();
            r.put("error", "off-heap capacity exhausted (" + e.getMessage() + ")");
            code = 3;
        } catch (Throwable e) {
            e.printStackTrace(System.out);
            r.put("error", String.valueOf(e).replace('\n', ' '));
            code = 1;
        }
        for (Map.Entry<String, String> e : r.entrySet()) {
            System.out.println(RESULT + e.getKey() + "=" + e.getValue());
        }
        System.out.flush();
        System.exit(code);
    }

    private static void run(String[] args, Map<String, String> r) throws InterruptedException {
        String impl = args[0];
        boolean rollup = args[1].equals("rollup");
        int rows = Integer.parseInt(args[2]);
        int threads = Integer.parseInt(args[3]);
        long offHeap = Long.parseLong(args[4]);
        Map<String, String> in = new LinkedHashMap<>();
        for (int i = 5; i + 1 < args.length; i += 2) {
            in.put(args[i].substring(2), args[i + 1]);
        }
        GeneratorConfig config = rollup
                ? GeneratorConfig.web(Long.parseLong(in.get("seed")), Integer.parseInt(in.get("dims"))).withUsers(Integer.parseInt(in.get("users")))
                : GeneratorConfig.web(Long.parseLong(in.get("seed")), Integer.parseInt(in.get("dims")))
                .withUsers(Integer.parseInt(in.get("users"))).withExtraMetrics(Integer.parseInt(in.get("extra-metrics")));
        IndexSchema schema = rollup ? config.rollupSchema(Granularity.MINUTE) : config.plainSchema();

        long g0 = System.nanoTime();
        GeneratedEvents events = EventGenerator.generate(config, rows);
        r.put("gen_s", fmt((System.nanoTime() - g0) / 1e9));
        int warm = Math.min(rows, Integer.parseInt(in.get("warmup-rows")));
        int chunk = Integer.parseInt(in.getOrDefault("oak-chunk", "" + OakIncrementalIndex.DEFAULT_CHUNK_CAPACITY));
        double ratio = Double.parseDouble(in.getOrDefault("oak-ratio", "" + OakIncrementalIndex.DEFAULT_REBALANCE_RATIO));
        if (warm > 0) {
            try (IncrementalIndex w = create(impl, schema, offHeap, chunk, ratio)) {
                ingest(w, events, warm, threads);
            }
        }

        long heapBefore = heapUsed();
        IncrementalIndex index = create(impl, schema, offHeap, chunk, ratio);
        long[] gc0 = gcStats();
        long t0 = System.nanoTime();
        ingest(index, events, rows, threads);
        double seconds = (System.nanoTime() - t0) / 1e9;
        long[] gc1 = gcStats();
        long heapGrowth = heapUsed() - heapBefore;
        long offUsed = index.offHeapBytesUsed();
        long raw = (long) rows * schema.rawRowBytes();
        r.put("ingest_s", fmt(seconds));
        r.put("rows_per_s", fmt(rows / seconds));
        r.put("facts", Long.toString(index.factCount()));
        r.put("raw_bytes", Long.toString(raw));
        r.put("heap_growth_bytes", Long.toString(heapGrowth));
        r.put("offheap_used_bytes", Long.toString(offUsed));
        r.put("offheap_reserved_bytes", Long.toString(index.offHeapBytesReserved()));
        r.put("overhead_bytes", Long.toString(heapGrowth + offUsed - raw));
        r.put("overhead_pct", fmt(100.0 * (heapGrowth + offUsed - raw) / raw));
        r.put("bytes_per_fact", fmt((double) (heapGrowth + offUsed) / index.factCount()));
        r.put("gc_count", Long.toString(gc1[0] - gc0[0]));
        r.put("gc_ms", Long.toString(gc1[1] - gc0[1]));
        r.put("max_heap_bytes", Long.toString(Runtime.getRuntime().maxMemory()));
        r.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        index.close();
    }

    static IncrementalIndex create(String impl, IndexSchema schema, long offHeap, int chunk, double ratio) {
        return switch (impl) {
            case "oak" -> new OakIncrementalIndex(schema, offHeap, chunk, ratio);
            case "legacy" -> new LegacyIncrementalIndex(schema);
            default -> throw new IllegalArgumentException("unknown implementation " + impl);
        };
    }

    /** Ingests events {@code [0, rows)} on {@code threads} threads, striped. */
    static void ingest(IncrementalIndex index, GeneratedEvents events, int rows, int threads) throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts.add(Thread.ofPlatform().name("ingest-" + t).start(() -> {
                try {
                    GeneratedEvents.Cursor c = events.cursor();
                    for (int i = id; i < rows; i += threads) {
                        index.ingest(c.position(i));
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        Throwable f = failure.get();
        if (f instanceof Error e) {
            throw e;
        }
        if (f instanceof RuntimeException e) {
            throw e;
        }
        if (f != null) {
            throw new IllegalStateException(f);
        }
    }

    /** Heap bytes in use after a few full collections. */
    static long heapUsed() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(30);
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    private static long[] gcStats() {
        long n = 0;
        long ms = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, gc.getCollectionCount());
            ms += Math.max(0, gc.getCollectionTime());
        }
        return new long[]{n, ms};
    }

    static String fmt(double v) {
        return String.format(Locale.ROOT, "%.6g", v);
    }
}
