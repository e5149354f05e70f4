package dev.oakmap;

import dev.oakmap.common.OakCommonTypes;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Misuse cases found by crossing the map's mutating entry points with the failures a user can
 * cause (see {@link MisuseTest} for the ones covered before).
 */
class MisuseMatrixTest {

    private static OakMap<Integer, byte[]> byteArrayMap() {
        return new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER, OakCommonTypes.BYTE_ARRAY_SERIALIZER,
                OakCommonTypes.INTEGER_COMPARATOR).chunkCapacity(8).memoryCapacity(TestMaps.SMALL_CAPACITY)
                .blockSize(TestMaps.SMALL_BLOCK).build();
    }

    /**
     * {@code replaceAll} over values whose type has no value equality ({@code byte[]}, the common
     * types' own): it replaced each key with {@code replace(key, copy, new)}, which compares with
     * {@code equals}, so the fresh copy never matched and it called the function again, for ever.
     * Each key is now replaced if its value still has the bytes the function saw: once per key,
     * on the map and on its range and descending views; and a value changed between the read and
     * the replacement (here by the function itself) is seen again, not overwritten.
     */
    @Test
    void replaceAllOverValuesWithoutValueEqualityTerminates() {
        try (OakMap<Integer, byte[]> map = byteArrayMap()) {
            TreeMap<Integer, byte[]> model = new TreeMap<>();
            for (int k = 0; k < 100; k++) {
                map.put(k, new byte[] {(byte) k, 0});
                model.put(k, new byte[] {(byte) k, 0});
            }
            List<Integer> calls = new ArrayList<>();
            assertTimeoutPreemptively(Duration.ofSeconds(10), () -> map.replaceAll((k, v) -> {
                calls.add(k);
                if (calls.size() > 1000) {
                    throw new AssertionError("replaceAll called its function " + calls.size() + " times for 100 keys");
                }
                return new byte[] {v[0], (byte) (v[1] + 1)};
            }));
            assertEquals(100, calls.size(), "one call per key");
            model.replaceAll((k, v) -> new byte[] {v[0], (byte) (v[1] + 1)});
            assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
                map.subMap(10, 20).replaceAll((k, v) -> new byte[] {v[0], (byte) (v[1] + 1)});
                map.descendingMap().headMap(89).replaceAll((k, v) -> new byte[] {v[0], (byte) (v[1] + 1)});
            });
            model.subMap(10, 20).replaceAll((k, v) -> new byte[] {v[0], (byte) (v[1] + 1)});
            model.descendingMap().headMap(89).replaceAll((k, v) -> new byte[] {v[0], (byte) (v[1] + 1)});
            // the function itself changes its key's value the first time: that value is not lost,
            // the function runs again on it
            List<byte[]> seen = new ArrayList<>();
            assertTimeoutPreemptively(Duration.ofSeconds(10), () -> map.subMap(50, true, 50, true).replaceAll((k, v) -> {
                seen.add(v);
                if (seen.size() == 1) {
                    map.put(50, new byte[] {7, 7, 7});
                }
                return new byte[] {v[0], (byte) (v.length)};
            }));
            assertEquals(2, seen.size(), "the function ran again on the value changed meanwhile");
            assertArrayEquals(new byte[] {7, 7, 7}, seen.get(1));
            model.put(50, new byte[] {7, 3});
            assertEquals(model.size(), map.size());
            for (Map.Entry<Integer, byte[]> e : model.entrySet()) {
                assertArrayEquals(e.getValue(), map.get(e.getKey()), "value of " + e.getKey());
            }
        }
    }
}
