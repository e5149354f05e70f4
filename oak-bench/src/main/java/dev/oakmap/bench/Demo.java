package dev.oakmap.bench;

import dev.oakmap.OakMap;
import dev.oakmap.OakMapBuilder;
import dev.oakmap.OakScopedWriteBuffer;
import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.OakZeroCopyMap;
import dev.oakmap.common.OakCommonTypes;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CountDownLatch;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * The main demonstration: a small side-by-side run of {@link OakMap} (through its zero-copy and
 * its legacy, object-copying API) against {@link ConcurrentSkipListMap}{@code <byte[], byte[]>}
 * (which stores copies of keys and values on the Java heap), on the workload of the Oak papers.
 *
 * <p>Method: keys of {@code key-size} random bytes (key {@code i} derived deterministically from
 * {@code i} and the seed, so every operation can pick an existing key), values of
 * {@code value-size} bytes. One thread ingests {@code pairs} pairs with {@code putIfAbsent}; then,
 * for each workload and thread count, the workload runs {@code warmup} seconds (discarded) and
 * {@code duration} seconds (measured) on that many threads, each with its own deterministically
 * seeded random generator choosing keys uniformly among the ingested ones. Both maps see the same
 * key sequences. Memory is measured after ingestion: heap in use after {@code System.gc()}, minus
 * the heap in use before the map was built, plus, for Oak, the off-heap bytes in use.
 *
 * <p>This is a demonstration, not a rigorous benchmark: one JVM, one repetition, both maps in the
 * same process (Oak first). Use its ratios as a first impression.
 *
 * <p>Usage: {@code bin/demo [--pairs=200000] [--key-size=100] [--value-size=1000] [--duration=5]
 * [--warmup=2] [--threads=1,2] [--scan=10000] [--seed=42]}.
 */
public final class Demo {

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    /** Increments the first 8 bytes of a value, in place. */
    private static final Consumer<OakScopedWriteBuffer> INCREMENT = b -> b.putLong(0, b.getLong(0) + 1);

    private Demo() {
    }

    // ------------------------------------------------------------------------------ configuration

    /** Command-line settings. */
    record Config(int pairs, int keySize, int valueSize, double duration, double warmup, int[] threads,
                  int scan, long seed) {

        static Config parse(String[] args) {
            Map<String, String> m = new LinkedHashMap<>();
            m.put("pairs", "200000");
            m.put("key-size", "100");
            m.put("value-size", "1000");
            m.put("duration", "5");
            m.put("warmup", "2");
            m.put("threads", "1,2");
            m.put("scan", "10000");
            m.put("seed", "42");
            for (String a : args) {
                if (a.equals("-h") || a.equals("--help")) {
                    System.out.println("usage: bin/demo " + m.entrySet().stream()
                            .map(e -> "[--" + e.getKey() + "=" + e.getValue() + "]").reduce((x, y) -> x + " " + y)
                            .orElse(""));
                    System.out.println("durations in seconds; sizes in bytes; threads as a comma-separated list");
                    System.exit(0);
                }
                int eq = a.indexOf('=');
                if (!a.startsWith("--") || eq < 0 || !m.containsKey(a.substring(2, eq))) {
                    throw new IllegalArgumentException("unknown argument '" + a + "' (try --help)");
                }
                m.put(a.substring(2, eq), a.substring(eq + 1).replace("_", ""));
            }
            Config c = new Config(Integer.parseInt(m.get("pairs")), Integer.parseInt(m.get("key-size")),
                    Integer.parseInt(m.get("value-size")), Double.parseDouble(m.get("duration")),
                    Double.parseDouble(m.get("warmup")),
                    Arrays.stream(m.get("threads").split(",")).mapToInt(s -> Integer.parseInt(s.trim())).toArray(),
                    Integer.parseInt(m.get("scan")), Long.parseLong(m.get("seed")));
            if (c.pairs < 1 || c.keySize < 8 || c.valueSize < 8 || c.duration <= 0 || c.warmup < 0 || c.scan < 1
                    || c.threads.length == 0 || Arrays.stream(c.threads).anyMatch(t -> t < 1)) {
                throw new IllegalArgumentException("need pairs >= 1, key-size >= 8, value-size >= 8, duration > 0, "
                        + "warmup >= 0, scan >= 1, threads >= 1");
            }
            return c;
        }
    }

    // ------------------------------------------------------------------------------ keys

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * Writes key {@code i} into {@code out}: pseudo-random bytes determined by {@code seed} and
     * {@code i}. The first 8 bytes are a bijective function of {@code i}, so distinct indexes give
     * distinct keys.
     */
    static void key(long seed, int i, byte[] out) {
        long base = seed + i * GOLDEN;
        int words = out.length / 8;
        for (int w = 0; w < words; w++) {
            LONGS.set(out, w * 8, mix(base + w * 0xD1B54A32D192ED03L));
        }
        if (out.length % 8 != 0) {
            long last = mix(base + words * 0xD1B54A32D192ED03L);
            for (int j = words * 8; j < out.length; j++) {
                out[j] = (byte) (last >>> 56);
                last <<= 8;
            }
        }
    }

    // ------------------------------------------------------------------------------ workloads

    /** What a workload does, for the skiplist baseline (the Oak rows name the variant). */
    enum Kind { INGEST, GET, PUT, UPDATE, ASCENDING_SCAN, DESCENDING_SCAN }

    /** Per-thread state: its random generator and reusable key and value arrays. */
    static final class Ctx {
        final SplittableRandom rnd;
        final byte[] key;
        final byte[] value;
        final Config cfg;

        Ctx(Config cfg, byte[] valueTemplate, long seed) {
            this.cfg = cfg;
            this.rnd = new SplittableRandom(seed);
            this.key = new byte[cfg.keySize];
            this.value = valueTemplate.clone();
        }

        /** Picks a uniformly random ingested key into {@link #key}. */
        byte[] nextKey() {
            key(cfg.seed, rnd.nextInt(cfg.pairs), key);
            return key;
        }
    }

    /** One operation of a workload, run repeatedly by one thread. */
    interface Op {
        /** @return anything derived from what was read, so the JIT cannot drop the reads */
        long run();
    }

    /** Makes one thread's operation from its context. */
    interface OpFactory {
        Op create(Ctx ctx);
    }

    record Workload(String name, Kind kind, OpFactory oak) {
    }

    private static List<Workload> oakWorkloads(OakMap<byte[], byte[]> map, int scan) {
        OakZeroCopyMap<byte[], byte[]> zc = map.zc();
        OakMap<byte[], byte[]> descending = map.descendingMap();
        List<Workload> w = new ArrayList<>();
        w.add(new Workload("get, zero-copy (zc().get, read 8 B)", Kind.GET, c -> () -> {
            OakUnscopedBuffer v = zc.get(c.nextKey());
            return v.getLong(0);
        }));
        w.add(new Workload("get, copy (get -> byte[])", Kind.GET, c -> () -> map.get(c.nextKey())[0]));
        w.add(new Workload("put, zero-copy (zc().put)", Kind.PUT, c -> () -> {
            zc.put(c.nextKey(), c.value);
            return 0;
        }));
        w.add(new Workload("put, legacy (put returns old copy)", Kind.PUT,
                c -> () -> map.put(c.nextKey(), c.value).length));
        w.add(new Workload("putIfAbsentComputeIfPresent +1 in place", Kind.UPDATE, c -> () -> {
            return zc.putIfAbsentComputeIfPresent(c.nextKey(), c.value, INCREMENT) ? 1 : 0;
        }));
        w.add(new Workload("ascending scan " + scan + ", zero-copy stream", Kind.ASCENDING_SCAN,
                c -> () -> scanZc(map, map, c.nextKey(), scan)));
        w.add(new Workload("ascending scan " + scan + ", legacy (copies)", Kind.ASCENDING_SCAN,
                c -> () -> scanCopies(map, c.nextKey(), scan)));
        w.add(new Workload("descending scan " + scan + ", zero-copy stream", Kind.DESCENDING_SCAN,
                c -> () -> scanZc(descending, descending, c.nextKey(), scan)));
        w.add(new Workload("descending scan " + scan + ", legacy (copies)", Kind.DESCENDING_SCAN,
                c -> () -> scanCopies(descending, c.nextKey(), scan)));
        return w;
    }

    /**
     * Scans {@code length} pairs of {@code view} (ascending or descending) from {@code from},
     * wrapping around to the view's first pair when it runs out, through the zero-copy stream
     * entry set (one reused entry object per iterator), reading one byte of each key and value.
     */
    private static long scanZc(OakMap<byte[], byte[]> view, OakMap<byte[], byte[]> whole, byte[] from, int length) {
        long sum = 0;
        int n = 0;
        for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : view.tailMap(from, true).zc().entryStreamSet()) {
            sum += e.getKey().get(0) + e.getValue().get(0);
            if (++n == length) {
                return sum;
            }
        }
        for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : whole.zc().entryStreamSet()) {
            sum += e.getKey().get(0) + e.getValue().get(0);
            if (++n == length) {
                return sum;
            }
        }
        return sum;
    }

    /** As {@link #scanZc}, through {@code entrySet()} of any navigable map (copies, for Oak). */
    private static long scanCopies(java.util.NavigableMap<byte[], byte[]> view, byte[] from, int length) {
        long sum = 0;
        int n = 0;
        for (Map.Entry<byte[], byte[]> e : view.tailMap(from, true).entrySet()) {
            sum += e.getKey()[0] + e.getValue()[0];
            if (++n == length) {
                return sum;
            }
        }
        for (Map.Entry<byte[], byte[]> e : view.entrySet()) {
            sum += e.getKey()[0] + e.getValue()[0];
            if (++n == length) {
                return sum;
            }
        }
        return sum;
    }

    private static OpFactory cslmOp(ConcurrentSkipListMap<byte[], byte[]> map, Kind kind, int scan) {
        var descending = map.descendingMap();
        return switch (kind) {
            // the skiplist hands out its stored array: no copy, so both Oak get rows compare with this
            case GET -> c -> () -> map.get(c.nextKey())[0];
            // the key exists, so the skiplist keeps its own key array; the value must be a fresh copy
            case PUT -> c -> () -> map.put(c.nextKey(), c.value.clone()).length;
            case UPDATE -> c -> {
                BiFunction<byte[], byte[], byte[]> increment = (k, v) -> {
                    if (v == null) {
                        return c.value.clone();
                    }
                    byte[] copy = v.clone();
                    LONGS.set(copy, 0, (long) LONGS.get(copy, 0) + 1);
                    return copy;
                };
                return () -> map.compute(c.nextKey(), increment).length;
            };
            case ASCENDING_SCAN -> c -> () -> scanCopies(map, c.nextKey(), scan);
            case DESCENDING_SCAN -> c -> () -> scanCopies(descending, c.nextKey(), scan);
            case INGEST -> throw new IllegalArgumentException();
        };
    }

    // ------------------------------------------------------------------------------ measurement

    /** Runs {@code factory}'s operation on {@code threads} threads for {@code seconds}; returns ops/s. */
    static double run(Config cfg, byte[] valueTemplate, OpFactory factory, int threads, double seconds, long seed)
            throws InterruptedException {
        long[] counts = new long[threads];
        long[] sinks = new long[threads];
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        Object lock = new Object();
        Stopper stopper = new Stopper();
        Thread[] workers = new Thread[threads];
        Throwable[] failure = new Throwable[1];
        for (int t = 0; t < threads; t++) {
            int id = t;
            workers[t] = new Thread(() -> {
                try {
                    Op op = factory.create(new Ctx(cfg, valueTemplate, mix(seed + 1000L * id)));
                    ready.countDown();
                    go.await();
                    long n = 0;
                    long sink = 0;
                    while (!stopper.stop) {
                        sink += op.run();
                        n++;
                    }
                    counts[id] = n;
                    sinks[id] = sink;
                } catch (Throwable e) {
                    synchronized (lock) {
                        failure[0] = e;
                    }
                    ready.countDown();
                }
            }, "demo-worker-" + t);
            workers[t].start();
        }
        ready.await();
        long start = System.nanoTime();
        go.countDown();
        Thread.sleep((long) (seconds * 1000));
        stopper.stop = true;
        long end = System.nanoTime();
        for (Thread w : workers) {
            w.join();
        }
        synchronized (lock) {
            if (failure[0] != null) {
                throw new IllegalStateException("a worker failed", failure[0]);
            }
        }
        BLACKHOLE ^= Arrays.stream(sinks).sum();
        return Arrays.stream(counts).sum() / ((end - start) / 1e9);
    }

    /** Written by the measuring thread, read by every worker once per operation. */
    private static final class Stopper {
        volatile boolean stop;
    }

    /** Keeps the workers' results alive. */
    static volatile long BLACKHOLE;

    /** Heap bytes in use after a few full collections. */
    static long heapUsed() throws InterruptedException {
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    // ------------------------------------------------------------------------------ main

    /** Oak's results by row name (ops/s per thread count), and the skiplist's by workload kind. */
    private static final Map<String, double[]> OAK = new LinkedHashMap<>();
    private static final Map<String, Kind> OAK_KINDS = new LinkedHashMap<>();
    private static final Map<Kind, double[]> CSLM = new LinkedHashMap<>();

    /**
     * Runs the demonstration and prints the tables.
     *
     * @param args see the class comment, or run with {@code --help}
     */
    public static void main(String[] args) throws Exception {
        Locale.setDefault(Locale.ROOT);
        Config cfg = Config.parse(args);
        byte[] valueTemplate = new byte[cfg.valueSize];
        new SplittableRandom(cfg.seed).nextBytes(valueTemplate);
        int scan = Math.min(cfg.scan, cfg.pairs);
        long raw = (long) cfg.pairs * (cfg.keySize + cfg.valueSize);

        var rt = ManagementFactory.getRuntimeMXBean();
        System.out.printf("Oak demo: %,d pairs, %d B keys, %d B values, %.1f s per workload after %.1f s warm-up, threads %s%n",
                cfg.pairs, cfg.keySize, cfg.valueSize, cfg.duration, cfg.warmup, Arrays.toString(cfg.threads));
        System.out.printf("JVM: %s %s, %d cpus, max heap %d MiB, flags %s%n", System.getProperty("java.vm.name"),
                System.getProperty("java.runtime.version"), Runtime.getRuntime().availableProcessors(),
                Runtime.getRuntime().maxMemory() >> 20, rt.getInputArguments());
        if (Runtime.getRuntime().maxMemory() < raw * 2) {
            System.out.printf("warning: the heap (-Xmx) may be too small for the skiplist's %,d MB of data%n", raw >> 20);
        }
        int runs = (9 + 5) * cfg.threads.length;
        System.out.printf("about %.0f s to go (%d runs)%n%n", runs * (cfg.duration + cfg.warmup) + 10, runs);
        int[] done = {0};

        // ---- warm-up of the ingestion code of both maps (JIT), on throwaway maps
        int warmPairs = Math.min(cfg.pairs, 50_000);
        if (cfg.warmup > 0) {
            try (OakMap<byte[], byte[]> oak = newOak()) {
                ingestOak(oak, cfg, warmPairs, valueTemplate);
            }
            ingestCslm(new ConcurrentSkipListMap<>(Arrays::compareUnsigned), cfg, warmPairs, valueTemplate);
        }

        // ---- Oak
        long oakHeap;
        long oakUsed;
        long oakReserved;
        double oakIngest;
        long before = heapUsed();
        try (OakMap<byte[], byte[]> oak = newOak()) {
            oakIngest = ingestOak(oak, cfg, cfg.pairs, valueTemplate);
            if (oak.size() != cfg.pairs) {
                throw new IllegalStateException("Oak holds " + oak.size() + " pairs, expected " + cfg.pairs);
            }
            oakHeap = heapUsed() - before;
            oakUsed = oak.memoryUsed();
            oakReserved = oak.memoryReserved();
            for (int ti = 0; ti < cfg.threads.length; ti++) {
                for (Workload w : oakWorkloads(oak, scan)) {
                    progress(++done[0], runs, "Oak", w.name, cfg.threads[ti]);
                    long seed = cfg.seed * 31 + w.kind.ordinal();
                    run(cfg, valueTemplate, w.oak, cfg.threads[ti], cfg.warmup, seed);
                    OAK_KINDS.put(w.name, w.kind);
                    OAK.computeIfAbsent(w.name, x -> new double[cfg.threads.length])[ti] =
                            run(cfg, valueTemplate, w.oak, cfg.threads[ti], cfg.duration, seed);
                }
            }
        }

        // ---- ConcurrentSkipListMap
        long cslmHeap;
        double cslmIngest;
        before = heapUsed();
        {
            ConcurrentSkipListMap<byte[], byte[]> cslm = new ConcurrentSkipListMap<>(Arrays::compareUnsigned);
            cslmIngest = ingestCslm(cslm, cfg, cfg.pairs, valueTemplate);
            cslmHeap = heapUsed() - before;
            Kind[] kinds = {Kind.GET, Kind.PUT, Kind.UPDATE, Kind.ASCENDING_SCAN, Kind.DESCENDING_SCAN};
            for (int ti = 0; ti < cfg.threads.length; ti++) {
                for (Kind kind : kinds) {
                    progress(++done[0], runs, "CSLM", kind.name().toLowerCase(Locale.ROOT), cfg.threads[ti]);
                    long seed = cfg.seed * 31 + kind.ordinal();
                    OpFactory f = cslmOp(cslm, kind, scan);
                    run(cfg, valueTemplate, f, cfg.threads[ti], cfg.warmup, seed);
                    CSLM.computeIfAbsent(kind, x -> new double[cfg.threads.length])[ti] =
                            run(cfg, valueTemplate, f, cfg.threads[ti], cfg.duration, seed);
                }
            }
            if (cslm.size() != cfg.pairs) {
                throw new IllegalStateException("CSLM holds " + cslm.size() + " pairs");
            }
        }

        // ---- report
        System.out.println();
        System.out.println("Throughput (operations per second; a scan of " + scan + " pairs is one operation)");
        String fmt = "%-44s %7s %15s %15s %9s%n";
        System.out.printf(fmt, "workload", "threads", "Oak ops/s", "CSLM ops/s", "Oak/CSLM");
        System.out.printf(fmt, "ingest (putIfAbsent, zero-copy for Oak)", 1, String.format("%,.0f", oakIngest),
                String.format("%,.0f", cslmIngest), String.format("%.2fx", oakIngest / cslmIngest));
        for (int ti = 0; ti < cfg.threads.length; ti++) {
            for (Map.Entry<String, double[]> e : OAK.entrySet()) {
                double o = e.getValue()[ti];
                double c = CSLM.get(OAK_KINDS.get(e.getKey()))[ti];
                System.out.printf(fmt, e.getKey(), cfg.threads[ti], String.format("%,.0f", o),
                        String.format("%,.0f", c), String.format("%.2fx", o / c));
            }
        }
        System.out.println("Ingestion is measured once, after a warm-up ingestion into a throwaway map of each kind.");
        System.out.println("CSLM rows: get returns the stored array (no copy); put stores a copy of the value; "
                + "the update is compute() with a copied array; scans iterate entrySet().");

        System.out.println();
        System.out.printf("Memory after ingesting %,d pairs (raw data %d B per pair, %,d MB in all)%n",
                cfg.pairs, cfg.keySize + cfg.valueSize, raw >> 20);
        String mfmt = "%-6s %14s %16s %16s %22s%n";
        System.out.printf(mfmt, "map", "heap B/pair", "off-heap used", "off-heap reserv.", "overhead B/pair");
        System.out.printf(mfmt, "Oak", perPair(oakHeap, cfg.pairs), perPair(oakUsed, cfg.pairs),
                perPair(oakReserved, cfg.pairs), perPair(oakHeap + oakUsed - raw, cfg.pairs));
        System.out.printf(mfmt, "CSLM", perPair(cslmHeap, cfg.pairs), "-", "-", perPair(cslmHeap - raw, cfg.pairs));
        System.out.println("overhead = heap growth + off-heap in use - raw key and value bytes, per pair "
                + "(off-heap columns are B/pair too; reserved includes free space in blocks)");
    }

    private static OakMap<byte[], byte[]> newOak() {
        return new OakMapBuilder<>(OakCommonTypes.BYTE_ARRAY_SERIALIZER, OakCommonTypes.BYTE_ARRAY_SERIALIZER,
                OakCommonTypes.BYTE_ARRAY_COMPARATOR).build();
    }

    /** Inserts keys {@code 0..pairs-1} with zero-copy putIfAbsent, one thread. @return pairs/s */
    private static double ingestOak(OakMap<byte[], byte[]> oak, Config cfg, int pairs, byte[] value) {
        OakZeroCopyMap<byte[], byte[]> zc = oak.zc();
        byte[] k = new byte[cfg.keySize];
        long t0 = System.nanoTime();
        for (int i = 0; i < pairs; i++) {
            key(cfg.seed, i, k);
            zc.putIfAbsent(k, value);
        }
        return pairs / ((System.nanoTime() - t0) / 1e9);
    }

    /** Inserts copies of keys {@code 0..pairs-1} and of the value with putIfAbsent. @return pairs/s */
    private static double ingestCslm(ConcurrentSkipListMap<byte[], byte[]> cslm, Config cfg, int pairs, byte[] value) {
        long t0 = System.nanoTime();
        for (int i = 0; i < pairs; i++) {
            byte[] k = new byte[cfg.keySize];
            key(cfg.seed, i, k);
            cslm.putIfAbsent(k, value.clone());
        }
        return pairs / ((System.nanoTime() - t0) / 1e9);
    }

    private static String perPair(long bytes, int pairs) {
        return String.format("%.1f", (double) bytes / pairs);
    }

    private static void progress(int done, int runs, String map, String workload, int threads) {
        System.err.printf("[%d/%d] %s: %s, %d thread%s%n", done, runs, map, workload, threads, threads == 1 ? "" : "s");
    }
}
