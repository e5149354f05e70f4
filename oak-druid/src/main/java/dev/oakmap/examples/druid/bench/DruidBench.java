package dev.oakmap.examples.druid.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The ingestion benchmark of the case study, after Figure 5 of the Oak paper, scaled to the
 * machine: for the Oak and the legacy index,
 * <ul>
 *   <li>5a: ingestion throughput (rows/s) against the number of rows, at a fixed RAM budget;</li>
 *   <li>5b: throughput against the RAM budget, at a fixed number of rows (a point that runs out
 *       of memory or time is reported as failed, as the paper's legacy index fails below 28 GB);</li>
 *   <li>5c: memory beyond the raw data (heap growth plus off-heap bytes used, minus the rows' own
 *       bytes), as a share of the raw data, from the 5a runs;</li>
 *   <li>and rollup ingestion with HLL and KLL sketches, dense (few, large aggregates) and sparse
 *       (many small ones).</li>
 * </ul>
 * Each run is a fresh JVM ({@link IngestPoint}) with {@code -Xmx} from the budget: all of it for
 * the legacy index; for Oak a heap sized for the input and the map's on-heap metadata, the rest as
 * the index's off-heap capacity. Output: {@code results.csv}, {@code report.md}, PNG charts and
 * {@code logs/} in {@code --out}.
 */
public final class DruidBench {

    private DruidBench() {
    }

    /** Command-line entry point: exit 0, 1 if some runs failed unexpectedly, 2 on bad arguments or files. */
    public static void main(String[] args) throws Exception {
        Locale.setDefault(Locale.ROOT);
        System.setProperty("java.awt.headless", "true");
        for (String a : args) {
            if (a.equals("--help") || a.equals("-h")) {
                System.out.print(BenchOptions.USAGE);
                return;
            }
        }
        BenchOptions o;
        try {
            o = BenchOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.print(BenchOptions.USAGE);
            System.exit(2);
            return;
        }
        System.exit(execute(o, String.join(" ", args), System.err));
    }

    /**
     * Runs the plan (or rebuilds the report) and turns a problem with the output files (an
     * {@code --out} that is a file, a {@code --report-only} directory without a finished run, a
     * malformed results.csv) into a message instead of a stack trace.
     *
     * @return the exit code
     */
    static int execute(BenchOptions o, String commandLine, PrintStream err) throws InterruptedException {
        try {
            return run(o, commandLine) == 0 ? 0 : 1;
        } catch (IOException e) {
            err.println("error: " + e.getClass().getSimpleName() + ": " + e.getMessage()
                    + (o.reportOnly ? " (--report-only needs the results.csv and run.properties of a finished run"
                    + " in --out)" : ""));
            return 2;
        }
    }

    /** @return the plan: every distinct run, tagged with the figures it serves */
    static List<Point> plan(BenchOptions o) {
        Map<String, Point> runs = new LinkedHashMap<>();
        for (int t : o.threads) {
            for (int rows : o.rows) {
                for (String impl : o.impls) {
                    add(runs, new Point(impl, "plain", rows, t, o.budget), "5a");
                }
            }
            for (long b : o.budgets) {
                for (String impl : o.impls) {
                    add(runs, new Point(impl, "plain", o.fixedRows, t, b), "5b");
                }
            }
            if (o.rollupRows > 0) {
                for (String mode : List.of("rollup-dense", "rollup-sparse")) {
                    for (String impl : o.impls) {
                        add(runs, new Point(impl, mode, o.rollupRows, t, o.rollupBudget), "rollup");
                    }
                }
            }
        }
        return new ArrayList<>(runs.values());
    }

    private static void add(Map<String, Point> runs, Point p, String series) {
        runs.computeIfAbsent(p.id(), k -> p).series.add(series);
    }

    static int run(BenchOptions o, String commandLine) throws IOException, InterruptedException {
        if (o.reportOnly) {
            return rebuildReport(o);
        }
        List<Point> plan = plan(o);
        String machine = MachineInfo.describe();
        System.err.printf("druid-bench: %d runs; %s%n", plan.size(), machine);
        for (Point p : plan) {
            System.err.printf("  %-6s %-13s %9s rows  %d thread%s  budget %-9s %s%n", p.impl, p.mode,
                    BenchOptions.count(p.rows), p.threads, p.threads == 1 ? " " : "s", BenchOptions.size(p.budget),
                    String.join(",", p.series));
        }
        if (o.dryRun) {
            return 0;
        }
        Path logs = Files.createDirectories(o.out.resolve("logs"));
        Path csv = o.out.resolve("results.csv");
        Files.deleteIfExists(csv);
        String started = LocalDateTime.now().withNano(0).toString();
        String loadBefore = MachineInfo.loadAverage();
        long t0 = System.nanoTime();
        int unexpected = 0;
        for (int i = 0; i < plan.size(); i++) {
            Point p = plan.get(i);
            long r0 = System.nanoTime();
            p.result = fork(o, p, logs.resolve(String.format(Locale.ROOT, "%03d-%s.log", i + 1, p.id())));
            double wall = (System.nanoTime() - r0) / 1e9;
            BenchReport.appendCsv(csv, p, o, wall);
            String err = p.result.get("error");
            if (err != null && !err.contains("exhausted") && !err.contains("timed out") && !err.contains("does not fit")) {
                unexpected++;
            }
            System.err.printf(Locale.ROOT, "[%d/%d] %-6s %-13s %9s rows t=%d %-9s: %s (%.1f s, elapsed %.0f s)%n",
                    i + 1, plan.size(), p.impl, p.mode, BenchOptions.count(p.rows), p.threads,
                    BenchOptions.size(p.budget), p.ok() ? String.format(Locale.ROOT, "%,.0f rows/s",
                            p.value("rows_per_s")) : "FAILED: " + err, wall, (System.nanoTime() - t0) / 1e9);
        }
        BenchReport.Context context = new BenchReport.Context(("bin/druid-bench " + commandLine).trim(), machine,
                MachineInfo.jvm(), MachineInfo.gitCommit(), started, (System.nanoTime() - t0) / 1e9,
                loadBefore + " / " + MachineInfo.loadAverage());
        context.store(o.out.resolve("run.properties"));
        List<String> charts = BenchCharts.write(o.out, plan, o);
        BenchReport.writeMarkdown(o.out.resolve("report.md"), plan, o, context, charts);
        System.err.printf("done: %s%n  %s%n  %s%n", o.out.toAbsolutePath(), csv.getFileName(), String.join(", ", charts));
        return unexpected;
    }

    /** {@code --report-only}: the report and charts again, from a finished run's files. */
    private static int rebuildReport(BenchOptions o) throws IOException {
        List<Point> plan = BenchReport.readCsv(o.out.resolve("results.csv"), o);
        BenchReport.Context context = BenchReport.Context.load(o.out.resolve("run.properties"));
        List<String> charts = BenchCharts.write(o.out, plan, o);
        BenchReport.writeMarkdown(o.out.resolve("report.md"), plan, o, context, charts);
        System.err.printf("rebuilt %s from %d runs%n", o.out.resolve("report.md"), plan.size());
        return 0;
    }

    /** Runs a point in a fresh JVM of this JDK, its output in {@code log}. */
    private static Map<String, String> fork(BenchOptions o, Point p, Path log) throws IOException, InterruptedException {
        boolean oak = p.impl.equals("oak");
        long heap = oak ? o.oakHeapFor(p.rows) : p.budget;
        long offHeap = oak ? p.budget - heap : 0;
        Map<String, String> r = new LinkedHashMap<>();
        r.put("heap_budget_bytes", Long.toString(heap));
        r.put("offheap_capacity_bytes", Long.toString(offHeap));
        if (oak && offHeap < 64 * BenchOptions.MIB) {
            r.put("error", "does not fit: the budget leaves " + BenchOptions.size(offHeap) + " off-heap after "
                    + BenchOptions.size(heap) + " of heap");
            return r;
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xms" + (heap >> 20) + "m");
        cmd.add("-Xmx" + (heap >> 20) + "m");
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(IngestPoint.class.getName());
        boolean plain = p.mode.equals("plain");
        cmd.addAll(List.of(p.impl, plain ? "plain" : "rollup", Integer.toString(p.rows), Integer.toString(p.threads),
                Long.toString(Math.max(offHeap, 1))));
        cmd.addAll(o.inputArgs(plain ? o.dims : p.mode.equals("rollup-dense") ? 3 : 4, plain ? o.extraMetrics : 0));
        Files.writeString(log, String.join(" ", cmd) + "\n", StandardCharsets.UTF_8);
        Process proc = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        if (!proc.waitFor(o.timeoutSeconds, TimeUnit.SECONDS)) {
            proc.destroyForcibly();
            proc.waitFor();
            r.put("error", "timed out after " + o.timeoutSeconds + " s (GC thrashing near the heap limit?)");
            return r;
        }
        for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
            if (line.startsWith(IngestPoint.RESULT)) {
                String kv = line.substring(IngestPoint.RESULT.length());
                int eq = kv.indexOf('=');
                r.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        if (proc.exitValue() != 0 && !r.containsKey("error")) {
            r.put("error", "child JVM exited with " + proc.exitValue() + " (see " + log.getFileName() + ")");
        }
        return r;
    }
}
