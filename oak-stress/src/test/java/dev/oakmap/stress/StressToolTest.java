package dev.oakmap.stress;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs the stress tool briefly, as CI can afford: about 4 s under each memory scheme (the same one
 * for keys and values), small chunks, a fixed seed.
 */
class StressToolTest {

    @ParameterizedTest
    @ValueSource(strings = {"nova", "lock-based", "grow-only"})
    void mixedWorkloadKeepsAllInvariants(String scheme) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(buf, true, StandardCharsets.UTF_8);
        int status = StressTool.run(new String[] {"--threads", "3", "--seconds", "4", "--keys", "4000",
                "--chunk", "16", "--value-size", "48", "--seed", "20250601", "--progress", "2",
                "--key-memory", scheme, "--value-memory", scheme}, out);
        String log = buf.toString(StandardCharsets.UTF_8);
        System.out.print(log);
        assertEquals(0, status, log);
        assertTrue(log.contains("OK: all invariants held"), log);
    }

    @Test
    void badArgumentsExitWithStatus2() {
        PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        assertEquals(2, StressTool.run(new String[] {"--threads", "0"}, out));
        assertEquals(2, StressTool.run(new String[] {"--bogus", "1"}, out));
        assertEquals(2, StressTool.run(new String[] {"--key-memory", "leaky"}, out));
    }

    @Test
    void detectsACorruptValue() {
        byte[] v = StressTool.Value.make(7, 3, 32);
        assertEquals(3, StressTool.Value.check(7, v, 32));
        v[15] ^= 1;
        assertThrowsFailure(() -> StressTool.Value.check(7, v, 32));
        assertThrowsFailure(() -> StressTool.Value.check(8, StressTool.Value.make(7, 3, 32), 32));
    }

    private static void assertThrowsFailure(Runnable r) {
        try {
            r.run();
        } catch (StressTool.Failure expected) {
            return;
        }
        throw new AssertionError("no failure reported");
    }
}
