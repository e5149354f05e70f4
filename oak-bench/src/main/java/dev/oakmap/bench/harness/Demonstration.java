package dev.oakmap.bench.harness;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The side-by-side demonstration behind {@code bin/demo} ({@code dev.oakmap.bench.Demo}): OakMap
 * through its zero-copy and its legacy API, on one map, against {@code ConcurrentSkipListMap}, in
 * one JVM, printing a throughput table and the memory per pair. Built from the harness's parts: the
 * key space of {@link Keys}, the {@link BenchMap} adapters ({@link OakBenchMap}, both APIs on one
 * map, and {@link CslmBenchMap}), the ingestion and sustained-rate loops of {@link PointRunner}
 * and its memory measurement.
 *
 * <p>Method: keys {@code 0 .. pairs-1} of the key space, ingested by one thread with
 * {@code putIfAbsent} in index order (which is random key order); then, for each workload and
 * thread count, {@code warmup} seconds (discarded) and {@code duration} seconds (measured) on that
 * many threads, each thread choosing keys uniformly among the ingested ones with its own generator
 * (so every lookup hits). Memory after ingestion: heap in use after full collections minus the same
 * figure before the map was built, plus the map's off-heap bytes in use.
 */
public final class Demonstration {

    private Demonstration() {
    }

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

        /** The harness settings that make its loops do what the demo needs: keys drawn among the ingested. */
        Options options() {
            Options o = new Options();
            o.keys = Math.max(2, pairs);
            o.keySize = keySize;
            o.valueSize = valueSize;
            o.seed = seed;
            o.scan = scan;
            return o;
        }
    }

    /** A row of the demo: a name, the API it drives Oak through, the harness workload, the skiplist's. */
    private record Row(String name, boolean zeroCopy, Workload oak, Workload cslm) {
    }

    private static List<Row> rows(int scan) {
        return List.of(
                new Row("get, zero-copy (zc().get, read 8 B)", true, Workload.GET_ZC, Workload.GET_ZC),
                new Row("get, copy (get -> byte[])", false, Workload.GET_COPY, Workload.GET_ZC),
                new Row("put, zero-copy (zc().put)", true, Workload.PUT, Workload.PUT),
                new Row("put, legacy (put returns old copy)", false, Workload.PUT, Workload.PUT),
                new Row("putIfAbsentComputeIfPresent +1 in place", true, Workload.UPDATE, Workload.UPDATE),
                new Row("ascending scan " + scan + ", zero-copy stream", true, Workload.SCAN_ASC_STREAM,
                        Workload.SCAN_ASC),
                new Row("ascending scan " + scan + ", legacy (copies)", false, Workload.SCAN_ASC, Workload.SCAN_ASC),
                new Row("descending scan " + scan + ", zero-copy stream", true, Workload.SCAN_DESC_STREAM,
                        Workload.SCAN_DESC),
                new Row("descending scan " + scan + ", legacy (copies)", false, Workload.SCAN_DESC, Workload.SCAN_DESC));
    }

    /** The skiplist's workloads, in the order it runs them. */
    private static final List<Workload> CSLM_WORKLOADS =
            List.of(Workload.GET_ZC, Workload.PUT, Workload.UPDATE, Workload.SCAN_ASC, Workload.SCAN_DESC);

    /**
     * Runs the demonstration and prints the tables.
     *
     * @param args {@code --pairs=N --key-size=B --value-size=B --duration=S --warmup=S --threads=LIST
     *             --scan=N --seed=N}, or {@code --help}
     */
    public static void main(String[] args) throws Exception {
        Locale.setDefault(Locale.ROOT);
        Config cfg = Config.parse(args);
        Options o = cfg.options();
        byte[] valueTemplate = new byte[cfg.valueSize];
        new SplittableRandom(cfg.seed).nextBytes(valueTemplate);
        int scan = Math.min(cfg.scan, cfg.pairs);
        long raw = (long) cfg.pairs * (cfg.keySize + cfg.valueSize);
        int[] order = new int[cfg.pairs]; // ingestion in index order: random key order
        Arrays.setAll(order, i -> i);

        var rt = ManagementFactory.getRuntimeMXBean();
        System.out.printf("Oak demo: %,d pairs, %d B keys, %d B values, %.1f s per workload after %.1f s warm-up, threads %s%n",
                cfg.pairs, cfg.keySize, cfg.valueSize, cfg.duration, cfg.warmup, Arrays.toString(cfg.threads));
        System.out.printf("JVM: %s %s, %d cpus, max heap %d MiB, flags %s%n", System.getProperty("java.vm.name"),
                System.getProperty("java.runtime.version"), Runtime.getRuntime().availableProcessors(),
                Runtime.getRuntime().maxMemory() >> 20, rt.getInputArguments());
        if (Runtime.getRuntime().maxMemory() < raw * 2) {
            System.out.printf("warning: the heap (-Xmx) may be too small for the skiplist's %,d MB of data%n", raw >> 20);
        }
        List<Row> rows = rows(scan);
        int runs = (rows.size() + CSLM_WORKLOADS.size()) * cfg.threads.length;
        System.out.printf("about %.0f s to go (%d runs)%n%n", runs * (cfg.duration + cfg.warmup) + 10, runs);
        int done = 0;

        // ---- warm-up of the ingestion code of both maps (JIT), on throwaway maps
        int warmPairs = Math.min(cfg.pairs, 50_000);
        if (cfg.warmup > 0) {
            try (BenchMap oak = OakBenchMap.zeroCopy(0)) {
                PointRunner.ingest(oak, order, warmPairs, 1, cfg.seed, cfg.keySize, Keys.Layout.PLAIN, valueTemplate, Long.MAX_VALUE);
            }
            try (BenchMap cslm = new CslmBenchMap()) {
                PointRunner.ingest(cslm, order, warmPairs, 1, cfg.seed, cfg.keySize, Keys.Layout.PLAIN, valueTemplate, Long.MAX_VALUE);
            }
        }

        // ---- Oak: one map, driven through both APIs
        Map<String, String> oakMemory = new LinkedHashMap<>();
        double oakIngest;
        double[][] oakRates = new double[rows.size()][cfg.threads.length];
        long before = PointRunner.heapUsed(o);
        try (OakBenchMap zc = (OakBenchMap) OakBenchMap.zeroCopy(0)) {
            BenchMap legacy = zc.otherApi();
            oakIngest = ingest(zc, order, cfg, valueTemplate);
            PointRunner.measureMemory(zc, cfg.pairs, before, o, oakMemory, QUIET);
            for (int ti = 0; ti < cfg.threads.length; ti++) {
                for (int ri = 0; ri < rows.size(); ri++) {
                    Row row = rows.get(ri);
                    progress(++done, runs, "Oak", row.name(), cfg.threads[ti]);
                    oakRates[ri][ti] = measure(row.zeroCopy() ? zc : legacy, row.oak(), o, cfg, valueTemplate,
                            cfg.threads[ti], scan, cfg.seed * 31 + row.oak().ordinal());
                }
            }
        }

        // ---- ConcurrentSkipListMap
        Map<String, String> cslmMemory = new LinkedHashMap<>();
        double cslmIngest;
        Map<Workload, double[]> cslmRates = new LinkedHashMap<>();
        before = PointRunner.heapUsed(o);
        try (CslmBenchMap cslm = new CslmBenchMap()) {
            cslmIngest = ingest(cslm, order, cfg, valueTemplate);
            PointRunner.measureMemory(cslm, cfg.pairs, before, o, cslmMemory, QUIET);
            for (int ti = 0; ti < cfg.threads.length; ti++) {
                for (Workload w : CSLM_WORKLOADS) {
                    progress(++done, runs, "CSLM", cslmName(w), cfg.threads[ti]);
                    cslmRates.computeIfAbsent(w, x -> new double[cfg.threads.length])[ti] =
                            measure(cslm, w, o, cfg, valueTemplate, cfg.threads[ti], scan, cfg.seed * 31 + w.ordinal());
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
            for (int ri = 0; ri < rows.size(); ri++) {
                double oak = oakRates[ri][ti];
                double c = cslmRates.get(rows.get(ri).cslm())[ti];
                System.out.printf(fmt, rows.get(ri).name(), cfg.threads[ti], String.format("%,.0f", oak),
                        String.format("%,.0f", c), String.format("%.2fx", oak / c));
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
        System.out.printf(mfmt, "Oak", perPair(oakMemory, "heap_b_per_pair"), perPair(oakMemory, "offheap_used_b_per_pair"),
                perPair(oakMemory, "offheap_reserved_b_per_pair"), perPair(oakMemory, "overhead_b_per_pair"));
        System.out.printf(mfmt, "CSLM", perPair(cslmMemory, "heap_b_per_pair"), "-", "-",
                perPair(cslmMemory, "overhead_b_per_pair"));
        System.out.println("overhead = heap growth + off-heap in use - raw key and value bytes, per pair "
                + "(off-heap columns are B/pair too; reserved includes free space in blocks)");
    }

    /** Swallows the harness's log lines: the demo prints its own tables. */
    private static final java.io.PrintStream QUIET = new java.io.PrintStream(java.io.OutputStream.nullOutputStream());

    /** Ingests keys {@code 0..pairs-1} on one thread and checks the size. @return pairs/s */
    private static double ingest(BenchMap map, int[] order, Config cfg, byte[] value) throws InterruptedException {
        long t0 = System.nanoTime();
        long n = PointRunner.ingest(map, order, cfg.pairs, 1, cfg.seed, cfg.keySize, Keys.Layout.PLAIN, value, Long.MAX_VALUE);
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (n != cfg.pairs || map.size() != cfg.pairs) {
            throw new IllegalStateException("the map holds " + map.size() + " pairs, expected " + cfg.pairs);
        }
        return n / seconds;
    }

    /** The warm-up, then the measured run, of one workload. @return operations per second */
    private static double measure(BenchMap map, Workload w, Options o, Config cfg, byte[] value, int threads,
                                  int scan, long seed) throws InterruptedException {
        if (cfg.warmup > 0) {
            PointRunner.sustained(map, w, o, threads, value, null, scan, seed, cfg.warmup);
        }
        long[] r = PointRunner.sustained(map, w, o, threads, value, null, scan, seed, cfg.duration);
        return r[0] / (r[1] / 1e9);
    }

    private static String cslmName(Workload w) {
        return switch (w) {
            case GET_ZC -> "get";
            case SCAN_ASC -> "ascending_scan";
            case SCAN_DESC -> "descending_scan";
            default -> w.id;
        };
    }

    private static String perPair(Map<String, String> memory, String column) {
        return String.format("%.1f", Results.parse(memory.get(column)));
    }

    private static void progress(int done, int runs, String map, String workload, int threads) {
        System.err.printf("[%d/%d] %s: %s, %d thread%s%n", done, runs, map, workload, threads, threads == 1 ? "" : "s");
    }
}
