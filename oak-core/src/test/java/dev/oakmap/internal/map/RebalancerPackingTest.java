package dev.oakmap.internal.map;

import dev.oakmap.MemoryScheme;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

import static dev.oakmap.internal.map.InternalOakMapModelTest.newMap;
import static dev.oakmap.internal.map.InternalOakMapModelTest.val;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The rebalancer's treatment of chunks that grow only at their end: keys inserted in increasing
 * order must leave chunks nearly full (entries over slots), where random order leaves them about
 * two-thirds to five-sixths full, and the map must hold exactly what was inserted, alone or with
 * concurrent writers and removals.
 */
class RebalancerPackingTest {

    /** A map of {@code capacity}-entry chunks rebalanced at the given unsorted-to-sorted ratio. */
    private static InternalOakMap<Integer, int[]> mapWithRatio(int capacity, double ratio) {
        return new InternalOakMap<>(InternalOakMapModelTest.INT, InternalOakMapModelTest.ARR,
                InternalOakMapModelTest.CMP_PREFIX, 64L << 20, 1 << 20, capacity, ratio, MemoryScheme.NOVA,
                MemoryScheme.NOVA);
    }

    private static double fill(InternalOakMap<Integer, int[]> map) {
        return (double) map.size() / map.slotCount();
    }

    @Test
    void ascendingInsertionPacksChunks() {
        for (int capacity : new int[] {16, 64, 4096}) {
            int n = capacity * 40;
            InternalOakMap<Integer, int[]> map = newMap(capacity);
            try {
                for (int k = 0; k < n; k++) {
                    assertNull(map.putIfAbsent(k, val(k, 1)));
                }
                assertEquals(n, map.size());
                double f = fill(map);
                assertTrue(f > 0.9, "capacity " + capacity + ": slots filled " + f + " over " + map.chunkCount()
                        + " chunks");
                checkAll(map, n, 1, "capacity " + capacity);
            } finally {
                map.close();
            }
        }
    }

    /**
     * The mirror: keys inserted in decreasing order land at the head of the first chunk, which is
     * rebuilt with room to double and then packed behind a chunk that takes the next ones; chunks
     * end nearly full and each key is copied about twice (the ratio's room, as for keys in random
     * order, copied each about five times).
     */
    @Test
    void descendingInsertionPacksChunksAndCopiesEachKeyAboutTwice() {
        for (int capacity : new int[] {16, 64, 4096}) {
            int n = capacity * 40;
            InternalOakMap<Integer, int[]> map = mapWithRatio(capacity, 0.25);
            try {
                for (int k = n - 1; k >= 0; k--) {
                    assertNull(map.putIfAbsent(k, val(k, 1)));
                }
                assertEquals(n, map.size());
                double f = fill(map);
                double copies = (double) map.rebalancer().entriesCopied() / n;
                String ctx = "capacity " + capacity + ": slots filled " + f + " over " + map.chunkCount()
                        + " chunks, copies per key " + copies;
                assertTrue(f > 0.9, ctx);
                assertTrue(copies < 3.0, ctx);
                checkAll(map, n, 1, "capacity " + capacity);
            } finally {
                map.close();
            }
        }
    }

    /**
     * A descending cursor that meets many dead entries at a chunk's end (a stack-like use: take
     * the last, put past the end) asks for that chunk's compaction, so later cursors do not walk
     * them again; the live keys are all kept.
     */
    @Test
    void descendingCursorCompactsAChunkWithADeadEnd() {
        InternalOakMap<Integer, int[]> map = mapWithRatio(4096, 0.25);
        try {
            int n = 1000, dead = 100;
            for (int k = 0; k < n; k++) {
                assertNull(map.putIfAbsent(k, val(k, 1)));
            }
            for (int k = n - dead; k < n; k++) {
                assertTrue(map.delete(k));
            }
            long copiedBefore = map.rebalancer().entriesCopied();
            Cursor<Integer, int[]> c = map.cursor(null, false, null, false, true);
            assertTrue(c.advance());
            assertEquals(n - dead - 1, c.key(), "the last live key");
            assertTrue(map.rebalancer().entriesCopied() > copiedBefore, "the chunk was compacted");
            assertEquals(n - dead, map.size());
            checkAll(map, n - dead, 1, "after compaction");
        } finally {
            map.close();
        }
    }

    /**
     * A chunk that is only appended to is rebuilt with room to double, so an appended key is
     * copied about twice before its chunk is packed; keys that land past the chunk's end but in
     * random order among themselves (here, shuffled in windows of a thousand) keep the ratio's
     * room, since lookups there walk the list.
     */
    @Test
    void appendsAreCopiedAboutTwiceAndRandomTailsKeepTheRatio() {
        int capacity = 4096;
        int n = capacity * 40;
        InternalOakMap<Integer, int[]> appended = mapWithRatio(capacity, 0.25);
        InternalOakMap<Integer, int[]> windows = mapWithRatio(capacity, 0.25);
        try {
            for (int k = 0; k < n; k++) {
                assertNull(appended.putIfAbsent(k, val(k, 1)));
            }
            List<Integer> window = new ArrayList<>();
            Random r = new Random(17);
            for (int base = 0; base < n; base += 1000) {
                window.clear();
                for (int k = base; k < Math.min(n, base + 1000); k++) {
                    window.add(k);
                }
                Collections.shuffle(window, r);
                for (int k : window) {
                    assertNull(windows.putIfAbsent(k, val(k, 1)));
                }
            }
            double appendCopies = (double) appended.rebalancer().entriesCopied() / n;
            double windowCopies = (double) windows.rebalancer().entriesCopied() / n;
            // doubling room: 1 + 1/2 + 1/4 + ... copies before packing, and the packing itself;
            // the ratio's room (a quarter): 1 + 4/5 + 16/25 + ..., and the packing
            String counts = "copies per key: appended " + appendCopies + ", window-shuffled " + windowCopies;
            assertTrue(appendCopies < 3.0, counts);
            assertTrue(windowCopies > appendCopies * 1.15, counts);
            checkAll(appended, n, 1, "appended");
            checkAll(windows, n, 1, "windows");
        } finally {
            appended.close();
            windows.close();
        }
    }

    /**
     * The room given to a chunk that grew past its last sorted key: doubled when the new keys
     * were appended in order, the ratio's when they came in random order (lookups there walk).
     * Keys inserted in order first fill the initial chunk, which is packed, leaving a quarter of
     * its entries to the chunk that takes appends; that chunk's room is then filled with the next
     * keys, in order or shuffled, and one more key has it rebuilt.
     */
    @Test
    void onlyInOrderAppendsGetDoubledRoom() {
        int capacity = 4096;
        int upper = capacity / 4; // entries the packing leaves to the chunk that takes appends
        int full = Rebalancer.slotsFor(upper, capacity, 0.25);
        long inOrder = slotsAfterGrowingPastTheEnd(capacity, full - upper, false);
        long shuffled = slotsAfterGrowingPastTheEnd(capacity, full - upper, true);
        assertEquals(Rebalancer.slotsFor(full, capacity, Rebalancer.APPEND_GROWTH)
                - Rebalancer.slotsFor(full, capacity, 0.25), inOrder - shuffled);
    }

    /** @return the entry slots of the map after the steps of {@link #onlyInOrderAppendsGetDoubledRoom} */
    private static long slotsAfterGrowingPastTheEnd(int capacity, int room, boolean shuffle) {
        InternalOakMap<Integer, int[]> map = mapWithRatio(capacity, 0.25);
        try {
            for (int k = 0; k < capacity; k++) {
                assertNull(map.putIfAbsent(k, val(k, 1)));
            }
            assertEquals(2, map.chunkCount(), "the initial chunk was packed");
            List<Integer> tail = new ArrayList<>();
            for (int k = capacity; k < capacity + room; k++) {
                tail.add(k);
            }
            if (shuffle) {
                Collections.shuffle(tail, new Random(3));
            }
            for (int k : tail) {
                assertNull(map.putIfAbsent(k, val(k, 1)));
            }
            int last = capacity + room;
            assertNull(map.putIfAbsent(last, val(last, 1))); // past the room: the chunk was rebuilt
            assertEquals(2, map.chunkCount());
            checkAll(map, last + 1, 1, shuffle ? "shuffled" : "in order");
            return map.slotCount();
        } finally {
            map.close();
        }
    }

    @Test
    void randomInsertionKeepsRoomInEveryChunk() {
        int capacity = 64;
        List<Integer> keys = new ArrayList<>();
        for (int k = 0; k < capacity * 40; k++) {
            keys.add(k);
        }
        Collections.shuffle(keys, new Random(5));
        InternalOakMap<Integer, int[]> map = newMap(capacity);
        try {
            for (int k : keys) {
                assertNull(map.putIfAbsent(k, val(k, 1)));
            }
            double f = fill(map);
            // the ordinary split: nothing packed, so chunks keep room for the next random keys
            assertTrue(f > 0.55 && f < 0.9, "slots filled " + f);
            checkAll(map, keys.size(), 1, "random");
        } finally {
            map.close();
        }
    }

    /**
     * Appends after a packed split may still land in the packed chunk when writers race (a
     * straggler below the last key); later random inserts and removals in packed chunks must
     * split them normally. Checked against the exact expected contents.
     */
    @RepeatedTest(5)
    void packedChunksTakeLateInsertsAndRemovals() throws Exception {
        int capacity = 64;
        int n = 8000;
        InternalOakMap<Integer, int[]> map = newMap(capacity);
        try {
            int threads = 2;
            AtomicInteger next = new AtomicInteger();
            List<Runnable> writers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                writers.add(() -> { // even keys from a shared counter: ascending, give or take a race
                    for (int k = 2 * next.getAndIncrement(); k < 2 * n; k = 2 * next.getAndIncrement()) {
                        assertNull(map.putIfAbsent(k, val(k, 1)));
                    }
                });
            }
            InternalOakMapConcurrencyTest.runAll(writers);
            assertTrue(fill(map) > 0.8, "slots filled " + fill(map));
            Random rnd = new Random(11);
            for (int i = 0; i < n; i++) {
                int odd = 2 * rnd.nextInt(n) + 1;
                map.put(odd, val(odd, 2), false);
                int even = 2 * rnd.nextInt(n);
                map.remove(even);
            }
            for (int k = 0; k < 2 * n; k++) {
                int[] v = map.get(k);
                if (v != null) {
                    assertEquals(k, v[0], "value of " + k);
                }
            }
            int count = 0;
            Integer prev = null;
            Cursor<Integer, int[]> c = map.cursor(null, false, null, false, false);
            while (c.advance()) {
                Integer k = c.key();
                assertTrue(prev == null || k > prev, "scan order at " + k);
                assertArrayEquals(val(k, k % 2 == 0 ? 1 : 2), c.value(), "value of " + k);
                prev = k;
                count++;
            }
            assertEquals(map.size(), count);
        } finally {
            map.close();
        }
    }

    /**
     * Two writers append keys from a shared counter (the packed split's workload) while a reader
     * checks, again and again, that every key below the first one not yet inserted is found
     * by lookups and by scans in both directions, exactly once and in order.
     */
    @ParameterizedTest
    @ValueSource(longs = {41, 42, 43})
    void readersSeeEveryAppendedKeyWhileChunksArePacked(long seed) throws Exception {
        int capacity = 64;
        int n = 12000;
        InternalOakMap<Integer, int[]> map = newMap(capacity);
        AtomicInteger next = new AtomicInteger();
        AtomicIntegerArray inserted = new AtomicIntegerArray(n);
        AtomicInteger finished = new AtomicInteger();
        try {
            List<Runnable> tasks = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                tasks.add(() -> {
                    try { // keys from a shared counter: ascending, give or take a race
                        for (int k = next.getAndIncrement(); k < n; k = next.getAndIncrement()) {
                            assertNull(map.putIfAbsent(k, val(k, 1)));
                            inserted.set(k, 1); // volatile: the insert happens-before a reader's read
                        }
                    } finally {
                        finished.incrementAndGet();
                    }
                });
            }
            tasks.add(() -> {
                Random rnd = new Random(seed);
                boolean last = false;
                int upTo = -1; // every key <= upTo was inserted
                while (!last) {
                    last = finished.get() == 2;
                    while (upTo + 1 < n && inserted.get(upTo + 1) == 1) {
                        upTo++;
                    }
                    if (upTo < 0) {
                        continue;
                    }
                    for (int i = 0; i < 20; i++) {
                        int k = rnd.nextInt(upTo + 1);
                        assertArrayEquals(val(k, 1), map.get(k), "lookup of " + k + " below mark " + upTo);
                    }
                    boolean desc = rnd.nextBoolean();
                    int lo = rnd.nextInt(upTo + 1);
                    Cursor<Integer, int[]> c = map.cursor(lo, true, upTo, true, desc);
                    int expect = desc ? upTo : lo;
                    while (c.advance()) {
                        assertEquals(expect, c.key(), "scan [" + lo + ", " + upTo + "] desc=" + desc);
                        expect += desc ? -1 : 1;
                    }
                    assertEquals(desc ? lo - 1 : upTo + 1, expect, "scan [" + lo + ", " + upTo + "] ended early");
                }
            });
            InternalOakMapConcurrencyTest.runAll(tasks);
            assertEquals(n, map.size());
            assertTrue(fill(map) > 0.8, "slots filled " + fill(map));
        } finally {
            map.close();
        }
    }

    private static void checkAll(InternalOakMap<Integer, int[]> map, int n, int len, String ctx) {
        for (int k = 0; k < n; k++) {
            assertArrayEquals(val(k, len), map.get(k), ctx + ": key " + k);
        }
        assertNull(map.get(n), ctx);
    }
}
