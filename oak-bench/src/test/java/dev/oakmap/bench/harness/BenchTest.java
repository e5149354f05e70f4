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
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs the harness end to end at a tiny scale (a few seconds) and checks that its files are there
 * and well-formed. Not a benchmark: the figures are not looked at, only their shape.
 */
class BenchTest {

    private static final byte[] PNG_MAGIC = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

    @Test
    void inProcessRunWritesCsvReportAndCharts(@TempDir Path dir) throws Exception {
        Bench.Outcome r = Bench.run("--map", "all", "--workload", "update,get-zc,scan-desc-stream",
                "--threads", "1,2", "--keys", "2000", "--key-size", "16", "--value-size", "40",
                "--duration", "0.1", "--warmup", "0.05", "--reps", "2", "--scan", "100",
                "--fork", "false", "--out", dir.toString());

        // oak-zc runs all 3, oak-legacy only update (no zero-copy get or stream), cslm all 3
        // (its stream scan is its iterator scan): 7 points x 2 thread counts x 2 reps
        assertEquals(28, r.runs());
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
        assertTrue(md.contains("| workload | threads | oak-zc | oak-legacy | cslm | oak-zc / cslm | oak-legacy / cslm |"), md);
        assertTrue(md.lines().anyMatch(l -> l.startsWith("| get-zc | 2 |") && l.contains("x** |")), md);
        assertTrue(md.lines().anyMatch(l -> l.startsWith("| scan-desc-stream | 1 |") && l.contains("=scan-desc")), md);
        assertTrue(md.contains("## Memory after ingestion"), md);
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
    void optionsAndPlan() {
        Options o = Options.parse(new String[]{"--preset", "quick", "--map", "oak-legacy,cslm", "--threads", "1",
                "--keys", "1m", "--ram", "4g", "--offheap", "1.5g"});
        assertEquals(1_000_000, o.keys);
        assertArrayEquals(new int[]{1}, o.threads);
        assertEquals(Options.GIB * 5 / 2, o.budget(MapKind.OAK_LEGACY).heap());
        assertEquals(Options.GIB * 4, o.budget(MapKind.CSLM).heap());
        // legacy has no get-zc and no stream scans; cslm runs get-copy as get-zc and stream scans as iterator scans
        long planned = Bench.plan(o).size();
        assertEquals((Workload.values().length - 3) + (Workload.values().length - 3), planned);
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
