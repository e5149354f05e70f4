package dev.oakmap;

import dev.oakmap.common.OakCommonTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Rebalances of different chunks run at the same time (see {@code Rebalancer}, "Concurrent
 * rebalances"): a rebalance stalled in its copy does not hold up the rebalances of other chunks,
 * while writers of the chunk it has frozen wait for it, and nothing is lost either way.
 *
 * <p>A rebalance calls the comparator's {@code serializedKeyPrefix} when it splits a chunk (the
 * new chunks' minimum keys). The comparator here stalls that call, on one thread and only inside
 * a rebalance, until the test lets it go: that holds one rebalance in the middle of its copy.
 */
class ConcurrentRebalanceTest {

    /** The order of {@link OakCommonTypes#INTEGER_COMPARATOR}, for comparators here that change only its prefixes. */
    private abstract static class IntegerOrder implements OakComparator<Integer> {
        final OakComparator<Integer> order = OakCommonTypes.INTEGER_COMPARATOR;

        @Override
        public int compareKeys(Integer key1, Integer key2) {
            return order.compareKeys(key1, key2);
        }

        @Override
        public int compareSerializedKeys(OakScopedReadBuffer k1, OakScopedReadBuffer k2) {
            return order.compareSerializedKeys(k1, k2);
        }

        @Override
        public int compareKeyAndSerializedKey(Integer key, OakScopedReadBuffer serializedKey) {
            return order.compareKeyAndSerializedKey(key, serializedKey);
        }
    }

    /** Integer keys whose serialized prefix, read by the gated thread inside a rebalance, waits for the gate. */
    private static final class GatedComparator extends IntegerOrder {
        volatile Thread gated;
        final CountDownLatch stalled = new CountDownLatch(1);
        final CountDownLatch gate = new CountDownLatch(1);

        @Override
        public long keyPrefix(Integer key) {
            return order.keyPrefix(key);
        }

        @Override
        public long serializedKeyPrefix(OakScopedReadBuffer serializedKey) {
            if (Thread.currentThread() == gated && insideRebalance()) {
                stalled.countDown();
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return order.serializedKeyPrefix(serializedKey);
        }

        private static boolean insideRebalance() {
            return StackWalker.getInstance().walk(frames ->
                    frames.anyMatch(f -> f.getClassName().endsWith(".Rebalancer")));
        }
    }

    private static OakMap<Integer, Integer> map(GatedComparator comparator, MemoryScheme scheme) {
        return new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER, OakCommonTypes.INTEGER_SERIALIZER, comparator)
                .chunkCapacity(16).memoryCapacity(64L << 20).keyMemory(scheme).valueMemory(scheme).build();
    }

    /** Inserts {@code from, from + 1, ...} until the gated rebalance stalls (or {@code limit} keys). */
    private static Thread stallingWriter(OakMap<Integer, Integer> m, GatedComparator comparator, int from, int limit,
                                         AtomicReference<Throwable> failure) {
        Thread a = new Thread(() -> {
            try {
                for (int k = from; k < from + limit && comparator.stalled.getCount() > 0; k++) {
                    m.put(k, -k);
                }
            } catch (Throwable e) {
                failure.set(e);
            }
        }, "stalled-rebalance");
        comparator.gated = a;
        return a;
    }

    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void aStalledRebalanceDoesNotHoldUpTheRebalancesOfOtherChunks(MemoryScheme scheme) throws Exception {
        GatedComparator comparator = new GatedComparator();
        try (OakMap<Integer, Integer> m = map(comparator, scheme)) {
            TreeMap<Integer, Integer> model = new TreeMap<>();
            for (int k = 0; k < 400; k++) {
                m.put(k * 10, k);
                model.put(k * 10, k);
            }
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread a = stallingWriter(m, comparator, -100_000, 10_000, failure);
            a.start();
            assertTrue(comparator.stalled.await(30, TimeUnit.SECONDS), "no rebalance of the low keys split a chunk");
            int stalledAfter = m.headMap(0).size(); // the low keys that made it in before the stall

            // far from the stalled chunk: thousands of insertions, hundreds of splits
            Thread b = new Thread(() -> {
                try {
                    for (int k = 1_000_000; k < 1_003_000; k++) {
                        m.put(k, k);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "other-chunks");
            b.start();
            b.join(TimeUnit.SECONDS.toMillis(30));
            boolean bFinished = !b.isAlive();
            boolean aStillStalled = a.isAlive();
            comparator.gate.countDown();
            a.join(TimeUnit.SECONDS.toMillis(30));
            b.join(TimeUnit.SECONDS.toMillis(30));
            assertNull(failure.get(), () -> "a writer failed: " + failure.get());
            assertTrue(bFinished, "the rebalances of other chunks waited for the stalled one");
            assertTrue(aStillStalled, "the stalled rebalance ended before the other writer was done");
            assertFalse(a.isAlive() || b.isAlive(), "a writer did not finish once the gate opened");

            for (int k = 1_000_000; k < 1_003_000; k++) {
                model.put(k, k);
            }
            for (var e : m.headMap(0).entrySet()) {
                model.put(e.getKey(), e.getValue());
            }
            assertTrue(m.headMap(0).size() >= stalledAfter, "low keys were lost");
            assertEquals(model, new TreeMap<>(m));
            for (var e : m.headMap(0).entrySet()) {
                assertEquals(-e.getKey(), e.getValue());
            }
        }
    }

    /**
     * Writers of the chunk a stalled rebalance has frozen wait for it (they cannot publish in a
     * frozen chunk), and go on, with nothing lost, once it ends.
     */
    @Test
    void writersOfTheFrozenChunkWaitForItsRebalance() throws Exception {
        GatedComparator comparator = new GatedComparator();
        try (OakMap<Integer, Integer> m = map(comparator, MemoryScheme.NOVA)) {
            for (int k = 0; k < 400; k++) {
                m.put(k * 10, k);
            }
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread a = stallingWriter(m, comparator, -100_000, 10_000, failure);
            a.start();
            assertTrue(comparator.stalled.await(30, TimeUnit.SECONDS), "no rebalance of the low keys split a chunk");

            // the stalled rebalance has the chunk of the last key the stalled writer put (at most
            // -90,001), whose range reaches up to the first of the keys put before (0 and up):
            // put more keys in between
            List<Thread> writers = new ArrayList<>();
            CountDownLatch done = new CountDownLatch(2);
            for (int w = 0; w < 2; w++) {
                int first = -60_000 + w * 1_000;
                Thread t = new Thread(() -> {
                    try {
                        for (int k = first; k < first + 200; k++) {
                            m.put(k, -k);
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    } finally {
                        done.countDown();
                    }
                });
                writers.add(t);
                t.start();
            }
            assertFalse(done.await(300, TimeUnit.MILLISECONDS), "a writer put into the frozen chunk");
            comparator.gate.countDown();
            assertTrue(done.await(30, TimeUnit.SECONDS), "writers of the frozen chunk did not go on after its rebalance");
            a.join(TimeUnit.SECONDS.toMillis(30));
            for (Thread t : writers) {
                t.join();
            }
            assertNull(failure.get(), () -> "a writer failed: " + failure.get());
            for (int w = 0; w < 2; w++) {
                for (int k = -60_000 + w * 1_000; k < -60_000 + w * 1_000 + 200; k++) {
                    assertEquals(-k, m.get(k), "key " + k);
                }
            }
            for (int k = 0; k < 400; k++) {
                assertEquals(k, m.get(k * 10));
            }
        }
    }

    /** The failure {@link FailingPrefixes} injects. */
    private static final class InjectedFailure extends RuntimeException {
        InjectedFailure() {
            super("injected: a key prefix that cannot be computed inside a rebalance");
        }
    }

    /**
     * Integer order whose prefix of a serialized key always throws (so the map computes stored keys'
     * prefixes from deserialized ones, see {@code OakComparator#serializedKeyPrefix}) and whose
     * prefix of a key object throws inside a rebalance while {@link #failing} is set: a rebalance
     * that needs a new chunk's minimum prefix then fails.
     */
    private static final class FailingPrefixes extends IntegerOrder {
        volatile boolean failing;
        final AtomicInteger thrown = new AtomicInteger();

        @Override
        public long keyPrefix(Integer key) {
            if (failing && GatedComparator.insideRebalance()) {
                thrown.incrementAndGet();
                throw new InjectedFailure();
            }
            return order.keyPrefix(key);
        }

        @Override
        public long serializedKeyPrefix(OakScopedReadBuffer serializedKey) {
            throw new UnsupportedOperationException("not this one");
        }
    }

    /**
     * A rebalance that fails while merging a chunk into its successor gives both chunks back, and
     * the removal that set it off, which took effect, returns normally. Most keys are removed from
     * a map of small chunks while every rebalance that must compute a key prefix fails: a chunk
     * that drops below a quarter of its capacity is merged with the next one, and the merge's
     * split of the pair fails. Then, with prefixes working again, every key is written: a chunk
     * left frozen by a failed merge would keep its writers waiting for ever, which the time limit
     * turns into a failure.
     */
    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void aRebalanceThatFailsWhileMergingGivesBothChunksBack(MemoryScheme scheme) {
        FailingPrefixes comparator = new FailingPrefixes();
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            try (OakMap<Integer, Integer> m = new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER,
                    OakCommonTypes.INTEGER_SERIALIZER, comparator).chunkCapacity(16).memoryCapacity(64L << 20)
                    .keyMemory(scheme).valueMemory(scheme).build()) {
                int keys = 2_000;
                for (int k = 0; k < keys; k++) {
                    m.put(k, k);
                }
                comparator.failing = true;
                for (int k = 0; k < keys; k++) {
                    if (k % 8 != 0) {
                        assertEquals(k, m.remove(k), "removal of " + k);
                        assertNull(m.get(k), "removed " + k);
                    }
                }
                comparator.failing = false;
                int failed = comparator.thrown.get();
                assertTrue(failed > 0, "no rebalance failed: the test no longer reaches a failed merge");
                assertEquals(keys / 8, m.size());
                for (int k = 0; k < keys; k += 8) {
                    assertEquals(k, m.get(k), "a key no removal touched, after " + failed + " failed rebalances");
                }
                for (int k = 0; k < keys; k++) {
                    m.put(k, -k);
                }
                assertEquals(keys, m.size());
                for (int k = 0; k < keys; k++) {
                    assertEquals(-k, m.get(k));
                }
            }
        });
    }

    /**
     * The other half of the rule above: an insertion that cannot proceed without a rebalance that
     * fails (its chunk is full) fails with the user's exception and has no effect. From the first
     * insertion on, every rebalance that needs a key prefix fails; each insertion either succeeds
     * and its key is there, or fails with the injected exception and its key is absent.
     */
    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void anInsertionThatNeedsAFailingRebalanceFailsWithoutEffect(MemoryScheme scheme) {
        FailingPrefixes comparator = new FailingPrefixes();
        comparator.failing = true;
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            try (OakMap<Integer, Integer> m = new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER,
                    OakCommonTypes.INTEGER_SERIALIZER, comparator).chunkCapacity(16).memoryCapacity(64L << 20)
                    .keyMemory(scheme).valueMemory(scheme).build()) {
                TreeMap<Integer, Integer> model = new TreeMap<>();
                int failed = 0;
                for (int k = 0; k < 200; k++) {
                    try {
                        assertNull(m.put(k, k));
                        model.put(k, k);
                    } catch (InjectedFailure expected) {
                        failed++;
                    }
                    assertEquals(model.containsKey(k), m.containsKey(k), "key " + k + " after its put");
                }
                assertTrue(failed > 0, "no insertion needed a failing rebalance");
                assertEquals(model, new TreeMap<>(m));
                comparator.failing = false;
                for (int k = 0; k < 200; k++) {
                    m.put(k, -k);
                }
                assertEquals(200, m.size());
                assertEquals(-199, m.get(199));
            }
        });
    }
}
