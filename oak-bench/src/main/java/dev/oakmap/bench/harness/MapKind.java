package dev.oakmap.bench.harness;

import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * The registry of compared maps: a name for the command line, whether the map keeps its data
 * off-heap (which decides how the RAM budget is split between heap and off-heap), which workloads
 * it runs, and how to build it.
 *
 * <p>Adding a map is the seam for later work: write a {@link BenchMap} and add an entry to
 * {@link #ALL}. Planned, not implemented yet: Oak under each memory manager once the builder
 * offers them ({@code oak-zc-nova}, {@code oak-zc-growonly}, ...), the papers' skiplist over
 * off-heap cells built on Oak's allocator ({@code cslm-offheap}), and an off-heap ordered map from
 * Maven Central ({@code mapdb}, MapDB's {@code BTreeMap} on direct memory); the report already
 * prints every map's version string, so those adapters only need to provide one.
 *
 * @param name        the command-line and report name
 * @param description one line for the report
 * @param offHeap     true if the map's data lives off-heap (it then gets an off-heap capacity and
 *                    the rest of the RAM budget as heap); false if all of the budget is heap
 * @param baseline    true for the map that the others are compared against (ratios in the report)
 * @param runAs       for each workload, the workload this map actually runs for it: itself, another
 *                    workload whose operation is the same for this map (run once, reported for
 *                    both), or null if the map has no such operation (skipped, "-" in the report)
 * @param factory     builds an empty map, given the off-heap capacity in bytes (0 for on-heap maps)
 * @param version     the version string printed in the reports
 */
public record MapKind(String name, String description, boolean offHeap, boolean baseline,
                      Function<Workload, Workload> runAs, LongFunction<BenchMap> factory, String version) {

    /** Oak through its zero-copy API. */
    public static final MapKind OAK_ZC = new MapKind("oak-zc",
            "OakMap<byte[],byte[]> through zc(): zero-copy gets and scans, in-place updates",
            true, false, w -> w, OakBenchMap::zeroCopy, OakBenchMap.version());

    /** Oak through the ConcurrentNavigableMap API (objects in, copies out). */
    public static final MapKind OAK_LEGACY = new MapKind("oak-legacy",
            "OakMap<byte[],byte[]> through the ConcurrentNavigableMap API (copies out; compute for updates)",
            true, false,
            w -> switch (w) {
                case GET_ZC, SCAN_ASC_STREAM, SCAN_DESC_STREAM -> null; // no zero-copy read in this API
                default -> w;
            },
            OakBenchMap::legacy, OakBenchMap.version());

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
            capacity -> new CslmBenchMap(), "JDK " + System.getProperty("java.runtime.version"));

    /** Every registered map, in report order. */
    public static final List<MapKind> ALL = List.of(OAK_ZC, OAK_LEGACY, CSLM);

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
