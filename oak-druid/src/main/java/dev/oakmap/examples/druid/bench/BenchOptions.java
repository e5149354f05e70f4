package dev.oakmap.examples.druid.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/** The benchmark's command line. */
final class BenchOptions {

    static final long MIB = 1L << 20;
    static final long GIB = 1L << 30;

    static final String USAGE = """
            Usage: bin/druid-bench [options]

            Ingestion benchmark of the Druid-style incremental index, Oak vs legacy (ConcurrentSkipListMap),
            after Figure 5 of the Oak paper. Every point runs in a fresh JVM whose RAM budget is split as:
            legacy: all of it as heap (-Xmx); Oak: --oak-heap (default: derived from the rows) as heap and
            the rest as the index's off-heap capacity.

              --rows LIST          Figure 5a: row counts at the fixed budget     (default 500k,1m,2m)
              --budget SIZE        Figure 5a: the fixed RAM budget               (default 2.5g)
              --fixed-rows N       Figure 5b: the fixed row count               (default: the largest of --rows)
              --budgets LIST       Figure 5b: RAM budgets                        (default 2.5g,1.5g,1.125g,1g,0.875g)
              --threads LIST       ingestion threads                             (default 1,2)
              --impls LIST         oak,legacy                                    (default both)
              --dims N             string dimensions of plain rows               (default 8)
              --extra-metrics N    extra double metrics per row (row width)      (default 24: 252-byte raw rows)
              --users N            distinct user ids                             (default 100k)
              --rollup-rows N      rows of the rollup points (dense: 3 dimensions, sparse: 4; minute
                                   buckets; HLL and KLL sketches), 0 to skip    (default 1m)
              --rollup-budget SIZE RAM budget of the rollup points               (default 3g)
              --oak-heap SIZE      heap of Oak's JVMs (default 160m + 80 bytes per row)
              --oak-chunk N        Oak chunk capacity                            (default 2048)
              --oak-ratio R        Oak rebalance ratio                           (default 0.25)
              --warmup-rows N      rows ingested into a throwaway index first    (default 200k)
              --timeout SECONDS    per point; a slower point is reported failed  (default 60)
              --seed N             generator seed                                (default 42)
              --out DIR            output directory                              (default oak-druid/bench-results)
              --preset NAME        quick: 100k,200k rows, 1 thread, small budgets (a smoke run)
              --dry-run            print the plan and exit
              --report-only        rebuild report.md and the charts from --out's results.csv and
                                   run.properties (pass the input options of the run, e.g. --dims)
              --help               this text
            Sizes take k/m/g suffixes (binary for bytes, decimal for rows: 1m rows = 1,000,000).
            """;

    List<Integer> rows = List.of(500_000, 1_000_000, 2_000_000);
    long budget = 5 * GIB / 2;
    int fixedRows;
    long[] budgets = {5 * GIB / 2, 3 * GIB / 2, 9 * GIB / 8, GIB, 7 * GIB / 8};
    int[] threads = {1, 2};
    List<String> impls = List.of("oak", "legacy");
    int dims = 8;
    int extraMetrics = 24;
    int users = 100_000;
    int rollupRows = 1_000_000;
    long rollupBudget = 3 * GIB;
    long oakHeap;
    int oakChunk = 2048;
    double oakRatio = 0.25;
    int warmupRows = 200_000;
    int timeoutSeconds = 60;
    long seed = 42;
    Path out = Path.of("oak-druid", "bench-results");
    boolean dryRun;
    boolean reportOnly;

    static BenchOptions parse(String[] args) {
        BenchOptions o = new BenchOptions();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--dry-run") || a.equals("--report-only")) {
                o.dryRun |= a.equals("--dry-run");
                o.reportOnly |= a.equals("--report-only");
                continue;
            }
            if (!a.startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --option value, got '" + a + "'");
            }
            o.set(a.substring(2), args[++i]);
        }
        // values that cannot measure anything are refused here: a point with 0 threads ingested
        // nothing and reported millions of rows/s, a timeout of 0 failed every point as "GC
        // thrashing", and the rest failed only in the child JVMs, one point after another
        if (o.rows.isEmpty()) {
            throw new IllegalArgumentException("--rows needs at least one row count");
        }
        for (int n : o.rows) {
            positive("--rows", n);
        }
        if (o.fixedRows == 0) {
            o.fixedRows = o.rows.stream().mapToInt(Integer::intValue).max().orElse(0);
        }
        positive("--budget", o.budget);
        for (long b : o.budgets) {
            positive("--budgets", b);
        }
        positive("--rollup-budget", o.rollupBudget);
        for (int t : o.threads) {
            positive("--threads", t);
        }
        positive("--dims", o.dims);
        positive("--extra-metrics", o.extraMetrics + 1L);
        positive("--users", o.users);
        positive("--timeout", o.timeoutSeconds);
        for (String impl : o.impls) {
            if (!impl.equals("oak") && !impl.equals("legacy")) {
                throw new IllegalArgumentException("unknown implementation '" + impl + "' (oak, legacy)");
            }
        }
        return o;
    }

    private static void positive(String option, long value) {
        if (value <= 0) {
            throw new IllegalArgumentException(option + " must be positive"
                    + (option.equals("--extra-metrics") ? " or 0: " + (value - 1) : ": " + value));
        }
    }

    private void set(String name, String v) {
        switch (name) {
            case "rows" -> rows = Arrays.stream(v.split(",")).map(BenchOptions::parseCount).toList();
            case "budget" -> budget = parseSize(v);
            case "fixed-rows" -> fixedRows = parseCount(v);
            case "budgets" -> budgets = Arrays.stream(v.split(",")).mapToLong(BenchOptions::parseSize).toArray();
            case "threads" -> threads = Arrays.stream(v.split(",")).mapToInt(Integer::parseInt).toArray();
            case "impls" -> impls = List.of(v.split(","));
            case "dims" -> dims = Integer.parseInt(v);
            case "extra-metrics" -> extraMetrics = Integer.parseInt(v);
            case "users" -> users = parseCount(v);
            case "rollup-rows" -> rollupRows = parseCount(v);
            case "rollup-budget" -> rollupBudget = parseSize(v);
            case "oak-heap" -> oakHeap = parseSize(v);
            case "oak-chunk" -> oakChunk = Integer.parseInt(v);
            case "oak-ratio" -> oakRatio = Double.parseDouble(v);
            case "warmup-rows" -> warmupRows = parseCount(v);
            case "timeout" -> timeoutSeconds = Integer.parseInt(v);
            case "seed" -> seed = Long.parseLong(v);
            case "out" -> out = Path.of(v);
            case "preset" -> preset(v);
            default -> throw new IllegalArgumentException("unknown option --" + name);
        }
    }

    private void preset(String name) {
        if (!name.equals("quick")) {
            throw new IllegalArgumentException("unknown preset '" + name + "' (quick)");
        }
        rows = List.of(100_000, 200_000);
        budget = 768 * MIB;
        budgets = new long[]{768 * MIB, 384 * MIB};
        threads = new int[]{1};
        rollupRows = 50_000;
        rollupBudget = 768 * MIB;
        warmupRows = 20_000;
        timeoutSeconds = 60;
    }

    /** The heap an Oak JVM gets for {@code rowCount} rows. */
    long oakHeapFor(int rowCount) {
        return oakHeap > 0 ? oakHeap : roundUp(160 * MIB + 80L * rowCount, 16 * MIB);
    }

    /** @return the child's options that describe the input and the Oak map */
    List<String> inputArgs(int dimensions, int extras) {
        return new ArrayList<>(List.of("--dims", Integer.toString(dimensions), "--extra-metrics",
                Integer.toString(extras), "--users", Integer.toString(users), "--seed", Long.toString(seed),
                "--warmup-rows", Integer.toString(warmupRows), "--oak-chunk", Integer.toString(oakChunk),
                "--oak-ratio", Double.toString(oakRatio)));
    }

    static int parseCount(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT).replace("_", "");
        double mul = 1;
        if (t.endsWith("k")) {
            mul = 1e3;
        } else if (t.endsWith("m")) {
            mul = 1e6;
        }
        if (mul != 1) {
            t = t.substring(0, t.length() - 1);
        }
        double v = Double.parseDouble(t) * mul;
        if (v < 0 || v > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("count out of range: " + s);
        }
        return (int) Math.round(v);
    }

    static long parseSize(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        long mul = 1;
        if (t.endsWith("b")) {
            t = t.substring(0, t.length() - 1);
        }
        if (t.endsWith("k")) {
            mul = 1L << 10;
        } else if (t.endsWith("m")) {
            mul = MIB;
        } else if (t.endsWith("g")) {
            mul = GIB;
        }
        if (mul != 1) {
            t = t.substring(0, t.length() - 1);
        }
        return (long) (Double.parseDouble(t) * mul);
    }

    static long roundUp(long v, long unit) {
        return (v + unit - 1) / unit * unit;
    }

    static String size(long bytes) {
        return bytes >= GIB ? String.format(Locale.ROOT, "%.2f GiB", bytes / (double) GIB)
                : String.format(Locale.ROOT, "%.0f MiB", bytes / (double) MIB);
    }

    static String count(long n) {
        return n >= 1_000_000 && n % 100_000 == 0 ? String.format(Locale.ROOT, "%.1fM", n / 1e6).replace(".0M", "M")
                : n >= 1000 && n % 1000 == 0 ? (n / 1000) + "k" : Long.toString(n);
    }
}
