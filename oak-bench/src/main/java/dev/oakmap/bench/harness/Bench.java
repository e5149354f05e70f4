package dev.oakmap.bench.harness;

import org.knowm.xchart.XYChart;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The benchmark harness, in the style of synchrobench: compares maps (through {@link BenchMap}
 * adapters, see {@link MapKind}) on the workloads of the Oak papers ({@link Workload}), with the
 * papers' methodology ({@link PointRunner}): an ingestion stage, then a sustained-rate stage on N
 * worker threads for a fixed time, warm-up excluded; each run in a fresh JVM (a child process of
 * the same JDK); repetitions summarized as median and min/max. The memory-budget experiments
 * ({@link Workload#CAPACITY}, {@link Workload#INGEST_RAM}; {@link MemoryRunner}) run once per RAM
 * budget instead of once per thread count.
 *
 * <p>Output, in {@code --out}: {@code results.csv} (one row per run, written as the runs finish),
 * {@code report.md} (medians, ratios to the baseline measured in the same invocation, memory per
 * pair), PNG charts (XChart), and {@code logs/} with each child JVM's output.
 *
 * <p>Run {@code bin/bench --help} for the options; {@code bin/bench --preset quick} runs every
 * workload at a small scale in a few minutes.
 */
public final class Bench {

    private Bench() {
    }

    /** Command-line entry point; exits with 0, 1 (some runs failed) or 2 (bad arguments). */
    public static void main(String[] args) throws Exception {
        Locale.setDefault(Locale.ROOT);
        System.setProperty("java.awt.headless", "true");
        for (String a : args) {
            if (a.equals("--help") || a.equals("-h")) {
                System.out.print(Options.USAGE);
                return;
            }
        }
        Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.print(Options.USAGE);
            System.exit(2);
            return;
        }
        if (o.child) {
            System.exit(runChild(o));
        }
        Outcome r = run(o, String.join(" ", args));
        System.exit(r.failures() == 0 ? 0 : 1);
    }

    /** What an invocation left behind. */
    public record Outcome(Path dir, Path csv, Path report, List<Path> charts, int runs, int failures) {
    }

    /**
     * Runs the harness as the command line would.
     *
     * @param args the command-line arguments
     * @return where the results went
     */
    public static Outcome run(String... args) throws IOException, InterruptedException {
        return run(Options.parse(args), String.join(" ", args));
    }

    // ------------------------------------------------------------------------------ child

    /** Prefix of the result lines a child prints on its standard output. */
    static final String RESULT_PREFIX = "@@result ";

    private static int runChild(Options o) {
        try {
            Map<String, String> r = PointRunner.run(o, o.maps.get(0), o.workloads.get(0), o.threads[0], o.rep,
                    o.offheap, System.out);
            for (Map.Entry<String, String> e : r.entrySet()) {
                System.out.println(RESULT_PREFIX + e.getKey() + "=" + e.getValue().replace('\n', ' '));
            }
            System.out.flush();
            return 0;
        } catch (Throwable e) {
            e.printStackTrace(System.out);
            System.out.println(RESULT_PREFIX + "error=" + String.valueOf(e).replace('\n', ' '));
            System.out.flush();
            return 1;
        }
    }

    // ------------------------------------------------------------------------------ parent

    /**
     * One run of the plan.
     *
     * @param ram the RAM budget of a memory-experiment run, 0 for the others (whose budget is the
     *            invocation's, {@link Options#budget})
     */
    record Point(MapKind map, Workload workload, int threads, int rep, long ram) {

        /** @return the heap, off-heap and direct-memory limits of this run's JVM */
        Options.Budget budget(Options o) {
            return workload.isMemory() ? o.memoryBudget(map, workload, ram) : o.budget(map);
        }
    }

    /**
     * The runs, repetition by repetition, and within one workload and thread count the maps one after
     * another, so that slow drift of the machine hits every map alike. A workload that a map runs
     * as another (same operation) or not at all is planned once or skipped. The memory experiments
     * run on one thread, once per budget, and only in fresh JVMs (--fork true: in the harness's own
     * JVM a map that runs out of memory would take the harness with it).
     */
    static List<Point> plan(Options o) {
        List<Point> p = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        for (int rep = 1; rep <= o.reps; rep++) {
            for (Workload w : o.workloads) {
                if (w == Workload.CAPACITY && !o.fork) {
                    continue;
                }
                int[] threads = w.isMemory() ? new int[]{1} : o.threads;
                long[] budgets = w.isMemory() ? o.memoryBudgets(w) : new long[]{0};
                for (int t : threads) {
                    for (long ram : budgets) {
                        for (MapKind m : o.maps) {
                            Workload actual = m.runAs().apply(w);
                            if (actual != null && seen.add(m.name() + "/" + actual.id + "/" + t + "/" + ram + "/" + rep)) {
                                p.add(new Point(m, actual, t, rep, ram));
                            }
                        }
                    }
                }
            }
        }
        return p;
    }

    /** Pairs a memory-experiment run is expected to ingest, at most. */
    private static long expectedPairs(Options o, Point p) {
        return p.workload() == Workload.CAPACITY ? p.ram() / (o.keySize + o.valueSize) : o.ramPairs();
    }

    /** A guess of a run's seconds, before any has finished. */
    private static double estimate(Options o, Point p) {
        double fixed = o.fork ? 2.0 : 0.5;
        if (p.workload().isMemory()) {
            return fixed + (o.warmup > 0 ? 1 : 0) + expectedPairs(o, p) / 100_000.0;
        }
        double ingest = o.ingestedPairs() / 150_000.0;
        return fixed + ingest + o.warmup + (p.workload() == Workload.INGEST ? 0 : o.duration);
    }

    static Outcome run(Options o, String commandLine) throws IOException, InterruptedException {
        PrintStream log = System.err;
        List<Point> plan = plan(o);
        String started = LocalDateTime.now().format(DateTimeFormatter.ISO_LOCAL_DATE_TIME).substring(0, 19);
        String commit = Machine.gitCommit();
        String machine = String.format(Locale.ROOT, "%s, %d cpus, %s RAM, %s", Machine.cpuModel(), Machine.nproc(),
                Options.size(Machine.memTotalBytes()), Machine.os());
        double total = plan.stream().mapToDouble(p -> estimate(o, p)).sum();

        log.printf("Oak bench: %d runs (%d maps x %d workloads x threads %s x %d reps, less shared/unsupported)%n",
                plan.size(), o.maps.size(), o.workloads.size(), java.util.Arrays.toString(o.threads), o.reps);
        log.printf("keys %,d (%,d pairs ingested, %s), %s, %d B values, %s, %.1f s after %.1f s warm-up%n",
                o.keys, o.ingestedPairs(), o.ascendingKeys() ? "in key order" : "in random order", o.keySizeText(),
                o.valueSize, o.distribution, o.duration, o.warmup);
        for (MapKind m : o.maps) {
            Options.Budget b = o.budget(m);
            log.printf("  %-11s heap %s%s%n", m.name(), Options.size(b.heap()),
                    b.offHeap() > 0 ? ", off-heap " + Options.size(b.offHeap()) : "");
        }
        for (Workload w : o.workloads) {
            if (w.isMemory()) {
                log.printf("  %s: RAM budgets %s%s%n", w.id, String.join(", ",
                                java.util.Arrays.stream(o.memoryBudgets(w)).mapToObj(Options::size).toList()),
                        w == Workload.INGEST_RAM ? String.format(Locale.ROOT, ", %,d pairs", o.ramPairs())
                                : o.fork ? "" : " (skipped: needs --fork true)");
            }
        }
        long maxBudget = plan.stream().mapToLong(p -> p.budget(o).heap() + p.budget(o).offHeap()).max().orElse(0);
        if (Machine.memTotalBytes() > 0 && maxBudget > Machine.memTotalBytes() * 0.8) {
            log.printf("warning: a run's budget (%s) exceeds 80%% of this machine's RAM (%s)%n",
                    Options.size(maxBudget), Options.size(Machine.memTotalBytes()));
        }
        log.printf("machine: %s; commit %s%n", machine, commit);
        log.printf("estimated time: %s; output: %s%n", hms(total), o.out.toAbsolutePath());
        if (o.dryRun) {
            if (o.fork && o.heapShare == 0 && plan.stream().anyMatch(p -> p.workload().isMemory() && p.map().offHeap())) {
                log.printf("  (off-heap maps' memory budgets below use the default split: a real run first measures "
                        + "each map's footprint and splits by it)%n");
            }
            for (Point p : plan) {
                Options.Budget b = p.budget(o);
                log.printf("  %s %s t=%d rep %d%s%n", p.map().name(), p.workload().id, p.threads(), p.rep(),
                        p.workload().isMemory() ? String.format(Locale.ROOT, " RAM %s: heap %s, off-heap %s%s",
                                Options.size(p.ram()), Options.size(b.heap()), Options.size(b.offHeap()),
                                Options.fits(b) ? "" : " (does not fit)") : "");
            }
            return new Outcome(o.out, null, null, List.of(), 0, 0);
        }

        Path logs = Files.createDirectories(o.out.resolve("logs"));
        try (var old = Files.newDirectoryStream(logs, "*.log")) {
            for (Path f : old) {
                Files.delete(f); // an earlier invocation's, into the same --out
            }
        }
        calibrate(o, plan, logs, log);
        Path csv = o.out.resolve("results.csv");
        Files.deleteIfExists(csv);
        Results res = new Results();
        long t0 = System.nanoTime();
        double estimatedDone = 0;
        int failures = 0;
        for (int i = 0; i < plan.size(); i++) {
            Point p = plan.get(i);
            long r0 = System.nanoTime();
            Map<String, String> row = Results.newRow();
            row.put("timestamp", LocalDateTime.now().format(DateTimeFormatter.ISO_LOCAL_DATE_TIME).substring(0, 19));
            row.put("map", p.map().name());
            row.put("workload", p.workload().id);
            row.put("threads", Integer.toString(p.threads()));
            row.put("rep", Integer.toString(p.rep()));
            row.put("keys", Integer.toString(o.keys));
            row.put("key_size", Integer.toString(o.keySize));
            row.put("value_size", Integer.toString(o.valueSize));
            row.put("distribution", o.distribution.equals("zipf") ? "zipf-" + o.zipfTheta : "uniform");
            row.put("key_order", o.keyOrder);
            row.put("key_head", Integer.toString(o.keyHead));
            row.put("duration_s", Double.toString(o.duration));
            row.put("warmup_s", Double.toString(o.warmup));
            row.put("scan", Integer.toString(Math.min(o.scan, o.ingestedPairs())));
            Options.Budget b = p.budget(o);
            row.put("heap_budget_bytes", Long.toString(o.fork ? b.heap() : Runtime.getRuntime().maxMemory()));
            row.put("offheap_budget_bytes", Long.toString(b.offHeap()));
            row.put("ram_budget_bytes", Long.toString(p.workload().isMemory() ? p.ram() : b.heap() + b.offHeap()));
            row.put("nproc", Integer.toString(Machine.nproc()));
            row.put("cpu_model", Machine.cpuModel());
            row.put("git_commit", commit);
            row.put("map_version", p.map().version());
            Map<String, String> measured;
            String name = String.format(Locale.ROOT, "%04d-%s-%s-t%d-r%d%s", i + 1, p.map().name(), p.workload().id,
                    p.threads(), p.rep(), p.workload().isMemory() ? "-" + Options.jvmSize(p.ram()) : "");
            if (p.workload().isMemory() && !Options.fits(b)) {
                measured = new LinkedHashMap<>();
                measured.put("pairs_ingested", "0");
                measured.put("stop_reason", String.format(Locale.ROOT,
                        "does not fit: %s off-heap for the data leaves %s of heap (at least %s needed)",
                        Options.size(b.offHeap()), Options.size(Math.max(0, b.heap())), Options.size(Options.MIN_HEAP)));
            } else if (o.fork) {
                measured = fork(o, p, b, o.out.resolve("logs").resolve(name + ".log"));
            } else {
                measured = inProcess(o, p, b, log);
            }
            row.putAll(measured);
            String status = status(measured);
            if (status.equals("error") && !measured.containsKey("error")) {
                row.put("error", "the run reported no result");
            }
            row.put("status", status);
            double wall = (System.nanoTime() - r0) / 1e9;
            row.put("wall_s", String.format(Locale.ROOT, "%.2f", wall));
            res.add(row, csv);
            boolean ok = !status.equals("error");
            if (!ok) {
                failures++;
            }

            estimatedDone += estimate(o, p);
            double elapsed = (System.nanoTime() - t0) / 1e9;
            double remainingEstimate = total - estimatedDone;
            double left = remainingEstimate * (elapsed / estimatedDone);
            String what;
            if (!ok) {
                what = "FAILED: " + row.get("error");
            } else if (p.workload() == Workload.CAPACITY) {
                what = String.format(Locale.ROOT, "%,d pairs fit (%s)", (long) Results.parse(row.get("pairs_fit")),
                        row.get("stop_reason"));
            } else if (status.equals("oom")) {
                what = String.format(Locale.ROOT, "out of memory after %,d pairs (%s)",
                        (long) Results.parse(row.get("pairs_ingested")), row.get("stop_reason"));
            } else {
                what = Report.human(Results.parse(row.get("ops_per_s"))) + " ops/s";
            }
            log.printf(Locale.ROOT, "[%d/%d] %-10s %-16s %s rep %d: %s (%.1f s) | elapsed %s, about %s left%n",
                    i + 1, plan.size(), p.map().name(), p.workload().id,
                    p.workload().isMemory() ? "RAM " + Options.jvmSize(p.ram()) : "t=" + p.threads(), p.rep(), what,
                    wall, hms(elapsed), hms(left));
        }

        Path charts = o.out;
        List<Charts.Written> written = Charts.write(charts, res, o);
        Path report = o.out.resolve("report.md");
        String finished = LocalDateTime.now().format(DateTimeFormatter.ISO_LOCAL_DATE_TIME).substring(0, 19);
        Report.write(report, res, o, new Report.Context("bin/bench " + commandLine, machine, Machine.jvm(), commit,
                started, finished, (System.nanoTime() - t0) / 1e9,
                "XChart " + Machine.libraryVersion(XYChart.class)), written);
        List<Path> pngs = written.stream().map(w -> o.out.resolve(w.file())).toList();
        log.printf("done: %d runs, %d failed%n  CSV     %s%n  report  %s%n  charts  %s%n", plan.size(), failures,
                csv.toAbsolutePath(), report.toAbsolutePath(),
                String.join(", ", written.stream().map(Charts.Written::file).toList()));
        return new Outcome(o.out, csv, report, pngs, plan.size(), failures);
    }

    /** Pairs a calibration run ingests at most (see {@link #calibrate}). */
    static final int CALIBRATION_PAIRS = 200_000;

    /**
     * Measures, before the memory experiments, what each off-heap map of the plan holds per pair on
     * the heap and off-heap at this invocation's key and value sizes: an {@code ingest-ram} run in
     * a fresh JVM with room to spare, whose figures go to {@link Options#footprints}. The budget
     * split of the memory runs follows them ({@link Options#memoryBudget}): a fixed split made for
     * 1 KB values starved the heap of maps with small values (with 16-byte keys and values Oak's
     * chunks need as many bytes per pair as its slices). Skipped with {@code --heap-share}, and when
     * not forking; a calibration that fails leaves the default split, and says so.
     */
    static void calibrate(Options o, List<Point> plan, Path logs, PrintStream log)
            throws IOException, InterruptedException {
        if (!o.fork || o.heapShare > 0) {
            return;
        }
        Set<MapKind> kinds = new LinkedHashSet<>();
        long largest = 0;
        for (Point p : plan) {
            if (p.workload().isMemory() && p.map().offHeap()) {
                kinds.add(p.map());
                largest = Math.max(largest, expectedPairs(o, p));
            }
        }
        // as many pairs as the largest run may hold, within [20K, 200K] and 1 GiB of raw data
        long bounded = Math.min(CALIBRATION_PAIRS, Options.GIB / (o.keySize + o.valueSize));
        int pairs = (int) Math.max(Math.min(20_000, bounded), Math.min(largest, bounded));
        for (MapKind m : kinds) {
            long off = Options.roundUp(2L * pairs * (o.keySize + o.valueSize + 64) + 64 * Options.MIB, Options.MIB);
            Options.Budget b = new Options.Budget(512 * Options.MIB, off, Options.maxDirect(m, off));
            Point p = new Point(m, Workload.INGEST_RAM, 1, 1, b.heap() + off);
            Map<String, String> r = fork(o, p, b, pairs, logs.resolve("0000-calibrate-" + m.name() + ".log"));
            String heap = r.get("heap_b_per_pair");
            String offHeap = r.get("offheap_used_b_per_pair");
            if (r.containsKey("error") || heap == null || offHeap == null) {
                log.printf(Locale.ROOT, "calibration of %s failed (%s): capacity runs give it %.0f%% of the budget "
                        + "as heap%n", m.name(), r.getOrDefault("error", "no footprint"), o.heapShare(m) * 100);
                continue;
            }
            String base = r.getOrDefault("heap_base_bytes", Long.toString(Options.BASE_HEAP));
            Options.Footprint f = new Options.Footprint(Math.max(1, Results.parse(heap)), Results.parse(offHeap),
                    (long) Results.parse(base));
            o.footprints.put(m, f);
            log.printf(Locale.ROOT, "calibration: %s holds %.1f B of heap and %.1f B off-heap per pair (%,d pairs), "
                    + "its JVM %s of heap before; capacity runs give it %s + %.1f%% of the rest as heap%n", m.name(),
                    f.heapPerPair(), f.offHeapPerPair(), pairs, Options.size(f.baseHeap()), Options.size(f.fixedHeap()),
                    o.heapShare(m) * 100);
        }
    }

    /**
     * @return "ok" (a measured figure), "oom" (a memory experiment whose map ran out of memory before
     *         its target: an outcome, not a failure) or "error"
     */
    static String status(Map<String, String> measured) {
        if (measured.containsKey("error")) {
            return "error";
        }
        if (measured.containsKey("ops_per_s")) {
            return "ok";
        }
        return measured.containsKey("stop_reason") ? "oom" : "error";
    }

    /** Runs a point in a fresh JVM of the same JDK; its output goes to {@code logFile}. */
    private static Map<String, String> fork(Options o, Point p, Options.Budget b, Path logFile)
            throws IOException, InterruptedException {
        return fork(o, p, b, o.ramPairs(), logFile);
    }

    /** {@link #fork(Options, Point, Options.Budget, Path)} with the given {@code --ram-pairs}. */
    private static Map<String, String> fork(Options o, Point p, Options.Budget b, int ramPairs, Path logFile)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xms" + Options.jvmSize(b.heap()));
        cmd.add("-Xmx" + Options.jvmSize(b.heap()));
        if (b.maxDirect() > 0) {
            cmd.add("-XX:MaxDirectMemorySize=" + Options.jvmSize(b.maxDirect()));
        }
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-Djava.awt.headless=true");
        cmd.addAll(o.jvmArgs);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(Bench.class.getName());
        cmd.addAll(o.childArgs(p.map(), p.workload(), p.threads(), p.rep(), b, ramPairs));
        Files.writeString(logFile, String.join(" ", cmd) + "\n", StandardCharsets.UTF_8);
        Process proc = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile())).start();
        double limit = p.workload().isMemory()
                ? 60 + 3 * o.warmup + 2 * o.stall + expectedPairs(o, p) / 5_000.0
                : 120 + 3 * (o.warmup + o.duration) + o.ingestedPairs() / 10_000.0;
        boolean finished = proc.waitFor((long) limit, TimeUnit.SECONDS);
        Map<String, String> r = new LinkedHashMap<>();
        if (!finished) {
            proc.destroyForcibly();
            proc.waitFor();
            String timedOut = String.format(Locale.ROOT, "timed out after %.0f s (see %s)", limit, logFile.getFileName());
            String[] progress = lastProgress(logFile);
            if (p.workload().isMemory() && progress != null) {
                // how far the ingestion got is still the figure: the map was stalling at its limit
                long pairs = Long.parseLong(progress[0]);
                r.put("pairs_ingested", progress[0]);
                r.put("stop_reason", timedOut);
                if (p.workload() == Workload.CAPACITY) {
                    r.put("pairs_fit", progress[0]);
                    r.put("ops", progress[0]);
                    r.put("seconds", progress[1]);
                    r.put("ops_per_s", PointRunner.fmt(pairs / Double.parseDouble(progress[1])));
                }
            } else {
                r.put("error", timedOut);
            }
            return r;
        }
        String lastLine = "";
        for (String line : Files.readAllLines(logFile, StandardCharsets.UTF_8)) {
            if (line.startsWith(MemoryRunner.PROGRESS_PREFIX)) {
                continue;
            }
            if (line.startsWith(RESULT_PREFIX)) {
                String kv = line.substring(RESULT_PREFIX.length());
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    r.put(kv.substring(0, eq), kv.substring(eq + 1));
                }
            } else if (!line.isBlank()) {
                lastLine = line;
            }
        }
        if (proc.exitValue() != 0 && !r.containsKey("error")) {
            r.put("error", "child JVM exited with " + proc.exitValue() + ": " + lastLine
                    + " (see " + logFile.getFileName() + ")");
        }
        return r;
    }

    /** @return {pairs, seconds} of the last progress line of a memory-experiment child's log, or null */
    private static String[] lastProgress(Path logFile) throws IOException {
        String[] last = null;
        for (String line : Files.readAllLines(logFile, StandardCharsets.UTF_8)) {
            if (line.startsWith(MemoryRunner.PROGRESS_PREFIX)) {
                String pairs = null;
                String seconds = null;
                for (String kv : line.substring(MemoryRunner.PROGRESS_PREFIX.length()).trim().split("\\s+")) {
                    if (kv.startsWith("pairs=")) {
                        pairs = kv.substring(6);
                    } else if (kv.startsWith("seconds=")) {
                        seconds = kv.substring(8);
                    }
                }
                if (pairs != null && seconds != null) {
                    last = new String[]{pairs, seconds};
                }
            }
        }
        return last;
    }

    /** Runs a point in this JVM (--fork false): for tests and debugging, not for measurements. */
    private static Map<String, String> inProcess(Options o, Point p, Options.Budget b, PrintStream log) {
        try {
            return PointRunner.run(o, p.map(), p.workload(), p.threads(), p.rep(), b.offHeap(), log);
        } catch (Throwable e) {
            Map<String, String> r = new LinkedHashMap<>();
            r.put("error", String.valueOf(e));
            return r;
        }
    }

    static String hms(double seconds) {
        long s = Math.max(0, Math.round(seconds));
        return s >= 3600 ? String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
                : String.format(Locale.ROOT, "%d:%02d", s / 60, s % 60);
    }
}
