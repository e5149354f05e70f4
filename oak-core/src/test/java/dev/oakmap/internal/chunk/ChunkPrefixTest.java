package dev.oakmap.internal.chunk;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The 32-bit form of key prefixes that a chunk keeps (see {@link Chunk}, "Prefixes"): monotone
 * for any prefix, exact down to the chunk's shift for the keys it was built with, and copied by
 * a rebalance without loss.
 */
class ChunkPrefixTest {

    private static final long[] EDGES = {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, 1L << 32, (1L << 32) - 1, 1L << 30};

    /** Sorted prefixes of {@code n} keys, drawn from bits {@code [low, low + width)} over a random base. */
    private static long[] sortedPrefixes(SplittableRandom rnd, int n, int low, int width) {
        long base = rnd.nextLong();
        long[] p = new long[n];
        for (int i = 0; i < n; i++) {
            long r = width >= 64 ? rnd.nextLong() : rnd.nextLong() & ((1L << width) - 1);
            p[i] = width >= 64 ? r : base + (r << low);
        }
        Long[] boxed = Arrays.stream(p).boxed().toArray(Long[]::new);
        Arrays.sort(boxed, Long::compareUnsigned);
        return Arrays.stream(boxed).mapToLong(Long::longValue).toArray();
    }

    private static Chunk chunkOf(long[] prefixes, int minShift) {
        long[] refs = new long[prefixes.length];
        return new Chunk(0, prefixes.length == 0 ? 0 : prefixes[0], prefixes.length + 8, refs, prefixes, refs, 0,
                prefixes.length, minShift, null);
    }

    @Test
    void theFormIsMonotoneForEveryPrefix() {
        SplittableRandom rnd = new SplittableRandom(0x5EED_0201L);
        for (int round = 0; round < 300; round++) {
            int low = rnd.nextInt(0, 60), width = rnd.nextInt(1, 65 - low);
            Chunk c = chunkOf(sortedPrefixes(rnd, rnd.nextInt(0, 40), low, width), rnd.nextInt(0, 35));
            long[] probes = new long[400];
            for (int i = 0; i < probes.length; i++) {
                probes[i] = i < EDGES.length ? EDGES[i] : rnd.nextBoolean() ? rnd.nextLong()
                        : c.prefixFloor(1 + rnd.nextInt(Math.max(1, c.sortedCount()))) + rnd.nextLong(-3, 4);
            }
            for (long a : probes) {
                for (int j = 0; j < 20; j++) {
                    long b = probes[rnd.nextInt(probes.length)];
                    int order = Long.compareUnsigned(a, b);
                    int la = c.localPrefix(a), lb = c.localPrefix(b);
                    if (order < 0) {
                        assertTrue(la <= lb, () -> Long.toHexString(a) + " < " + Long.toHexString(b) + " but forms " + la + " > " + lb);
                    } else if (order > 0) {
                        assertTrue(la >= lb);
                    } else {
                        assertEquals(la, lb);
                    }
                }
            }
        }
    }

    @Test
    void builtKeysAreExactDownToTheShift() {
        SplittableRandom rnd = new SplittableRandom(0x5EED_0202L);
        for (int round = 0; round < 300; round++) {
            int low = rnd.nextInt(0, 60), width = rnd.nextInt(1, 65 - low);
            long[] p = sortedPrefixes(rnd, rnd.nextInt(1, 200), low, width);
            int minShift = rnd.nextInt(0, 35);
            Chunk c = chunkOf(p, minShift);
            int s = c.prefixShift();
            assertEquals(Chunk.shiftFor(p[0], p[p.length - 1], minShift), s);
            assertTrue(s >= minShift && s <= 34, "shift " + s);
            assertTrue(Long.compareUnsigned((p[p.length - 1] >>> s) - (p[0] >>> s), 1L << 30) < 0, "span at shift " + s);
            if (s > minShift) {
                assertTrue(Long.compareUnsigned((p[p.length - 1] >>> (s - 1)) - (p[0] >>> (s - 1)), 1L << 30) >= 0,
                        "a smaller shift would have done");
            }
            for (int i = 0; i < p.length; i++) {
                int ei = i + 1;
                assertTrue(c.prefixKnown(ei), "built keys are not clamped");
                assertEquals(p[i] >>> s << s, c.prefixFloor(ei));
                if (i > 0 && p[i] >>> s != p[i - 1] >>> s) {
                    assertNotEquals(c.localPrefix(p[i - 1]), c.localPrefix(p[i]), "keys apart at the shift stay apart");
                }
            }
            // a rebalance copies the floors into a chunk with a shift no smaller: the same forms
            long[] floors = new long[p.length];
            for (int i = 0; i < p.length; i++) {
                floors[i] = c.prefixFloor(i + 1);
            }
            Chunk copy = chunkOf(floors, s);
            for (int i = 0; i < p.length; i++) {
                assertEquals(copy.localPrefix(p[i]), copy.localPrefix(floors[i]), "a floor stands for its prefix");
            }
        }
    }

    @Test
    void formsClampOutsideTheRoom() {
        // keys 1000..1999 at shift 0: the form is exact for them, and clamps far above and below
        long[] p = new long[1000];
        for (int i = 0; i < p.length; i++) {
            p[i] = (1L << 40) + i;
        }
        Chunk c = chunkOf(p, 0);
        assertEquals(0, c.prefixShift());
        assertEquals(c.localPrefix(0), c.localPrefix((1L << 40) - (1L << 31)), "clamped below");
        assertEquals(c.localPrefix(-1L), c.localPrefix(1L << 50), "clamped above");
        assertTrue(c.localPrefix((1L << 40) - 1) < c.localPrefix(1L << 40));
    }
}
