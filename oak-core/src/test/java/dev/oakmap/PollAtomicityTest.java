package dev.oakmap;

import dev.oakmap.common.OakCommonTypes;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Polls are linearizable (see {@code Navigator}, "Polls"): between the instant a poll's answer
 * holds and its removal, nobody may see the polled key present. The poll's value deserializer runs
 * in that window, so a deserializer that blocks holds a poll there, deterministically; what other
 * threads see meanwhile is then checked. Under every value scheme (each marks its own header).
 */
class PollAtomicityTest {

    /** A Long serializer whose deserialize can be made to block, or to throw, once. */
    static final class GatedLongs implements OakSerializer<Long> {
        volatile CountDownLatch entered;
        volatile CountDownLatch release;
        volatile boolean throwNext;

        @Override
        public void serialize(Long v, OakScopedWriteBuffer b) {
            OakCommonTypes.LONG_SERIALIZER.serialize(v, b);
        }

        @Override
        public Long deserialize(OakScopedReadBuffer b) {
            if (throwNext) {
                throwNext = false;
                throw new IllegalArgumentException("injected by the test");
            }
            CountDownLatch r = release;
            if (r != null) {
                release = null;
                entered.countDown();
                try {
                    if (!r.await(30, TimeUnit.SECONDS)) {
                        throw new AssertionError("never released");
                    }
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }
            return OakCommonTypes.LONG_SERIALIZER.deserialize(b);
        }

        @Override
        public int calculateSize(Long v) {
            return OakCommonTypes.LONG_SERIALIZER.calculateSize(v);
        }

        /** The next deserialization blocks until the returned latch is counted down. */
        CountDownLatch blockNext() {
            entered = new CountDownLatch(1);
            CountDownLatch r = new CountDownLatch(1);
            release = r;
            return r;
        }
    }

    private static OakMap<Integer, Long> map(GatedLongs values, MemoryScheme scheme) {
        return new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER, values, OakCommonTypes.INTEGER_COMPARATOR)
                .chunkCapacity(16).memoryCapacity(1L << 20).blockSize(1 << 16).valueMemory(scheme).build();
    }

    /**
     * From {3}: a poll of the first key holds 3 (blocked in its deserializer, after its answer
     * holds); another thread inserts 2, which must not wait, and then asks whether 3 is present,
     * and for the ceiling of 3. Those answers come after the insertion of 2, when 3 was no longer
     * the least key, so they must come after the poll too: they wait for it and see 3 gone. (Before
     * polls marked their key, containsKey answered true at once: the history of
     * {@code PollLincheckTest}'s class comment.)
     */
    @ParameterizedTest
    @EnumSource(value = MemoryScheme.class, names = {"NOVA", "GROW_ONLY", "LOCK_BASED"})
    void whoSeesALesserKeyInsertedSeesThePolledKeyGone(MemoryScheme scheme) throws Exception {
        GatedLongs values = new GatedLongs();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (OakMap<Integer, Long> m = map(values, scheme)) {
            m.put(3, 30L);
            m.put(5, 50L);
            CountDownLatch release = values.blockNext();
            Future<Map.Entry<Integer, Long>> poll = pool.submit(m::pollFirstEntry);
            assertTrue(values.entered.await(30, TimeUnit.SECONDS), "the poll reached its deserializer");
            Future<String> observer = pool.submit(() -> {
                assertNull(m.put(2, 20L)); // another key: does not wait for the poll
                return m.containsKey(3) + " " + m.ceilingKey(3) + " " + m.higherKey(2);
            });
            try {
                String early = observer.get(300, TimeUnit.MILLISECONDS);
                fail("answered while the poll held key 3: " + early);
            } catch (TimeoutException expected) {
                // waiting for the poll, as it must
            }
            release.countDown();
            assertEquals(Map.entry(3, 30L), poll.get(30, TimeUnit.SECONDS));
            assertEquals("false 5 5", observer.get(30, TimeUnit.SECONDS));
            assertEquals(Map.of(2, 20L, 5, 50L), Map.copyOf(m));
        } finally {
            pool.shutdownNow();
        }
    }

    /** A deserializer that throws in a poll leaves the mapping in place, unlocked and unmarked. */
    @ParameterizedTest
    @EnumSource(value = MemoryScheme.class, names = {"NOVA", "GROW_ONLY", "LOCK_BASED"})
    void aPollWhoseDeserializerThrowsRemovesNothing(MemoryScheme scheme) {
        GatedLongs values = new GatedLongs();
        try (OakMap<Integer, Long> m = map(values, scheme)) {
            m.put(3, 30L);
            m.put(4, 40L);
            values.throwNext = true;
            assertThrows(IllegalArgumentException.class, m::pollLastEntry);
            assertTrue(m.containsKey(4));
            assertEquals(4, m.ceilingKey(4));
            assertEquals(41L, m.merge(4, 1L, Long::sum)); // its lock was released
            assertEquals(Map.entry(4, 41L), m.pollLastEntry());
            assertEquals(Map.entry(3, 30L), m.pollFirstEntry());
            assertTrue(m.isEmpty());
        }
    }

    /**
     * Threads polling from both ends (so polls meet each other's marks) race threads inserting
     * fresh keys and threads asking containsKey and ceilingKey. Every key inserted is polled once
     * or is left in the map, none is polled twice, and nothing hangs. Seeded key choice.
     */
    @ParameterizedTest
    @EnumSource(value = MemoryScheme.class, names = {"NOVA", "LOCK_BASED"})
    void pollsFromBothEndsRacingInsertionsLoseAndDuplicateNothing(MemoryScheme scheme) throws Exception {
        int perInserter = 20_000;
        GatedLongs values = new GatedLongs();
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try (OakMap<Integer, Long> m = map(values, scheme)) {
            Map<Integer, Long> polled = new ConcurrentHashMap<>();
            AtomicInteger duplicates = new AtomicInteger();
            CountDownLatch inserting = new CountDownLatch(2);
            List<Future<?>> tasks = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                int base = t;
                tasks.add(pool.submit(() -> {
                    java.util.SplittableRandom r = new java.util.SplittableRandom(42 + base);
                    for (int i = 0; i < perInserter; i++) {
                        int k = 2 * (r.nextInt(1 << 10) * perInserter + i) + base; // distinct keys, random order
                        m.put(k, (long) k);
                    }
                    inserting.countDown();
                }));
            }
            for (int t = 0; t < 3; t++) {
                boolean first = t != 1;
                tasks.add(pool.submit(() -> {
                    do {
                        Map.Entry<Integer, Long> e = first ? m.pollFirstEntry() : m.pollLastEntry();
                        if (e != null) {
                            assertEquals((long) e.getKey(), e.getValue());
                            if (polled.put(e.getKey(), e.getValue()) != null) {
                                duplicates.incrementAndGet();
                            }
                        }
                    } while (inserting.getCount() > 0);
                }));
            }
            tasks.add(pool.submit(() -> {
                java.util.SplittableRandom r = new java.util.SplittableRandom(7);
                while (inserting.getCount() > 0) {
                    int k = r.nextInt(Integer.MAX_VALUE);
                    m.containsKey(k);
                    m.ceilingKey(k);
                }
            }));
            for (Future<?> f : tasks) {
                f.get(120, TimeUnit.SECONDS);
            }
            assertEquals(0, duplicates.get());
            for (Map.Entry<Integer, Long> e : m.entrySet()) {
                assertFalse(polled.containsKey(e.getKey()), "polled and still present: " + e.getKey());
            }
            assertEquals(2 * perInserter, polled.size() + m.size());
        } finally {
            pool.shutdownNow();
        }
    }
}
