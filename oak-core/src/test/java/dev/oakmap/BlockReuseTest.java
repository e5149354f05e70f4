package dev.oakmap;

import dev.oakmap.TestMaps.Blob;
import dev.oakmap.TestMaps.Task;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Whole maps come and go while others are scanned: each closed map gives its blocks back to the
 * shared pool, whose ids (and, with native access, slots of the block region) the next maps
 * reuse at once. Scans look ahead in these tests ({@code -Doak.scan.aheadFrom=0}), so a scan
 * racing its map's close touches memory that another map may already own. Every scan of a
 * closing map must return intact mappings of its own and then end, normally or with
 * {@link OakClosedException}; the long-lived map, written and scanned throughout, must hold
 * exactly what its writer put. Seeded ({@code -Doak.test.seed}).
 */
class BlockReuseTest {

    static Stream<Long> seeds() {
        return java.util.Arrays.stream(TestMaps.seeds(5L, 0xB10CL)).boxed();
    }

    private static final int CHUNK = 32;

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void mapsClosedWhileScannedLeaveEveryOtherMapIntact(long seed) throws Exception {
        OakMap<Integer, Blob> stable = TestMaps.intBlobMap(CHUNK);
        Map<Integer, Long> stableSeqs = new ConcurrentHashMap<>();
        Random init = new Random(seed);
        for (int k = 0; k < 2000; k++) {
            stable.put(k, new Blob(k, 0, init.nextInt(200)));
            stableSeqs.put(k, 0L);
        }
        AtomicReference<OakMap<Integer, Blob>> churned = new AtomicReference<>();
        AtomicBoolean done = new AtomicBoolean();
        AtomicInteger closedMidScan = new AtomicInteger();
        AtomicInteger fullScans = new AtomicInteger();
        List<Task> tasks = new ArrayList<>();
        tasks.add(() -> { // creates, fills and closes maps, one after the other
            Random rnd = new Random(seed + 1);
            try {
                for (int round = 0; round < 40 * TestMaps.scale(); round++) {
                    OakMap<Integer, Blob> m = TestMaps.intBlobMap(CHUNK);
                    int n = 500 + rnd.nextInt(1500);
                    for (int k = 0; k < n; k++) {
                        m.put(k, new Blob(k, round, rnd.nextInt(600)));
                    }
                    int scansBefore = fullScans.get();
                    churned.set(m);
                    Thread.sleep(rnd.nextInt(5));
                    if (round % 4 == 0) {
                        // every fourth map lives until a scan of it completes (or 5 s): on a slow
                        // or busy machine, maps that live a few milliseconds may never be scanned whole
                        long deadline = System.nanoTime() + 5_000_000_000L;
                        while (fullScans.get() == scansBefore && System.nanoTime() < deadline) {
                            Thread.sleep(1);
                        }
                    }
                    m.close();
                }
            } finally {
                done.set(true);
            }
        });
        tasks.add(() -> { // scans whichever churned map is current, racing its close
            Random rnd = new Random(seed + 2);
            while (!done.get()) {
                OakMap<Integer, Blob> m = churned.get();
                if (m == null) {
                    Thread.onSpinWait();
                    continue;
                }
                int seen = 0;
                try {
                    int last = rnd.nextBoolean() ? Integer.MIN_VALUE : Integer.MAX_VALUE;
                    if (last == Integer.MIN_VALUE) {
                        for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : m.zc().entryStreamSet()) {
                            int key = TestMaps.readIntKey(e.getKey());
                            assertTrue(key > last, "ascending");
                            last = key;
                            e.getValue().transform(Blob::read).ofKey(key);
                            seen++;
                        }
                    } else {
                        for (Map.Entry<Integer, Blob> e : m.descendingMap().entrySet()) {
                            assertTrue(e.getKey() < last, "descending");
                            last = e.getKey();
                            e.getValue().ofKey(e.getKey());
                            seen++;
                        }
                    }
                    fullScans.incrementAndGet();
                } catch (OakClosedException expected) {
                    if (seen > 0) {
                        closedMidScan.incrementAndGet();
                    }
                    while (churned.get() == m && !done.get()) {
                        Thread.onSpinWait(); // the next map
                    }
                }
            }
        });
        tasks.add(() -> { // writes the long-lived map (new values, so new slices and blocks) and scans it
            Random rnd = new Random(seed + 3);
            long seq = 1;
            while (!done.get()) {
                for (int i = 0; i < 200; i++) {
                    int k = rnd.nextInt(2000);
                    stable.put(k, new Blob(k, seq, rnd.nextInt(400)));
                    stableSeqs.put(k, seq++);
                }
                int count = 0;
                for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : stable.zc().entryStreamSet()) {
                    int key = TestMaps.readIntKey(e.getKey());
                    Blob b = e.getValue().transform(Blob::read);
                    b.ofKey(key);
                    assertEquals((long) stableSeqs.get(key), b.seq(), "the value last put for " + key);
                    count++;
                }
                assertEquals(2000, count, "every key of the long-lived map, once");
            }
        });
        TestMaps.runConcurrently("maps closed while scanned, seed=" + seed, 120, tasks);
        assertTrue(fullScans.get() > 0, "the scanner completed scans"); // and about 30 of the 40 closes cut one short (seen while writing this test)
        for (Map.Entry<Integer, Long> e : stableSeqs.entrySet()) {
            Blob b = stable.get(e.getKey());
            b.ofKey(e.getKey());
            assertEquals((long) e.getValue(), b.seq(), "final value of " + e.getKey());
        }
        stable.close();
    }
}
