package dev.oakmap.bench.harness;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.BiFunction;

/**
 * The baseline: {@code ConcurrentSkipListMap<byte[], byte[]>} ordered by unsigned bytes, storing
 * its own copies of keys and values (the harness's arrays are scratch), as a user storing byte
 * strings on the heap would. Gets hand out the stored array (no copy); updates go through
 * {@code compute} with a copied, incremented array, since the skiplist has no in-place update.
 */
final class CslmBenchMap implements BenchMap {

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    /** Null once closed: dropping the skiplist frees it even when the heap is full (clear() allocates). */
    private ConcurrentSkipListMap<byte[], byte[]> map = new ConcurrentSkipListMap<>(Arrays::compareUnsigned);
    private NavigableMap<byte[], byte[]> descending = map.descendingMap();

    @Override
    public Session newSession(byte[] valueTemplate) {
        return new Session() {
            private final BiFunction<byte[], byte[], byte[]> increment = (k, v) -> {
                if (v == null) {
                    return valueTemplate.clone();
                }
                byte[] copy = v.clone();
                LONGS.set(copy, 0, (long) LONGS.get(copy, 0) + 1);
                return copy;
            };

            @Override
            public boolean putIfAbsent(byte[] key) {
                return map.putIfAbsent(key.clone(), valueTemplate.clone()) == null;
            }

            @Override
            public long put(byte[] key) {
                // the key may be absent, so the map may keep it: give it its own copy
                byte[] old = map.put(key.clone(), valueTemplate.clone());
                return old == null ? 0 : 1;
            }

            @Override
            public long update(byte[] key) {
                return map.compute(key.clone(), increment).length;
            }

            @Override
            public long get(byte[] key) {
                byte[] v = map.get(key);
                return v == null ? 0 : (long) LONGS.get(v, 0);
            }

            @Override
            public long getCopy(byte[] key) {
                byte[] v = map.get(key); // the stored array: what a skiplist user reads
                return v == null ? 0 : v.length;
            }

            @Override
            public long remove(byte[] key) {
                return map.remove(key) == null ? 0 : 1;
            }

            @Override
            public long scan(byte[] from, int length, boolean desc, boolean stream) {
                NavigableMap<byte[], byte[]> view = desc ? descending : map;
                long sum = 0;
                int n = 0;
                for (Map.Entry<byte[], byte[]> e : view.tailMap(from, true).entrySet()) {
                    sum += e.getKey()[0] + e.getValue()[0];
                    if (++n == length) {
                        return sum;
                    }
                }
                for (Map.Entry<byte[], byte[]> e : view.entrySet()) {
                    sum += e.getKey()[0] + e.getValue()[0];
                    if (++n == length) {
                        return sum;
                    }
                }
                return sum;
            }
        };
    }

    @Override
    public long size() {
        return map.size();
    }

    @Override
    public long offHeapUsed() {
        return 0;
    }

    @Override
    public long offHeapReserved() {
        return 0;
    }

    @Override
    public void close() {
        map = null;
        descending = null;
    }
}
