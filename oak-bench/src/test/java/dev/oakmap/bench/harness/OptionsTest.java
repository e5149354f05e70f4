package dev.oakmap.bench.harness;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Command lines that the harness must refuse when it parses them, with a message that names the
 * option, rather than accept and then fail every run, hang, run something else than was asked,
 * or end in a stack trace.
 */
class OptionsTest {

    /** @return the message of the IllegalArgumentException that parsing {@code args} throws */
    private static String refused(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> Options.parse(args),
                String.join(" ", args)).getMessage();
    }

    @Test
    void zipfThetaOutsideItsRangeIsRefusedUpFront() {
        // accepted before, then every run of the invocation failed in its child JVM
        assertTrue(refused("--distribution", "zipf", "--zipf-theta", "1.5").contains("zipf-theta"));
        assertTrue(refused("--distribution", "zipf", "--zipf-theta", "0").contains("zipf-theta"));
        assertTrue(refused("--distribution", "zipf", "--zipf-theta", "1").contains("zipf-theta"));
        assertEquals(0.5, Options.parse(new String[]{"--distribution", "zipf", "--zipf-theta", "0.5"}).zipfTheta);
        // the theta of a uniform run is not used
        Options.parse(new String[]{"--zipf-theta", "1.5"});
    }

    @Test
    void countsBeyondAnIntAreRefusedNotWrapped() {
        // 5000m keys wrapped to 705,032,704 and 4294967298 to 2, silently
        assertTrue(refused("--keys", "5000m").contains("--keys"));
        assertTrue(refused("--keys", "4294967298").contains("--keys"));
        assertTrue(refused("--ram-pairs", "3000m").contains("--ram-pairs"));
        // 2200 x 2M keys wrapped to 105,032,704
        assertTrue(refused("--preset", "paper", "--scale", "2200").contains("--scale"));
        assertEquals(2_000_000_000, Options.parse(new String[]{"--keys", "2000m"}).keys);
    }

    @Test
    void nonFiniteTimesAreRefused() {
        // --warmup NaN made every forked run time out at once ("timed out after NaN s"), and an
        // infinite warm-up or duration never ended
        for (String option : new String[]{"--warmup", "--duration", "--stall"}) {
            for (String v : new String[]{"NaN", "Infinity"}) {
                refused(option, v);
            }
        }
        refused("--heap-share", "NaN");
    }

    @Test
    void booleansOtherThanTrueOrFalseAreRefused() {
        // --fork yes ran every map in the harness's own JVM, without its budget
        assertTrue(refused("--fork", "yes").contains("--fork"));
        assertTrue(refused("--dry-run=1").contains("--dry-run"));
        assertFalse(Options.parse(new String[]{"--fork", "FALSE"}).fork);
        assertTrue(Options.parse(new String[]{"--fork=true"}).fork);
    }

    @Test
    void badNumbersAndMissingValuesNameTheOption() {
        assertTrue(refused("--threads", "1,two").contains("--threads"));
        assertTrue(refused("--keys", "many").contains("--keys"));
        assertTrue(refused("--ram", "6GiB").contains("--ram"));
        // the next option is not this one's value
        assertTrue(refused("--keys", "--threads", "1").contains("--keys needs a value"));
        assertEquals(-5, Options.parse(new String[]{"--seed", "-5"}).seed);
    }

    @Test
    void budgetsThatCannotRunAreRefusedWhenParsed() {
        // these were thrown from Bench.run, after the plan was printed, as a stack trace
        String heap = refused("--map", "cslm", "--heap", "100m");
        assertTrue(heap.contains("--heap"), heap);
        String ram = refused("--map", "oak-zc", "--ram", "512m", "--offheap", "1g");
        assertTrue(ram.contains("--ram"), ram);
        assertTrue(refused("--ram", "4g", "--heap", "2g").contains("--heap"));
        assertEquals(512 * Options.MIB, Options.parse(new String[]{"--heap", "512m"}).budget(MapKind.CSLM).heap());
    }

    @Test
    void outputThatIsAFileIsRefused(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("file"), "x");
        assertTrue(refused("--out", file.toString()).contains("--out"));
        assertTrue(refused("--out", file.resolve("sub").toString()).contains("--out"));
        Options.parse(new String[]{"--out", dir.resolve("new").resolve("sub").toString()});
    }
}
