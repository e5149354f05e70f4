package dev.oakmap.bench.harness;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The rows of a harness invocation (one per run, a fresh JVM each) and their statistics: median,
 * minimum and maximum over repetitions of each (map, workload, threads) point.
 */
final class Results {

    /** The CSV columns, in order. */
    static final List<String> COLUMNS = List.of(
            "timestamp", "map", "workload", "threads", "rep", "status", "ops_per_s", "ops", "seconds",
            "ram_budget_bytes", "pairs_fit", "stop_reason",
            "keys", "pairs_ingested", "key_size", "value_size", "distribution", "key_order", "key_head", "duration_s", "warmup_s", "scan",
            "ingest_s", "ingest_ops_per_s", "heap_base_bytes", "heap_growth_bytes", "offheap_used_bytes", "offheap_reserved_bytes",
            "heap_b_per_pair", "offheap_used_b_per_pair", "offheap_reserved_b_per_pair", "overhead_b_per_pair",
            "size_after", "offheap_used_after", "gc_count", "gc_ms", "heap_budget_bytes", "offheap_budget_bytes", "jvm", "jvm_flags",
            "max_heap_bytes", "nproc", "cpu_model", "git_commit", "map_version", "wall_s", "error");

    final List<Map<String, String>> rows = new ArrayList<>();

    /** Appends {@code row} to the list and to the CSV file (created with its header if new). */
    void add(Map<String, String> row, Path csv) throws IOException {
        rows.add(row);
        boolean fresh = !Files.exists(csv);
        try (Writer w = Files.newBufferedWriter(csv, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND)) {
            if (fresh) {
                w.write(String.join(",", COLUMNS));
                w.write('\n');
            }
            List<String> cells = new ArrayList<>();
            for (String c : COLUMNS) {
                cells.add(csvCell(row.getOrDefault(c, "")));
            }
            w.write(String.join(",", cells));
            w.write('\n');
        }
    }

    static String csvCell(String s) {
        String t = s.replace('\n', ' ').replace('\r', ' ');
        if (t.contains(",") || t.contains("\"")) {
            return '"' + t.replace("\"", "\"\"") + '"';
        }
        return t;
    }

    /** Median, minimum and maximum of a point's successful repetitions. */
    record Stat(double median, double min, double max, int n) {
        static Stat of(double[] v) {
            if (v.length == 0) {
                return null;
            }
            double[] s = v.clone();
            Arrays.sort(s);
            int k = s.length;
            double med = k % 2 == 1 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
            return new Stat(med, s[0], s[k - 1], k);
        }
    }

    /**
     * @return the statistics of {@code column} over the successful runs of {@code map} running
     *         {@code workload} (after its runAs mapping) on {@code threads} threads, or null
     */
    Stat stat(MapKind map, Workload workload, int threads, String column) {
        Workload actual = map.runAs().apply(workload);
        if (actual == null) {
            return null;
        }
        return Stat.of(rows.stream()
                .filter(r -> "ok".equals(r.get("status")) && map.name().equals(r.get("map"))
                        && actual.id.equals(r.get("workload")) && Integer.toString(threads).equals(r.get("threads")))
                .mapToDouble(r -> parse(r.get(column)))
                .filter(d -> !Double.isNaN(d))
                .toArray());
    }

    /**
     * @return the statistics of {@code column} over the successful runs of {@code map} running the
     *         memory experiment {@code workload} under RAM budget {@code ram}, or null
     */
    Stat statAt(MapKind map, Workload workload, long ram, String column) {
        return Stat.of(at(map, workload, ram).stream()
                .filter(r -> "ok".equals(r.get("status")))
                .mapToDouble(r -> parse(r.get(column)))
                .filter(d -> !Double.isNaN(d))
                .toArray());
    }

    /** @return the rows (any status) of {@code map} running {@code workload} under RAM budget {@code ram} */
    List<Map<String, String>> at(MapKind map, Workload workload, long ram) {
        Workload actual = map.runAs().apply(workload);
        if (actual == null) {
            return List.of();
        }
        return rows.stream()
                .filter(r -> map.name().equals(r.get("map")) && actual.id.equals(r.get("workload"))
                        && Long.toString(ram).equals(r.get("ram_budget_bytes")))
                .toList();
    }

    /**
     * @return the statistics of {@code column} over the successful runs of {@code map} that match
     *         {@code which}, or null
     */
    Stat statWhere(MapKind map, java.util.function.Predicate<Map<String, String>> which, String column) {
        return Stat.of(rows.stream()
                .filter(r -> "ok".equals(r.get("status")) && map.name().equals(r.get("map")) && which.test(r))
                .mapToDouble(r -> parse(r.get(column)))
                .filter(d -> !Double.isNaN(d))
                .toArray());
    }

    /** @return the statistics of {@code column} over every successful run of {@code map}, or null */
    Stat statAll(MapKind map, String column) {
        return Stat.of(rows.stream()
                .filter(r -> "ok".equals(r.get("status")) && map.name().equals(r.get("map")))
                .mapToDouble(r -> parse(r.get(column)))
                .filter(d -> !Double.isNaN(d))
                .toArray());
    }

    /** @return the rows that failed (a memory experiment's map running out of memory is not a failure) */
    List<Map<String, String>> failures() {
        return rows.stream().filter(r -> "error".equals(r.get("status"))).toList();
    }

    static double parse(String s) {
        if (s == null || s.isEmpty()) {
            return Double.NaN;
        }
        try {
            return Double.parseDouble(s);
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    /** A new row with the columns in CSV order. */
    static Map<String, String> newRow() {
        Map<String, String> r = new LinkedHashMap<>();
        for (String c : COLUMNS) {
            r.put(c, "");
        }
        return r;
    }
}
