package dev.oakmap.bench.harness;

import org.mapdb.BTreeMap;
import org.mapdb.DB;
import org.mapdb.DBMaker;
import org.mapdb.Serializer;
import org.mapdb.Store;
import org.mapdb.StoreDirect;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Iterator;
import java.util.Map;

/**
 * MapDB's {@link BTreeMap}{@code <byte[], byte[]>} (a concurrent B-link tree) in a
 * {@code DBMaker.memoryDirectDB()} store: the off-heap ordered map that users pick today from Maven
 * Central. Keys and values use {@code Serializer.BYTE_ARRAY} (which orders keys as unsigned bytes,
 * like the other maps); values are stored outside the tree nodes ({@code valuesOutsideNodesEnable()},
 * MapDB's advice for large values: with 1000-byte values inside the nodes every get deserializes a
 * whole leaf of up to 32 values; in a first probe on our 2-core machine, 50K pairs of 100 + 1000 B,
 * that was 2.8x slower ingestion and 1.5x slower gets).
 *
 * <p>Each workload maps to the nearest MapDB operation (see {@link MapKind#MAPDB}):
 * <ul>
 *   <li>ingestion: {@code putIfAbsent} (not {@code putIfAbsentBoolean}, whose result is inverted
 *       in MapDB 3.1.0: {@code putIfAbsent(k, v) != null}); put: {@code put} (which also
 *       deserializes the old value it returns: MapDB has no put that does not);</li>
 *   <li>get: {@code get}, which always deserializes a copy of the value (there is no zero-copy
 *       read, so get-zc runs as get-copy);</li>
 *   <li>update: no in-place or atomic compute in MapDB 3: a loop of {@code get}, a copy with +1 in
 *       its first 8 bytes, and {@code replace(key, old, new)} (compare-and-set on the serialized
 *       value), or {@code putIfAbsent} when the key is absent;</li>
 *   <li>scans: {@code entryIterator(from, true, null, false)} ascending and
 *       {@code descendingEntryIterator(null, false, from, true)} descending, each entry a fresh
 *       copy of the key and value (no stream API: the stream variants run as the iterator ones);</li>
 *   <li>remove: {@code remove}.</li>
 * </ul>
 *
 * <p>Memory: the store grows its direct {@code ByteBuffer}s 1 MiB at a time and has no capacity
 * setting of its own, so the harness bounds it with the child JVM's {@code -XX:MaxDirectMemorySize}
 * set to exactly the map's off-heap budget ({@link MapKind#directLimited()}); running out surfaces
 * as {@code DBException.OutOfMemory} (an {@code OutOfMemoryError} inside). {@link #offHeapUsed()} is
 * the store's size minus its free space; {@link #offHeapReserved()} the store's size.
 */
final class MapDbBenchMap implements BenchMap {

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private final DB db;
    private final BTreeMap<byte[], byte[]> map;

    /** @param capacity ignored: MapDB's direct memory is bounded by the JVM's direct-memory limit */
    MapDbBenchMap(long capacity) {
        this.db = DBMaker.memoryDirectDB().make();
        this.map = db.treeMap("bench", Serializer.BYTE_ARRAY, Serializer.BYTE_ARRAY)
                .valuesOutsideNodesEnable()
                .createOrOpen();
    }

    /** @return "MapDB x.y.z" from the jar on the class path */
    static String version() {
        String v = Machine.libraryVersion(DBMaker.class);
        return "MapDB " + (v.startsWith("mapdb-") ? v.substring("mapdb-".length()) : v);
    }

    @Override
    public Session newSession(byte[] valueTemplate) {
        return new Session() {
            @Override
            public boolean putIfAbsent(byte[] key) {
                // MapDB serializes the key and value into its store: the scratch arrays may be reused.
                // Not putIfAbsentBoolean: in MapDB 3.1.0 it returns true when the key was present.
                return map.putIfAbsent(key, valueTemplate) == null;
            }

            @Override
            public long put(byte[] key) {
                byte[] old = map.put(key, valueTemplate);
                return old == null ? 0 : 1;
            }

            @Override
            public long update(byte[] key) {
                while (true) {
                    byte[] v = map.get(key);
                    if (v == null) {
                        if (map.putIfAbsent(key, valueTemplate) == null) {
                            return 1;
                        }
                        continue; // another thread inserted it
                    }
                    byte[] next = v.clone();
                    LONGS.set(next, 0, (long) LONGS.get(next, 0) + 1);
                    if (map.replace(key, v, next)) {
                        return next.length;
                    }
                }
            }

            @Override
            public long get(byte[] key) {
                byte[] v = map.get(key);
                return v == null ? 0 : (long) LONGS.get(v, 0);
            }

            @Override
            public long getCopy(byte[] key) {
                byte[] v = map.get(key);
                return v == null ? 0 : v.length;
            }

            @Override
            public long remove(byte[] key) {
                return map.remove(key) == null ? 0 : 1;
            }

            @Override
            public long scan(byte[] from, int length, boolean desc, boolean stream) {
                long sum = 0;
                int n = 0;
                Iterator<Map.Entry<byte[], byte[]>> it = desc ? map.descendingEntryIterator(null, false, from, true)
                        : map.entryIterator(from, true, null, false);
                while (it.hasNext()) {
                    Map.Entry<byte[], byte[]> e = it.next();
                    sum += e.getKey()[0] + e.getValue()[0];
                    if (++n == length) {
                        return sum;
                    }
                }
                it = desc ? map.descendingEntryIterator() : map.entryIterator();
                while (it.hasNext()) {
                    Map.Entry<byte[], byte[]> e = it.next();
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
        return map.sizeLong(); // counts the leaves (no counter: it would be one more write per insert)
    }

    @Override
    public long offHeapUsed() {
        Store s = map.getStore();
        return s instanceof StoreDirect d ? d.getTotalSize() - d.getFreeSize() : 0;
    }

    @Override
    public long offHeapReserved() {
        Store s = map.getStore();
        return s instanceof StoreDirect d ? d.getTotalSize() : 0;
    }

    @Override
    public void close() {
        db.close();
    }
}
