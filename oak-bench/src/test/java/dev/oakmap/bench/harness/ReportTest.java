package dev.oakmap.bench.harness;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The report written from given rows, without running anything. */
class ReportTest {

    private static Map<String, String> row(String map, String status, long ram, String... more) {
        Map<String, String> r = Results.newRow();
        r.put("map", map);
        r.put("workload", Workload.INGEST_RAM.id);
        r.put("threads", "1");
        r.put("rep", "1");
        r.put("status", status);
        r.put("ram_budget_bytes", Long.toString(ram));
        for (int i = 0; i < more.length; i += 2) {
            r.put(more[i], more[i + 1]);
        }
        return r;
    }

    /** @return the report written into {@code dir} for {@code res} */
    private static String report(Path dir, Results res, Options o) throws Exception {
        Path file = dir.resolve("report.md");
        Report.write(file, res, o, new Report.Context("bin/bench", "machine", "jvm", "commit", "start", "end", 1,
                "charts"), List.of());
        return Files.readString(file, StandardCharsets.UTF_8);
    }

    private static String ingestRamLine(Path dir, Map<String, String> oak, Map<String, String> cslm) throws Exception {
        Options o = Options.parse(new String[]{"--map", "oak-zc,cslm", "--workload", "ingest-ram",
                "--ingest-ram", "64m", "--out", dir.toString()});
        Results res = new Results();
        Path csv = dir.resolve("results.csv");
        res.add(oak, csv);
        res.add(cslm, csv);
        return report(dir, res, o).lines().filter(l -> l.startsWith("| 64 MiB |")).findFirst().orElseThrow();
    }

    @Test
    void ingestRamSaysTheBaselineDoesNotFitOnlyWhenItRanOut(@TempDir Path dir) throws Exception {
        long ram = 64L << 20;
        Map<String, String> oak = row("oak-zc", "ok", ram, "ops_per_s", "100000", "pairs_ingested", "5000");
        // the baseline's run failed (its JVM did not start, say): nothing is known about whether it fits
        String failed = ingestRamLine(dir, oak, row("cslm", "error", ram, "error", "child JVM exited with 1"));
        assertTrue(failed.endsWith("| failed | - |"), failed);
        // the baseline ran out of memory: the map fits where the baseline does not
        String ranOut = ingestRamLine(dir, oak, row("cslm", "oom", ram, "pairs_ingested", "1200",
                "stop_reason", "Java heap exhausted (OutOfMemoryError: Java heap space)"));
        assertTrue(ranOut.endsWith("| fits; cslm does not |"), ranOut);
    }

    private static Map<String, String> point(String map, Workload w, int rep, double seconds) {
        Map<String, String> r = Results.newRow();
        r.put("map", map);
        r.put("workload", w.id);
        r.put("threads", "1");
        r.put("rep", Integer.toString(rep));
        r.put("status", "ok");
        r.put("ops_per_s", "1000");
        r.put("seconds", Double.toString(seconds));
        return r;
    }

    /** @return the report of oak-zc and cslm, one thread, {@code workloads}, over {@code rows} */
    @SafeVarargs
    private static String throughputReport(Path dir, String workloads, Map<String, String>... rows) throws Exception {
        Options o = Options.parse(new String[]{"--map", "oak-zc,cslm", "--workload", workloads,
                "--threads", "1", "--out", dir.toString()});
        Results res = new Results();
        for (Map<String, String> r : rows) {
            res.add(r, dir.resolve("results.csv"));
        }
        return report(dir, res, o);
    }

    @Test
    void pointsMeasuredInShortWindowsAreNamedAsNoisy(@TempDir Path dir) throws Exception {
        String note = throughputReport(dir, "ingest,put",
                point("oak-zc", Workload.INGEST, 1, 0.071),
                point("oak-zc", Workload.INGEST, 2, 0.094),
                point("cslm", Workload.INGEST, 1, 0.5), // at the threshold: not short
                point("oak-zc", Workload.PUT, 1, 3.0),
                point("cslm", Workload.PUT, 1, 0.2)).lines()
                .filter(l -> l.startsWith("Measured in windows shorter than")).findFirst().orElseThrow();
        assertTrue(note.contains("oak-zc ingest t=1 (71-94 ms)"), note);
        assertTrue(note.contains("cslm put t=1 (200 ms)"), note);
        assertTrue(!note.contains("cslm ingest") && !note.contains("oak-zc put"), note);
    }

    @Test
    void reportsWithoutShortWindowsSayNothingOfThem(@TempDir Path dir) throws Exception {
        String report = throughputReport(dir, "put", point("oak-zc", Workload.PUT, 1, 3.0),
                point("cslm", Workload.PUT, 1, 2.9));
        assertTrue(report.contains("| put | 1 |"), report);
        assertTrue(!report.contains("windows shorter than"), report);
    }
}
