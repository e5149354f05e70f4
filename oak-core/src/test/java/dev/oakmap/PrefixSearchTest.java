package dev.oakmap;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.LongUnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Searches that use the key prefix, including each chunk's summary of every sixteenth prefix
 * and its 32-bit form of each prefix, agree with a {@link TreeMap} whatever the prefix says:
 * exact (every key its own prefix, in the low, middle or high bits of the 64), coarse (runs of
 * 64 keys tie, so summary elements tie with the searched key and with each other), or constant
 * (every comparison falls through to the serialized key). Keys arrive at random and in runs of
 * increasing and decreasing order, so chunks are built with 32-bit forms that later keys
 * overflow (and clamp), and rebuilt with forms that drop bits the earlier ones kept.
 */
class PrefixSearchTest {

    /** How a test comparator derives a prefix from an int key's unsigned rank {@code u}. */
    enum Family {
        LOW_BITS(u -> u),
        COARSE(u -> u >>> 6),
        CONSTANT(u -> 0),
        MIDDLE_BITS(u -> u << 16),
        HIGH_BITS(u -> u << 32),
        ALL_BITS(u -> u << 32 | u);

        final LongUnaryOperator fromRank;

        Family(LongUnaryOperator fromRank) {
            this.fromRank = fromRank;
        }
    }

    /**
     * Integer keys with a prefix of the given {@link Family}; if {@code objectsOnly}, the
     * serialized-key prefix is left at the interface's default (0), a contract breach that the
     * map must survive: it never needed that method until it rebuilt prefixes.
     */
    private static final class FamilyPrefix extends TestMaps.IntComparator {
        private final Family family;
        private final boolean objectsOnly;

        FamilyPrefix(Family family, boolean objectsOnly) {
            this.family = family;
            this.objectsOnly = objectsOnly;
        }

        @Override
        public long keyPrefix(Integer key) {
            return family.fromRank.applyAsLong((key ^ Integer.MIN_VALUE) & 0xFFFF_FFFFL);
        }

        @Override
        public long serializedKeyPrefix(OakScopedReadBuffer serializedKey) {
            return objectsOnly ? 0 : family.fromRank.applyAsLong(serializedKey.getInt(0) & 0xFFFF_FFFFL);
        }
    }

    @ParameterizedTest(name = "prefix {0}")
    @EnumSource(Family.class)
    void navigationAgreesWithATreeMap(Family family) {
        agreesWithATreeMap(family, false);
    }

    @ParameterizedTest(name = "prefix {0}, serialized prefix missing")
    @EnumSource(value = Family.class, names = {"LOW_BITS", "HIGH_BITS", "ALL_BITS"})
    void aComparatorWithoutASerializedPrefixStillWorks(Family family) {
        agreesWithATreeMap(family, true);
    }

    private static void agreesWithATreeMap(Family family, boolean objectsOnly) {
        for (long seed : TestMaps.seeds(0x5EED_0101L)) {
            SplittableRandom rnd = new SplittableRandom(seed);
            try (OakMap<Integer, Long> map = new OakMapBuilder<>(TestMaps.INT_KEY, TestMaps.LONG_VAL,
                    new FamilyPrefix(family, objectsOnly))
                    .chunkCapacity(256).memoryCapacity(64L << 20).build()) {
                TreeMap<Integer, Long> model = new TreeMap<>();
                for (int i = 0; i < 20_000; i++) { // inserts and some removals, so chunks are rebuilt many times
                    int k = rnd.nextInt(-50_000, 50_000);
                    if (rnd.nextInt(5) == 0) {
                        assertEquals(model.remove(k), map.remove(k));
                    } else {
                        assertEquals(model.put(k, (long) i), map.put(k, (long) i));
                    }
                    if (i % 5_000 == 0) { // a run in order, past the keys so far or before them
                        int start = rnd.nextInt(-60_000, 60_000), step = rnd.nextBoolean() ? 1 : -1;
                        for (int j = 0; j < 1_000; j++) {
                            int r = start + step * j * (1 + j % 3);
                            assertEquals(model.put(r, (long) j), map.put(r, (long) j));
                        }
                    }
                }
                String ctx = family + (objectsOnly ? " (objects only)" : "") + " seed " + seed;
                assertEquals(model.size(), map.size(), ctx + " size");
                for (int i = 0; i < 20_000; i++) {
                    int k = rnd.nextInt(-70_000, 70_000);
                    assertEquals(model.get(k), map.get(k), ctx + " get " + k);
                    assertEquals(model.floorKey(k), map.floorKey(k), ctx + " floorKey " + k);
                    assertEquals(model.ceilingKey(k), map.ceilingKey(k), ctx + " ceilingKey " + k);
                    assertEquals(model.lowerKey(k), map.lowerKey(k), ctx + " lowerKey " + k);
                    assertEquals(model.higherKey(k), map.higherKey(k), ctx + " higherKey " + k);
                }
                for (int i = 0; i < 50; i++) {
                    int from = rnd.nextInt(-70_000, 70_000);
                    assertEquals(firstKeys(model.tailMap(from, true), 40), firstKeys(map.tailMap(from, true), 40),
                            ctx + " ascending from " + from);
                    assertEquals(firstKeys(model.headMap(from, false).descendingMap(), 40),
                            firstKeys(map.headMap(from, false).descendingMap(), 40), ctx + " descending below " + from);
                }
                assertEquals(List.copyOf(model.keySet()), List.copyOf(map.keySet()), ctx + " keys");
            }
        }
    }

    private static List<Integer> firstKeys(Map<Integer, Long> m, int n) {
        return m.keySet().stream().limit(n).toList();
    }
}
