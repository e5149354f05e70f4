package dev.oakmap.bench.harness;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@link Machine}: the huge-page figure the run logs carry, read from smaps-style lines. */
class MachineTest {

    @Test
    void readsAnonymousHugePagesInBytes() {
        List<String> rollup = List.of(
                "7f0000000000-7fffffffffff ---p 00000000 00:00 0                          [rollup]",
                "Rss:             1234567 kB",
                "AnonHugePages:    524288 kB",
                "ShmemPmdMapped:        0 kB");
        assertEquals(512L << 20, Machine.anonHugePageBytes(rollup));
    }

    @Test
    void saysNotAvailableWhenTheFigureIsAbsent() {
        assertEquals(-1, Machine.anonHugePageBytes(List.of("Rss:  100 kB", "Pss:  90 kB")));
    }
}
