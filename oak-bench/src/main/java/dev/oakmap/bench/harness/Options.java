package dev.oakmap.bench.harness;

import java.nio.file.Files;
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
    List<MapKind> maps = MapKind.MAIN;
    List<Workload> workloads = List.of(Workload.values());
    int[] threads = {1, 2};
    int keys = 100_000;
    int keySize = 100;
    int valueSize = 1000;
    double duration = 2;
    double warmup = 1;
    int reps = 1;
    String distribution = "uniform";
    /** "random", or "ascending": keys follow their index's order, and ingestion runs in key order. */
    String keyOrder = "random";
    /** Leading bytes every key shares ({@code --key-head}). */
    int keyHead;
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
    /** RAM budgets of the capacity experiment (empty: derived). */
    long[] capacityRam = {};
    /** RAM budgets of the ingest-ram experiment (empty: derived from {@link #ramPairs()}). */
    long[] ingestRam = {};
    /** Pairs of the ingest-ram experiment (0: derived). */
    int ramPairs;
    /**
     * Share of a capacity run's RAM budget that off-heap maps get as heap, beyond {@link #BASE_HEAP};
     * 0: from each map's measured footprint ({@link #footprints}, see {@link #memoryBudget}).
     */
    double heapShare;
    /**
     * Measured heap and off-heap bytes per pair of off-heap maps at this invocation's key and value
     * sizes, set by the parent before capacity runs ({@link Bench#calibrate}).
     */
    final Map<MapKind, Footprint> footprints = new LinkedHashMap<>();
    /** Seconds without progress after which a memory experiment's ingestion counts as stalled. */
    double stall = 10;
    /** Set by the parent in a child's arguments: run one point and print its result. */
    boolean child;
    int rep;

    private final Map<String, String> given = new LinkedHashMap<>();

    static final String USAGE = """
            usage: bin/bench [--preset quick|paper|nova] [options]
              --map LIST          maps to compare: all | %s
                                  (default: oak-zc,oak-legacy,cslm,mapdb,cslm-offheap)
              --workload LIST     all | %s (default all)
              --threads LIST      worker thread counts, e.g. 1,2 (default 1,2)
              --keys N            key range; the ingestion stage maps 50%% of it (default 100000)
              --key-size B        key bytes (default 100)       --value-size B   value bytes (default 1000)
              --duration S        measured seconds per run (default 2)
              --warmup S          discarded warm-up seconds before it (default 1)
              --reps N            runs per point, each in a fresh JVM; median and min/max reported (default 1)
              --distribution D    uniform | zipf (default uniform)   --zipf-theta T (default 0.99)
              --key-order O       random | ascending: the ingestion stage inserts its keys in random order, or
                                  in key order, as time-ordered keys arrive (default random)
              --key-head B        leading bytes every key shares, as keys that start with a table or tenant
                                  name do (default 0)
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
            memory-budget experiments (workloads capacity and ingest-ram; one thread, one run per budget):
              --capacity-ram LIST RAM budgets of `capacity` (ingest until out of memory), e.g. 256m,512m
                                  (default 256m,512m; paper preset: 1g,2g,4g,8g up to half the RAM)
              --heap-share F      capacity runs: off-heap maps get 16m + this share of the budget as heap and
                                  the rest off-heap (default 0: the JVM's own heap + 4m, and 1.1 x the share
                                  of the map's footprint on the heap, both measured at this key and value size
                                  by a short ingestion before the runs)
              --ram-pairs N       pairs ingested by `ingest-ram` (default 100000; paper preset: as ingested)
              --ingest-ram LIST   RAM budgets of `ingest-ram` (default 32m + 1.15, 1.3, 1.6, 2 x the raw data);
                                  off-heap maps get 1.08 x their measured off-heap footprint (else the raw
                                  data) + 8m off-heap, the rest as heap
              --stall S           a memory run that makes no progress for S seconds has run out (default 10)
            presets: quick = every workload, the default maps, 100K keys, 1.5 s runs after 1 s warm-up, 1 rep; capacity in
                             256m and 512m, ingest-ram of 100K pairs in 4 budgets (about ten minutes)
                     paper = every workload, the default maps, 2M x scale keys, 30 s runs after 10 s warm-up,
                             5 reps; capacity in 1g..8g (up to half the RAM), ingest-ram of the ingested pairs
                     nova  = Oak under each memory scheme (oak-zc-nova, -growonly, -lock, -novavalues): put,
                             churn, get-zc, rw-mix, 400K keys, 5 s runs after 2 s warm-up, 3 reps; the report
                             adds the off-heap memory in use after each run
            SIZE: bytes, or with a k/m/g suffix (e.g. 6g)
            memory per pair is measured after the ingestion stage of every run and after each ingest-ram
            run that fits; for that alone, run --workload ingest --threads 1
            """.formatted(String.join(",", MapKind.ALL.stream().map(MapKind::name).toList()),
                    String.join(" | ", Workload.ids()));

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
                } else if (i + 1 < args.length && (!args[i + 1].startsWith("--") || name.equals("jvm-args"))) {
                    // the next option is not this one's value (but JVM flags may start with --)
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
            long keys = Math.round(PAPER_KEYS_PER_SCALE * o.scale);
            if (keys > Integer.MAX_VALUE) { // as for --keys: refused, not wrapped
                throw new IllegalArgumentException("--scale " + o.scale + " asks for " + keys + " keys, more than "
                        + Integer.MAX_VALUE);
            }
            o.keys = (int) keys;
        }
        o.validate();
        if (o.out == null) {
            o.out = Path.of("bench-results",
                    LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        }
        if (!o.child) {
            // else Bench.run's createDirectories ended in a stack trace, after the plan was printed
            for (Path p = o.out.toAbsolutePath(); p != null; p = p.getParent()) {
                if (Files.exists(p)) {
                    if (!Files.isDirectory(p)) {
                        throw new IllegalArgumentException("--out " + o.out + ": " + p + " is not a directory");
                    }
                    break;
                }
            }
        }
        return o;
    }

    private void applyPreset(String name) {
        switch (name) {
            case "quick" -> {
                maps = MapKind.MAIN;
                workloads = List.of(Workload.values());
                threads = defaultThreads();
                keys = 100_000;
                duration = 1.5;
                warmup = 1;
                reps = 1;
            }
            case "paper" -> {
                maps = MapKind.MAIN;
                workloads = List.of(Workload.values());
                threads = defaultThreads();
                duration = 30;
                warmup = 10;
                reps = 5;
            }
            case "nova" -> { // the Nova thesis's comparison of memory managers, on Oak
                maps = MapKind.SCHEMES;
                workloads = List.of(Workload.PUT, Workload.CHURN, Workload.GET_ZC, Workload.RW_MIX);
                threads = defaultThreads();
                keys = 400_000;
                duration = 5;
                warmup = 2;
                reps = 3;
            }
            default -> throw new IllegalArgumentException("unknown preset '" + name + "' (quick, paper, nova)");
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
        try {
            setValue(name, v);
        } catch (NumberFormatException e) {
            // its own message ("For input string: ...") does not say which option was wrong
            throw new IllegalArgumentException("--" + name + ": not a number: '" + v + "'", e);
        }
    }

    private void setValue(String name, String v) {
        switch (name) {
            case "preset", "help" -> { }
            case "map", "maps" -> maps = v.trim().equalsIgnoreCase("all") ? MapKind.ALL
                    : Arrays.stream(v.split(",")).map(MapKind::byName).distinct().toList();
            case "workload", "workloads" -> workloads = v.trim().equalsIgnoreCase("all") ? List.of(Workload.values())
                    : Arrays.stream(v.split(",")).map(Workload::byId).distinct().toList();
            case "threads" -> threads = Arrays.stream(v.split(",")).mapToInt(s -> Integer.parseInt(s.trim()))
                    .distinct().toArray();
            case "keys" -> keys = intCount(name, v);
            case "key-size" -> keySize = Integer.parseInt(v.trim());
            case "value-size" -> valueSize = Integer.parseInt(v.trim());
            case "duration" -> duration = Double.parseDouble(v.trim());
            case "warmup" -> warmup = Double.parseDouble(v.trim());
            case "reps" -> reps = Integer.parseInt(v.trim());
            case "distribution" -> distribution = v.trim().toLowerCase(Locale.ROOT);
            case "key-order" -> keyOrder = v.trim().toLowerCase(Locale.ROOT);
            case "key-head" -> keyHead = Integer.parseInt(v.trim());
            case "zipf-theta" -> zipfTheta = Double.parseDouble(v.trim());
            case "ram" -> ram = parseSize(v);
            case "heap" -> heap = parseSize(v);
            case "offheap" -> offheap = parseSize(v);
            case "out" -> out = Path.of(v);
            case "scan" -> scan = Integer.parseInt(v.trim());
            case "seed" -> seed = Long.parseLong(v.trim());
            case "fork" -> fork = bool(name, v);
            case "jvm-args" -> jvmArgs = v.isBlank() ? List.of() : List.of(v.trim().split("\\s+"));
            case "scale" -> scale = Double.parseDouble(v.trim());
            case "dry-run" -> dryRun = bool(name, v);
            case "capacity-ram" -> capacityRam = sizes(v);
            case "ingest-ram" -> ingestRam = sizes(v);
            case "ram-pairs" -> ramPairs = intCount(name, v);
            case "heap-share" -> heapShare = Double.parseDouble(v.trim());
            case "stall" -> stall = Double.parseDouble(v.trim());
            case "child" -> child = bool(name, v);
            case "rep" -> rep = Integer.parseInt(v.trim());
            default -> throw new IllegalArgumentException("unknown option --" + name + " (try --help)");
        }
    }

    private void validate() {
        // times must be finite: a NaN warm-up made the parent's time limit NaN, so every forked run
        // "timed out" at once, and an infinite warm-up or duration never ended
        if (keys < 2 || keySize < 8 || valueSize < 8 || !(duration > 0 && Double.isFinite(duration))
                || !(warmup >= 0 && Double.isFinite(warmup)) || reps < 1 || scan < 1
                || threads.length == 0 || Arrays.stream(threads).anyMatch(t -> t < 1) || maps.isEmpty()
                || workloads.isEmpty()) {
            throw new IllegalArgumentException("need keys >= 2, key-size >= 8, value-size >= 8, finite duration > 0, "
                    + "finite warmup >= 0, reps >= 1, scan >= 1, threads >= 1, and at least one map and workload");
        }
        if (!(heapShare >= 0 && heapShare < 1) || !(stall > 0 && Double.isFinite(stall)) || ramPairs < 0
                || Arrays.stream(capacityRam).anyMatch(b -> b < 32 * MIB)
                || Arrays.stream(ingestRam).anyMatch(b -> b < 16 * MIB)) {
            throw new IllegalArgumentException("need 0 <= heap-share < 1, finite stall > 0, ram-pairs >= 0, "
                    + "capacity budgets of at least 32m and ingest-ram budgets of at least 16m");
        }
        if (!distribution.equals("uniform") && !distribution.equals("zipf")) {
            throw new IllegalArgumentException("distribution must be uniform or zipf: " + distribution);
        }
        // checked here, not only where the child builds its Keys.Zipf: there a bad theta failed
        // every run of the invocation, one child JVM after another
        if (distribution.equals("zipf") && !(zipfTheta > 0 && zipfTheta < 1)) {
            throw new IllegalArgumentException("zipf-theta must be in (0, 1): " + zipfTheta);
        }
        if (!keyOrder.equals("random") && !keyOrder.equals("ascending")) {
            throw new IllegalArgumentException("key-order must be random or ascending: " + keyOrder);
        }
        if (heap > 0 && ram > 0) {
            // --ram won, and --heap was ignored without a word
            throw new IllegalArgumentException("give --ram (a budget shared by heap and off-heap) or --heap (a fixed "
                    + "heap), not both");
        }
        if (!child) {
            // every map's budget, as Bench.run and the report compute them: a budget too small
            // was thrown from there, after the plan was printed, as a stack trace
            maps.forEach(this::budget);
        }
        if (ascendingKeys() && keySize < keyHead + Keys.INDEX_BYTES) {
            throw new IllegalArgumentException("key-order ascending needs keys of at least " + Keys.INDEX_BYTES
                    + " bytes after the key head, which carry the key's index: " + keySize);
        }
        if (keyHead < 0 || (keyHead > 0 && keyHead > keySize - Long.BYTES)) {
            // fewer than 8 bytes after the head could not tell the range's keys apart
            throw new IllegalArgumentException("key-head must be in [0, key-size - 8]: " + keyHead);
        }
    }

    /** @return the keys' size, and their shared head if they have one: "100 B keys (the first 16 shared)" */
    String keySizeText() {
        return keySize + " B keys" + (keyHead == 0 ? "" : " (the first " + keyHead + " shared)");
    }

    /** @return how keys are laid out: {@code --key-order} and {@code --key-head} */
    Keys.Layout keyLayout() {
        return new Keys.Layout(ascendingKeys(), keyHead);
    }

    /** @return true if keys follow their index's order and are ingested in it ({@code --key-order ascending}) */
    boolean ascendingKeys() {
        return keyOrder.equals("ascending");
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
        if (h < 256 * MIB && heap > 0 && ram <= 0) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "--heap %s is below the %s a run needs",
                    size(h), size(256 * MIB)));
        }
        if (h < 256 * MIB) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "the RAM budget %s leaves %s of heap to %s after %s off-heap; raise --ram or lower --offheap",
                    size(ramBudget()), size(h), kind.name(), size(off)));
        }
        return new Budget(roundUp(h, MIB), off, maxDirect(kind, off));
    }

    /**
     * The direct-memory limit of an off-heap map's child JVM: exactly its off-heap capacity for a map
     * that cannot bound its own memory (MapDB), else the capacity plus slack (FFM native segments
     * count against the limit too, and Oak enforces its capacity itself).
     */
    static long maxDirect(MapKind kind, long off) {
        if (!kind.offHeap()) {
            return 0;
        }
        return kind.directLimited() ? off : off + 256 * MIB;
    }

    // ------------------------------------------------------------------------------ memory experiments

    /** The least heap a memory-experiment child JVM gets. */
    static final long MIN_HEAP = 16 * MIB;

    /**
     * The heap every off-heap map gets in a capacity run, before its share of the budget, when its
     * JVM's own use of the heap was not measured ({@link Footprint#baseHeap}).
     */
    static final long BASE_HEAP = 16 * MIB;

    /**
     * What a map holds per pair, measured after an ingestion: heap growth and off-heap bytes in
     * use (both per pair), and the heap the child JVM used before the map was built (the harness,
     * the warm-up's leftovers).
     */
    record Footprint(double heapPerPair, double offHeapPerPair, long baseHeap) {
        /**
         * @return the heap a capacity run gives before the map's share: the JVM's own use plus
         *     4 MiB of working room
         */
        long fixedHeap() {
            return roundUp(baseHeap + 4 * MIB, MIB);
        }

        /** @return the share of the footprint on the heap */
        double heapShare() {
            return heapPerPair / (heapPerPair + offHeapPerPair);
        }
    }

    /**
     * Room on top of a measured heap share: the heap also holds what the map allocates while it
     * grows (a rebalance's new chunks beside the old ones) and the collector's working space; the
     * off-heap side needs little (Oak's last block is partly empty).
     */
    static final double HEAP_ROOM = 1.1;

    /** The heap share of a capacity run when neither --heap-share nor a measurement gives one. */
    static final double DEFAULT_HEAP_SHARE = 0.05;

    /**
     * @return the share of a capacity run's budget (beyond the fixed part, see
     *     {@link #memoryBudget}) that off-heap map
     *     {@code kind} gets as heap: {@code --heap-share} if given, otherwise its measured share
     *     with {@link #HEAP_ROOM}, otherwise {@link #DEFAULT_HEAP_SHARE}
     */
    double heapShare(MapKind kind) {
        if (heapShare > 0) {
            return heapShare;
        }
        Footprint f = footprints.get(kind);
        return f == null ? DEFAULT_HEAP_SHARE : Math.min(0.9, f.heapShare() * HEAP_ROOM);
    }

    /** Pairs of the ingest-ram experiment. */
    int ramPairs() {
        if (ramPairs > 0) {
            return ramPairs;
        }
        return preset.equals("paper") ? ingestedPairs() : 100_000;
    }

    /** Raw key and value bytes of the ingest-ram experiment. */
    long ramPairsRawBytes() {
        return (long) ramPairs() * (keySize + valueSize);
    }

    /** @return the RAM budgets of {@code w}, a memory experiment, ascending and distinct */
    long[] memoryBudgets(Workload w) {
        return Arrays.stream(memoryBudgetList(w)).distinct().sorted().toArray();
    }

    private long[] memoryBudgetList(Workload w) {
        if (w == Workload.CAPACITY) {
            if (capacityRam.length > 0) {
                return capacityRam;
            }
            if (!preset.equals("paper")) {
                return new long[]{256 * MIB, 512 * MIB};
            }
            long half = Machine.memTotalBytes() / 2;
            long[] all = {GIB, 2 * GIB, 4 * GIB, 8 * GIB};
            long[] fit = Arrays.stream(all).filter(b -> half <= 0 || b <= half).toArray();
            return fit.length > 0 ? fit : new long[]{GIB};
        }
        if (ingestRam.length > 0) {
            return ingestRam;
        }
        double[] factors = {1.15, 1.3, 1.6, 2};
        return Arrays.stream(factors).mapToLong(f -> roundUp(32 * MIB + (long) (f * ramPairsRawBytes()), 8 * MIB))
                .toArray();
    }

    /**
     * What one child JVM of a memory experiment gets from RAM budget {@code ram}: on-heap maps all
     * of it as heap; off-heap maps, for {@code capacity}, {@link Footprint#fixedHeap} (or
     * {@link #BASE_HEAP}) plus their {@link #heapShare(MapKind)} of the rest as heap and the rest
     * off-heap, and for {@code ingest-ram}, just enough off-heap for the pairs (1.08 x their
     * measured off-heap footprint, or without one 1.08 x the raw data, plus 8 MiB: Oak needs about
     * 1.02 x the raw data with 1 KB values, MapDB 1.05 x and 1 MiB steps) and the rest as heap.
     * The heap may come out below {@link #MIN_HEAP} (see {@link #fits}): the map cannot run in
     * that budget.
     */
    Budget memoryBudget(MapKind kind, Workload w, long ram) {
        if (!kind.offHeap()) {
            return new Budget(ram, 0, 0);
        }
        Footprint f = footprints.get(kind);
        long off;
        if (w == Workload.CAPACITY) {
            long fixed = f == null || heapShare > 0 ? BASE_HEAP : f.fixedHeap();
            off = ram - Math.max(MIN_HEAP, roundUp(fixed + (long) ((ram - fixed) * heapShare(kind)), MIB));
        } else {
            off = f == null ? roundUp((long) (ramPairsRawBytes() * 1.08) + 8 * MIB, MIB)
                    : roundUp((long) (ramPairs() * f.offHeapPerPair() * 1.08) + 8 * MIB, MIB);
        }
        return new Budget(ram - off, off, maxDirect(kind, off));
    }

    /** @return true if {@code b} leaves the JVM a usable heap */
    static boolean fits(Budget b) {
        return b.heap() >= MIN_HEAP;
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
    List<String> childArgs(MapKind map, Workload w, int t, int repetition, Budget b) {
        return childArgs(map, w, t, repetition, b, ramPairs());
    }

    /** {@link #childArgs(MapKind, Workload, int, int, Budget)} with the given {@code --ram-pairs}. */
    List<String> childArgs(MapKind map, Workload w, int t, int repetition, Budget b, int pairs) {
        List<String> a = new ArrayList<>(List.of("--child",
                "--map", map.name(), "--workload", w.id, "--threads", Integer.toString(t),
                "--keys", Integer.toString(keys), "--key-size", Integer.toString(keySize),
                "--value-size", Integer.toString(valueSize), "--duration", Double.toString(duration),
                "--warmup", Double.toString(warmup), "--distribution", distribution, "--key-order", keyOrder,
                "--key-head", Integer.toString(keyHead),
                "--zipf-theta", Double.toString(zipfTheta), "--scan", Integer.toString(scan),
                "--seed", Long.toString(seed), "--rep", Integer.toString(repetition),
                "--ram-pairs", Integer.toString(pairs), "--stall", Double.toString(stall)));
        if (b.offHeap() > 0) {
            a.add("--offheap");
            a.add(Long.toString(b.offHeap()));
        }
        return a;
    }

    // ------------------------------------------------------------------------------ sizes

    /**
     * true or false (any case), and nothing else: Boolean.parseBoolean took anything else for
     * false, so {@code --fork yes} ran every map in the harness's own JVM, without its budget.
     */
    private static boolean bool(String name, String v) {
        String t = v.trim().toLowerCase(Locale.ROOT);
        if (!t.equals("true") && !t.equals("false")) {
            throw new IllegalArgumentException("--" + name + " takes true or false: '" + v + "'");
        }
        return t.equals("true");
    }

    private static long[] sizes(String v) {
        return Arrays.stream(v.split(",")).mapToLong(Options::parseSize).toArray();
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

    /**
     * A count that must fit an int (key indexes are ints): beyond that it is refused, where the
     * cast wrapped it (--keys 5000m ran 705,032,704 keys, --keys 4294967298 two).
     */
    private static int intCount(String name, String v) {
        long n = parseCount(v);
        if (n > Integer.MAX_VALUE || n < Integer.MIN_VALUE) {
            throw new IllegalArgumentException("--" + name + " is at most " + Integer.MAX_VALUE + ": " + v);
        }
        return (int) n;
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
