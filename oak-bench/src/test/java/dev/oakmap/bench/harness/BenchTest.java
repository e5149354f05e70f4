package dev.oakmap.bench.harness;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs the harness end to end at a tiny scale (a few seconds) and checks that its files are there
 * and well-formed. Not a benchmark: the figures are not looked at, only their shape.
 */
class BenchTest {

    private static final byte[] PNG_MAGIC = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

    @Test
    void humanNumbersPickTheirUnitAfterRounding() {
        assertEquals("1.00 M", Report.human(999_999));
        assertEquals("1.00 k", Report.human(999.9));
        assertEquals("581 k", Report.human(581_123));
        assertEquals("1.44 M", Report.human(1_444_000));
        assertEquals("12.3", Report.human(12.34));
        assertEquals("0.00", Report.human(0));
    }

    @Test
    void inProcessRunWritesCsvReportAndCharts(@TempDir Path dir) throws Exception {
        Bench.Outcome r = Bench.run("--workload", "update,get-zc,scan-desc-stream",
                "--threads", "1,2", "--keys", "2000", "--key-size", "16", "--value-size", "40",
                "--duration", "0.1", "--warmup", "0.05", "--reps", "2", "--scan", "100",
                "--fork", "false", "--out", dir.toString());

        // the default maps: oak-zc runs all 3, oak-legacy only update (no zero-copy get or stream),
        // cslm all 3 (its stream scan is its iterator scan), mapdb all 3 (get-zc as get-copy, the
        // stream scan as the iterator scan), cslm-offheap all 3: 13 points x 2 thread counts x 2 reps
        assertEquals(52, r.runs());
        assertEquals(0, r.failures());

        List<List<String>> csv = readCsv(r.csv());
        assertEquals(Results.COLUMNS, csv.get(0));
        assertEquals(r.runs() + 1, csv.size());
        int status = Results.COLUMNS.indexOf("status");
        int ops = Results.COLUMNS.indexOf("ops_per_s");
        int pairs = Results.COLUMNS.indexOf("pairs_ingested");
        int overhead = Results.COLUMNS.indexOf("overhead_b_per_pair");
        for (List<String> row : csv.subList(1, csv.size())) {
            assertEquals(Results.COLUMNS.size(), row.size(), "cells in " + row);
            assertEquals("ok", row.get(status), row.toString());
            assertTrue(Double.parseDouble(row.get(ops)) > 0, row.toString());
            assertEquals("1000", row.get(pairs));
            Double.parseDouble(row.get(overhead));
        }

        String md = Files.readString(r.report(), StandardCharsets.UTF_8);
        assertTrue(md.startsWith("# Oak benchmark report"), md);
        assertTrue(md.contains("| workload | threads | oak-zc | oak-legacy | cslm | mapdb | cslm-offheap "
                + "| oak-zc / cslm | oak-legacy / cslm | mapdb / cslm | cslm-offheap / cslm |"), md);
        assertTrue(md.contains("## Off-heap memory after each run"), md);
        assertTrue(md.lines().anyMatch(l -> l.startsWith("| get-zc | 1 |") && l.contains("=get-copy")), md);
        assertTrue(md.contains("| mapdb | MapDB 3."), md);
        assertTrue(md.lines().anyMatch(l -> l.startsWith("| get-zc | 2 |") && l.contains("x** |")), md);
        assertTrue(md.lines().anyMatch(l -> l.startsWith("| scan-desc-stream | 1 |") && l.contains("=scan-desc")), md);
        assertTrue(md.contains("## Memory per pair"), md);
        assertTrue(md.lines().anyMatch(l -> l.startsWith("| mapdb | the ingestion stage")), md);
        for (Path png : r.charts()) {
            assertTrue(md.contains("](" + png.getFileName() + ")"), png.toString());
        }

        List<String> names = r.charts().stream().map(p -> p.getFileName().toString()).toList();
        assertTrue(names.containsAll(List.of("throughput-update.png", "throughput-get-zc.png",
                "throughput-scan-desc-stream.png", "ratios.png", "memory.png")), names.toString());
        for (Path png : r.charts()) {
            assertPng(png);
        }
    }

    @Test
    void forkedPointRunsInAFreshJvm(@TempDir Path dir) throws Exception {
        Bench.Outcome r = Bench.run("--map", "oak-zc", "--workload", "get-zc", "--threads", "1",
                "--keys", "1000", "--key-size", "16", "--value-size", "40", "--duration", "0.2",
                "--warmup", "0.1", "--reps", "1", "--ram", "512m", "--offheap", "64m", "--out", dir.toString());
        assertEquals(1, r.runs());
        List<List<String>> csv = readCsv(r.csv());
        List<String> row = csv.get(1);
        String log = Files.list(dir.resolve("logs")).map(p -> {
            try {
                return Files.readString(p);
            } catch (IOException e) {
                return e.toString();
            }
        }).findFirst().orElse("no log");
        assertEquals("ok", row.get(Results.COLUMNS.indexOf("status")), log);
        String flags = row.get(Results.COLUMNS.indexOf("jvm_flags"));
        assertTrue(flags.contains("-Xmx448m") && flags.contains("--enable-native-access=ALL-UNNAMED"), flags);
        assertTrue(Double.parseDouble(row.get(Results.COLUMNS.indexOf("ops_per_s"))) > 0);
    }

    @Test
    void ascendingKeysFollowTheirIndexAndAreIngestedInOrder() {
        int[] indexes = {0, 1, 2, 255, 256, 257, 65_535, 65_536, 70_000, (1 << 24) - 1, 1 << 24, 2_000_000_000};
        byte[] previous = null;
        for (int i : indexes) {
            byte[] key = new byte[16];
            Keys.key(42, i, key, new Keys.Layout(true, 0));
            if (previous != null) {
                assertTrue(Arrays.compareUnsigned(previous, key) < 0, "key " + i + " after the one before");
            }
            previous = key;
        }
        int inversions = 0;
        byte[] a = new byte[16];
        byte[] b = new byte[16];
        for (int i = 0; i < 100; i++) {
            Keys.key(42, i, a, Keys.Layout.PLAIN);
            Keys.key(42, i + 1, b, Keys.Layout.PLAIN);
            inversions += Arrays.compareUnsigned(a, b) > 0 ? 1 : 0;
        }
        assertTrue(inversions > 20 && inversions < 80, "random keys: " + inversions + " inversions of 100");

        Options random = Options.parse(new String[]{"--keys", "1000"});
        Options ascending = Options.parse(new String[]{"--keys", "1000", "--key-order", "ascending"});
        int pairs = random.ingestedPairs();
        int[] shuffled = PointRunner.ingestionOrder(random, pairs, 7);
        int[] sorted = PointRunner.ingestionOrder(ascending, pairs, 7);
        int[] half = Arrays.copyOf(shuffled, pairs);
        assertFalse(isSorted(half), "random order");
        Arrays.sort(half);
        assertArrayEquals(half, Arrays.copyOf(sorted, pairs), "the same half of the range, in ascending order");
        assertTrue(ascending.childArgs(MapKind.OAK_ZC, Workload.SCAN_ASC, 1, 1, ascending.budget(MapKind.OAK_ZC), 0)
                .containsAll(List.of("--key-order", "ascending")));

        assertThrows(IllegalArgumentException.class, () -> Options.parse(new String[]{"--key-order", "sideways"}));
        assertThrows(IllegalArgumentException.class,
                () -> Options.parse(new String[]{"--key-order", "ascending", "--key-size", "3"}));
    }

    @Test
    void keysWithAHeadShareItAndStayDistinct() {
        java.util.Set<String> seen = new java.util.HashSet<>();
        byte[] first = null;
        for (int i = 0; i < 10_000; i++) {
            byte[] key = new byte[40];
            Keys.key(42, i, key, new Keys.Layout(false, 24));
            if (first == null) {
                first = key.clone();
            }
            assertArrayEquals(Arrays.copyOf(first, 24), Arrays.copyOf(key, 24), "key " + i + "'s head");
            assertTrue(seen.add(Arrays.toString(key)), "key " + i + " is distinct");
        }
        byte[] previous = null;
        for (int i : new int[] {0, 1, 255, 256, 70_000, 1 << 24}) {
            byte[] key = new byte[32];
            Keys.key(42, i, key, new Keys.Layout(true, 20));
            assertArrayEquals(Arrays.copyOf(first, 20), Arrays.copyOf(key, 20), "ascending key " + i + "'s head");
            if (previous != null) {
                assertTrue(Arrays.compareUnsigned(previous, key) < 0, "ascending key " + i + " after the one before");
            }
            previous = key;
        }
        Options o = Options.parse(new String[]{"--keys", "1000", "--key-head", "24"});
        assertEquals(new Keys.Layout(false, 24), o.keyLayout());
        assertTrue(o.childArgs(MapKind.OAK_ZC, Workload.GET_ZC, 1, 1, o.budget(MapKind.OAK_ZC), 0)
                .containsAll(List.of("--key-head", "24")));
        assertThrows(IllegalArgumentException.class, () -> Options.parse(new String[]{"--key-head", "93"}));
        assertThrows(IllegalArgumentException.class, () -> Options.parse(new String[]{"--key-head", "-1"}));
    }

    private static boolean isSorted(int[] a) {
        for (int i = 1; i < a.length; i++) {
            if (a[i - 1] > a[i]) {
                return false;
            }
        }
        return true;
    }

    @Test
    void inProcessRunWithKeysInOrder(@TempDir Path dir) throws Exception {
        Bench.Outcome r = Bench.run("--map", "oak-zc,cslm", "--workload", "scan-asc-stream,get-zc",
                "--threads", "1", "--keys", "2000", "--key-size", "16", "--value-size", "40",
                "--duration", "0.1", "--warmup", "0.05", "--scan", "100", "--key-order", "ascending",
                "--fork", "false", "--out", dir.toString());
        assertEquals(4, r.runs());
        assertEquals(0, r.failures());
        List<List<String>> csv = readCsv(r.csv());
        for (List<String> row : csv.subList(1, csv.size())) {
            assertEquals("ok", row.get(Results.COLUMNS.indexOf("status")), row.toString());
            assertEquals("ascending", row.get(Results.COLUMNS.indexOf("key_order")), row.toString());
            assertEquals("1000", row.get(Results.COLUMNS.indexOf("pairs_ingested")), row.toString());
        }
        String md = Files.readString(r.report(), StandardCharsets.UTF_8);
        assertTrue(md.contains("pairs after ingestion (50%, inserted in key order)"), md);
    }

    @Test
    void optionsAndPlan() {
        Options o = Options.parse(new String[]{"--preset", "quick", "--map", "oak-legacy,cslm", "--threads", "1",
                "--keys", "1m", "--ram", "4g", "--offheap", "1.5g"});
        assertEquals(1_000_000, o.keys);
        assertArrayEquals(new int[]{1}, o.threads);
        assertEquals(Options.GIB * 5 / 2, o.budget(MapKind.OAK_LEGACY).heap());
        assertEquals(Options.GIB * 4, o.budget(MapKind.CSLM).heap());
        // legacy has no get-zc, no stream scans and no memory experiments; cslm runs get-copy as get-zc
        // and stream scans as iterator scans, and each memory experiment once per budget
        long planned = Bench.plan(o).size();
        int memoryRuns = o.memoryBudgets(Workload.CAPACITY).length + o.memoryBudgets(Workload.INGEST_RAM).length;
        assertEquals(2, o.memoryBudgets(Workload.CAPACITY).length);
        assertEquals(4, o.memoryBudgets(Workload.INGEST_RAM).length);
        assertEquals((Workload.values().length - 5) + (Workload.values().length - 5 + memoryRuns), planned);

        // the same RAM for every map: MapDB cannot bound itself, so its direct-memory limit is its capacity
        Options.Budget mapdb = o.budget(MapKind.MAPDB);
        assertEquals(Options.GIB * 3 / 2, mapdb.offHeap());
        assertEquals(mapdb.offHeap(), mapdb.maxDirect());
        assertEquals(Options.GIB * 4, mapdb.heap() + mapdb.offHeap());
        assertTrue(o.budget(MapKind.OAK_ZC).maxDirect() > o.budget(MapKind.OAK_ZC).offHeap());

        // memory experiments: capacity splits the budget, ingest-ram gives off-heap maps just the data's room
        Options.Budget cap = o.memoryBudget(MapKind.OAK_ZC, Workload.CAPACITY, 512 * Options.MIB);
        assertEquals(512 * Options.MIB, cap.heap() + cap.offHeap());
        assertEquals(o.memoryBudget(MapKind.CSLM, Workload.CAPACITY, 512 * Options.MIB).heap(), 512 * Options.MIB);
        long raw = 100_000L * 1100;
        Options.Budget ir = o.memoryBudget(MapKind.MAPDB, Workload.INGEST_RAM, 256 * Options.MIB);
        assertTrue(ir.offHeap() > raw && ir.offHeap() < raw * 1.2, ir.toString());
        assertEquals(ir.offHeap(), ir.maxDirect());
        assertTrue(!Options.fits(o.memoryBudget(MapKind.OAK_ZC, Workload.INGEST_RAM, 64 * Options.MIB)));
    }

    @Test
    void capacitySplitFollowsTheMeasuredFootprint() {
        Options o = Options.parse(new String[]{"--preset", "quick", "--key-size", "16", "--value-size", "16"});
        long ram = 256 * Options.MIB;
        // unmeasured: the default share
        Options.Budget unmeasured = o.memoryBudget(MapKind.OAK_ZC, Workload.CAPACITY, ram);
        assertEquals(Options.roundUp(Options.BASE_HEAP + (long) ((ram - Options.BASE_HEAP)
                * Options.DEFAULT_HEAP_SHARE), Options.MIB), unmeasured.heap());
        // small pairs whose chunks need as much heap as their slices need off-heap: about half of it as heap
        o.footprints.put(MapKind.OAK_ZC, new Options.Footprint(40, 48, 4 * Options.MIB));
        Options.Budget small = o.memoryBudget(MapKind.OAK_ZC, Workload.CAPACITY, ram);
        assertEquals(ram, small.heap() + small.offHeap());
        double share = 40.0 / 88 * Options.HEAP_ROOM;
        long fixed = 8 * Options.MIB; // the JVM's 4 MiB + 4 MiB of room
        assertEquals(fixed, o.footprints.get(MapKind.OAK_ZC).fixedHeap());
        assertEquals(fixed + (ram - fixed) * share, small.heap(), Options.MIB);
        // 1 KB values: a few percent
        o.footprints.put(MapKind.OAK_ZC, new Options.Footprint(30, 1140, 4 * Options.MIB));
        Options.Budget large = o.memoryBudget(MapKind.OAK_ZC, Workload.CAPACITY, ram);
        assertEquals(Options.MIN_HEAP, large.heap()); // 8 MiB + 2.7% of 248 MiB is below the least heap
        assertEquals(ram - Options.MIN_HEAP, large.offHeap());
        // ingest-ram sizes the off-heap part from the footprint, not the raw bytes
        o.footprints.put(MapKind.OAK_ZC, new Options.Footprint(40, 48, 4 * Options.MIB));
        assertEquals(Options.roundUp((long) (o.ramPairs() * 48 * 1.08) + 8 * Options.MIB, Options.MIB),
                o.memoryBudget(MapKind.OAK_ZC, Workload.INGEST_RAM, ram).offHeap());
        // an explicit --heap-share wins over the measurement
        Options given = Options.parse(new String[]{"--heap-share", "0.2"});
        given.footprints.put(MapKind.OAK_ZC, new Options.Footprint(40, 48, 4 * Options.MIB));
        assertEquals(0.2, given.heapShare(MapKind.OAK_ZC));
        assertThrows(IllegalArgumentException.class, () -> Options.parse(new String[]{"--heap-share", "-0.1"}));
    }

    @Test
    void mapSelectionsAndTheNovaPreset() {
        assertEquals(MapKind.MAIN, Options.parse(new String[]{"--preset", "quick"}).maps);
        assertEquals(MapKind.ALL, Options.parse(new String[]{"--map", "all"}).maps);
        Options nova = Options.parse(new String[]{"--preset", "nova"});
        assertEquals(MapKind.SCHEMES, nova.maps);
        assertEquals(List.of(Workload.PUT, Workload.CHURN, Workload.GET_ZC, Workload.RW_MIX), nova.workloads);
        assertEquals(List.of(MapKind.OAK_ZC_GROW_ONLY, MapKind.CSLM_OFFHEAP),
                Options.parse(new String[]{"--map", "oak-zc-growonly,CSLM-OFFHEAP"}).maps);
        assertThrows(IllegalArgumentException.class, () -> Options.parse(new String[]{"--preset", "nope"}));
    }

    @Test
    void memoryExperimentsRunInFreshJvms(@TempDir Path dir) throws Exception {
        Bench.Outcome r = Bench.run("--map", "oak-zc,oak-legacy,cslm,mapdb", "--workload", "capacity,ingest-ram",
                "--capacity-ram", "64m", "--ram-pairs", "5000", "--ingest-ram", "24m,64m", "--warmup", "0",
                "--stall", "5", "--out", dir.toString());
        // oak-legacy skips both; capacity: 3 maps x 1 budget; ingest-ram: 3 maps x 2 budgets
        assertEquals(9, r.runs());
        assertEquals(0, r.failures(), () -> logs(dir));
        List<List<String>> csv = readCsv(r.csv());
        int map = Results.COLUMNS.indexOf("map");
        int workload = Results.COLUMNS.indexOf("workload");
        int ram = Results.COLUMNS.indexOf("ram_budget_bytes");
        int status = Results.COLUMNS.indexOf("status");
        int fit = Results.COLUMNS.indexOf("pairs_fit");
        int reason = Results.COLUMNS.indexOf("stop_reason");
        int overhead = Results.COLUMNS.indexOf("overhead_b_per_pair");
        int flags = Results.COLUMNS.indexOf("jvm_flags");
        for (List<String> row : csv.subList(1, csv.size())) {
            String m = row.get(map);
            if (row.get(workload).equals("capacity")) {
                // 64 MiB holds some tens of thousands of 1.1 KB pairs, whatever the map
                assertEquals("ok", row.get(status), row.toString());
                long pairs = Long.parseLong(row.get(fit));
                assertTrue(pairs > 20_000 && pairs < 64 * 1024 * 1024 / 1100, row.toString());
                // out of memory, or (a heap map thrashing in full collections on a loaded machine) stalled
                assertTrue(row.get(reason).contains("exhausted") || row.get(reason).startsWith("stalled"),
                        row.toString());
                if (m.equals("mapdb")) {
                    assertTrue(row.get(reason).contains("direct memory"), row.toString());
                    assertTrue(row.get(flags).contains("-XX:MaxDirectMemorySize="), row.toString());
                }
            } else if (row.get(ram).equals(Long.toString(24L << 20)) && !m.equals("cslm")) {
                // 24 MiB cannot hold the off-heap share and a heap: recorded without a run
                assertEquals("oom", row.get(status), row.toString());
                assertTrue(row.get(reason).startsWith("does not fit"), row.toString());
            } else {
                assertEquals("ok", row.get(status), row.toString());
                assertEquals("5000", row.get(Results.COLUMNS.indexOf("pairs_ingested")));
                double o = Double.parseDouble(row.get(overhead));
                assertTrue(o > -200 && o < 1000, row.toString());
            }
        }
        String md = Files.readString(r.report(), StandardCharsets.UTF_8);
        assertTrue(md.contains("## Pairs that fit in a RAM budget"), md);
        assertTrue(md.contains("| RAM budget | oak-zc | cslm | mapdb | oak-zc / cslm | mapdb / cslm |"), md);
        assertTrue(md.contains("## Ingestion as the RAM budget shrinks"), md);
        assertTrue(md.contains("does not fit"), md);
        List<String> names = r.charts().stream().map(p -> p.getFileName().toString()).toList();
        assertTrue(names.containsAll(List.of("capacity.png", "ingest-ram.png", "memory.png")), names.toString());
        for (Path png : r.charts()) {
            assertPng(png);
        }
    }

    @Test
    void capacityWithSmallPairsGivesOakTheHeapItsChunksNeed(@TempDir Path dir) throws Exception {
        // with a fixed 5% heap share Oak ran out of heap long before its off-heap capacity here, and
        // the child died building its result: the split now follows the measured footprint
        Bench.Outcome r = Bench.run("--map", "oak-zc,cslm", "--workload", "capacity", "--capacity-ram", "64m",
                "--key-size", "16", "--value-size", "16", "--warmup", "0", "--stall", "5", "--out", dir.toString());
        assertEquals(2, r.runs());
        assertEquals(0, r.failures(), () -> logs(dir));
        List<List<String>> csv = readCsv(r.csv());
        int map = Results.COLUMNS.indexOf("map");
        int fit = Results.COLUMNS.indexOf("pairs_fit");
        int reason = Results.COLUMNS.indexOf("stop_reason");
        int heap = Results.COLUMNS.indexOf("heap_budget_bytes");
        long oak = 0;
        long cslm = 0;
        for (List<String> row : csv.subList(1, csv.size())) {
            long pairs = Long.parseLong(row.get(fit));
            if (row.get(map).equals("oak-zc")) {
                oak = pairs;
                // the off-heap side ran out, not the heap: the heap was given what the chunks need
                assertTrue(row.get(reason).contains("OakOutOfMemoryException"), row.toString());
                long heapBytes = Long.parseLong(row.get(heap));
                assertTrue(heapBytes > 20L << 20 && heapBytes < 48L << 20, row.toString());
            } else {
                cslm = pairs;
            }
        }
        // 16-byte pairs cost Oak about 70 bytes a pair in all, the skiplist about 100
        assertTrue(oak > cslm * 1.1, "oak " + oak + ", cslm " + cslm);
        String md = Files.readString(r.report(), StandardCharsets.UTF_8);
        assertTrue(md.contains("B off-heap per pair measured"), md);
        assertTrue(Files.exists(dir.resolve("logs").resolve("0000-calibrate-oak-zc.log")));
    }

    private static String logs(Path dir) {
        try (var files = Files.list(dir.resolve("logs"))) {
            StringBuilder b = new StringBuilder();
            for (Path p : files.sorted().toList()) {
                String s = Files.readString(p);
                b.append(p.getFileName()).append(":\n").append(s, Math.max(0, s.length() - 3000), s.length());
            }
            return b.toString();
        } catch (IOException e) {
            return e.toString();
        }
    }

    private static void assertPng(Path png) throws IOException {
        byte[] bytes = Files.readAllBytes(png);
        assertTrue(bytes.length > 1000, png + " is " + bytes.length + " bytes");
        byte[] head = new byte[PNG_MAGIC.length];
        System.arraycopy(bytes, 0, head, 0, head.length);
        assertArrayEquals(PNG_MAGIC, head, png.toString());
        BufferedImage img = ImageIO.read(png.toFile());
        assertNotNull(img, png.toString());
        assertTrue(img.getWidth() >= 800 && img.getHeight() >= 400, png.toString());
    }

    /** A small RFC 4180 reader: quoted cells with doubled quotes, no newlines inside cells. */
    private static List<List<String>> readCsv(Path file) throws IOException {
        List<List<String>> rows = new ArrayList<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            List<String> cells = new ArrayList<>();
            StringBuilder cell = new StringBuilder();
            boolean quoted = false;
            for (int i = 0; i < line.length(); i++) {
                char c = line.charAt(i);
                if (quoted) {
                    if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                        cell.append('"');
                        i++;
                    } else if (c == '"') {
                        quoted = false;
                    } else {
                        cell.append(c);
                    }
                } else if (c == '"') {
                    quoted = true;
                } else if (c == ',') {
                    cells.add(cell.toString());
                    cell.setLength(0);
                } else {
                    cell.append(c);
                }
            }
            cells.add(cell.toString());
            rows.add(cells);
        }
        return rows;
    }
}
