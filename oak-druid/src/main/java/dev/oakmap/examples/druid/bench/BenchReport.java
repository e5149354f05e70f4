package dev.oakmap.examples.druid.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** The benchmark's CSV (one row per run) and Markdown report. */
final class BenchReport {

    static final List<String> RESULT_COLUMNS = List.of("heap_budget_bytes", "offheap_capacity_bytes", "error", "gen_s",
            "ingest_s", "rows_per_s", "facts", "raw_bytes", "heap_growth_bytes", "offheap_used_bytes",
            "offheap_reserved_bytes", "overhead_bytes", "overhead_pct", "bytes_per_fact", "gc_count", "gc_ms", "jvm");

    /** What the report says about the invocation; stored next to the results as run.properties. */
    record Context(String command, String machine, String jvm, String commit, String started, double seconds,
                   String load) {

        void store(Path file) throws IOException {
            java.util.Properties p = new java.util.Properties();
            p.setProperty("command", command);
            p.setProperty("machine", machine);
            p.setProperty("jvm", jvm);
            p.setProperty("commit", commit);
            p.setProperty("started", started);
            p.setProperty("seconds", String.format(Locale.ROOT, "%.0f", seconds));
            p.setProperty("load", load);
            try (var w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
                p.store(w, "druid-bench run");
            }
        }

        static Context load(Path file) throws IOException {
            java.util.Properties p = new java.util.Properties();
            try (var r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                p.load(r);
            }
            return new Context(p.getProperty("command", "?"), p.getProperty("machine", "?"), p.getProperty("jvm", "?"),
                    p.getProperty("commit", "?"), p.getProperty("started", "?"),
                    Double.parseDouble(p.getProperty("seconds", "0")), p.getProperty("load", "unknown"));
        }
    }

    /**
     * Reads a finished run back: its points, and in {@code o} the plan's lists (rows, budgets,
     * threads, rollup size) as the CSV shows them.
     */
    static List<Point> readCsv(Path csv, BenchOptions o) throws IOException {
        List<String> lines = Files.readAllLines(csv, StandardCharsets.UTF_8);
        if (lines.isEmpty()) {
            throw new IOException(csv + " is empty");
        }
        List<String> header = List.of(lines.getFirst().split(","));
        List<Point> plan = new java.util.ArrayList<>();
        for (int n = 1; n < lines.size(); n++) {
            try {
                plan.add(readRow(splitCsv(lines.get(n)), header));
            } catch (RuntimeException e) {
                // a number that does not parse or a short row: name the line, not the parser's frame
                throw new IOException(csv + " line " + (n + 1) + " is not a result row (" + e + ")", e);
            }
        }
        o.rows = plan.stream().filter(p -> p.series.contains("5a")).map(p -> p.rows).distinct().sorted().toList();
        plan.stream().filter(p -> p.series.contains("5a")).findFirst().ifPresent(p -> o.budget = p.budget);
        plan.stream().filter(p -> p.series.contains("5b")).findFirst().ifPresent(p -> o.fixedRows = p.rows);
        o.budgets = plan.stream().filter(p -> p.series.contains("5b")).mapToLong(p -> p.budget).distinct()
                .boxed().sorted(java.util.Comparator.reverseOrder()).mapToLong(Long::longValue).toArray();
        o.threads = plan.stream().mapToInt(p -> p.threads).distinct().sorted().toArray();
        o.rollupRows = plan.stream().filter(p -> p.series.contains("rollup")).mapToInt(p -> p.rows).findFirst().orElse(0);
        plan.stream().filter(p -> p.series.contains("rollup")).findFirst().ifPresent(p -> o.rollupBudget = p.budget);
        return plan;
    }

    private static Point readRow(List<String> f, List<String> header) {
        Point p = new Point(f.get(0), f.get(1), Integer.parseInt(f.get(2)), Integer.parseInt(f.get(3)),
                Long.parseLong(f.get(4)));
        p.series.addAll(List.of(f.get(5).split("\\+")));
        java.util.Map<String, String> r = new java.util.LinkedHashMap<>();
        for (int i = 8; i < header.size() && i < f.size(); i++) {
            if (!f.get(i).isEmpty()) {
                r.put(header.get(i), f.get(i));
            }
        }
        p.result = r;
        return p;
    }

    private static List<String> splitCsv(String line) {
        List<String> out = new java.util.ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char ch = line.charAt(i);
            if (quoted) {
                if (ch == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                    cur.append('"');
                    i++;
                } else if (ch == '"') {
                    quoted = false;
                } else {
                    cur.append(ch);
                }
            } else if (ch == '"') {
                quoted = true;
            } else if (ch == ',') {
                out.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(ch);
            }
        }
        out.add(cur.toString());
        return out;
    }

    private BenchReport() {
    }

    static void appendCsv(Path csv, Point p, BenchOptions o, double wall) throws IOException {
        StringBuilder sb = new StringBuilder();
        if (!Files.exists(csv)) {
            sb.append("impl,mode,rows,threads,budget_bytes,series,status,wall_s,").append(String.join(",", RESULT_COLUMNS))
                    .append('\n');
        }
        sb.append(p.impl).append(',').append(p.mode).append(',').append(p.rows).append(',').append(p.threads).append(',')
                .append(p.budget).append(',').append(String.join("+", p.series)).append(',')
                .append(p.ok() ? "ok" : "failed").append(',').append(String.format(Locale.ROOT, "%.1f", wall));
        for (String c : RESULT_COLUMNS) {
            String v = p.result.getOrDefault(c, "");
            sb.append(',').append(v.contains(",") || v.contains("\"") ? '"' + v.replace("\"", "\"\"") + '"' : v);
        }
        Files.writeString(csv, sb.append('\n').toString(), StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }

    static void writeMarkdown(Path file, List<Point> plan, BenchOptions o, Context c, List<String> charts)
            throws IOException {
        StringBuilder md = new StringBuilder();
        md.append("# Druid-style incremental index: Oak vs legacy ingestion\n\n");
        md.append("- command: `").append(c.command()).append("`\n");
        md.append("- machine: ").append(c.machine()).append('\n');
        md.append("- JVM: ").append(c.jvm()).append("; commit ").append(c.commit()).append('\n');
        md.append(String.format(Locale.ROOT, "- started %s, took %.0f s; load average (1, 5, 15 min) at start / end: %s%n",
                c.started(), c.seconds(), c.load()));
        md.append(String.format(Locale.ROOT, "- plain rows: %d string dimensions (cardinalities 4, 16, 64, ... capped at "
                + "100,000; Zipf 1.0), %,d users (Zipf 0.8), %d extra double metrics: %d raw bytes per row; "
                + "20,000 events per second of event time%n", o.dims, o.users, o.extraMetrics, rawRowBytes(o.dims, o.extraMetrics)));
        md.append("- rollup rows: minute buckets, dense = 3 dimensions (4, 16, 64 values), sparse = 4 (4, 16, 64, 256); "
                + "each aggregate: count, sums, min, max, HLL (lgK 11, HLL_4) of users, KLL (k 128) of latencies\n");
        md.append(String.format(Locale.ROOT, "- JVM budgets: legacy gets the whole budget as heap; Oak gets %s + 80 B per "
                + "row of heap (the pregenerated input lives there too) and the rest as off-heap capacity; "
                + "Oak map: chunk capacity %d, rebalance ratio %s%n", o.oakHeap > 0 ? BenchOptions.size(o.oakHeap)
                + " (fixed)" : "160 MiB", o.oakChunk, o.oakRatio));
        md.append("- every point: a fresh JVM, input generated in advance, a warm-up ingestion of ")
                .append(BenchOptions.count(o.warmupRows)).append(" rows into a throwaway index, one measured ingestion\n\n");

        md.append("## Figure 5a: throughput against rows, budget ").append(BenchOptions.size(o.budget)).append("\n\n");
        md.append("| rows | threads | Oak rows/s | legacy rows/s | Oak / legacy | GC ms Oak / legacy |\n|---|---|---|---|---|---|\n");
        for (int t : o.threads) {
            for (int rows : o.rows) {
                md.append(ratioRow(BenchOptions.count(rows), t, find(plan, "oak", "plain", rows, t, o.budget),
                        find(plan, "legacy", "plain", rows, t, o.budget)));
            }
        }
        md.append("\n## Figure 5b: throughput against the RAM budget, ").append(BenchOptions.count(o.fixedRows))
                .append(" rows\n\n");
        md.append("| budget | threads | Oak rows/s | legacy rows/s | Oak / legacy | GC ms Oak / legacy |\n|---|---|---|---|---|---|\n");
        for (int t : o.threads) {
            for (long b : o.budgets) {
                md.append(ratioRow(BenchOptions.size(b), t, find(plan, "oak", "plain", o.fixedRows, t, b),
                        find(plan, "legacy", "plain", o.fixedRows, t, b)));
            }
        }
        md.append("\n## Figure 5c: memory beyond the raw data (5a runs, ").append(o.threads[0]).append(" thread")
                .append(o.threads[0] == 1 ? "" : "s").append(")\n\n");
        md.append("Overhead = heap growth (after full collections) + off-heap bytes used - raw row bytes; "
                + "off-heap reserved includes the unused tail of the last 64 MiB block.\n\n");
        md.append("| rows | index | heap B/row | off-heap used B/row | off-heap reserved B/row | overhead B/row | "
                + "overhead % of raw |\n|---|---|---|---|---|---|---|\n");
        for (int rows : o.rows) {
            for (String impl : o.impls) {
                Optional<Point> p = find(plan, impl, "plain", rows, o.threads[0], o.budget);
                if (p.isPresent() && p.get().ok()) {
                    Point x = p.get();
                    md.append(String.format(Locale.ROOT, "| %s | %s | %.0f | %.0f | %.0f | %.0f | %.1f%% |%n",
                            BenchOptions.count(rows), impl, x.value("heap_growth_bytes") / rows,
                            x.value("offheap_used_bytes") / rows, x.value("offheap_reserved_bytes") / rows,
                            x.value("overhead_bytes") / rows, x.value("overhead_pct")));
                }
            }
        }
        if (o.rollupRows > 0) {
            md.append("\n## Rollup with sketches, ").append(BenchOptions.count(o.rollupRows)).append(" rows, budget ")
                    .append(BenchOptions.size(o.rollupBudget)).append("\n\n");
            md.append("| input | threads | aggregates | Oak rows/s | legacy rows/s | Oak / legacy | Oak B/aggregate | "
                    + "legacy B/aggregate |\n|---|---|---|---|---|---|---|---|\n");
            for (String mode : List.of("rollup-dense", "rollup-sparse")) {
                for (int t : o.threads) {
                    Optional<Point> a = find(plan, "oak", mode, o.rollupRows, t, o.rollupBudget);
                    Optional<Point> b = find(plan, "legacy", mode, o.rollupRows, t, o.rollupBudget);
                    md.append(String.format(Locale.ROOT, "| %s | %d | %s | %s | %s | %s | %s | %s |%n",
                            mode.substring(7), t, a.or(() -> b).filter(Point::ok).map(x -> String.format(Locale.ROOT,
                                    "%,.0f", x.value("facts"))).orElse("-"), cell(a), cell(b), ratio(a, b),
                            perFact(a), perFact(b)));
                }
            }
        }
        md.append("\n## Charts\n\n");
        for (String chart : charts) {
            md.append("![").append(chart).append("](").append(chart).append(")\n\n");
        }
        List<Point> failed = plan.stream().filter(p -> !p.ok()).toList();
        if (!failed.isEmpty()) {
            md.append("## Failed runs\n\n");
            for (Point p : failed) {
                md.append("- ").append(p.id()).append(": ").append(p.result.get("error")).append('\n');
            }
        }
        Files.writeString(file, md.toString(), StandardCharsets.UTF_8);
    }

    static int rawRowBytes(int dims, int extras) {
        return 8 + 4 * dims + 4 + 8 + 8 + 8 * extras;
    }

    static Optional<Point> find(List<Point> plan, String impl, String mode, int rows, int threads, long budget) {
        return plan.stream().filter(p -> p.impl.equals(impl) && p.mode.equals(mode) && p.rows == rows
                && p.threads == threads && p.budget == budget).findFirst();
    }

    private static String ratioRow(String label, int t, Optional<Point> oak, Optional<Point> legacy) {
        return String.format(Locale.ROOT, "| %s | %d | %s | %s | %s | %s / %s |%n", label, t, cell(oak), cell(legacy),
                ratio(oak, legacy), gc(oak), gc(legacy));
    }

    private static String cell(Optional<Point> p) {
        if (p.isEmpty()) {
            return "-";
        }
        if (!p.get().ok()) {
            String e = p.get().result.getOrDefault("error", "failed");
            // "does not fit" first: that message mentions the off-heap share, but the point never ran
            return "failed (" + (e.contains("does not fit") ? "does not fit" : e.contains("heap exhausted")
                    ? "heap exhausted" : e.contains("off-heap") ? "off-heap full" : e.contains("timed out") ? "timeout"
                    : "error") + ")";
        }
        return String.format(Locale.ROOT, "%,.0f", p.get().value("rows_per_s"));
    }

    private static String gc(Optional<Point> p) {
        return p.filter(Point::ok).map(x -> String.format(Locale.ROOT, "%.0f", x.value("gc_ms"))).orElse("-");
    }

    private static String ratio(Optional<Point> a, Optional<Point> b) {
        if (a.isPresent() && b.isPresent() && a.get().ok() && b.get().ok()) {
            return String.format(Locale.ROOT, "%.2fx", a.get().value("rows_per_s") / b.get().value("rows_per_s"));
        }
        if (a.isPresent() && a.get().ok()) {
            return "only Oak ran";
        }
        return b.isPresent() && b.get().ok() ? "only legacy ran" : "-";
    }

    private static String perFact(Optional<Point> p) {
        return p.filter(Point::ok).map(x -> String.format(Locale.ROOT, "%,.0f", x.value("bytes_per_fact"))).orElse("-");
    }
}
