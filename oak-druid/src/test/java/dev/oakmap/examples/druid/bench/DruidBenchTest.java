package dev.oakmap.examples.druid.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The benchmark's plan and report, without running child JVMs (those run in bin/druid-bench). */
class DruidBenchTest {

    @Test
    void optionsParseSizesCountsAndPresets() {
        BenchOptions o = BenchOptions.parse(new String[]{"--rows", "250k,1.5m", "--budget", "1.5g", "--budgets",
            "2g,768m", "--threads", "1,2,4", "--impls", "oak", "--rollup-rows", "0"});
        assertEquals(List.of(250_000, 1_500_000), o.rows);
        assertEquals(1_500_000, o.fixedRows, "defaults to the largest row count");
        assertEquals(3L << 29, o.budget);
        assertEquals(768L << 20, o.budgets[1]);
        assertEquals(3, o.threads.length);
        assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse(new String[]{"--impls", "btree"}));
        assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse(new String[]{"--nope", "1"}));
        assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse(new String[]{"--rows"}));
        assertEquals(List.of(100_000, 200_000), BenchOptions.parse(new String[]{"--preset", "quick"}).rows);
    }

    @Test
    void optionsThatCannotMeasureAnythingAreRejected() {
        // --threads 0 used to run points that ingested nothing and reported millions of rows/s
        for (String[] bad : new String[][]{{"--threads", "0"}, {"--threads", "1,-2"}, {"--rows", "0"},
            {"--rows", ","}, {"--budget", "-1g"}, {"--budgets", "1g,0"}, {"--rollup-budget", "0"},
            {"--dims", "0"}, {"--extra-metrics", "-1"}, {"--users", "0"}, {"--timeout", "0"}}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse(bad),
                    String.join(" ", bad));
            assertTrue(e.getMessage().contains(bad[0]), e.getMessage());
        }
        BenchOptions.parse(new String[]{"--rollup-rows", "0", "--warmup-rows", "0"}); // 0 means "skip"
    }

    @Test
    void fileProblemsAreExplainedNotThrown(@TempDir Path dir) throws Exception {
        // these used to end in a stack trace from main (NoSuchFileException, FileSystemException, ...)
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream ps = new PrintStream(err, true, StandardCharsets.UTF_8);
        BenchOptions reportOnly = BenchOptions.parse(new String[]{"--report-only", "--out", dir.toString()});
        assertEquals(2, DruidBench.execute(reportOnly, "", ps), "no finished run in --out");
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("results.csv"), err.toString(StandardCharsets.UTF_8));

        err.reset();
        Files.writeString(dir.resolve("results.csv"), "impl,mode,rows,threads,budget,series\noak,plain,lots,1,2,5a\n");
        Files.writeString(dir.resolve("run.properties"), "command=x\n");
        assertEquals(2, DruidBench.execute(reportOnly, "", ps), "malformed results.csv");
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("line 2"), err.toString(StandardCharsets.UTF_8));

        err.reset();
        Path file = Files.writeString(dir.resolve("a-file"), "");
        BenchOptions outIsAFile = BenchOptions.parse(new String[]{"--rows", "1k", "--budgets", "256m", "--rollup-rows",
            "0", "--out", file.toString()});
        assertEquals(2, DruidBench.execute(outIsAFile, "", ps), "--out is a file");
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("a-file"), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aPointThatDidNotFitIsNotReportedAsRunningOutOfOffHeapMemory(@TempDir Path dir) throws Exception {
        // "does not fit: the budget leaves -76 MiB off-heap after 176 MiB of heap" never ran, but its
        // cell said "failed (off-heap full)" because the message contains "off-heap"
        BenchOptions o = BenchOptions.parse(new String[]{"--rows", "10k", "--budget", "100m", "--budgets", "100m",
            "--threads", "1", "--impls", "oak", "--rollup-rows", "0", "--out", dir.toString()});
        List<Point> plan = DruidBench.plan(o);
        assertEquals(1, plan.size());
        plan.getFirst().result = Map.of("error", "does not fit: the budget leaves -76 MiB off-heap after 176 MiB of heap");
        BenchReport.writeMarkdown(dir.resolve("report.md"), plan, o, new BenchReport.Context("c", "m", "j", "x", "now",
                1, "l"), List.of());
        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.contains("failed (does not fit)"), md);
        assertTrue(!md.contains("off-heap full"), md);
    }

    @Test
    void planRunsAPointServingTwoFiguresOnce() {
        BenchOptions o = BenchOptions.parse(new String[]{"--rows", "1m,2m", "--budget", "2g", "--budgets", "2g,1g",
            "--threads", "1", "--rollup-rows", "100k"});
        List<Point> plan = DruidBench.plan(o);
        // 5a: 2 rows x 2 impls; 5b: 1 new budget x 2 impls; rollup: 2 inputs x 2 impls
        assertEquals(4 + 2 + 4, plan.size());
        Point shared = BenchReport.find(plan, "oak", "plain", 2_000_000, 1, 2L << 30).orElseThrow();
        assertEquals(List.of("5a", "5b"), List.copyOf(shared.series));
    }

    @Test
    void reportAndChartsFromResults(@TempDir Path dir) throws Exception {
        System.setProperty("java.awt.headless", "true");
        BenchOptions o = BenchOptions.parse(new String[]{"--preset", "quick", "--out", dir.toString()});
        List<Point> plan = DruidBench.plan(o);
        for (Point p : plan) {
            boolean failed = p.impl.equals("legacy") && p.budget < o.budget && p.mode.equals("plain");
            p.result = failed ? Map.of("error", "heap exhausted (OutOfMemoryError: Java heap space)")
                    : Map.of("rows_per_s", p.impl.equals("oak") ? "200000" : "100000", "facts", "" + p.rows,
                    "heap_growth_bytes", "" + 50L * p.rows, "offheap_used_bytes", "" + 280L * p.rows,
                    "offheap_reserved_bytes", "" + 300L * p.rows, "overhead_bytes", "" + 78L * p.rows,
                    "overhead_pct", "31", "bytes_per_fact", "330", "gc_ms", "12");
            BenchReport.appendCsv(dir.resolve("results.csv"), p, o, 1.0);
        }
        List<String> charts = BenchCharts.write(dir, plan, o);
        assertEquals(4, charts.size());
        for (String c : charts) {
            assertTrue(Files.size(dir.resolve(c)) > 1000, c);
        }
        BenchReport.Context context = new BenchReport.Context("bin/druid-bench --preset quick", "test machine",
                "test jvm", "abc", "now", 1, "0.5 0.4 0.3 / 1.0 0.5 0.3");
        BenchReport.writeMarkdown(dir.resolve("report.md"), plan, o, context, charts);
        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.contains("| 100k | 1 | 200,000 | 100,000 | 2.00x |"), md);
        assertTrue(md.contains("failed (heap exhausted)"), md);
        assertTrue(md.contains("only Oak ran"), md);
        assertEquals(plan.size() + 1, Files.readAllLines(dir.resolve("results.csv")).size());

        // --report-only rebuilds the same report from the files
        context.store(dir.resolve("run.properties"));
        Files.delete(dir.resolve("report.md"));
        assertEquals(0, DruidBench.run(BenchOptions.parse(new String[]{"--report-only", "--preset", "quick", "--out",
            dir.toString()}), ""));
        assertEquals(md, Files.readString(dir.resolve("report.md")));
    }
}
