package dev.oakmap.internal.map;

import dev.oakmap.MemoryScheme;
import dev.oakmap.common.OakCommonTypes;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Scans look ahead where pairs lie at random places, and stop where consecutive pairs lie next
 * to each other in memory (see {@code Cursor}, "Look-ahead"): the same keys, inserted in key order
 * and in random order, scanned whole in both directions, counting the lines look-ahead touched.
 */
class LookAheadLayoutTest {

    private static final int PAIRS = 4000;

    @ParameterizedTest(name = "descending={0}")
    @ValueSource(booleans = {false, true})
    void scansTouchAheadOnlyWherePairsAreScattered(boolean descending) {
        List<Long> keys = ascendingKeys();
        long inOrder = linesTouchedByAScanOf(keys, descending);
        Collections.shuffle(keys, new Random(7));
        long shuffled = linesTouchedByAScanOf(keys, descending);
        // scattered: the pairs' lines, at least one a pair; in order: the first few steps only
        assertTrue(shuffled >= PAIRS, "random order touched " + shuffled + " lines");
        assertTrue(inOrder < 100, "key order touched " + inOrder + " lines, random order " + shuffled);
    }

    /**
     * An 8-byte key and its value (a 12-byte header and 8 bytes) lie next to each other, 28 bytes
     * in all, so a pair spans one or two lines, and no line may be touched twice for the same
     * pair: fewer than 1.75 lines a pair (1.42-1.58 measured; touching the key's first and last
     * byte, the value header and the first data byte each on its own came to 3.3-3.6).
     */
    @ParameterizedTest(name = "descending={0}")
    @ValueSource(booleans = {false, true})
    void linesSharedWithinAPairAreTouchedOnce(boolean descending) {
        List<Long> keys = ascendingKeys();
        Collections.shuffle(keys, new Random(11));
        long lines = linesTouchedByAScanOf(keys, descending);
        assertTrue(lines >= PAIRS && lines < PAIRS * 7 / 4, lines + " lines for " + PAIRS + " pairs");
    }

    /** @return the keys 0 to {@link #PAIRS} - 1, in order, in a list the caller may shuffle */
    private static List<Long> ascendingKeys() {
        List<Long> keys = new ArrayList<>();
        for (long k = 0; k < PAIRS; k++) {
            keys.add(k);
        }
        return keys;
    }

    /** Inserts {@code keys} in their order, scans the map whole, and returns the lines touched. */
    private static long linesTouchedByAScanOf(List<Long> keys, boolean descending) {
        InternalOakMap<Long, Long> map = new InternalOakMap<>(OakCommonTypes.LONG_SERIALIZER,
                OakCommonTypes.LONG_SERIALIZER, OakCommonTypes.LONG_COMPARATOR, 64L << 20, 1 << 20, 256, 0.5,
                MemoryScheme.NOVA, MemoryScheme.NOVA);
        try {
            for (Long k : keys) {
                map.put(k, -k, false);
            }
            map.lookAheadFrom(0);
            Cursor<Long, Long> c = map.cursor(null, false, null, false, descending);
            long expected = descending ? PAIRS - 1 : 0;
            while (c.advance()) {
                assertEquals(expected, (long) c.key());
                expected += descending ? -1 : 1;
            }
            assertEquals(descending ? -1 : PAIRS, expected, "every key, in order");
            return c.linesTouched();
        } finally {
            map.close();
        }
    }
}
