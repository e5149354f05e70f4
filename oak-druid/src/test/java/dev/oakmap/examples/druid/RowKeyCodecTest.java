package dev.oakmap.examples.druid;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The key codec: the three comparisons and the prefix agree with {@link RowKey#compareTo}. */
class RowKeyCodecTest {

    private static final long[] TIMES = {Long.MIN_VALUE, -86_400_000L, -1, 0, 1, 1_735_689_600_000L,
        1_735_689_600_001L, (1L << 44) - 1, 1L << 44, Long.MAX_VALUE};
    private static final int[] CODES = {-1, 0, 1, 2, 1000, (1 << 20) - 2, (1 << 20) - 1, 1 << 20, Integer.MAX_VALUE};

    private static List<RowKey> keys(long seed, int n, int dims, boolean withSeq) {
        SplittableRandom rnd = new SplittableRandom(seed);
        List<RowKey> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int[] d = new int[dims];
            for (int j = 0; j < dims; j++) {
                d[j] = rnd.nextInt(4) == 0 ? CODES[rnd.nextInt(CODES.length)] : rnd.nextInt(3);
            }
            if (rnd.nextInt(8) == 0) {
                d[rnd.nextInt(dims)] = rnd.nextBoolean() ? Integer.MIN_VALUE : -2; // below what dictionaries assign
            }
            long t = rnd.nextInt(3) == 0 ? TIMES[rnd.nextInt(TIMES.length)] : 1_735_689_600_000L + rnd.nextInt(3);
            long seq = withSeq ? (rnd.nextBoolean() ? rnd.nextLong() : rnd.nextInt(3)) : 0L;
            out.add(new RowKey(t, d, seq));
        }
        for (long t : TIMES) {
            out.add(RowKey.lowerBound(t, dims));
        }
        return out;
    }

    private static void checkOrder(boolean withSeq, Granularity granularity) {
        int dims = 5;
        RowKeyCodec codec = new RowKeyCodec(dims, withSeq, granularity);
        List<RowKey> ks = keys(withSeq ? 7 : 8, 300, dims, withSeq);
        List<HeapBuffer> ser = ks.stream().map(k -> HeapBuffer.of(codec, withSeq || k.seq() == 0 ? k
                : new RowKey(k.time(), dimsOf(k), 0L))).toList();
        for (int i = 0; i < ks.size(); i++) {
            RowKey a = ks.get(i);
            boolean aReal = withSeq || a.seq() == 0;
            assertEquals(codec.keyPrefix(a), codec.serializedKeyPrefix(ser.get(i)), "prefix of " + a);
            for (int j = 0; j < ks.size(); j++) {
                RowKey b = ks.get(j);
                boolean bReal = withSeq || b.seq() == 0;
                int expected = Integer.signum(a.compareTo(b));
                assertEquals(expected, Integer.signum(codec.compareKeys(a, b)));
                if (bReal) {
                    assertEquals(expected, Integer.signum(codec.compareKeyAndSerializedKey(a, ser.get(j))),
                            a + " vs serialized " + b);
                }
                if (aReal && bReal) {
                    assertEquals(expected, Integer.signum(codec.compareSerializedKeys(ser.get(i), ser.get(j))),
                            "serialized " + a + " vs " + b);
                }
                if (expected < 0) {
                    assertTrue(Long.compareUnsigned(codec.keyPrefix(a), codec.keyPrefix(b)) <= 0,
                            "prefix order " + a + " < " + b);
                }
            }
        }
    }

    private static int[] dimsOf(RowKey k) {
        int[] d = new int[k.dimensionCount()];
        for (int i = 0; i < d.length; i++) {
            d[i] = k.dim(i);
        }
        return d;
    }

    @Test
    void plainKeysOrderTheSameAsObjectsSerializedAndByPrefix() {
        checkOrder(true, Granularity.MILLISECOND);
    }

    @ParameterizedTest
    @EnumSource(Granularity.class)
    void rollupKeysOrderTheSameAsObjectsSerializedAndByPrefix(Granularity g) {
        checkOrder(false, g);
    }

    @Test
    void roundTripsAndHasFixedSize() {
        RowKeyCodec plain = new RowKeyCodec(2, true);
        RowKey k = new RowKey(-5, new int[]{7, Integer.MAX_VALUE}, Long.MIN_VALUE + 3);
        HeapBuffer b = HeapBuffer.of(plain, k);
        assertEquals(8 + 8 + 8, b.capacity());
        assertEquals(k, plain.deserialize(b));
        RowKeyCodec rollup = new RowKeyCodec(2, false);
        assertEquals(16, rollup.keyBytes());
        RowKey r = new RowKey(60_000, new int[]{0, 3}, 0);
        assertEquals(r, rollup.deserialize(HeapBuffer.of(rollup, r)));
    }

    @Test
    void rejectsKeysOfTheWrongShape() {
        RowKeyCodec codec = new RowKeyCodec(2, false);
        assertThrows(IllegalArgumentException.class, () -> HeapBuffer.of(codec, new RowKey(1, new int[]{1, 2}, 5)));
        assertThrows(IllegalArgumentException.class,
                () -> codec.serialize(new RowKey(1, new int[]{1}, 0), new HeapBuffer(16)));
        assertThrows(IllegalArgumentException.class, () -> new RowKeyCodec(0, true));
    }

    @Test
    void prefixPacksTimeThenAsManyCodesAsFit() {
        RowKeyCodec ms = new RowKeyCodec(4, true);
        RowKeyCodec minute = new RowKeyCodec(4, false, Granularity.MINUTE);
        long t = 1_735_689_600_000L;
        // millisecond keys: time, then two codes of 10 bits
        assertTrue(Long.compareUnsigned(ms.keyPrefix(key(t, 999, 9, 9, 9)), ms.keyPrefix(key(t + 1, 0, 0, 0, 0))) < 0);
        assertTrue(Long.compareUnsigned(ms.keyPrefix(key(t, 1, 5, 0, 0)), ms.keyPrefix(key(t, 1, 6, 0, 0))) < 0);
        assertEquals(ms.keyPrefix(key(t, 1, 5, 0, 0)), ms.keyPrefix(key(t, 1, 5, 7, 7)), "third code not packed");
        // minute keys: three codes of 11 bits; a bound inside a minute sorts after all of its keys
        long inside = minute.keyPrefix(RowKey.lowerBound(t + 59_999, 4));
        assertTrue(Long.compareUnsigned(minute.keyPrefix(key(t, 2000, 2000, 2000, 9)), inside) <= 0);
        assertTrue(Long.compareUnsigned(inside, minute.keyPrefix(key(t + 60_000, 0, 0, 0, 0))) < 0);
        assertTrue(Long.compareUnsigned(minute.keyPrefix(key(t, 1, 2, 3, 0)), minute.keyPrefix(key(t, 1, 2, 4, 0))) < 0);
        // a clamped code makes the rest of the prefix constant
        assertEquals(ms.keyPrefix(key(t, 5000, 0, 0, 0)), ms.keyPrefix(key(t, 6000, 9, 0, 0)));
    }

    private static RowKey key(long t, int... dims) {
        return new RowKey(t, dims, 0);
    }
}
