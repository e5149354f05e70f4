package dev.oakmap.bench.somar;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The Nova thesis's SOMAR experiments (Chapter 4, §4.2: Figure 4.1(a)-(f) and Table 4.1), scaled to
 * this machine: the {@link LinkedListMap} ("LL-map", keys and values off-heap) and a
 * {@code ConcurrentSkipListMap} with on-heap keys and off-heap values ("CSLM"), each under every
 * SOMAR scheme (Nova, EBR, Hazard Eras, lock-based, grow-only) and as an all-on-heap baseline
 * managed by the garbage collector ("heap"), on the write-heavy (50% put, 50% remove), read-heavy
 * (5/5/90 get) and read-write (25/25/50) workloads, for each thread count.
 *
 * <p>Each point runs in a fresh JVM (the harness's convention, {@code --fork true}): fill the
 * structure, measure memory (heap in use after full GCs, off-heap bytes in use), run the workload
 * for the warm-up time (discarded) and the measured time, measure memory again. With
 * {@code --fork false} all points share this JVM (each with its own warm-up): faster, but JIT and
 * GC state carry over from point to point, so use it for smoke runs only.
 *
 * <p>Output, in {@code --out} (default {@code oak-bench/bench-results/somar/<timestamp>}):
 * {@code results.csv} (one row per point), {@code report.md} (throughput tables and the memory
 * table), and one PNG per structure and workload (throughput against threads, one line per scheme).
 *
 * <p>Run it with {@code bin/somar-bench}; {@code bin/somar-bench --help} lists the options.
 */
public final class SomarBench {

    static final String RESULT_PREFIX = "SOMAR-RESULT ";
    static final List<String> ALL_SCHEMES = List.of("nova", "ebr", "he", "lock", "grow-only", "heap");
    /** The structures the benchmark builds ({@link BenchTarget#create}). */
    static final List<String> ALL_STRUCTURES = List.of("ll", "cslm");

    private SomarBench() {
    }

    /** The command line. */
    static final class Options {
        List<String> structures = ALL_STRUCTURES;
        List<String> schemes = ALL_SCHEMES;
        List<SomarPoint.Mix> mixes = List.of(SomarPoint.Mix.values());
        int[] threads = {1, 2};
        int llEntries = 65_536;       // the thesis: ~65K entries, 512 B keys, 1 KB values
        int llKey = 512;
        int llValue = 1024;
        int cslmEntries = 1_000_000;  // the thesis: 10M entries in 14 GB; 1M here
        int cslmKey = 128;
        int cslmValue = 1024;
        double scale = 1;
        double warmup = 3;
        double duration = 10;          // the thesis: 30 s
        int reps = 1;
        boolean fork = true;
        String heap = "3g";
        long capacity = 8L << 30;
        long seed = 42;
        Path out;
        List<String> jvmArgs = new ArrayList<>();
        boolean child;
        String childStructure;
        String childScheme;
        SomarPoint.Mix childMix;
        int childThreads;
        int childRep;

        static final String HELP = """
                bin/somar-bench [options]: the Nova thesis's LL-map and CSLM experiments (Figure 4.1, Table 4.1)

                  --preset quick      small scale for a few minutes in all: LL-map 4,096 entries, CSLM
                                      100,000 entries, 0.5 s warm-up, 1.5 s measured, 1 GB heaps
                  --structures LIST   ll, cslm (default both)
                  --schemes LIST      nova, ebr, he, lock, grow-only, heap (default all; heap = on-heap, GC)
                  --workloads LIST    write-heavy, read-heavy, read-write (default all)
                  --threads LIST      worker thread counts (default 1,2)
                  --ll-entries N      initial LL-map entries (default 65536; key range is twice that)
                  --ll-key B --ll-value B          LL-map key and value sizes (default 512, 1024)
                  --cslm-entries N    initial CSLM entries (default 1000000)
                  --cslm-key B --cslm-value B      CSLM key and value sizes (default 128, 1024)
                  --scale F           divide both entry counts by F (default 1)
                  --warmup S          warm-up seconds per point, discarded (default 3)
                  --duration S        measured seconds per point (default 10; the thesis: 30)
                  --reps N            repetitions per point; the report shows the median (default 1)
                  --fork true|false   a fresh JVM per point (default true)
                  --heap SIZE         -Xms/-Xmx of each point's JVM (default 3g)
                  --capacity SIZE     off-heap capacity of each SOMAR (default 8g; grow-only may use it up)
                  --jvm-args "ARGS"   extra flags for the points' JVMs
                  --seed N            (default 42)
                  --out DIR           (default oak-bench/bench-results/somar/<timestamp>)
                """;

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                if (a.equals("--help") || a.equals("-h")) {
                    System.out.print(HELP);
                    System.exit(0);
                }
                if (a.equals("--child")) {
                    o.child = true;
                    continue;
                }
                if (!a.startsWith("--") || i + 1 >= args.length) {
                    throw new IllegalArgumentException("expected --option value, got '" + a + "'\n" + HELP);
                }
                String v = args[++i];
                switch (a.substring(2)) {
                    case "preset" -> {
                        if (!v.equals("quick")) {
                            throw new IllegalArgumentException("unknown preset '" + v + "' (quick)");
                        }
                        o.llEntries = 4096;
                        o.cslmEntries = 100_000;
                        o.warmup = 0.5;
                        o.duration = 1.5;
                        o.heap = "1g";
                        o.capacity = 4L << 30;
                    }
                    case "structures", "structure" -> o.structures = list(v);
                    case "schemes", "scheme" -> o.schemes = v.equals("all") ? ALL_SCHEMES : list(v);
                    case "workloads", "workload" -> o.mixes = list(v).stream().map(SomarPoint.Mix::byId).toList();
                    case "threads" -> o.threads = list(v).stream().mapToInt(Integer::parseInt).toArray();
                    case "ll-entries" -> o.llEntries = Integer.parseInt(v);
                    case "ll-key" -> o.llKey = Integer.parseInt(v);
                    case "ll-value" -> o.llValue = Integer.parseInt(v);
                    case "cslm-entries" -> o.cslmEntries = Integer.parseInt(v);
                    case "cslm-key" -> o.cslmKey = Integer.parseInt(v);
                    case "cslm-value" -> o.cslmValue = Integer.parseInt(v);
                    case "scale" -> o.scale = Double.parseDouble(v);
                    case "warmup" -> o.warmup = Double.parseDouble(v);
                    case "duration" -> o.duration = Double.parseDouble(v);
                    case "reps" -> o.reps = Integer.parseInt(v);
                    case "fork" -> o.fork = Boolean.parseBoolean(v);
                    case "heap" -> o.heap = v;
                    case "capacity" -> o.capacity = bytes(v);
                    case "jvm-args" -> o.jvmArgs = v.isBlank() ? List.of() : Arrays.asList(v.trim().split("\\s+"));
                    case "seed" -> o.seed = Long.parseLong(v);
                    case "out" -> o.out = Path.of(v);
                    case "rep" -> o.childRep = Integer.parseInt(v);
                    default -> throw new IllegalArgumentException("unknown option " + a + "\n" + HELP);
                }
            }
            for (String s : o.structures) {
                if (!ALL_STRUCTURES.contains(s)) { // here, before any point runs: each child would fail on it
                    throw new IllegalArgumentException("unknown structure '" + s + "' (" + String.join(", ", ALL_STRUCTURES) + ")");
                }
            }
            for (String s : o.schemes) {
                if (!s.equals("heap")) {
                    SomarKind.byId(s); // validates
                }
            }
            if (o.child) {
                o.childStructure = o.structures.getFirst();
                o.childScheme = o.schemes.getFirst();
                o.childMix = o.mixes.getFirst();
                o.childThreads = o.threads[0];
            }
            if (o.out == null) {
                String ts = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
                Path base = Files.isDirectory(Path.of("oak-bench")) ? Path.of("oak-bench", "bench-results", "somar")
                        : Path.of("bench-results", "somar");
                o.out = base.resolve(ts);
            }
            return o;
        }

        int entries(String structure) {
            return (int) Math.max(16, Math.round((structure.equals("ll") ? llEntries : cslmEntries) / scale));
        }

        int keySize(String structure) {
            return structure.equals("ll") ? llKey : cslmKey;
        }

        int valueSize(String structure) {
            return structure.equals("ll") ? llValue : cslmValue;
        }

        SomarPoint.Spec spec(String structure, String scheme, SomarPoint.Mix mix, int t, int rep) {
            return new SomarPoint.Spec(structure, scheme, mix, t, entries(structure), keySize(structure),
                    valueSize(structure), warmup, duration, seed, rep, capacity);
        }

        /** The child's command line for one point (everything it needs, explicitly). */
        List<String> childArgs(SomarPoint.Spec s) {
            return List.of("--child", "true",
                    "--structure", s.structure(), "--scheme", s.scheme(), "--workload", s.mix().id,
                    "--threads", Integer.toString(s.threads()),
                    s.structure().equals("ll") ? "--ll-entries" : "--cslm-entries", Integer.toString(s.entries()),
                    s.structure().equals("ll") ? "--ll-key" : "--cslm-key", Integer.toString(s.keySize()),
                    s.structure().equals("ll") ? "--ll-value" : "--cslm-value", Integer.toString(s.valueSize()),
                    "--warmup", Double.toString(s.warmup()), "--duration", Double.toString(s.duration()),
                    "--seed", Long.toString(s.seed()), "--rep", Integer.toString(s.rep()),
                    "--capacity", Long.toString(s.capacity()));
        }

        private static List<String> list(String v) {
            List<String> out = new ArrayList<>();
            for (String s : v.split(",")) {
                if (!s.isBlank()) {
                    out.add(s.trim().toLowerCase(Locale.ROOT));
                }
            }
            return out;
        }

        static long bytes(String v) {
            String s = v.trim().toLowerCase(Locale.ROOT);
            long mul = 1;
            char last = s.charAt(s.length() - 1);
            if (last == 'k' || last == 'm' || last == 'g') {
                mul = last == 'k' ? 1L << 10 : last == 'm' ? 1L << 20 : 1L << 30;
                s = s.substring(0, s.length() - 1);
            }
            return (long) (Double.parseDouble(s) * mul);
        }
    }

    public static void main(String[] args) throws Exception {
        // "--child true" is passed as a pair so that the parser stays uniform
        List<String> a = new ArrayList<>(Arrays.asList(args));
        int c = a.indexOf("--child");
        if (c >= 0 && c + 1 < a.size() && a.get(c + 1).equals("true")) {
            a.remove(c + 1);
        }
        Options o = Options.parse(a.toArray(new String[0]));
        if (o.child) {
            childMain(o);
            return;
        }
        run(o);
    }

    private static void childMain(Options o) throws InterruptedException {
        SomarPoint.Spec s = o.spec(o.childStructure, o.childScheme, o.childMix, o.childThreads, o.childRep);
        Map<String, String> r = SomarPoint.run(s, System.out);
        for (Map.Entry<String, String> e : r.entrySet()) {
            System.out.println(RESULT_PREFIX + e.getKey() + "=" + e.getValue());
        }
        System.out.flush();
    }

    private static void run(Options o) throws Exception {
        Files.createDirectories(o.out.resolve("logs"));
        PrintStream log = System.out;
        String loadBefore = loadAverage();
        List<Map<String, String>> rows = new ArrayList<>();
        int total = o.structures.size() * o.mixes.size() * o.threads.length * o.schemes.size() * o.reps;
        int n = 0;
        long start = System.nanoTime();
        for (String structure : o.structures) {
            for (SomarPoint.Mix mix : o.mixes) {
                for (int t : o.threads) {
                    for (int rep = 0; rep < o.reps; rep++) {
                        for (String scheme : o.schemes) { // schemes interleaved: drift hits them alike
                            n++;
                            SomarPoint.Spec s = o.spec(structure, scheme, mix, t, rep);
                            String name = String.format(Locale.ROOT, "%s-%s-%s-t%d-r%d", structure, scheme, mix.id, t, rep);
                            log.printf(Locale.ROOT, "[%d/%d] %s ... ", n, total, name);
                            Map<String, String> row = new LinkedHashMap<>();
                            row.put("structure", structure);
                            row.put("scheme", scheme);
                            row.put("workload", mix.id);
                            row.put("threads", Integer.toString(t));
                            row.put("rep", Integer.toString(rep));
                            row.put("entries", Integer.toString(s.entries()));
                            row.put("key_range", Integer.toString(s.range()));
                            row.put("key_size", Integer.toString(s.keySize()));
                            row.put("value_size", Integer.toString(s.valueSize()));
                            row.put("warmup_s", Double.toString(s.warmup()));
                            row.put("duration_s", Double.toString(s.duration()));
                            Map<String, String> measured;
                            if (o.fork) {
                                measured = fork(o, s, o.out.resolve("logs").resolve(name + ".log"));
                            } else {
                                try (PrintStream pointLog = new PrintStream(Files.newOutputStream(
                                        o.out.resolve("logs").resolve(name + ".log")), true, StandardCharsets.UTF_8)) {
                                    measured = SomarPoint.run(s, pointLog);
                                } catch (Exception | OutOfMemoryError e) {
                                    measured = new LinkedHashMap<>();
                                    measured.put("error", String.valueOf(e));
                                }
                            }
                            row.putAll(measured);
                            rows.add(row);
                            log.println(row.containsKey("error") ? "error: " + row.get("error")
                                    : String.format(Locale.ROOT, "%,.0f ops/s", Double.parseDouble(row.get("ops_per_s"))));
                        }
                    }
                }
            }
        }
        double minutes = (System.nanoTime() - start) / 60e9;
        writeCsv(o.out.resolve("results.csv"), rows);
        List<String> charts = charts(o, rows);
        writeReport(o, rows, charts, loadBefore, loadAverage(), minutes, String.join(" ", argsForReport(o)));
        log.printf(Locale.ROOT, "done in %.1f min: %s%n", minutes, o.out.resolve("report.md"));
    }

    private static Map<String, String> fork(Options o, SomarPoint.Spec s, Path logFile)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xms" + o.heap);
        cmd.add("-Xmx" + o.heap);
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-Djava.awt.headless=true");
        cmd.addAll(o.jvmArgs);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(SomarBench.class.getName());
        cmd.addAll(o.childArgs(s));
        Files.writeString(logFile, String.join(" ", cmd) + "\n", StandardCharsets.UTF_8);
        Process proc = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile())).start();
        double limit = 120 + 3 * (s.warmup() + s.duration()) + s.entries() / 5_000.0;
        Map<String, String> r = new LinkedHashMap<>();
        if (!proc.waitFor((long) limit, TimeUnit.SECONDS)) {
            proc.destroyForcibly();
            proc.waitFor();
            r.put("error", "timed out after " + (long) limit + " s");
            return r;
        }
        String last = "";
        for (String line : Files.readAllLines(logFile, StandardCharsets.UTF_8)) {
            if (line.startsWith(RESULT_PREFIX)) {
                String kv = line.substring(RESULT_PREFIX.length());
                int eq = kv.indexOf('=');
                r.put(kv.substring(0, eq), kv.substring(eq + 1));
            } else if (!line.isBlank()) {
                last = line;
            }
        }
        if (proc.exitValue() != 0 || !r.containsKey("ops_per_s")) {
            r.put("error", "child JVM exited with " + proc.exitValue() + ": " + last);
        }
        return r;
    }

    // ---------------------------------------------------------------- reports

    private static final List<String> COLUMNS = List.of("structure", "scheme", "workload", "threads", "rep",
            "entries", "key_range", "key_size", "value_size", "warmup_s", "duration_s", "entries_init", "ops",
            "seconds", "ops_per_s", "gc_count", "gc_ms", "size_after", "heap_baseline_bytes", "heap_after_init_bytes",
            "offheap_after_init_bytes", "heap_after_run_bytes", "offheap_used_after_run_bytes",
            "offheap_reserved_after_run_bytes", "error");

    private static void writeCsv(Path file, List<Map<String, String>> rows) throws IOException {
        StringBuilder sb = new StringBuilder(String.join(",", COLUMNS)).append('\n');
        for (Map<String, String> r : rows) {
            List<String> cells = new ArrayList<>();
            for (String c : COLUMNS) {
                String v = r.getOrDefault(c, "");
                cells.add(v.contains(",") || v.contains("\"") ? "\"" + v.replace("\"", "\"\"") + "\"" : v);
            }
            sb.append(String.join(",", cells)).append('\n');
        }
        Files.writeString(file, sb.toString(), StandardCharsets.UTF_8);
    }

    /** @return the median of {@code column} over the reps of a point, or NaN */
    private static double median(List<Map<String, String>> rows, String structure, String scheme, String mix,
                                 int threads, String column) {
        List<Double> v = new ArrayList<>();
        for (Map<String, String> r : rows) {
            if (r.get("structure").equals(structure) && r.get("scheme").equals(scheme) && r.get("workload").equals(mix)
                    && r.get("threads").equals(Integer.toString(threads)) && !r.containsKey("error")
                    && r.get(column) != null) {
                v.add(Double.parseDouble(r.get(column)));
            }
        }
        if (v.isEmpty()) {
            return Double.NaN;
        }
        v.sort(null);
        int m = v.size() / 2;
        return v.size() % 2 == 1 ? v.get(m) : (v.get(m - 1) + v.get(m)) / 2;
    }

    private static String title(String structure) {
        return structure.equals("ll") ? "LL-map" : "CSLM";
    }

    private static List<String> charts(Options o, List<Map<String, String>> rows) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<String> files = new ArrayList<>();
        for (String structure : o.structures) {
            for (SomarPoint.Mix mix : o.mixes) {
                XYChart chart = new XYChartBuilder().width(800).height(520)
                        .title(String.format(Locale.ROOT, "%s, %s (%s): throughput vs threads", title(structure), mix.id,
                                mix.describe()))
                        .xAxisTitle("worker threads").yAxisTitle("Mops/s").build();
                chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
                chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
                chart.getStyler().setYAxisMin(0.0);
                chart.getStyler().setXAxisDecimalPattern("0");
                chart.getStyler().setYAxisDecimalPattern("0.###");
                chart.getStyler().setMarkerSize(9);
                int series = 0;
                for (String scheme : o.schemes) {
                    List<Double> x = new ArrayList<>();
                    List<Double> y = new ArrayList<>();
                    for (int t : o.threads) {
                        double v = median(rows, structure, scheme, mix.id, t, "ops_per_s");
                        if (!Double.isNaN(v)) {
                            x.add((double) t);
                            y.add(v / 1e6);
                        }
                    }
                    if (!x.isEmpty()) {
                        chart.addSeries(scheme, x, y);
                        series++;
                    }
                }
                if (series > 0) {
                    String file = "throughput-" + structure + "-" + mix.id + ".png";
                    try (OutputStream os = Files.newOutputStream(o.out.resolve(file))) {
                        BitmapEncoder.saveBitmap(chart, os, BitmapEncoder.BitmapFormat.PNG);
                    }
                    files.add(file);
                }
            }
        }
        return files;
    }

    private static void writeReport(Options o, List<Map<String, String>> rows, List<String> charts, String loadBefore,
                                    String loadAfter, double minutes, String command) throws IOException {
        StringBuilder md = new StringBuilder();
        md.append("# SOMAR experiments (Nova thesis, Figure 4.1 and Table 4.1), scaled to this machine\n\n");
        md.append("Command: `bin/somar-bench ").append(command).append("`  \n");
        md.append(String.format(Locale.ROOT, "Machine: %d CPUs, %s %s, JDK %s; load average %s before, %s after; "
                        + "%.1f minutes.  %n", Runtime.getRuntime().availableProcessors(), System.getProperty("os.name"),
                System.getProperty("os.arch"), System.getProperty("java.runtime.version"), loadBefore, loadAfter, minutes));
        md.append(String.format(Locale.ROOT, "Each point: %s, heap %s, %.1f s warm-up (discarded), %.1f s measured, "
                        + "%d rep(s) (median shown), seed %d.%n%n",
                o.fork ? "a fresh JVM" : "in the same JVM as the others (--fork false: smoke run only)",
                o.heap, o.warmup, o.duration, o.reps, o.seed));
        md.append("Schemes: `nova`, `ebr` (epoch-based), `he` (Hazard Eras), `lock` (lock-based) and `grow-only` are "
                + "SOMAR implementations over the same allocator; `heap` keeps keys and values as byte[] on the heap "
                + "(the garbage collector's baseline). EBR and HE protect each SOMAR call (the thesis's \"SOMAR "
                + "approach\"); safe pointers are longs for every scheme in the LL-map, boxed Longs in the CSLM.\n\n");
        for (String structure : o.structures) {
            int entries = o.entries(structure);
            md.append("## ").append(title(structure)).append(String.format(Locale.ROOT,
                    ": %,d initial entries, key range %,d, %d B keys, %d B values%n%n", entries, 2 * entries,
                    o.keySize(structure), o.valueSize(structure)));
            md.append(structure.equals("ll")
                    ? "A Harris-Michael list with on-heap nodes holding safe pointers to off-heap keys and values "
                    + "(`LinkedListMap`; `heap`: `HeapLinkedListMap`). A put of a present key overwrites the value "
                    + "slice in place.\n\n"
                    : "`ConcurrentSkipListMap<byte[], Long>`: keys on-heap, each value an off-heap slice (`heap`: "
                    + "`ConcurrentSkipListMap<byte[], byte[]>`). Every put allocates a new slice (privatized "
                    + "write) and deletes the old one.\n\n");
            md.append("Throughput, Mops/s:\n\n| scheme |");
            StringBuilder sep = new StringBuilder("|---|");
            for (SomarPoint.Mix mix : o.mixes) {
                for (int t : o.threads) {
                    md.append(' ').append(mix.id).append(", ").append(t).append(t == 1 ? " thread |" : " threads |");
                    sep.append("---:|");
                }
            }
            md.append('\n').append(sep).append('\n');
            for (String scheme : o.schemes) {
                md.append("| ").append(scheme).append(" |");
                for (SomarPoint.Mix mix : o.mixes) {
                    for (int t : o.threads) {
                        double v = median(rows, structure, scheme, mix.id, t, "ops_per_s");
                        md.append(Double.isNaN(v) ? " - |" : String.format(Locale.ROOT, " %.4f |", v / 1e6));
                    }
                }
                md.append('\n');
            }
            if (o.schemes.contains("nova")) {
                md.append("\nRelative to Nova (same column):\n\n| scheme |");
                for (SomarPoint.Mix mix : o.mixes) {
                    for (int t : o.threads) {
                        md.append(' ').append(mix.id).append(", ").append(t).append(" |");
                    }
                }
                md.append('\n').append(sep).append('\n');
                for (String scheme : o.schemes) {
                    md.append("| ").append(scheme).append(" |");
                    for (SomarPoint.Mix mix : o.mixes) {
                        for (int t : o.threads) {
                            double v = median(rows, structure, scheme, mix.id, t, "ops_per_s");
                            double nova = median(rows, structure, "nova", mix.id, t, "ops_per_s");
                            md.append(Double.isNaN(v) || Double.isNaN(nova) ? " - |"
                                    : String.format(Locale.ROOT, " %.2f |", v / nova));
                        }
                    }
                    md.append('\n');
                }
            }
            // Table 4.1: memory, read-write workload, the most threads
            String mixId = o.mixes.contains(SomarPoint.Mix.READ_WRITE) ? SomarPoint.Mix.READ_WRITE.id
                    : o.mixes.getLast().id;
            int t = Arrays.stream(o.threads).max().orElse(1);
            md.append(String.format(Locale.ROOT, "%nMemory (Table 4.1), %s workload, %d threads, MB: heap in use after "
                    + "full GCs (the whole JVM heap, baseline included), off-heap bytes in use (live slices and "
                    + "slices deleted but not yet reusable):%n%n", mixId, t));
            md.append("| scheme | heap baseline | heap after fill | off-heap after fill | heap after run | "
                    + "off-heap after run | total after run | GCs during run (ms) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
            for (String scheme : o.schemes) {
                double base = median(rows, structure, scheme, mixId, t, "heap_baseline_bytes");
                double hi = median(rows, structure, scheme, mixId, t, "heap_after_init_bytes");
                double oi = median(rows, structure, scheme, mixId, t, "offheap_after_init_bytes");
                double hr = median(rows, structure, scheme, mixId, t, "heap_after_run_bytes");
                double or = median(rows, structure, scheme, mixId, t, "offheap_used_after_run_bytes");
                double gcs = median(rows, structure, scheme, mixId, t, "gc_count");
                double gcms = median(rows, structure, scheme, mixId, t, "gc_ms");
                md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s |%n", scheme, mb(base),
                        mb(hi), mb(oi), mb(hr), mb(or), mb(hr + or),
                        Double.isNaN(gcs) ? "-" : String.format(Locale.ROOT, "%.0f (%.0f)", gcs, gcms)));
            }
            md.append('\n');
            for (String c : charts) {
                if (c.startsWith("throughput-" + structure + "-")) {
                    md.append("![").append(c).append("](").append(c).append(")\n");
                }
            }
            md.append('\n');
        }
        List<String> errors = new ArrayList<>();
        for (Map<String, String> r : rows) {
            if (r.containsKey("error")) {
                errors.add(String.format(Locale.ROOT, "- %s %s %s %s threads: %s", r.get("structure"), r.get("scheme"),
                        r.get("workload"), r.get("threads"), r.get("error")));
            }
        }
        if (!errors.isEmpty()) {
            md.append("## Points that failed\n\n").append(String.join("\n", errors)).append("\n\n");
        }
        md.append("Raw data: `results.csv`; per-point logs: `logs/`.\n");
        Files.writeString(o.out.resolve("report.md"), md.toString(), StandardCharsets.UTF_8);
    }

    private static String mb(double bytes) {
        return Double.isNaN(bytes) ? "-" : String.format(Locale.ROOT, "%.1f", bytes / (1 << 20));
    }

    private static String loadAverage() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        double l = os.getSystemLoadAverage();
        return l < 0 ? "n/a" : String.format(Locale.ROOT, "%.2f", l);
    }

    private static List<String> argsForReport(Options o) {
        List<String> a = new ArrayList<>();
        a.add("--structures " + String.join(",", o.structures));
        a.add("--schemes " + String.join(",", o.schemes));
        a.add("--workloads " + String.join(",", o.mixes.stream().map(m -> m.id).toList()));
        a.add("--threads " + String.join(",", Arrays.stream(o.threads).mapToObj(Integer::toString).toList()));
        a.add("--ll-entries " + o.entries("ll") + " --cslm-entries " + o.entries("cslm"));
        a.add("--warmup " + o.warmup + " --duration " + o.duration + " --reps " + o.reps);
        a.add("--fork " + o.fork + " --heap " + o.heap + " --seed " + o.seed);
        return new ArrayList<>(new LinkedHashSet<>(a));
    }
}
