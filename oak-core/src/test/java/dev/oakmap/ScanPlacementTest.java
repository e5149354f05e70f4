package dev.oakmap;

import dev.oakmap.internal.chunk.Chunk;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Placement on request: scans that find a chunk's pairs scattered in memory ask for the chunk to
 * be laid out anew in key order (behind {@code -Doak.placeOnScans=true}; these tests turn it on
 * per map, and make scans judge layouts whatever the map's size). A scan over a map filled in
 * random order must leave the chunks it crossed in key order in memory, and later scans must not
 * move them again; views taken before must follow the moves, and fail for removed mappings;
 * without headroom nothing moves; and no write may be lost while scans move pairs under writers.
 * Seeded and repeatable.
 */
class ScanPlacementTest {

    /** Blocks of the layout test: small, so that a pass over its map empties many of them. */
    private static final long SMALL_BLOCK = 64 << 10;

    private static OakMap<Integer, Long> scanPlacedMap(int chunkCapacity, long capacity) {
        return scanPlacedMap(chunkCapacity, capacity, TestMaps.SMALL_BLOCK);
    }

    private static OakMap<Integer, Long> scanPlacedMap(int chunkCapacity, long capacity, long blockSize) {
        OakMapBuilder<Integer, Long> b = TestMaps.builder(TestMaps.LONG_VAL, chunkCapacity).memoryCapacity(capacity)
                .blockSize(blockSize);
        b.placePairs = false;
        b.placeOnScans = true;
        OakMap<Integer, Long> map = b.build();
        map.internal.lookAheadFrom(0); // judge layouts at any size: small maps fit in the caches
        return map;
    }

    /** @return the share of the map's sorted keys that lie near one of the few keys before them */
    private static double nearShare(OakMap<Integer, Long> map) {
        long near = 0, pairs = 0;
        for (Chunk c : map.internal.index().snapshot()) {
            for (int ei = 2; ei <= c.sortedCount(); ei++) {
                pairs++;
                if (PlacementTest.nearARecentKey(c, ei)) {
                    near++;
                }
            }
        }
        return (double) near / pairs;
    }

    /** A whole stream scan, then a wait until the chunks it asked for are placed. @return the values' sum */
    private static long streamScan(OakMap<Integer, Long> view) throws InterruptedException {
        long sum = 0;
        for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : view.zc().entryStreamSet()) {
            sum += e.getValue().getLong(0);
        }
        awaitPlacement(view);
        return sum;
    }

    /** Waits until the map's placer has laid out every chunk asked for (it runs in the background). */
    private static void awaitPlacement(OakMap<Integer, Long> map) throws InterruptedException {
        assertTrue(map.internal.awaitPlacement(), "placement did not finish within 10 s");
    }

    @ParameterizedTest(name = "seed={0} descending={1}")
    @ValueSource(longs = {1, 2, 3})
    void aScanLaysTheScatteredChunksItCrossesOutInKeyOrder(long seed) throws InterruptedException {
        for (boolean descending : new boolean[] {false, true}) {
            Random rnd = new Random(seed);
            try (OakMap<Integer, Long> map = scanPlacedMap(256, TestMaps.SMALL_CAPACITY, SMALL_BLOCK)) {
                TreeMap<Integer, Long> model = new TreeMap<>();
                for (int k : PlacementTest.shuffled(0, 20_000, 1, rnd)) {
                    map.put(k, (long) k);
                    model.put(k, (long) k);
                }
                Map<Integer, OakUnscopedBuffer> views = new HashMap<>();
                for (int i = 0; i < 300; i++) {
                    int k = rnd.nextInt(20_000);
                    views.put(k, map.zc().get(k));
                }
                for (int k : views.keySet()) {
                    if (k % 3 == 0) {
                        map.remove(k);
                        model.remove(k);
                    }
                }
                double before = nearShare(map);
                assertEquals(0, map.internal.pairsMoved());
                long expected = model.values().stream().mapToLong(Long::longValue).sum();
                assertEquals(expected, streamScan(descending ? map.descendingMap() : map), "the placing scan's sum");
                long moved = map.internal.pairsMoved();
                double after = nearShare(map);
                System.out.printf("[scan placement] descending=%s: %d pairs moved, near share %.3f -> %.3f%n",
                        descending, moved, before, after);
                assertTrue(before < 0.3, "random ingestion left " + before + " of keys near a recent one");
                assertTrue(moved > 0.9 * model.size(), "one scan moved " + moved + " of " + model.size());
                assertTrue(after > 0.9, "after the scan, " + after + " of keys near a recent one");
                // a scan asks for a chunk as it leaves it: the other direction leaves the last one
                assertEquals(expected, streamScan(descending ? map : map.descendingMap()));
                long last = map.internal.pairsMoved() - moved;
                assertTrue(last <= 256, "the scan back moved " + last + " pairs");
                // placed chunks stay: scans in both directions move nothing more
                moved = map.internal.pairsMoved();
                assertEquals(expected, streamScan(map));
                assertEquals(expected, streamScan(map.descendingMap()));
                assertEquals(moved, map.internal.pairsMoved(), "placed chunks were moved again");
                assertEquals(TestMaps.entries(model.entrySet()), TestMaps.entries(map.entrySet()));
                for (Map.Entry<Integer, OakUnscopedBuffer> e : views.entrySet()) {
                    int k = e.getKey();
                    if (k % 3 == 0) {
                        assertThrows(DeletedMemoryAccessException.class, () -> e.getValue().getLong(0), "removed " + k);
                    } else {
                        assertEquals(k, e.getValue().getLong(0), "view of " + k);
                    }
                }
                long used = map.internal.offHeapUsedBytes();
                long reserved = map.internal.offHeapReservedBytes();
                long discarded = map.internal.offHeapDiscardedBytes();
                System.out.printf("[scan placement] %d bytes in use, %d held, of which %d given back; %d blocks recycled%n",
                        used, reserved, discarded, map.internal.allocator().recycledBlocks());
                assertTrue(reserved <= 2.25 * used + 2 * SMALL_BLOCK,
                        "placement held " + reserved + " bytes for " + used + " in use");
                if (TestMaps.nativeAccess()) { // the emptied blocks' pages went back to the OS, but for a few
                    assertTrue(reserved - discarded <= 1.25 * used + 4 * SMALL_BLOCK,
                            (reserved - discarded) + " bytes committed for " + used + " in use");
                } else {
                    assertEquals(0, discarded, "pages discarded without native access");
                }
            }
        }
    }

    /**
     * Scans that break off (as most do: a range, a limit) keep the keys they were on from deletion
     * until the collector finds them, and scans in one direction never leave the chunk at that end
     * of the map by its far side: neither may keep the old blocks from emptying once the pass is
     * over. Ascending scans of 1,500 mappings from every thousandth key, dropped unfinished, then
     * a collection and one more scan: the old blocks' pages are given back.
     */
    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {4, 5})
    void brokenOffScansInOneDirectionStillEmptyTheOldBlocks(long seed) throws InterruptedException {
        int n = 20_000;
        try (OakMap<Integer, Long> map = scanPlacedMap(256, TestMaps.SMALL_CAPACITY, SMALL_BLOCK)) {
            for (int k : PlacementTest.shuffled(0, n, 1, new Random(seed))) {
                map.put(k, (long) k);
            }
            for (int from = 0; from < n; from += 1_000) {
                int taken = 0;
                for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : map.tailMap(from, true).zc().entryStreamSet()) {
                    assertEquals(from + taken, e.getValue().getLong(0));
                    if (++taken == 1_500) {
                        break; // abandoned: its cursor keeps its keys until it is collected
                    }
                }
            }
            awaitPlacement(map);
            assertEquals(n, map.internal.pairsMoved(), "every pair moved");
            System.gc(); // the abandoned cursors go, and with them the keys they protected
            // scans delete the keys no scan protects any more and give pages back; the retries
            // back off to one a second while they free nothing, so allow a few seconds
            long deadline = System.nanoTime() + 5_000_000_000L;
            long used;
            long committed;
            while (true) {
                assertEquals((long) n * (n - 1) / 2, streamScan(map));
                used = map.internal.offHeapUsedBytes();
                committed = map.internal.offHeapReservedBytes() - map.internal.offHeapDiscardedBytes();
                if (!TestMaps.nativeAccess() || committed <= 1.25 * used + 4 * SMALL_BLOCK || System.nanoTime() > deadline) {
                    break;
                }
                Thread.sleep(20);
            }
            System.out.printf("[scan placement] broken-off scans: %d bytes in use, %d committed%n", used, committed);
            if (TestMaps.nativeAccess()) {
                assertTrue(committed <= 1.25 * used + 4 * SMALL_BLOCK, committed + " bytes committed for " + used + " in use");
            }
        }
    }

    /**
     * Scans that broke off and are still reachable keep the keys they were on, so the collector
     * cannot help: the old blocks hold nothing else after the pass, and every page of theirs but
     * those the protected keys lie on goes back to the OS. The kept iterators still read their
     * keys, and go on where they stopped.
     */
    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {6, 7})
    void scansKeptUnfinishedStillLetTheOldBlocksGiveTheirPagesBack(long seed) throws InterruptedException {
        int n = 20_000;
        int length = 1_500;
        try (OakMap<Integer, Long> map = scanPlacedMap(256, TestMaps.SMALL_CAPACITY, SMALL_BLOCK)) {
            for (int k : PlacementTest.shuffled(0, n, 1, new Random(seed))) {
                map.put(k, (long) k);
            }
            List<Iterator<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>>> kept = new ArrayList<>();
            List<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> lastEntries = new ArrayList<>();
            for (int from = 0; from + length < n; from += 1_000) {
                Iterator<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> it =
                        map.tailMap(from, true).zc().entryStreamSet().iterator();
                Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e = null;
                for (int taken = 0; taken < length; taken++) {
                    e = it.next();
                    assertEquals(from + taken, e.getValue().getLong(0));
                }
                kept.add(it); // unfinished and reachable: its keys stay protected
                lastEntries.add(e);
            }
            long deadline = System.nanoTime() + 5_000_000_000L; // the retries back off to one a second
            long used;
            long committed;
            long bound;
            while (true) {
                assertEquals((long) n * (n - 1) / 2, streamScan(map));
                used = map.internal.offHeapUsedBytes();
                committed = map.internal.offHeapReservedBytes() - map.internal.offHeapDiscardedBytes();
                // each kept scan protects two keys, and each key keeps the page it lies on
                bound = (long) (1.25 * used) + 2 * SMALL_BLOCK + 2L * kept.size() * 4096;
                if (!TestMaps.nativeAccess() || committed <= bound || System.nanoTime() > deadline) {
                    break;
                }
                Thread.sleep(20);
            }
            System.out.printf("[scan placement] kept scans: %d bytes in use, %d committed (bound %d)%n", used, committed, bound);
            assertEquals(n, map.internal.pairsMoved(), "every pair moved"); // the whole scans placed the last chunks
            if (TestMaps.nativeAccess()) {
                assertTrue(committed <= bound, committed + " bytes committed for " + used + " in use");
            }
            for (int i = 0; i < kept.size(); i++) {
                int from = i * 1_000;
                assertEquals(from + length - 1, lastEntries.get(i).getKey().getInt(0) ^ Integer.MIN_VALUE, "a kept scan's key");
                Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e = kept.get(i).next();
                assertEquals(from + length, e.getKey().getInt(0) ^ Integer.MIN_VALUE, "a kept scan went on elsewhere");
                assertEquals(from + length, e.getValue().getLong(0));
            }
        }
    }

    /**
     * Closing a map while its placer thread lays chunks out: the thread ends quietly (it throws
     * nothing to its uncaught-exception handler), whatever it was doing, and nothing outlives the
     * map. Closed at different points of a pass over 20,000 random pairs.
     */
    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {8, 9})
    void closingWhilePlacingEndsThePlacerQuietly(long seed) throws InterruptedException {
        List<Throwable> uncaught = java.util.Collections.synchronizedList(new ArrayList<>());
        Thread.UncaughtExceptionHandler before = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> uncaught.add(e));
        try {
            Random rnd = new Random(seed);
            for (int round = 0; round < 20; round++) {
                OakMap<Integer, Long> map = scanPlacedMap(256, TestMaps.SMALL_CAPACITY, SMALL_BLOCK);
                for (int k : PlacementTest.shuffled(0, 20_000, 1, rnd)) {
                    map.put(k, (long) k);
                }
                int taken = 0;
                int stopAt = 2_000 + rnd.nextInt(18_000);
                for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : map.zc().entryStreamSet()) {
                    if (++taken == stopAt) {
                        break;
                    }
                }
                if (round % 2 == 1) {
                    Thread.sleep(rnd.nextInt(5)); // let it get further
                }
                map.close();
                assertTrue(map.internal.awaitPlacement(), "the placer outlived its map");
            }
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(before);
        }
        assertEquals(List.of(), uncaught, "the placer threw");
    }

    /**
     * A map filled to most of its capacity is laid out anew only as far as the room left allows,
     * and what the copies take is given back: after scans in both directions, as many more
     * mappings fit as in the same map without placement (within a few percent, the copies'
     * fragmentation), and nothing is lost.
     */
    @Test
    void placementLeavesTheCapacityToTheUser() throws InterruptedException {
        long capacity = 4 * TestMaps.SMALL_BLOCK;
        int[] fitted = new int[2];
        for (int placed = 0; placed < 2; placed++) {
            OakMapBuilder<Integer, Long> b = TestMaps.builder(TestMaps.LONG_VAL, 256).memoryCapacity(capacity);
            b.placePairs = false;
            b.placeOnScans = placed == 1;
            try (OakMap<Integer, Long> map = b.build()) {
                map.internal.lookAheadFrom(0);
                TreeMap<Integer, Long> model = new TreeMap<>();
                Random rnd = new Random(7);
                int k = 0;
                while (map.internal.offHeapUsedBytes() < capacity * 6 / 10) {
                    int key = rnd.nextInt(Integer.MAX_VALUE);
                    map.put(key, (long) key);
                    model.put(key, (long) key);
                }
                long expected = model.values().stream().mapToLong(Long::longValue).sum();
                assertEquals(expected, streamScan(map));
                assertEquals(expected, streamScan(map.descendingMap()));
                if (placed == 1) {
                    assertTrue(map.internal.pairsMoved() > 0, "nothing moved");
                    assertTrue(map.internal.pairsMoved() < model.size(), "every pair moved: " + map.internal.pairsMoved());
                }
                try {
                    for (; ; k++) {
                        int key = rnd.nextInt(Integer.MAX_VALUE);
                        map.put(key, (long) key);
                        model.put(key, (long) key);
                    }
                } catch (OakOutOfMemoryException full) {
                    fitted[placed] = map.size();
                }
                assertTrue(map.internal.offHeapReservedBytes() <= capacity);
                assertEquals(TestMaps.entries(model.entrySet()), TestMaps.entries(map.entrySet()));
                System.out.printf("[scan placement] placed=%s: %d pairs moved, %d mappings fit%n",
                        placed == 1, map.internal.pairsMoved(), fitted[placed]);
            }
        }
        assertTrue(fitted[1] >= 0.95 * fitted[0], fitted[1] + " mappings fit with placement, " + fitted[0] + " without");
    }

    /**
     * Writers increment counters in place and insert and remove keys around them (their chunks
     * are rebuilt with new, scattered pairs), while scans in both directions keep laying chunks
     * out anew and check that every counter is there, and readers share zero-copy views of the
     * counters taken once: no increment may be lost, and no view may fail or go back.
     */
    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {11, 12, 13})
    void scansPlaceChunksWhileWritersRace(long seed) throws Exception {
        int[] counters = {1_000, 2_000, 3_000, 4_000};
        int incsPerThread = 20_000 * TestMaps.scale();
        try (OakMap<Integer, Long> map = scanPlacedMap(128, TestMaps.SMALL_CAPACITY)) {
            for (int k : PlacementTest.shuffled(0, 5_000, 1, new Random(seed))) {
                map.put(k, k % 1_000 == 0 ? 0L : (long) -k);
            }
            OakUnscopedBuffer[] views = new OakUnscopedBuffer[counters.length];
            for (int i = 0; i < counters.length; i++) {
                views[i] = map.zc().get(counters[i]);
            }
            AtomicBoolean done = new AtomicBoolean();
            List<TestMaps.Task> all = TestMaps.signalWhenDone(
                    PlacementTest.counterWriters(map, counters, 1_000, incsPerThread, seed), done);
            for (boolean descending : new boolean[] {false, true}) {
                OakMap<Integer, Long> view = descending ? map.descendingMap() : map;
                all.add(() -> {
                    while (!done.get()) {
                        int seen = 0;
                        for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : view.zc().entryStreamSet()) {
                            int k = e.getKey().getInt(0) ^ Integer.MIN_VALUE;
                            if (k % 1_000 == 0) {
                                assertTrue(e.getValue().getLong(0) >= 0, "counter " + k); // never removed: must not throw
                                seen++;
                            }
                        }
                        assertEquals(counters.length + 1, seen, "counters (and key 0) seen by a scan");
                    }
                });
            }
            all.add(() -> {
                long[] last = new long[counters.length];
                Random rnd = new Random(seed);
                while (!done.get()) {
                    int i = rnd.nextInt(counters.length);
                    long v = views[i].getLong(0);
                    assertTrue(v >= last[i], "counter " + counters[i] + " went back from " + last[i] + " to " + v);
                    last[i] = v;
                }
            });
            TestMaps.runConcurrently("scan placement seed=" + seed, 120, all);
            long whileRacing = map.internal.pairsMoved();
            // where the writers finish fast, the race ends after a few scans: a scan each way
            // now lays out what is still scattered, so that placement surely happened here.
            // How much moves depends on the race (1,386 and 1,995 pairs on CI after races of
            // 0.1 s, 3,900-6,400 locally), so only that some did is asserted; how much one
            // scan places is pinned by aScanLaysTheScatteredChunksItCrossesOutInKeyOrder
            streamScan(map);
            streamScan(map.descendingMap());
            awaitPlacement(map);
            PlacementTest.assertCounters(map, counters, views, 2L * incsPerThread);
            assertTrue(map.internal.pairsMoved() > 0,
                    "moves: " + map.internal.pairsMoved() + ", " + whileRacing + " of them while the writers ran");
        }
    }
}
