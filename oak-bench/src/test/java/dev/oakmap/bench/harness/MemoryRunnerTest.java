package dev.oakmap.bench.harness;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link MemoryRunner} in this JVM, with its log standing in for a full heap. */
class MemoryRunnerTest {

    /**
     * A heap map that fills the heap may leave the OutOfMemoryError to whatever allocates next,
     * and during a capacity run that is often the progress line: seen as a failed run ("error:
     * OutOfMemoryError") where the figure was the pairs that fit. Here the progress line is what
     * throws, as it did then.
     */
    @Test
    void runningOutWhilePrintingProgressStillCountsAsRunningOut() throws Exception {
        Options o = Options.parse(new String[]{"--map", "cslm", "--workload", "capacity", "--key-size", "16",
                "--value-size", "16", "--warmup", "0"});
        PrintStream log = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8) {
            @Override
            public PrintStream format(Locale l, String format, Object... args) {
                if (args.length > 0 && MemoryRunner.PROGRESS_PREFIX.equals(args[0])) {
                    throw new OutOfMemoryError("Java heap space");
                }
                return super.format(l, format, args);
            }
        };
        Map<String, String> r = MemoryRunner.run(o, MapKind.CSLM, Workload.CAPACITY, 1, 0, log);
        assertTrue(r.get("stop_reason").contains("Java heap exhausted"), r.toString());
        assertTrue(Long.parseLong(r.get("pairs_fit")) > 0, r.toString());
    }
}
