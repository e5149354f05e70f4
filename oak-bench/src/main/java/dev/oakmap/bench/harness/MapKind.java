package dev.oakmap.bench.harness;

import dev.oakmap.MemoryScheme;

import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * The registry of compared maps: a name for the command line, whether the map keeps its data
 * off-heap (which decides how the RAM budget is split between heap and off-heap), which workloads
 * it runs, and how to build it.
 *
 * <p>To add a map, write a {@link BenchMap} and add an entry to {@link #ALL}; the report prints
 * every map's version string. Oak appears once per API with its default memory schemes
 * ({@code oak-zc}, {@code oak-legacy}) and once per pair of schemes for keys and values
 * ({@code oak-zc-nova}, {@code oak-zc-growonly}, {@code oak-zc-lock}, {@code oak-zc-novavalues}),
 * which is how the Nova experiments compare memory managers under one harness.
 *
 * @param name        the command-line and report name
 * @param description one line for the report
 * @param offHeap     true if the map's data lives off-heap (it then gets an off-heap capacity and
 *                    the rest of the RAM budget as heap); false if all of the budget is heap
 * @param baseline    true for the map that the others are compared against (ratios in the report)
 * @param runAs       for each workload, the workload this map actually runs for it: itself, another
 *                    workload whose operation is the same for this map (run once, reported for
 *                    both), or null if the map has no such operation (skipped, "-" in the report)
 * @param directLimited true for an off-heap map that cannot bound its own off-heap memory (it grows
 *                    direct buffers until the JVM refuses): its child JVM's
 *                    {@code -XX:MaxDirectMemorySize} is set to exactly its off-heap capacity, so that
 *                    the limit is the budget; maps that enforce their capacity themselves get some
 *                    slack above it instead
 * @param factory     builds an empty map, given the off-heap capacity in bytes (0 for on-heap maps)
 * @param version     the version string printed in the reports
 */
public record MapKind(String name, String description, boolean offHeap, boolean baseline,
                      Function<Workload, Workload> runAs, boolean directLimited, LongFunction<BenchMap> factory,
                      String version) {

    /** Oak through its zero-copy API. */
    public static final MapKind OAK_ZC = new MapKind("oak-zc",
            "OakMap<byte[],byte[]> through zc(): zero-copy gets and scans, in-place updates",
            true, false, w -> w, false, OakBenchMap::zeroCopy, OakBenchMap.version());

    /** Oak through the ConcurrentNavigableMap API (objects in, copies out). */
    public static final MapKind OAK_LEGACY = new MapKind("oak-legacy",
            "OakMap<byte[],byte[]> through the ConcurrentNavigableMap API (copies out; compute for updates)",
            true, false,
            w -> switch (w) {
                case GET_ZC, SCAN_ASC_STREAM, SCAN_DESC_STREAM -> null; // no zero-copy read in this API
                case CAPACITY, INGEST_RAM -> null; // the same off-heap layout as oak-zc: measured there
                default -> w;
            },
            false, OakBenchMap::legacy, OakBenchMap.version());

    /** The JDK's skiplist storing copies of keys and values on the heap. */
    public static final MapKind CSLM = new MapKind("cslm",
            "ConcurrentSkipListMap<byte[],byte[]> (unsigned order) storing copies of keys and values on the heap",
            false, true,
            w -> switch (w) {
                case GET_COPY -> Workload.GET_ZC;            // get hands out the stored array either way
                case SCAN_ASC_STREAM -> Workload.SCAN_ASC;   // no stream API: the iterator is it
                case SCAN_DESC_STREAM -> Workload.SCAN_DESC;
                default -> w;
            },
            false, capacity -> new CslmBenchMap(), "JDK " + System.getProperty("java.runtime.version"));

    /**
     * MapDB's BTreeMap on direct memory ({@code DBMaker.memoryDirectDB()}), values outside the
     * nodes; see {@link MapDbBenchMap} for the operation behind each workload.
     */
    public static final MapKind MAPDB = new MapKind("mapdb",
            "MapDB BTreeMap<byte[],byte[]> in memoryDirectDB() (direct ByteBuffers), BYTE_ARRAY serializers, "
                    + "values outside nodes; gets and scans copy; update = get + replace(k, old, new) loop",
            true, false,
            w -> switch (w) {
                case GET_ZC -> Workload.GET_COPY;            // every get deserializes a copy
                case SCAN_ASC_STREAM -> Workload.SCAN_ASC;   // no stream API
                case SCAN_DESC_STREAM -> Workload.SCAN_DESC;
                default -> w;
            },
            true, MapDbBenchMap::new, MapDbBenchMap.version());

    /** The seeds' CSLM-OffHeap: the JDK skiplist over cells whose keys and values are off-heap. */
    public static final MapKind CSLM_OFFHEAP = new MapKind("cslm-offheap",
            "ConcurrentSkipListMap of on-heap cells holding off-heap key and value slices (Somar, Nova)",
            true, false,
            w -> switch (w) {
                case SCAN_ASC_STREAM -> Workload.SCAN_ASC;
                case SCAN_DESC_STREAM -> Workload.SCAN_DESC;
                default -> w;
            },
            false, CslmOffHeapBenchMap::new, CslmOffHeapBenchMap.version());

    /** Oak (zero-copy API) with Nova for keys and values. */
    public static final MapKind OAK_ZC_NOVA = oakWithSchemes("oak-zc-nova", MemoryScheme.NOVA, MemoryScheme.NOVA);

    /** Oak (zero-copy API) that never reuses memory: the thesis's grow-only reference point. */
    public static final MapKind OAK_ZC_GROW_ONLY =
            oakWithSchemes("oak-zc-growonly", MemoryScheme.GROW_ONLY, MemoryScheme.GROW_ONLY);

    /** Oak (zero-copy API) with the original read-write-lock headers for keys and values. */
    public static final MapKind OAK_ZC_LOCK = oakWithSchemes("oak-zc-lock", MemoryScheme.LOCK_BASED, MemoryScheme.LOCK_BASED);

    /** Oak (zero-copy API) as in the original Oak paper: grow-only keys, Nova-style values. */
    public static final MapKind OAK_ZC_NOVA_VALUES =
            oakWithSchemes("oak-zc-novavalues", MemoryScheme.GROW_ONLY, MemoryScheme.NOVA);

    /**
     * Oak (zero-copy API, default schemes) ordered by a comparator of its user's own, one that
     * offers no key prefix ({@code OakComparator.keyPrefix}): every search step then compares an
     * off-heap key. What a user who writes a comparator and skips the optional prefix gets.
     */
    public static final MapKind OAK_ZC_NO_PREFIX = new MapKind("oak-zc-noprefix",
            "OakMap through zc(), with a byte[] comparator that offers no key prefix (a user's own comparator)",
            true, false, OAK_ZC.runAs, false, OakBenchMap::zeroCopyWithoutPrefixes, OakBenchMap.version());

    /** The maps the quick and paper presets compare (the memory-scheme variants have their own preset). */
    public static final List<MapKind> MAIN = List.of(OAK_ZC, OAK_LEGACY, CSLM, MAPDB, CSLM_OFFHEAP);

    /** The memory-manager comparison of the Nova thesis, on Oak (the {@code nova} preset). */
    public static final List<MapKind> SCHEMES = List.of(OAK_ZC_NOVA, OAK_ZC_GROW_ONLY, OAK_ZC_LOCK, OAK_ZC_NOVA_VALUES);

    private static MapKind oakWithSchemes(String name, MemoryScheme keys, MemoryScheme values) {
        return new MapKind(name, "OakMap through zc(), " + keys + " keys, " + values + " values",
                true, false, OAK_ZC.runAs, false, OakBenchMap.zeroCopy(keys, values), OakBenchMap.version());
    }

    /** Every registered map, in report order. */
    public static final List<MapKind> ALL = List.of(OAK_ZC, OAK_LEGACY, CSLM, MAPDB, CSLM_OFFHEAP,
            OAK_ZC_NOVA, OAK_ZC_GROW_ONLY, OAK_ZC_LOCK, OAK_ZC_NOVA_VALUES, OAK_ZC_NO_PREFIX);

    /** @return the map called {@code name} (case-insensitive) */
    public static MapKind byName(String name) {
        String s = name.trim().toLowerCase(Locale.ROOT);
        for (MapKind k : ALL) {
            if (k.name.equals(s)) {
                return k;
            }
        }
        throw new IllegalArgumentException("unknown map '" + name + "'; known: all, "
                + String.join(", ", ALL.stream().map(MapKind::name).toList()));
    }

    /** @return the baseline among {@code maps}, or null */
    public static MapKind baselineOf(List<MapKind> maps) {
        return maps.stream().filter(MapKind::baseline).findFirst().orElse(null);
    }
}
