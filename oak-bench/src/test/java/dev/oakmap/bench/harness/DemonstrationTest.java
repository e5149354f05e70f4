package dev.oakmap.bench.harness;

import dev.oakmap.bench.Demo;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** Runs bin/demo's main at a tiny scale and checks the shape of what it prints (the README quotes it). */
class DemonstrationTest {

    @Test
    void printsTheThroughputAndMemoryTables() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream old = System.out;
        PrintStream oldErr = System.err;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
            Demo.main(new String[]{"--pairs=500", "--key-size=16", "--value-size=40", "--duration=0.05",
                    "--warmup=0", "--threads=1", "--scan=100"});
        } finally {
            System.setOut(old);
            System.setErr(oldErr);
        }
        String s = out.toString(StandardCharsets.UTF_8);
        assertTrue(s.startsWith("Oak demo: 500 pairs, 16 B keys, 40 B values"), s);
        assertTrue(s.contains("workload                                     threads       Oak ops/s      CSLM ops/s  Oak/CSLM"), s);
        for (String row : new String[]{"ingest (putIfAbsent, zero-copy for Oak)", "get, zero-copy (zc().get, read 8 B)",
                "get, copy (get -> byte[])", "put, zero-copy (zc().put)", "put, legacy (put returns old copy)",
                "putIfAbsentComputeIfPresent +1 in place", "ascending scan 100, zero-copy stream",
                "ascending scan 100, legacy (copies)", "descending scan 100, zero-copy stream",
                "descending scan 100, legacy (copies)"}) {
            assertTrue(s.lines().anyMatch(l -> l.startsWith(row) && l.matches(".*\\d\\.\\d\\dx$")), row + " in\n" + s);
        }
        assertTrue(s.contains("Memory after ingesting 500 pairs (raw data 56 B per pair"), s);
        assertTrue(s.lines().anyMatch(l -> l.startsWith("Oak ") && l.split("\\s+").length == 5), s);
        assertTrue(s.lines().anyMatch(l -> l.startsWith("CSLM ") && l.contains(" - ")), s);
    }
}
