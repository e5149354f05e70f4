package dev.oakmap.bench.harness;

import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The harness's settings: command-line parsing, presets, and the RAM budget of each map.
 *
 * <p>Options take a value as {@code --name value} or {@code --name=value}. A preset sets defaults;
 * options given explicitly override them, in any order.
 */
final class Options {

    static final long MIB = 1L << 20;
    static final long GIB = 1L << 30;

    /** Keys of the paper preset's range at scale 1 (so 1M pairs after the ingestion stage). */
    static final int PAPER_KEYS_PER_SCALE = 2_000_000;

    String preset = "";
    List<MapKind> maps = MapKind.ALL;
    List<Workload> workloads = List.of(Workload.values());
    int[] threads = {1, 2};
    int keys = 100_000;
    int keySize = 100;
    int valueSize = 1000;
    double duration = 2;
    double warmup = 1;
    int reps = 1;
    String distribution = "uniform";
    double zipfTheta = 0.99;
    long ram;      // 0: derived
    long heap;     // 0: derived
    long offheap;  // 0: derived
    Path out;
    int scan = 10_000;
    long seed = 42;
    boolean fork = true;
    List<String> jvmArgs = List.of();
    double scale;  // 0: automatic (paper preset)
    boolean dryRun;
    /** Set by the parent in a child's arguments: run one point and print its result. */
    boolean child;
    int rep;

    private final Map<String, String> given = new LinkedHashMap<>();

    static final String USAGE = """
            usage: bin/bench [--preset quick|paper] [options]
              --map LIST          maps to compare: all | oak-zc,oak-legacy,cslm (default all)
              --workload LIST     all | %s (default all)
              --threads LIST      worker thread counts, e.g. 1,2 (default 1,2)
              --keys N            key range; the ingestion stage maps 50%% of it (default 100000)
              --key-size B        key bytes (default 100)       --value-size B   value bytes (default 1000)
              --duration S        measured seconds per run (default 2)
              --warmup S          discarded warm-up seconds before it (default 1)
              --reps N            runs per point, each in a fresh JVM; median and min/max reported (default 1)
              --distribution D    uniform | zipf (default uniform)   --zipf-theta T (default 0.99)
              --scan N            pairs per scan (default 10000)
              --ram SIZE          RAM budget per run, the same for every map: on-heap maps get it all as heap,
                                  off-heap maps get --offheap off-heap and the rest as heap (default: derived)
              --offheap SIZE      off-heap capacity of off-heap maps (default: 1.25 x the range's raw data + 64m)
              --heap SIZE         fixed -Xmx for every map instead of a shared --ram budget
              --jvm-args "ARGS"   extra flags for the child JVMs, e.g. "-XX:+UseTransparentHugePages"
              --scale F           paper preset: key range = F x 2M (default: the largest that fits half the RAM)
              --out DIR           output directory (default bench-results/<timestamp>)
              --seed N            (default 42)      --fork true|false (default true: a fresh JVM per run)
              --dry-run           print the plan and the budgets, run nothing
            presets: quick = every workload and map, 100K keys, 1.5 s runs after 1 s warm-up, 1 rep (a few minutes)
                     paper = every workload and map, 2M x scale keys, 30 s runs after 10 s warm-up, 5 reps
            SIZE: bytes, or with a k/m/g suffix (e.g. 6g)
            memory per pair is measured after the ingestion stage of every run; for that alone, run
            --workload ingest --threads 1
            """.formatted(String.join(" | ", Workload.ids()));

    /** Parses {@code args}; throws IllegalArgumentException with a message on bad input. */
    static Options parse(String[] args) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + a + "' (try --help)");
            }
            String name;
            String value;
            int eq = a.indexOf('=');
            if (eq >= 0) {
                name = a.substring(2, eq);
                value = a.substring(eq + 1);
            } else {
                name = a.substring(2);
                if (name.equals("dry-run") || name.equals("child") || name.equals("help")) {
                    value = "true";
                } else if (i + 1 < args.length) {
                    value = args[++i];
                } else {
                    throw new IllegalArgumentException("option --" + name + " needs a value");
                }
            }
            m.put(name, value);
        }
        Options o = new Options();
        if (m.containsKey("preset")) {
            o.applyPreset(m.get("preset"));
        }
        for (Map.Entry<String, String> e : m.entrySet()) {
            o.set(e.getKey(), e.getValue());
        }
        if (o.preset.equals("paper") && !m.containsKey("keys")) {
            if (o.scale <= 0) {
                o.scale = autoScale(o);
            }
            o.keys = (int) Math.round(PAPER_KEYS_PER_SCALE * o.scale);
        }
        o.validate();
        if (o.out == null) {
            o.out = Path.of("bench-results",
                    LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        }
        return o;
    }

    private void applyPreset(String name) {
        switch (name) {
            case "quick" -> {
                maps = MapKind.ALL;
                workloads = List.of(Workload.values());
                threads = defaultThreads();
                keys = 100_000;
                duration = 1.5;
                warmup = 1;
                reps = 1;
            }
            case "paper" -> {
                maps = MapKind.ALL;
                workloads = List.of(Workload.values());
                threads = defaultThreads();
                duration = 30;
                warmup = 10;
                reps = 5;
            }
            default -> throw new IllegalArgumentException("unknown preset '" + name + "' (quick, paper)");
        }
        preset = name;
    }

    /** 1 and every power of two up to the number of processors, plus that number. */
    private static int[] defaultThreads() {
        int n = Runtime.getRuntime().availableProcessors();
        List<Integer> t = new ArrayList<>();
        for (int i = 1; i < n; i *= 2) {
            t.add(i);
        }
        t.add(n);
        return t.stream().mapToInt(Integer::intValue).toArray();
    }

    private void set(String name, String v) {
        given.put(name, v);
        switch (name) {
            case "preset", "help" -> { }
            case "map", "maps" -> maps = v.trim().equalsIgnoreCase("all") ? MapKind.ALL
                    : Arrays.stream(v.split(",")).map(MapKind::byName).distinct().toList();
            case "workload", "workloads" -> workloads = v.trim().equalsIgnoreCase("all") ? List.of(Workload.values())
                    : Arrays.stream(v.split(",")).map(Workload::byId).distinct().toList();
            case "threads" -> threads = Arrays.stream(v.split(",")).mapToInt(s -> Integer.parseInt(s.trim()))
                    .distinct().toArray();
            case "keys" -> keys = (int) parseCount(v);
            case "key-size" -> keySize = Integer.parseInt(v.trim());
            case "value-size" -> valueSize = Integer.parseInt(v.trim());
            case "duration" -> duration = Double.parseDouble(v.trim());
            case "warmup" -> warmup = Double.parseDouble(v.trim());
            case "reps" -> reps = Integer.parseInt(v.trim());
            case "distribution" -> distribution = v.trim().toLowerCase(Locale.ROOT);
            case "zipf-theta" -> zipfTheta = Double.parseDouble(v.trim());
            case "ram" -> ram = parseSize(v);
            case "heap" -> heap = parseSize(v);
            case "offheap" -> offheap = parseSize(v);
            case "out" -> out = Path.of(v);
            case "scan" -> scan = Integer.parseInt(v.trim());
            case "seed" -> seed = Long.parseLong(v.trim());
            case "fork" -> fork = Boolean.parseBoolean(v.trim());
            case "jvm-args" -> jvmArgs = v.isBlank() ? List.of() : List.of(v.trim().split("\\s+"));
            case "scale" -> scale = Double.parseDouble(v.trim());
            case "dry-run" -> dryRun = Boolean.parseBoolean(v.trim());
            case "child" -> child = Boolean.parseBoolean(v.trim());
            case "rep" -> rep = Integer.parseInt(v.trim());
            default -> throw new IllegalArgumentException("unknown option --" + name + " (try --help)");
        }
    }

    private void validate() {
        if (keys < 2 || keySize < 8 || valueSize < 8 || !(duration > 0) || warmup < 0 || reps < 1 || scan < 1
                || threads.length == 0 || Arrays.stream(threads).anyMatch(t -> t < 1) || maps.isEmpty()
                || workloads.isEmpty()) {
            throw new IllegalArgumentException("need keys >= 2, key-size >= 8, value-size >= 8, duration > 0, "
                    + "warmup >= 0, reps >= 1, scan >= 1, threads >= 1, and at least one map and workload");
        }
        if (!distribution.equals("uniform") && !distribution.equals("zipf")) {
            throw new IllegalArgumentException("distribution must be uniform or zipf: " + distribution);
        }
    }

    /** @return true if {@code name} was given on the command line (not just by a preset) */
    boolean isGiven(String name) {
        return given.containsKey(name);
    }

    // ------------------------------------------------------------------------------ budgets

    /** Raw bytes if every key of the range were mapped. */
    long fullRawBytes() {
        return (long) keys * (keySize + valueSize);
    }

    /** Pairs after the ingestion stage. */
    int ingestedPairs() {
        return keys / 2;
    }

    /** Off-heap capacity for off-heap maps: room for the whole range's raw data and headers (puts grow the map). */
    long offHeapCapacity() {
        return offheap > 0 ? offheap : roundUp((long) (fullRawBytes() * 1.25) + 64 * MIB, MIB);
    }

    /** The RAM budget of every map (heap + off-heap), when not fixed by --heap. */
    long ramBudget() {
        if (ram > 0) {
            return ram;
        }
        return roundUp(offHeapCapacity() + Math.max(GIB, (long) (fullRawBytes() * 0.75)), 64 * MIB);
    }

    /** What one child JVM gets: its -Xmx, and for an off-heap map its capacity and direct-memory limit. */
    record Budget(long heap, long offHeap, long maxDirect) {
    }

    Budget budget(MapKind kind) {
        long off = kind.offHeap() ? offHeapCapacity() : 0;
        long h;
        if (heap > 0 && ram <= 0) {
            h = heap;
        } else {
            h = kind.offHeap() ? ramBudget() - off : ramBudget();
        }
        if (h < 256 * MIB) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "the RAM budget %s leaves %s of heap to %s after %s off-heap; raise --ram or lower --offheap",
                    size(ramBudget()), size(h), kind.name(), size(off)));
        }
        // FFM native segments count against the direct-memory limit: leave room for block granularity
        long direct = kind.offHeap() ? off + 256 * MIB : 0;
        return new Budget(roundUp(h, MIB), off, direct);
    }

    private static double autoScale(Options o) {
        long mem = Machine.memTotalBytes();
        if (mem <= 0) {
            return 1;
        }
        double best = 1;
        for (double s = 1; s <= 10; s += 0.5) {
            Options t = new Options();
            t.keys = (int) Math.round(PAPER_KEYS_PER_SCALE * s);
            t.keySize = o.keySize;
            t.valueSize = o.valueSize;
            t.offheap = o.offheap;
            if (t.ramBudget() <= mem / 2) {
                best = s;
            }
        }
        return best;
    }

    // ------------------------------------------------------------------------------ child arguments

    /** The arguments of a child JVM that runs one point. */
    List<String> childArgs(MapKind map, Workload w, int t, int repetition) {
        Budget b = budget(map);
        List<String> a = new ArrayList<>(List.of("--child",
                "--map", map.name(), "--workload", w.id, "--threads", Integer.toString(t),
                "--keys", Integer.toString(keys), "--key-size", Integer.toString(keySize),
                "--value-size", Integer.toString(valueSize), "--duration", Double.toString(duration),
                "--warmup", Double.toString(warmup), "--distribution", distribution,
                "--zipf-theta", Double.toString(zipfTheta), "--scan", Integer.toString(scan),
                "--seed", Long.toString(seed), "--rep", Integer.toString(repetition)));
        if (b.offHeap() > 0) {
            a.add("--offheap");
            a.add(Long.toString(b.offHeap()));
        }
        return a;
    }

    // ------------------------------------------------------------------------------ sizes

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
        } else if (t.endsWith("t")) {
            mul = GIB << 10;
        }
        if (mul != 1) {
            t = t.substring(0, t.length() - 1);
        }
        return (long) (Double.parseDouble(t) * mul);
    }

    /** A count, with an optional k/m suffix (decimal) and underscores: 1m = 1,000,000. */
    static long parseCount(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT).replace("_", "");
        long mul = 1;
        if (t.endsWith("k")) {
            mul = 1000;
        } else if (t.endsWith("m")) {
            mul = 1_000_000;
        }
        if (mul != 1) {
            t = t.substring(0, t.length() - 1);
        }
        return (long) (Double.parseDouble(t) * mul);
    }

    static String size(long bytes) {
        if (bytes >= GIB) {
            return String.format(Locale.ROOT, "%.2f GiB", bytes / (double) GIB);
        }
        return String.format(Locale.ROOT, "%.0f MiB", bytes / (double) MIB);
    }

    /** As a -Xmx style argument, in MiB. */
    static String jvmSize(long bytes) {
        return (roundUp(bytes, MIB) / MIB) + "m";
    }

    static long roundUp(long v, long unit) {
        return (v + unit - 1) / unit * unit;
    }
}
