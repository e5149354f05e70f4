package dev.oakmap;

import dev.oakmap.common.OakCommonTypes;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@code clear()} removes each mapping through the value reference its scan found, and by key
 * when that value has moved meanwhile. Here other threads keep replacing values with ones of
 * another size (so each replacement moves the value to a new slice) and never insert: once
 * {@code clear()} returns, every key must be gone, including those whose value moved under it.
 * Seeded; small chunks, so compactions replace chunks under the scan too.
 */
class ClearConcurrencyTest {

    @Test
    void clearRemovesKeysWhoseValuesMoveMeanwhile() throws Exception {
        for (long seed : TestMaps.seeds(3, 4)) {
            for (int round = 0; round < 5 * TestMaps.scale(); round++) {
                runRound(seed * 100 + round);
            }
        }
    }

    private static void runRound(long seed) throws Exception {
        try (OakMap<Long, byte[]> m = new OakMapBuilder<>(OakCommonTypes.LONG_SERIALIZER,
                OakCommonTypes.BYTE_ARRAY_SERIALIZER, OakCommonTypes.LONG_COMPARATOR)
                .memoryCapacity(64L << 20).chunkCapacity(64).build()) {
            int n = 20_000;
            for (long k = 0; k < n; k++) {
                m.put(k, new byte[8]);
            }
            AtomicBoolean stop = new AtomicBoolean();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> movers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                Random r = new Random(seed * 7 + t);
                movers.add(new Thread(() -> {
                    try {
                        while (!stop.get()) {
                            long k = r.nextInt(n);
                            m.replace(k, new byte[r.nextBoolean() ? 8 : 200]); // never inserts
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }));
            }
            movers.forEach(Thread::start);
            Thread.sleep(5);
            m.clear();
            stop.set(true);
            for (Thread t : movers) {
                t.join(30_000);
                assertFalse(t.isAlive());
            }
            if (failure.get() != null) {
                fail("seed " + seed, failure.get());
            }
            assertTrue(m.isEmpty(), "seed " + seed + ": " + m.size() + " keys survived clear()");
            assertEquals(0, m.size());
            assertFalse(m.entrySet().iterator().hasNext());
        }
    }
}
