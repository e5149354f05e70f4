package dev.oakmap.bench.harness;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@link BenchMap} contract, checked on every registered map at a tiny scale: what each
 * operation returns and leaves behind, and that scans visit the right pairs in the right order
 * (ascending and descending, wrapping around), against a {@link TreeMap} model.
 */
class BenchMapContractTest {

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    static List<MapKind> maps() {
        return MapKind.ALL;
    }

    @ParameterizedTest
    @MethodSource("maps")
    void operationsFollowTheContract(MapKind kind) {
        byte[] value = new byte[40];
        new SplittableRandom(7).nextBytes(value);
        long first8 = (long) LONGS.get(value, 0);
        try (BenchMap map = kind.factory().apply(64L << 20)) {
            BenchMap.Session s = map.newSession(value);
            NavigableMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
            byte[] key = new byte[16];
            for (int i = 0; i < 300; i++) {
                Keys.key(1, i, key);
                assertTrue(s.putIfAbsent(key), kind.name() + " key " + i);
                model.put(key.clone(), value);
            }
            Keys.key(1, 5, key);
            assertFalse(s.putIfAbsent(key), kind.name() + ": putIfAbsent of a present key");
            assertEquals(300, map.size());

            assertEquals(first8, s.get(key));
            assertEquals(value.length, s.getCopy(key));
            s.update(key);
            assertEquals(first8 + 1, s.get(key), kind.name() + ": update adds 1 to the first 8 bytes");
            s.update(key);
            assertEquals(first8 + 2, s.get(key));
            byte[] absent = new byte[16];
            Keys.key(1, 1000, absent);
            assertEquals(0, s.get(absent));
            s.update(absent);
            assertEquals(first8, s.get(absent), kind.name() + ": update of an absent key inserts the template");
            model.put(absent.clone(), value);
            s.put(absent);
            assertEquals(301, map.size());
            assertEquals(first8, s.get(absent));

            assertTrue(s.remove(absent) != 0, kind.name() + ": remove of a present key");
            model.remove(absent);
            assertEquals(0, s.get(absent));
            assertEquals(300, map.size());

            // scans from a present key, in both directions, long enough to wrap around
            Keys.key(1, 17, key);
            for (boolean desc : new boolean[]{false, true}) {
                for (boolean stream : new boolean[]{false, true}) {
                    for (int length : new int[]{1, 50, 299}) {
                        assertEquals(expectedScan(model, key, length, desc), s.scan(key, length, desc, stream),
                                kind.name() + " scan desc=" + desc + " stream=" + stream + " length=" + length);
                    }
                }
            }
            if (kind.offHeap()) {
                assertTrue(map.offHeapUsed() >= 300L * (16 + 40), kind.name() + " off-heap used " + map.offHeapUsed());
                assertTrue(map.offHeapReserved() >= map.offHeapUsed(), kind.name());
            } else {
                assertEquals(0, map.offHeapUsed());
            }
        }
    }

    private static long expectedScan(NavigableMap<byte[], byte[]> model, byte[] from, int length, boolean desc) {
        NavigableMap<byte[], byte[]> view = desc ? model.descendingMap() : model;
        List<Map.Entry<byte[], byte[]>> order = new ArrayList<>(view.tailMap(from, true).entrySet());
        order.addAll(view.entrySet());
        long sum = 0;
        for (int i = 0; i < length && i < order.size(); i++) {
            sum += order.get(i).getKey()[0] + order.get(i).getValue()[0];
        }
        return sum;
    }
}
