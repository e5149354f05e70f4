package dev.oakmap.internal.map;

import dev.oakmap.MemoryScheme;
import dev.oakmap.OakComparator;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakScopedWriteBuffer;
import dev.oakmap.OakSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Single-threaded random operations on the core against {@link TreeMap}, with tiny chunks so
 * that splits, merges and compactions happen all the time; every scan direction and range is
 * compared after each batch.
 */
class InternalOakMapModelTest {

    static final OakSerializer<Integer> INT = new OakSerializer<>() {
        public void serialize(Integer v, OakScopedWriteBuffer b) { b.putInt(0, v ^ Integer.MIN_VALUE); }
        public Integer deserialize(OakScopedReadBuffer b) { return b.getInt(0) ^ Integer.MIN_VALUE; }
        public int calculateSize(Integer v) { return 4; }
    };

    /** Variable-length values: n repetitions of the int, so sizes change and values move. */
    static final OakSerializer<int[]> ARR = new OakSerializer<>() {
        public void serialize(int[] v, OakScopedWriteBuffer b) { for (int i = 0; i < v.length; i++) b.putInt(4 * i, v[i]); }
        public int[] deserialize(OakScopedReadBuffer b) {
            int[] r = new int[b.capacity() / 4];
            for (int i = 0; i < r.length; i++) r[i] = b.getInt(4 * i);
            return r;
        }
        public int calculateSize(int[] v) { return 4 * v.length; }
    };

    static final OakComparator<Integer> CMP = new OakComparator<>() {
        public int compareKeys(Integer a, Integer b) { return Integer.compare(a, b); }
        public int compareSerializedKeys(OakScopedReadBuffer a, OakScopedReadBuffer b) {
            return Integer.compareUnsigned(a.getInt(0), b.getInt(0));
        }
        public int compareKeyAndSerializedKey(Integer k, OakScopedReadBuffer b) {
            return Integer.compareUnsigned(k ^ Integer.MIN_VALUE, b.getInt(0));
        }
    };

    /** Same order as {@link #CMP}, with the optional prefixes: exercises the prefix fast path. */
    static final OakComparator<Integer> CMP_PREFIX = new OakComparator<>() {
        public int compareKeys(Integer a, Integer b) { return CMP.compareKeys(a, b); }
        public int compareSerializedKeys(OakScopedReadBuffer a, OakScopedReadBuffer b) { return CMP.compareSerializedKeys(a, b); }
        public int compareKeyAndSerializedKey(Integer k, OakScopedReadBuffer b) { return CMP.compareKeyAndSerializedKey(k, b); }
        // only the top 20 bits: many ties, so the full comparison path runs too
        public long keyPrefix(Integer k) { return ((k ^ Integer.MIN_VALUE) & 0xFFFFF000L) << 32; }
        public long serializedKeyPrefix(OakScopedReadBuffer b) { return (b.getInt(0) & 0xFFFFF000L) << 32; }
    };

    /** Maps with an even chunk capacity use prefixes, odd ones do not. */
    static InternalOakMap<Integer, int[]> newMap(int chunkCapacity) {
        OakComparator<Integer> cmp = chunkCapacity % 2 == 0 ? CMP_PREFIX : CMP;
        return new InternalOakMap<>(INT, ARR, cmp, 64L << 20, 1 << 20, chunkCapacity, 0.5, MemoryScheme.NOVA, MemoryScheme.NOVA);
    }

    static int[] val(int seed, int len) {
        int[] a = new int[len];
        for (int i = 0; i < len; i++) a[i] = seed + i;
        return a;
    }

    /**
     * A cursor's value() starts from the read token its step took (no second header read): a
     * value written in place after the step must still be read as it is now, and a removed one as
     * gone.
     */
    @Test
    void cursorValueReadsWhatWasWrittenInPlaceAfterTheStep() {
        InternalOakMap<Integer, int[]> m = newMap(8);
        try {
            for (int i = 0; i < 16; i++) {
                m.put(i, val(i, 4), false);
            }
            Cursor<Integer, int[]> c = m.cursor(null, true, null, true, false);
            assertTrue(c.advance());
            assertArrayEquals(val(0, 4), c.value());
            assertTrue(m.computeIfPresentZc(0, b -> b.putInt(0, 99)));
            assertArrayEquals(new int[] {99, 1, 2, 3}, c.value(), "the write after the step");
            assertTrue(c.advance());
            assertTrue(m.computeIfPresentZc(1, b -> b.putInt(4, -7)));
            assertArrayEquals(new int[] {1, -7, 3, 4}, c.value(), "the write between the step and the first read");
            assertTrue(c.advance());
            m.delete(2);
            assertNull(c.value(), "removed after the step");
        } finally {
            m.close();
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {4, 5, 8, 9, 64, 4096})
    void randomOpsMatchTreeMap(int chunkCapacity) {
        randomOps(chunkCapacity, true);
    }

    /** The same with scans that never look ahead, as in maps smaller than the cache by default. */
    @ParameterizedTest
    @ValueSource(ints = {4, 9, 4096})
    void randomOpsMatchTreeMapWithoutLookAhead(int chunkCapacity) {
        randomOps(chunkCapacity, false);
    }

    private static void randomOps(int chunkCapacity, boolean lookAhead) {
        for (long seed = 1; seed <= 3; seed++) {
            Random rnd = new Random(seed * 7919 + chunkCapacity);
            TreeMap<Integer, List<Integer>> model = new TreeMap<>();
            InternalOakMap<Integer, int[]> map = newMap(chunkCapacity);
            map.lookAheadFrom(lookAhead ? 0 : Long.MAX_VALUE);
            try {
                int range = 300;
                for (int step = 0; step < 20_000; step++) {
                    int k = rnd.nextInt(range) - range / 2;
                    int op = rnd.nextInt(10);
                    String ctx = "seed " + seed + " step " + step + " op " + op + " key " + k;
                    switch (op) {
                        case 0, 1 -> {
                            int[] v = val(rnd.nextInt(), 1 + rnd.nextInt(4));
                            assertEquals(model.put(k, box(v)), box(map.put(k, v, true)), ctx);
                        }
                        case 2 -> {
                            int[] v = val(rnd.nextInt(), 1 + rnd.nextInt(4));
                            assertEquals(model.putIfAbsent(k, box(v)), box(map.putIfAbsent(k, v)), ctx);
                        }
                        case 3, 4 -> assertEquals(model.remove(k), box(map.remove(k)), ctx);
                        case 5 -> assertEquals(model.get(k), box(map.get(k)), ctx);
                        case 6 -> {
                            boolean present = model.containsKey(k);
                            assertEquals(present, map.computeIfPresentZc(k, b -> b.putInt(0, b.getInt(0) + 1)), ctx);
                            if (present) model.get(k).set(0, model.get(k).get(0) + 1);
                        }
                        case 7 -> {
                            int[] v = val(rnd.nextInt(), 2);
                            boolean inserted = map.putIfAbsentComputeIfPresent(k, v, b -> b.putInt(0, b.getInt(0) - 1));
                            assertEquals(!model.containsKey(k), inserted, ctx);
                            if (inserted) model.put(k, box(v)); else model.get(k).set(0, model.get(k).get(0) - 1);
                        }
                        case 8 -> {
                            int len = 1 + rnd.nextInt(6);
                            int[] got = map.compute(k, (kk, old) -> old == null ? (rnd.nextBoolean() ? null : val(kk, len)) : (old.length > 3 ? null : val(old[0] + 1, len)));
                            List<Integer> m = model.get(k);
                            List<Integer> expect;
                            if (m == null) expect = got == null ? null : box(val(k, len));
                            else expect = m.size() > 3 ? null : box(val(m.get(0) + 1, len));
                            if (expect == null) model.remove(k); else model.put(k, expect);
                            assertEquals(expect, box(got), ctx);
                        }
                        default -> assertEquals(model.containsKey(k), map.containsKey(k), ctx);
                    }
                    if (step % 997 == 0) {
                        checkScans(map, model, rnd, "seed " + seed + " step " + step);
                    }
                }
                checkScans(map, model, rnd, "seed " + seed + " end");
                assertEquals(model.size(), map.size());
            } finally {
                map.close();
            }
        }
    }

    static List<Integer> box(int[] a) {
        if (a == null) return null;
        List<Integer> l = new ArrayList<>();
        for (int x : a) l.add(x);
        return l;
    }

    static void checkScans(InternalOakMap<Integer, int[]> map, TreeMap<Integer, List<Integer>> model, Random rnd, String ctx) {
        assertEquals(new ArrayList<>(model.entrySet()), collect(map.cursor(null, false, null, false, false)), ctx + " asc");
        assertEquals(new ArrayList<>(model.descendingMap().entrySet()), collect(map.cursor(null, false, null, false, true)), ctx + " desc");
        for (int i = 0; i < 10; i++) {
            int a = rnd.nextInt(400) - 200, b = a + rnd.nextInt(200);
            boolean ai = rnd.nextBoolean(), bi = rnd.nextBoolean();
            NavigableMap<Integer, List<Integer>> sub = model.subMap(a, ai, b, bi);
            assertEquals(new ArrayList<>(sub.entrySet()), collect(map.cursor(a, ai, b, bi, false)), ctx + " sub asc " + a + ai + b + bi);
            assertEquals(new ArrayList<>(sub.descendingMap().entrySet()), collect(map.cursor(a, ai, b, bi, true)), ctx + " sub desc " + a + ai + b + bi);
            assertEquals(new ArrayList<>(model.headMap(b, bi).descendingMap().entrySet()), collect(map.cursor(null, false, b, bi, true)), ctx + " head desc");
            assertEquals(new ArrayList<>(model.tailMap(a, ai).entrySet()), collect(map.cursor(a, ai, null, false, false)), ctx + " tail asc");
        }
    }

    static List<Map.Entry<Integer, List<Integer>>> collect(Cursor<Integer, int[]> c) {
        List<Map.Entry<Integer, List<Integer>>> out = new ArrayList<>();
        while (c.advance()) {
            out.add(Map.entry(c.key(), box(c.value())));
        }
        return out;
    }

    @Test
    void manyKeysSplitAndMerge() {
        InternalOakMap<Integer, int[]> map = newMap(15);
        try {
            for (int i = 0; i < 5000; i++) map.put(i, val(i, 1), false);
            assertTrue(map.chunkCount() > 100, "chunks: " + map.chunkCount());
            int before = map.chunkCount();
            for (int i = 0; i < 5000; i++) if (i % 10 != 0) map.remove(i);
            assertTrue(map.chunkCount() < before, "merges happened: " + map.chunkCount() + " vs " + before);
            Cursor<Integer, int[]> c = map.cursor(null, false, null, false, true);
            int expect = 4990;
            while (c.advance()) {
                assertEquals(expect, c.key());
                expect -= 10;
            }
            assertEquals(-10, expect);
        } finally {
            map.close();
        }
    }
}
