package dev.oakmap.bench.harness;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.Styler;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The report's PNG charts, drawn by XChart (headless): throughput against threads for each
 * workload, the ratio of each map to the baseline per workload, memory per pair per map, and for
 * the memory-budget experiments, pairs that fit against the RAM budget and ingestion throughput
 * against the RAM budget (the Oak paper's Figure 3).
 */
final class Charts {

    private Charts() {
    }

    /** A chart written, with its title, for the report's links. */
    record Written(String file, String title) {
    }

    static List<Written> write(Path dir, Results res, Options o) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<Written> out = new ArrayList<>();
        int[] threads = o.threads;
        for (Workload w : o.workloads) {
            if (w.isMemory()) {
                continue;
            }
            String title = String.format(Locale.ROOT, "%s: throughput vs threads (%,d keys, %d B / %d B)",
                    w.id, o.keys, o.keySize, o.valueSize);
            XYChart chart = new XYChartBuilder().width(900).height(560).title(title)
                    .xAxisTitle("worker threads" + (w == Workload.INGEST ? " (ingestion)" : ""))
                    .yAxisTitle(w.isScan() ? "scans/s (" + Math.min(o.scan, o.ingestedPairs()) + " pairs each)"
                            : "operations/s")
                    .build();
            style(chart.getStyler());
            chart.getStyler().setYAxisMin(0.0);
            chart.getStyler().setXAxisDecimalPattern("0");
            chart.getStyler().setYAxisDecimalPattern("#,##0");
            chart.getStyler().setMarkerSize(9);
            int series = 0;
            for (MapKind m : o.maps) {
                List<Double> x = new ArrayList<>();
                List<Double> y = new ArrayList<>();
                for (int t : threads) {
                    Results.Stat s = res.stat(m, w, t, "ops_per_s");
                    if (s != null) {
                        x.add((double) t);
                        y.add(s.median());
                    }
                }
                if (!x.isEmpty()) {
                    chart.addSeries(m.name(), x, y);
                    series++;
                }
            }
            if (series > 0) {
                String file = "throughput-" + w.id + ".png";
                save(chart, dir.resolve(file));
                out.add(new Written(file, w.id));
            }
        }

        MapKind base = MapKind.baselineOf(o.maps);
        if (base != null && o.maps.size() > 1 && o.workloads.stream().anyMatch(w -> !w.isMemory())) {
            int t = threads[threads.length - 1];
            CategoryChart chart = new CategoryChartBuilder().width(1000).height(560)
                    .title(String.format(Locale.ROOT, "throughput relative to %s, %d thread%s (median / median)",
                            base.name(), t, t == 1 ? "" : "s"))
                    .xAxisTitle("workload").yAxisTitle("ratio to " + base.name()).build();
            style(chart.getStyler());
            chart.getStyler().setXAxisLabelRotation(30);
            chart.getStyler().setYAxisMin(0.0);
            int series = 0;
            for (MapKind m : o.maps) {
                if (m == base) {
                    continue;
                }
                List<String> x = new ArrayList<>();
                List<Double> y = new ArrayList<>();
                for (Workload w : o.workloads) {
                    if (w.isMemory()) {
                        continue;
                    }
                    int tt = w == Workload.INGEST && res.stat(m, w, t, "ops_per_s") == null ? 1 : t;
                    Results.Stat a = res.stat(m, w, tt, "ops_per_s");
                    Results.Stat b = res.stat(base, w, tt, "ops_per_s");
                    x.add(w.id);
                    y.add(a != null && b != null && b.median() > 0 ? a.median() / b.median() : 0.0);
                }
                if (!x.isEmpty()) {
                    chart.addSeries(m.name(), x, y);
                    series++;
                }
            }
            if (series > 0) {
                save(chart, dir.resolve("ratios.png"));
                out.add(new Written("ratios.png", "ratios to " + base.name()));
            }
        }

        boolean fromThroughput = res.rows.stream().anyMatch(r -> "ok".equals(r.get("status")) && !Report.memoryRow(r)
                && !r.getOrDefault("heap_b_per_pair", "").isEmpty());
        java.util.function.Predicate<java.util.Map<String, String>> which = fromThroughput
                ? r -> !Report.memoryRow(r) : r -> Workload.INGEST_RAM.id.equals(r.get("workload"));
        CategoryChart mem = new CategoryChartBuilder().width(900).height(520)
                .title(String.format(Locale.ROOT, "memory per pair after ingesting %,d pairs (raw data %d B/pair)",
                        fromThroughput ? o.ingestedPairs() : o.ramPairs(), o.keySize + o.valueSize))
                .xAxisTitle("map").yAxisTitle("bytes per pair").build();
        style(mem.getStyler());
        mem.getStyler().setStacked(false);
        List<String> names = new ArrayList<>();
        List<Double> heap = new ArrayList<>();
        List<Double> off = new ArrayList<>();
        List<Double> over = new ArrayList<>();
        for (MapKind m : o.maps) {
            Results.Stat h = res.statWhere(m, which, "heap_b_per_pair");
            Results.Stat u = res.statWhere(m, which, "offheap_used_b_per_pair");
            Results.Stat ov = res.statWhere(m, which, "overhead_b_per_pair");
            if (h != null && ov != null) {
                names.add(m.name());
                heap.add(h.median());
                off.add(u == null ? 0.0 : u.median());
                over.add(ov.median());
            }
        }
        if (!names.isEmpty()) {
            mem.addSeries("heap growth", names, heap);
            mem.addSeries("off-heap used", names, off);
            mem.addSeries("overhead beyond raw data", names, over);
            save(mem, dir.resolve("memory.png"));
            out.add(new Written("memory.png", "memory per pair"));
        }
        if (o.workloads.contains(Workload.CAPACITY)) {
            budgetChart(dir, res, o, Workload.CAPACITY, "pairs_fit", "capacity.png",
                    String.format(Locale.ROOT, "pairs that fit in a RAM budget (%d B + %d B pairs, heap + off-heap)",
                            o.keySize, o.valueSize), "pairs in the map when it ran out", out);
        }
        if (o.workloads.contains(Workload.INGEST_RAM)) {
            budgetChart(dir, res, o, Workload.INGEST_RAM, "ops_per_s", "ingest-ram.png",
                    String.format(Locale.ROOT, "ingestion of %,d pairs vs RAM budget, 1 thread (missing: ran out)",
                            o.ramPairs()), "pairs/s", out);
        }
        return out;
    }

    /** A line per map of {@code column} against the RAM budget of a memory experiment. */
    private static void budgetChart(Path dir, Results res, Options o, Workload w, String column, String file,
                                    String title, String yTitle, List<Written> out) throws IOException {
        XYChart chart = new XYChartBuilder().width(900).height(560).title(title)
                .xAxisTitle("RAM budget (MiB)").yAxisTitle(yTitle).build();
        style(chart.getStyler());
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setXAxisDecimalPattern("#,##0");
        chart.getStyler().setYAxisDecimalPattern("#,##0");
        chart.getStyler().setMarkerSize(9);
        int series = 0;
        for (MapKind m : o.maps) {
            if (m.runAs().apply(w) != w) {
                continue;
            }
            List<Double> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            for (long ram : o.memoryBudgets(w)) {
                Results.Stat s = res.statAt(m, w, ram, column);
                if (s != null) {
                    x.add(ram / (double) Options.MIB);
                    y.add(s.median());
                }
            }
            if (!x.isEmpty()) {
                chart.addSeries(m.name(), x, y);
                series++;
            }
        }
        if (series > 0) {
            save(chart, dir.resolve(file));
            out.add(new Written(file, w.id));
        }
    }

    private static void style(Styler s) {
        s.setLegendPosition(Styler.LegendPosition.OutsideS);
        s.setChartBackgroundColor(java.awt.Color.WHITE);
        s.setChartTitleFont(s.getChartTitleFont().deriveFont(15f));
    }

    private static void save(Chart<?, ?> chart, Path file) throws IOException {
        try (OutputStream os = Files.newOutputStream(file)) {
            BitmapEncoder.saveBitmap(chart, os, BitmapEncoder.BitmapFormat.PNG);
        }
    }
}
