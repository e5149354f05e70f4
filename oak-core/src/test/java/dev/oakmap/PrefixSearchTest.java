package dev.oakmap;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Searches that use the key prefix, including each chunk's summary of every sixteenth prefix,
 * agree with a {@link TreeMap} whatever the prefix says: exact (every key its own prefix),
 * coarse (runs of 64 keys tie, so summary elements tie with the searched key and with each
 * other), or constant (every comparison falls through to the serialized key).
 */
class PrefixSearchTest {

    /** Integer keys whose prefix keeps only the bits above {@code shift} (64: a constant prefix). */
    private static final class ShiftedPrefix implements OakComparator<Integer> {
        private final int shift;

        ShiftedPrefix(int shift) {
            this.shift = shift;
        }

        @Override
        public int compareKeys(Integer a, Integer b) {
            return TestMaps.INT_CMP.compareKeys(a, b);
        }

        @Override
        public int compareSerializedKeys(OakScopedReadBuffer a, OakScopedReadBuffer b) {
            return TestMaps.INT_CMP.compareSerializedKeys(a, b);
        }

        @Override
        public int compareKeyAndSerializedKey(Integer key, OakScopedReadBuffer b) {
            return TestMaps.INT_CMP.compareKeyAndSerializedKey(key, b);
        }

        @Override
        public long keyPrefix(Integer key) {
            return shift >= 64 ? 0 : ((key ^ Integer.MIN_VALUE) & 0xFFFF_FFFFL) >>> shift;
        }

        @Override
        public long serializedKeyPrefix(OakScopedReadBuffer serializedKey) {
            return shift >= 64 ? 0 : (serializedKey.getInt(0) & 0xFFFF_FFFFL) >>> shift;
        }
    }

    @ParameterizedTest(name = "prefix shift {0}")
    @ValueSource(ints = {0, 6, 64})
    void navigationAgreesWithATreeMap(int shift) {
        for (long seed : TestMaps.seeds(0x5EED_0101L)) {
            SplittableRandom rnd = new SplittableRandom(seed);
            try (OakMap<Integer, Long> map = new OakMapBuilder<>(TestMaps.INT_KEY, TestMaps.LONG_VAL, new ShiftedPrefix(shift))
                    .chunkCapacity(256).memoryCapacity(64L << 20).build()) {
                TreeMap<Integer, Long> model = new TreeMap<>();
                for (int i = 0; i < 20_000; i++) { // inserts and some removals, so chunks are rebuilt many times
                    int k = rnd.nextInt(-50_000, 50_000);
                    if (rnd.nextInt(5) == 0) {
                        assertEquals(model.remove(k), map.remove(k));
                    } else {
                        assertEquals(model.put(k, (long) i), map.put(k, (long) i));
                    }
                }
                String ctx = "shift " + shift + " seed " + seed;
                for (int i = 0; i < 20_000; i++) {
                    int k = rnd.nextInt(-51_000, 51_000);
                    assertEquals(model.get(k), map.get(k), ctx + " get " + k);
                    assertEquals(model.floorKey(k), map.floorKey(k), ctx + " floorKey " + k);
                    assertEquals(model.ceilingKey(k), map.ceilingKey(k), ctx + " ceilingKey " + k);
                    assertEquals(model.lowerKey(k), map.lowerKey(k), ctx + " lowerKey " + k);
                    assertEquals(model.higherKey(k), map.higherKey(k), ctx + " higherKey " + k);
                }
                for (int i = 0; i < 50; i++) {
                    int from = rnd.nextInt(-51_000, 51_000);
                    assertEquals(firstKeys(model.tailMap(from, true), 40), firstKeys(map.tailMap(from, true), 40),
                            ctx + " ascending from " + from);
                    assertEquals(firstKeys(model.headMap(from, false).descendingMap(), 40),
                            firstKeys(map.headMap(from, false).descendingMap(), 40), ctx + " descending below " + from);
                }
            }
        }
    }

    private static java.util.List<Integer> firstKeys(Map<Integer, Long> m, int n) {
        return m.keySet().stream().limit(n).toList();
    }
}
