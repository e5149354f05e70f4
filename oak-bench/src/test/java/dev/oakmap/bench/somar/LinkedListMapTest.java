package dev.oakmap.bench.somar;

import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.somar.Somar;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LinkedListMap} (and its on-heap twin {@link HeapLinkedListMap}) against a
 * {@link ConcurrentSkipListMap} model, over every {@link Somar} implementation: seeded sequential
 * runs, concurrent runs on disjoint key sets (so each thread's model is exact), and a contended
 * run whose reads check that every value belongs to the key it was read under.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS) // a lost wake-up or livelock fails instead of hanging the build
class LinkedListMapTest {

    private static final long SEED = Long.getLong("somar.test.seed", 20_240_611L);

    private static NavigableMap<byte[], byte[]> model() {
        return new ConcurrentSkipListMap<>(Arrays::compareUnsigned);
    }

    /**
     * Distinct keys of varied lengths so that every comparison path runs: a prefix shared by groups
     * of three (long runs of equal 8-byte words), then the index in two bytes (half of them above
     * 127, for unsigned order); every tenth key extends the previous one (a proper prefix of it).
     */
    private static byte[] key(int i) {
        if (i % 10 == 9) {
            byte[] prev = key(i - 1);
            byte[] k = Arrays.copyOf(prev, prev.length + 1);
            k[prev.length] = (byte) 0x80;
            return k;
        }
        int prefix = (i * 7) % 19;
        byte[] k = new byte[prefix + 2];
        long z = SomarConcurrencyTest.mix(i / 3);
        for (int j = 0; j < prefix; j++) {
            k[j] = (byte) (z >>> (8 * (j % 8)));
        }
        k[prefix] = (byte) (i >>> 8);
        k[prefix + 1] = (byte) i;
        return k;
    }

    private static byte[] value(SplittableRandom r) {
        byte[] v = new byte[r.nextInt(4) == 0 ? r.nextInt(40) : 16]; // mostly same length: in-place writes
        r.nextBytes(v);
        return v;
    }

    private static void checkSame(NavigableMap<byte[], byte[]> model, LinkedListMap map) {
        List<byte[]> keys = new ArrayList<>();
        List<byte[]> values = new ArrayList<>();
        map.forEach((k, v) -> {
            keys.add(k);
            values.add(v);
        });
        assertEquals(model.size(), keys.size(), "size");
        assertEquals(model.size(), map.size());
        int i = 0;
        for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
            assertArrayEquals(e.getKey(), keys.get(i), "key " + i);
            assertArrayEquals(e.getValue(), values.get(i), "value of key " + i);
            i++;
        }
    }

    private static void randomOps(LinkedListMap map, NavigableMap<byte[], byte[]> model, SplittableRandom r,
                                  int ops, int keySpace, int stride, int offset) {
        for (int n = 0; n < ops; n++) {
            byte[] k = key(offset + stride * r.nextInt(keySpace));
            int op = r.nextInt(10);
            if (op < 4) {
                byte[] v = value(r);
                boolean inserted = map.put(k, v);
                assertEquals(model.put(k, v) == null, inserted, "put's result");
            } else if (op < 7) {
                assertEquals(model.remove(k) != null, map.remove(k), "remove's result");
            } else if (op < 9) {
                byte[] want = model.get(k);
                byte[] got = map.get(k);
                if (want == null) {
                    assertEquals(null, got);
                } else {
                    assertArrayEquals(want, got);
                }
            } else {
                assertEquals(model.containsKey(k), map.containsKey(k));
            }
        }
    }

    @ParameterizedTest
    @EnumSource(SomarKind.class)
    void sequentialAgainstModel(SomarKind kind) {
        try (Somar m = kind.create(64 << 20)) {
            LinkedListMap map = new LinkedListMap(m);
            NavigableMap<byte[], byte[]> model = model();
            SplittableRandom r = new SplittableRandom(SEED);
            randomOps(map, model, r, 30_000, 300, 1, 0);
            checkSame(model, map);
            // a zero-copy read of part of a value
            Map.Entry<byte[], byte[]> first = model.firstEntry();
            if (first != null && first.getValue().length > 0) {
                assertEquals(first.getValue()[0], (byte) map.get(first.getKey(), (OakScopedReadBuffer b) -> b.get(0)));
            }
            map.clear();
            assertEquals(0, map.size());
            if (kind.reclaims) {
                SomarContractTest.reclaim(m);
            }
        }
    }

    /** Threads work on disjoint key sets of one list, each against its own model; the union must match. */
    @ParameterizedTest
    @EnumSource(SomarKind.class)
    void concurrentDisjointAgainstModel(SomarKind kind) throws Exception {
        int threads = 3;
        try (Somar m = kind.create(128 << 20)) {
            LinkedListMap map = new LinkedListMap(m);
            List<NavigableMap<byte[], byte[]>> models = new ArrayList<>();
            AtomicReference<Throwable> error = new AtomicReference<>();
            Thread[] ts = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                NavigableMap<byte[], byte[]> model = model();
                models.add(model);
                int offset = t;
                SplittableRandom r = new SplittableRandom(SEED + 31 * t);
                ts[t] = new Thread(() -> randomOps(map, model, r, 15_000, 100, threads, offset));
                ts[t].setUncaughtExceptionHandler((th, e) -> error.compareAndSet(null, e));
                ts[t].start();
            }
            for (Thread t : ts) {
                t.join();
            }
            if (error.get() != null) {
                throw new AssertionError(kind + ": a thread failed", error.get());
            }
            NavigableMap<byte[], byte[]> all = model();
            models.forEach(all::putAll);
            checkSame(all, map);
        }
    }

    /**
     * All threads put, remove and get the same few keys. Each value names its key and carries a
     * checksum; a get must return a value of the key asked for, intact. At the end the list is
     * strictly sorted and, once cleared, the reclaiming schemes give their memory back.
     */
    @ParameterizedTest
    @EnumSource(SomarKind.class)
    void contendedValuesBelongToTheirKeys(SomarKind kind) throws Exception {
        int keys = 48;
        try (Somar m = kind.create(128 << 20)) {
            LinkedListMap map = new LinkedListMap(m);
            AtomicReference<Throwable> error = new AtomicReference<>();
            AtomicLong hits = new AtomicLong();
            Thread[] ts = new Thread[3];
            for (int t = 0; t < ts.length; t++) {
                SplittableRandom r = new SplittableRandom(SEED + 77 * t);
                ts[t] = new Thread(() -> {
                    for (int n = 0; n < 40_000; n++) {
                        int i = r.nextInt(keys);
                        byte[] k = key(i);
                        int op = r.nextInt(4);
                        if (op == 0) {
                            map.put(k, checkedValue(i, r.nextLong(), r.nextInt(3) == 0 ? 40 : 24));
                        } else if (op == 1) {
                            map.remove(k);
                        } else {
                            Long got = map.get(k, LinkedListMapTest::checkValue);
                            if (got != null) {
                                assertEquals(i, (long) got, "a value read under key " + i + " belongs to " + got);
                                hits.incrementAndGet();
                            }
                        }
                    }
                });
                ts[t].setUncaughtExceptionHandler((th, e) -> error.compareAndSet(null, e));
                ts[t].start();
            }
            for (Thread t : ts) {
                t.join();
            }
            if (error.get() != null) {
                throw new AssertionError(kind + ": a thread failed", error.get());
            }
            assertTrue(hits.get() > 1000, "too few hits: " + hits.get());
            List<byte[]> seen = new ArrayList<>();
            map.forEach((k, v) -> seen.add(k));
            for (int i = 1; i < seen.size(); i++) {
                assertTrue(Arrays.compareUnsigned(seen.get(i - 1), seen.get(i)) < 0, "sorted, no duplicates");
            }
            for (byte[] k : seen) {
                assertTrue(map.containsKey(k));
            }
            map.clear();
            assertEquals(0, map.size());
            SomarContractTest.reclaim(m);
            if (kind == SomarKind.LOCK_BASED || kind == SomarKind.EBR || kind == SomarKind.HE) {
                assertEquals(0, m.memoryUsed(), kind + ": an empty map holds no memory once reclaimed");
            }
        }
    }

    /** A value: key index (8) | nonce (8) | filler | checksum (8). */
    private static byte[] checkedValue(int i, long nonce, int length) {
        byte[] v = new byte[length];
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(v);
        b.putLong(0, i);
        b.putLong(8, nonce);
        for (int j = 16; j < length - 8; j++) {
            v[j] = (byte) (nonce >>> j);
        }
        b.putLong(length - 8, sum(v, length));
        return v;
    }

    private static long sum(byte[] v, int length) {
        long s = 17;
        for (int j = 0; j < length - 8; j++) {
            s = s * 131 + v[j];
        }
        return SomarConcurrencyTest.mix(s);
    }

    /** @return the key index a value names, or -1 if its checksum fails */
    private static Long checkValue(OakScopedReadBuffer b) {
        int len = b.capacity();
        if (len < 24 || len > 4096) {
            return -1L; // garbage seen by an optimistic read that will be discarded
        }
        byte[] v = new byte[len];
        b.getBytes(0, v, 0, len);
        long want = java.nio.ByteBuffer.wrap(v).getLong(len - 8);
        return sum(v, len) == want ? java.nio.ByteBuffer.wrap(v).getLong(0) : -1L;
    }

    @Test
    void heapTwinAgainstModel() {
        HeapLinkedListMap map = new HeapLinkedListMap();
        NavigableMap<byte[], byte[]> model = model();
        SplittableRandom r = new SplittableRandom(SEED);
        for (int n = 0; n < 30_000; n++) {
            byte[] k = key(r.nextInt(300));
            int op = r.nextInt(3);
            if (op == 0) {
                byte[] v = value(r);
                assertEquals(model.put(k, v) == null, map.put(k, v));
            } else if (op == 1) {
                assertEquals(model.remove(k) != null, map.remove(k));
            } else {
                byte[] want = model.get(k);
                byte[] got = map.get(k);
                if (want == null) {
                    assertEquals(null, got);
                } else {
                    assertArrayEquals(want, got);
                }
            }
        }
        assertEquals(model.size(), map.size());
    }
}
