package dev.oakmap.bench.somar;

import dev.oakmap.bench.harness.BenchMap;
import dev.oakmap.bench.harness.CslmOffHeapBenchMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link CslmOffHeapBenchMap}, the harness's CSLM-OffHeap adapter over a Nova {@code Somar}: the
 * {@link BenchMap} contract against a model, and a contended run of all its operations whose reads
 * must always find a value of the key asked for.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS) // a lost wake-up or livelock fails instead of hanging the build
class CslmOffHeapBenchMapTest {

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private static byte[] key(int i, int size) {
        byte[] k = new byte[size];
        long z = SomarConcurrencyTest.mix(i);
        for (int j = 0; j + 8 <= size; j += 8) {
            LONGS.set(k, j, z + j);
        }
        return k;
    }

    @Test
    void followsTheBenchMapContract() {
        byte[] value = new byte[40];
        new SplittableRandom(7).nextBytes(value);
        long first8 = (long) LONGS.get(value, 0);
        try (BenchMap map = new CslmOffHeapBenchMap(64L << 20)) {
            BenchMap.Session s = map.newSession(value);
            NavigableMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
            for (int i = 0; i < 300; i++) {
                byte[] k = key(i, 16);
                assertTrue(s.putIfAbsent(k));
                model.put(k, value);
            }
            byte[] k5 = key(5, 16);
            assertFalse(s.putIfAbsent(k5));
            assertEquals(300, map.size());
            assertEquals(first8, s.get(k5));
            assertEquals(value.length, s.getCopy(k5));
            s.update(k5);
            assertEquals(first8 + 1, s.get(k5));
            byte[] absent = key(1000, 16);
            assertEquals(0, s.get(absent));
            s.update(absent);
            assertEquals(first8, s.get(absent));
            assertEquals(301, map.size());
            s.put(absent);
            assertEquals(first8, s.get(absent));
            assertTrue(s.remove(absent) != 0);
            assertEquals(0, s.remove(absent));
            assertEquals(0, s.get(absent));
            assertEquals(300, map.size());
            byte[] from = key(17, 16);
            for (boolean desc : new boolean[]{false, true}) {
                for (int length : new int[]{1, 50, 299, 600}) {
                    NavigableMap<byte[], byte[]> view = desc ? model.descendingMap() : model;
                    List<Map.Entry<byte[], byte[]>> order = new ArrayList<>(view.tailMap(from, true).entrySet());
                    order.addAll(view.entrySet());
                    long want = 0;
                    for (int i = 0; i < length && i < order.size(); i++) {
                        want += order.get(i).getKey()[0] + order.get(i).getValue()[0];
                    }
                    assertEquals(want, s.scan(from, length, desc, false), "desc=" + desc + " length=" + length);
                }
            }
            assertTrue(map.offHeapUsed() >= 300L * (16 + 40));
            assertTrue(map.offHeapReserved() >= map.offHeapUsed());
        }
    }

    /**
     * Threads insert, overwrite, update and remove the same few keys while reading them; each key's
     * value template names the key (sessions are per key group), so a read under a key must find
     * that key's name. At the end the size matches a scan's count.
     */
    @Test
    void contendedOperationsKeepValuesWithTheirKeys() throws Exception {
        int keys = 64;
        try (BenchMap map = new CslmOffHeapBenchMap(256L << 20)) {
            AtomicReference<Throwable> error = new AtomicReference<>();
            Thread[] ts = new Thread[3];
            for (int t = 0; t < ts.length; t++) {
                SplittableRandom r = new SplittableRandom(100 + t);
                ts[t] = new Thread(() -> {
                    // one session per key, whose template's bytes 8..15 name the key
                    BenchMap.Session[] sessions = new BenchMap.Session[keys];
                    for (int i = 0; i < keys; i++) {
                        byte[] v = new byte[64];
                        LONGS.set(v, 8, (long) i);
                        sessions[i] = map.newSession(v);
                    }
                    for (int n = 0; n < 40_000; n++) {
                        int i = r.nextInt(keys);
                        byte[] k = key(i, 24);
                        BenchMap.Session s = sessions[i];
                        switch (r.nextInt(6)) {
                            case 0 -> s.putIfAbsent(k);
                            case 1 -> s.put(k);
                            case 2 -> s.update(k);
                            case 3 -> s.remove(k);
                            default -> {
                                long len = s.getCopy(k);
                                assertTrue(len == 0 || len == 64, "value length " + len);
                                s.get(k);
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
                throw new AssertionError("a thread failed", error.get());
            }
            BenchMap.Session s = map.newSession(new byte[64]);
            long present = 0;
            for (int i = 0; i < keys; i++) {
                if (s.getCopy(key(i, 24)) != 0) {
                    present++;
                }
            }
            assertEquals(present, map.size());
        }
    }
}
