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
 * workload, the ratio of each map to the baseline per workload, and memory per pair per map.
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
        if (base != null && o.maps.size() > 1) {
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
                    int tt = w == Workload.INGEST && res.stat(m, w, t, "ops_per_s") == null ? 1 : t;
                    Results.Stat a = res.stat(m, w, tt, "ops_per_s");
                    Results.Stat b = res.stat(base, w, tt, "ops_per_s");
                    x.add(w.id);
                    y.add(a != null && b != null && b.median() > 0 ? a.median() / b.median() : 0.0);
                }
                chart.addSeries(m.name(), x, y);
                series++;
            }
            if (series > 0) {
                save(chart, dir.resolve("ratios.png"));
                out.add(new Written("ratios.png", "ratios to " + base.name()));
            }
        }

        CategoryChart mem = new CategoryChartBuilder().width(900).height(520)
                .title(String.format(Locale.ROOT, "memory per pair after ingesting %,d pairs (raw data %d B/pair)",
                        o.ingestedPairs(), o.keySize + o.valueSize))
                .xAxisTitle("map").yAxisTitle("bytes per pair").build();
        style(mem.getStyler());
        mem.getStyler().setStacked(false);
        List<String> names = new ArrayList<>();
        List<Double> heap = new ArrayList<>();
        List<Double> off = new ArrayList<>();
        List<Double> over = new ArrayList<>();
        for (MapKind m : o.maps) {
            Results.Stat h = res.statAll(m, "heap_b_per_pair");
            Results.Stat u = res.statAll(m, "offheap_used_b_per_pair");
            Results.Stat ov = res.statAll(m, "overhead_b_per_pair");
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
        return out;
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
