package dev.oakmap;

import dev.oakmap.common.OakCommonTypes;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Keeps the README's quick start honest: {@link QuickStart#main} is the README's code, verbatim
 * (between the markers), and this test runs it and checks what it prints.
 */
class ReadmeExampleTest {

    // ---- README quick start: begin (keep identical to README.md) ----
    static class QuickStart {
        public static void main(String[] args) {
            try (OakMap<Integer, String> map = new OakMapBuilder<>(
                    OakCommonTypes.INTEGER_SERIALIZER,     // how keys are written off-heap
                    OakCommonTypes.STRING_SERIALIZER,      // how values are written off-heap
                    OakCommonTypes.INTEGER_COMPARATOR)     // key order, on objects and on bytes
                    .memoryCapacity(64L << 20)             // at most 64 MiB off-heap
                    .build()) {

                // The java.util.concurrent API: objects in, copies out.
                map.put(1, "one");
                map.put(2, "two");
                map.put(3, "three");
                String two = map.get(2);                   // "two", deserialized from off-heap

                // Zero-copy reads: a view of the off-heap bytes, no copy made.
                OakUnscopedBuffer three = map.zc().get(3);
                int length = three.capacity();             // 5 (UTF-8 bytes)
                String copy = three.transform(OakCommonTypes.STRING_SERIALIZER::deserialize);

                // In-place, atomic updates: capitalize the value of 1 without copying it.
                map.zc().computeIfPresent(1, buf -> buf.put(0, (byte) Character.toUpperCase(buf.get(0))));

                // The usual atomic ConcurrentMap methods (here done atomically by Oak).
                map.computeIfPresent(2, (key, value) -> value + "!");

                // Descending iteration is as cheap as ascending.
                for (Map.Entry<Integer, String> e : map.descendingMap().entrySet()) {
                    System.out.println(e.getKey() + " -> " + e.getValue());
                }
                System.out.println(two + " " + length + " " + copy + " " + map.memoryUsed() + " bytes used");
            } // close() returns the off-heap memory
        }
    }
    // ---- README quick start: end ----

    @Test
    void quickStartRunsAndPrintsWhatTheReadmeSays() {
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            QuickStart.main(new String[0]);
        } finally {
            System.setOut(original);
        }
        String[] lines = captured.toString(StandardCharsets.UTF_8).split("\\R");
        assertEquals("3 -> three", lines[0]);
        assertEquals("2 -> two!", lines[1]);
        assertEquals("1 -> One", lines[2]);
        String last = lines[3];
        assertEquals(true, last.startsWith("two 5 three "), last);
        assertEquals(true, last.endsWith(" bytes used"), last);
    }
}
