package dev.oakmap;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Navigation ({@code ceiling/higher/floor/lower}, {@code first/last} of sub-maps, their
 * {@code Entry} forms) and {@code isEmpty} are linearizable, checked through invariants that a
 * weakly consistent search breaks. Two "relay" pairs of keys are never both absent: a writer inserts one before it
 * removes the other ({@code put(LOW_A); remove(LOW_B); put(LOW_B); remove(LOW_A)}, and the same
 * for the high pair). So at every moment the least key at or above {@link #BELOW_LOW} is at most
 * {@code LOW_B}, and the greatest at or below {@link #ABOVE_HIGH} at least {@code HIGH_A}. A
 * search that passes a relay key's position before its insertion and reaches the other after
 * its removal, and then goes on, returns a key beyond the pair: a filler key between the pairs
 * (inserted and removed by another writer) or a stable key. A third writer makes keys inside
 * each relay flicker (inserted, then removed at once), so that searches walk dead entries there
 * and the window between passing one relay key and reaching the other is wide. Chunks of 8
 * entries make every search cross rebalances, dead entries and chunk boundaries.
 */
class NavigationLinearizabilityTest {

    private static final int LOW_A = 100;
    private static final int LOW_B = 200;
    private static final int HIGH_A = 800;
    private static final int HIGH_B = 900;
    private static final int BELOW_LOW = 50;
    private static final int ABOVE_HIGH = 950;
    /** Always present, outside the relays: what a search that overshoots the whole middle returns. */
    private static final int[] STABLE = {0, 10, 990, 1000};

    /** Each seed under each value memory scheme (the lock-based one holds a read lock across the second walk). */
    static Stream<Arguments> cases() {
        return java.util.Arrays.stream(TestMaps.seeds(5L, 0xC0FFEEL, 31337L)).boxed()
                .flatMap(seed -> Stream.of(MemoryScheme.values()).map(scheme -> Arguments.of(seed, scheme)));
    }

    private static long valueOf(int k) {
        return 7L * k + 3;
    }

    @ParameterizedTest(name = "seed={0} values={1}")
    @MethodSource("cases")
    void navigationNeverOvershootsARelay(long seed, MemoryScheme values) throws Exception {
        try (OakMap<Integer, Long> map = new OakMapBuilder<>(TestMaps.INT_KEY, TestMaps.LONG_VAL, TestMaps.INT_CMP)
                .chunkCapacity(8).valueMemory(values).build()) {
            for (int k : STABLE) {
                map.put(k, valueOf(k));
            }
            map.put(LOW_A, valueOf(LOW_A));
            map.put(HIGH_B, valueOf(HIGH_B));
            AtomicBoolean stop = new AtomicBoolean();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            threads.add(worker(failure, stop, () -> {
                while (!stop.get()) {
                    relay(map, LOW_A, LOW_B);
                    relay(map, HIGH_B, HIGH_A);
                }
            }));
            Random fillers = new Random(seed * 31 + 1);
            threads.add(worker(failure, stop, () -> {
                while (!stop.get()) { // between the relays: what an overshooting search returns
                    int k = LOW_B + 1 + fillers.nextInt(HIGH_A - LOW_B - 1);
                    if (fillers.nextBoolean()) {
                        map.put(k, valueOf(k));
                    } else {
                        map.remove(k);
                    }
                }
            }));
            Random flickers = new Random(seed * 31 + 2);
            threads.add(worker(failure, stop, () -> {
                while (!stop.get()) { // inside each relay, present for an instant: dead entries to walk
                    int k = flickers.nextBoolean() ? LOW_A + 1 + flickers.nextInt(LOW_B - LOW_A - 1)
                            : HIGH_A + 1 + flickers.nextInt(HIGH_B - HIGH_A - 1);
                    map.put(k, valueOf(k));
                    map.remove(k);
                }
            }));
            long checks = 20_000L * TestMaps.scale();
            threads.add(worker(failure, stop, () -> {
                Random r = new Random(seed);
                ConcurrentNavigableMap<Integer, Long> tail = map.tailMap(BELOW_LOW, true);
                ConcurrentNavigableMap<Integer, Long> head = map.headMap(ABOVE_HIGH, true);
                for (long i = 0; i < checks && failure.get() == null; i++) {
                    check(map, tail, head, r.nextInt(13));
                }
                stop.set(true);
            }));
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join(120_000);
            }
            stop.set(true);
            for (Thread t : threads) { // a walk waiting for a rebalance while it holds a value's read lock would hang here
                t.join(10_000);
                if (t.isAlive()) {
                    fail("seed " + seed + ", values " + values + ": a thread is stuck, e.g. " + t.getStackTrace()[0]);
                }
            }
            if (failure.get() != null) {
                throw new AssertionError("seed " + seed + ", values " + values, failure.get());
            }
            for (int k : STABLE) {
                assertEquals(valueOf(k), map.get(k));
            }
        }
    }

    /** Moves the relay from {@code from} to {@code to}: inserts {@code to}, then removes {@code from}. */
    private static void relay(OakMap<Integer, Long> map, int from, int to) {
        map.put(to, valueOf(to));
        map.remove(from);
        map.put(from, valueOf(from));
        map.remove(to);
    }

    private static void check(OakMap<Integer, Long> map, ConcurrentNavigableMap<Integer, Long> tail,
                              ConcurrentNavigableMap<Integer, Long> head, int which) {
        switch (which) {
            case 0 -> atMostLowB(map.ceilingKey(BELOW_LOW), "ceilingKey");
            case 1 -> atMostLowB(map.higherKey(BELOW_LOW), "higherKey");
            case 2 -> atMostLowB(tail.firstKey(), "tailMap.firstKey");
            case 3 -> atMostLowB(entryKey(map.ceilingEntry(BELOW_LOW)), "ceilingEntry");
            case 4 -> atMostLowB(entryKey(tail.firstEntry()), "tailMap.firstEntry");
            case 5 -> atLeastHighA(map.floorKey(ABOVE_HIGH), "floorKey");
            case 6 -> atLeastHighA(map.lowerKey(ABOVE_HIGH), "lowerKey");
            case 7 -> atLeastHighA(head.lastKey(), "headMap.lastKey");
            case 8 -> atLeastHighA(entryKey(map.floorEntry(ABOVE_HIGH)), "floorEntry");
            case 9 -> atLeastHighA(entryKey(head.lastEntry()), "headMap.lastEntry");
            case 10 -> atMostLowB(map.descendingMap().headMap(BELOW_LOW, true).lastKey(), "descending headMap.lastKey");
            case 11 -> {
                if (map.subMap(LOW_A, true, LOW_B, true).isEmpty()) {
                    fail("subMap(" + LOW_A + ", " + LOW_B + ").isEmpty(), but one of them was present at every moment");
                }
            }
            default -> atLeastHighA(map.descendingMap().tailMap(ABOVE_HIGH, true).firstKey(), "descending tailMap.firstKey");
        }
    }

    private static Integer entryKey(Map.Entry<Integer, Long> e) {
        if (e == null) {
            return null;
        }
        assertEquals(valueOf(e.getKey()), e.getValue(), "the value of " + e.getKey());
        return e.getKey();
    }

    private static void atMostLowB(Integer k, String what) {
        if (k == null || k < LOW_A || k > LOW_B) {
            fail(what + " returned " + k + ", but " + LOW_A + " or " + LOW_B + " was present at every moment");
        }
    }

    private static void atLeastHighA(Integer k, String what) {
        if (k == null || k < HIGH_A || k > HIGH_B) {
            fail(what + " returned " + k + ", but " + HIGH_A + " or " + HIGH_B + " was present at every moment");
        }
    }

    private static Thread worker(AtomicReference<Throwable> failure, AtomicBoolean stop, Runnable body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
                stop.set(true);
            }
        });
        t.setDaemon(true);
        return t;
    }
}
