package dev.oakmap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Removed mappings at the ends of a chunk's list, which searches for the first (or last) live
 * entry skip through the chunks' dead-prefix and dead-suffix hints: queue and sliding-window
 * patterns against a model, keys revived or inserted behind a hint (which must withdraw it), and
 * threads that each own keys and check, after every update of their own, that the map's ends
 * account for it while other threads move the hints. Seeded.
 */
class DeadPrefixTest {

    @ParameterizedTest
    @ValueSource(ints = {4, 64, 4096})
    void queueAndStackPatternsMatchAModel(int chunk) {
        for (long seed : TestMaps.seeds(1, 2)) {
            try (OakMap<Long, Long> m = TestMaps.longMap(chunk)) {
                TreeMap<Long, Long> model = new TreeMap<>();
                Random r = new Random(seed * 31 + chunk);
                long tail = 0;
                for (int i = 0; i < 20_000 * TestMaps.scale(); i++) {
                    int op = r.nextInt(10);
                    if (op < 4) {
                        tail += 1 + r.nextInt(3);
                        assertEquals(model.put(tail, (long) i), m.put(tail, (long) i), "put " + tail);
                    } else if (op < 6) {
                        assertEquals(model.pollFirstEntry(), m.pollFirstEntry(), "pollFirst at " + i);
                    } else if (op < 7) {
                        assertEquals(model.pollLastEntry(), m.pollLastEntry(), "pollLast at " + i);
                    } else if (op < 8 && tail > 0) { // behind the hints: revives a removed key, or a new one
                        long k = r.nextLong(tail + 1);
                        assertEquals(model.put(k, (long) -i), m.put(k, (long) -i), "put below " + k);
                    } else if (op < 9 && !model.isEmpty()) {
                        long k = r.nextLong(tail + 1);
                        assertEquals(model.remove(k), m.remove(k), "remove " + k);
                    }
                    assertEquals(model.isEmpty() ? null : model.firstKey(), firstOrNull(m), "first at " + i);
                    assertEquals(model.isEmpty() ? null : model.lastKey(), lastOrNull(m), "last at " + i);
                }
                assertEquals(new ArrayList<>(model.entrySet()), new ArrayList<>(m.entrySet()));
                assertEquals(new ArrayList<>(model.descendingMap().entrySet()),
                        new ArrayList<>(m.descendingMap().entrySet()));
            }
        }
    }

    private static Long firstOrNull(OakMap<Long, Long> m) {
        Map.Entry<Long, Long> e = m.firstEntry();
        return e == null ? null : e.getKey();
    }

    private static Long lastOrNull(OakMap<Long, Long> m) {
        Map.Entry<Long, Long> e = m.lastEntry();
        return e == null ? null : e.getKey();
    }

    /**
     * One chunk, large enough that the removals below do not compact it: the hints move past 300
     * dead entries at each end, then a removed key behind each hint is put back and a new key is
     * inserted behind each; each must be found first (last).
     */
    @Test
    void keysPutBehindTheHintsAreFound() {
        try (OakMap<Long, Long> m = TestMaps.longMap(4096)) {
            for (long k = 0; k < 2_000; k += 2) {
                m.put(k, k);
            }
            for (int i = 0; i < 300; i++) {
                assertEquals(2L * i, m.pollFirstEntry().getKey());
                assertEquals(1998L - 2 * i, m.pollLastEntry().getKey());
            }
            assertEquals(600L, m.firstKey()); // the hints are now past the dead runs
            assertEquals(1398L, m.lastKey());

            m.put(10L, -1L); // revives a removed entry behind the head hint
            assertEquals(10L, m.firstKey());
            assertEquals(10L, m.pollFirstEntry().getKey());
            m.put(11L, -1L); // a new entry behind the head hint
            assertEquals(11L, m.firstKey());
            assertEquals(List.of(11L, 600L, 602L), new ArrayList<>(m.keySet()).subList(0, 3));
            assertEquals(11L, m.pollFirstEntry().getKey());
            assertEquals(600L, m.firstKey());

            m.put(1990L, -1L); // revives a removed entry behind the tail hint
            assertEquals(1990L, m.lastKey());
            assertEquals(1990L, m.pollLastEntry().getKey());
            m.put(1991L, -1L); // a new entry behind the tail hint
            assertEquals(1991L, m.lastKey());
            assertEquals(List.of(1991L, 1398L, 1396L), new ArrayList<>(m.descendingKeySet()).subList(0, 3));
            assertEquals(1991L, m.pollLastEntry().getKey());
            assertEquals(1398L, m.lastKey());
            assertEquals(400, m.size());
        }
    }

    /**
     * Threads own disjoint keys (key mod threads). Each repeatedly puts or removes one of its own
     * keys at the low or high end and then checks the map's first and last keys against what it
     * knows: a key of its own that is present throughout the query bounds the answer, and a key
     * of its own that is absent throughout it is never the answer. Every query also moves the
     * hints past the other threads' removals, so hints are set while keys behind them are put.
     */
    @Test
    void concurrentOwnersSeeTheirKeysAtTheEnds() throws Exception {
        int threads = 4;
        for (long seed : TestMaps.seeds(7, 8, 9)) {
            for (int chunk : new int[] {16, 1024}) {
                try (OakMap<Long, Long> m = TestMaps.longMap(chunk)) {
                    AtomicReference<Throwable> failure = new AtomicReference<>();
                    CyclicBarrier start = new CyclicBarrier(threads);
                    List<Thread> ts = new ArrayList<>();
                    for (int t = 0; t < threads; t++) {
                        int me = t;
                        ts.add(new Thread(() -> {
                            try {
                                start.await(10, TimeUnit.SECONDS);
                                runOwner(m, me, threads, seed);
                            } catch (Throwable e) {
                                failure.compareAndSet(null, e);
                            }
                        }));
                    }
                    ts.forEach(Thread::start);
                    for (Thread th : ts) {
                        th.join(120_000);
                        assertTrue(!th.isAlive(), "a thread did not finish");
                    }
                    if (failure.get() != null) {
                        fail("seed " + seed + ", chunk " + chunk, failure.get());
                    }
                }
            }
        }
    }

    private static void runOwner(OakMap<Long, Long> m, int me, int threads, long seed) {
        Random r = new Random(seed * 131 + me);
        ConcurrentSkipListMap<Long, Long> mine = new ConcurrentSkipListMap<>();
        int span = 400; // keys of each end: [0, span * threads) and [HIGH, HIGH + span * threads)
        long high = 1_000_000;
        for (int i = 0; i < 6_000 * TestMaps.scale(); i++) {
            long base = r.nextBoolean() ? 0 : high;
            long k = base + (long) r.nextInt(span) * threads + me;
            if (r.nextInt(3) == 0) {
                m.remove(k);
                mine.remove(k);
                Long first = firstOrNull(m);
                Long last = lastOrNull(m);
                if (k == (first == null ? -1 : first) || k == (last == null ? -1 : last)) {
                    throw new AssertionError("removed key " + k + " reported at an end: " + first + ", " + last);
                }
            } else {
                m.put(k, (long) i);
                mine.put(k, (long) i);
            }
            if (!mine.isEmpty()) {
                Long first = firstOrNull(m);
                Long last = lastOrNull(m);
                if (first == null || first > mine.firstKey()) {
                    throw new AssertionError("first key " + first + " above own present key " + mine.firstKey());
                }
                if (last == null || last < mine.lastKey()) {
                    throw new AssertionError("last key " + last + " below own present key " + mine.lastKey());
                }
            }
        }
        for (long k : mine.keySet()) {
            assertEquals(mine.get(k), m.get(k));
        }
    }
}
