package dev.oakmap.examples.druid.bench;

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
import java.util.Optional;

/** The report's PNG charts (XChart, headless): Figure 5a, 5b, 5c and the rollup comparison. */
final class BenchCharts {

    private BenchCharts() {
    }

    /** @return the file names written */
    static List<String> write(Path dir, List<Point> plan, BenchOptions o) throws IOException {
        List<String> out = new ArrayList<>();
        if (fig5a(dir, plan, o)) {
            out.add("fig5a-throughput-vs-rows.png");
        }
        if (fig5b(dir, plan, o)) {
            out.add("fig5b-throughput-vs-budget.png");
        }
        if (fig5c(dir, plan, o)) {
            out.add("fig5c-memory-overhead.png");
        }
        if (o.rollupRows > 0 && rollup(dir, plan, o)) {
            out.add("rollup-throughput.png");
        }
        return out;
    }

    private static boolean fig5a(Path dir, List<Point> plan, BenchOptions o) throws IOException {
        XYChart c = xy(String.format(Locale.ROOT, "(a) ingestion vs rows, budget %s", BenchOptions.size(o.budget)),
                "rows (millions)", "rows/s");
        int series = 0;
        for (int t : o.threads) {
            for (String impl : o.impls) {
                List<Double> x = new ArrayList<>();
                List<Double> y = new ArrayList<>();
                for (int rows : o.rows) {
                    Optional<Point> p = BenchReport.find(plan, impl, "plain", rows, t, o.budget).filter(Point::ok);
                    if (p.isPresent()) {
                        x.add(rows / 1e6);
                        y.add(p.get().value("rows_per_s"));
                    }
                }
                series += addSeries(c, label(impl, t), x, y);
            }
        }
        return series > 0 && save(c, dir.resolve("fig5a-throughput-vs-rows.png"));
    }

    private static boolean fig5b(Path dir, List<Point> plan, BenchOptions o) throws IOException {
        XYChart c = xy(String.format(Locale.ROOT, "(b) ingestion vs RAM budget, %s rows (missing point = failed)",
                BenchOptions.count(o.fixedRows)), "RAM budget (GiB)", "rows/s");
        int series = 0;
        for (int t : o.threads) {
            for (String impl : o.impls) {
                List<Double> x = new ArrayList<>();
                List<Double> y = new ArrayList<>();
                for (long b : o.budgets) {
                    Optional<Point> p = BenchReport.find(plan, impl, "plain", o.fixedRows, t, b).filter(Point::ok);
                    if (p.isPresent()) {
                        x.add(b / (double) BenchOptions.GIB);
                        y.add(p.get().value("rows_per_s"));
                    }
                }
                series += addSeries(c, label(impl, t), x, y);
            }
        }
        return series > 0 && save(c, dir.resolve("fig5b-throughput-vs-budget.png"));
    }

    private static boolean fig5c(Path dir, List<Point> plan, BenchOptions o) throws IOException {
        CategoryChart c = new CategoryChartBuilder().width(900).height(540)
                .title("(c) memory beyond the raw data, % of raw (" + BenchReport.rawRowBytes(o.dims, o.extraMetrics)
                        + "-byte rows)")
                .xAxisTitle("rows").yAxisTitle("overhead, % of raw data").build();
        style(c.getStyler());
        c.getStyler().setYAxisMin(0.0);
        int series = 0;
        for (String impl : o.impls) {
            List<String> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            for (int rows : o.rows) {
                Optional<Point> p = BenchReport.find(plan, impl, "plain", rows, o.threads[0], o.budget).filter(Point::ok);
                if (p.isPresent()) {
                    x.add(BenchOptions.count(rows));
                    y.add(p.get().value("overhead_pct"));
                }
            }
            if (!x.isEmpty()) {
                c.addSeries(impl.equals("oak") ? "Oak" : "legacy (skiplist)", x, y);
                series++;
            }
        }
        return series > 0 && save(c, dir.resolve("fig5c-memory-overhead.png"));
    }

    private static boolean rollup(Path dir, List<Point> plan, BenchOptions o) throws IOException {
        CategoryChart c = new CategoryChartBuilder().width(900).height(540)
                .title("rollup ingestion with HLL + KLL sketches, " + BenchOptions.count(o.rollupRows) + " rows")
                .xAxisTitle("input, threads").yAxisTitle("rows/s").build();
        style(c.getStyler());
        c.getStyler().setYAxisMin(0.0);
        c.getStyler().setYAxisDecimalPattern("#,##0");
        int series = 0;
        for (String impl : o.impls) {
            List<String> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            for (String mode : List.of("rollup-dense", "rollup-sparse")) {
                for (int t : o.threads) {
                    x.add(mode.substring(7) + ", " + t + "t");
                    y.add(BenchReport.find(plan, impl, mode, o.rollupRows, t, o.rollupBudget).filter(Point::ok)
                            .map(p -> p.value("rows_per_s")).orElse(0.0));
                }
            }
            c.addSeries(impl.equals("oak") ? "Oak" : "legacy (skiplist)", x, y);
            series++;
        }
        return series > 0 && save(c, dir.resolve("rollup-throughput.png"));
    }

    private static XYChart xy(String title, String xTitle, String yTitle) {
        XYChart c = new XYChartBuilder().width(900).height(540).title(title).xAxisTitle(xTitle).yAxisTitle(yTitle)
                .build();
        style(c.getStyler());
        c.getStyler().setYAxisMin(0.0);
        c.getStyler().setYAxisDecimalPattern("#,##0");
        c.getStyler().setMarkerSize(9);
        return c;
    }

    private static int addSeries(XYChart c, String name, List<Double> x, List<Double> y) {
        if (x.isEmpty()) {
            return 0;
        }
        c.addSeries(name, x, y);
        return 1;
    }

    private static String label(String impl, int threads) {
        return (impl.equals("oak") ? "Oak" : "legacy (skiplist)") + ", " + threads + " thread" + (threads == 1 ? "" : "s");
    }

    private static void style(Styler s) {
        s.setLegendPosition(Styler.LegendPosition.OutsideS);
        s.setChartBackgroundColor(java.awt.Color.WHITE);
        s.setChartTitleFont(s.getChartTitleFont().deriveFont(15f));
    }

    private static boolean save(Chart<?, ?> chart, Path file) throws IOException {
        try (OutputStream os = Files.newOutputStream(file)) {
            BitmapEncoder.saveBitmap(chart, os, BitmapEncoder.BitmapFormat.PNG);
        }
        return true;
    }
}
