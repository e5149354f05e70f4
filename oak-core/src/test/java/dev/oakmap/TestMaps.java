package dev.oakmap;

import dev.oakmap.common.OakCommonTypes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Shared helpers for the stress, scan and misuse tests: small self-contained serializers (so the
 * tests do not depend on {@code OakCommonTypes}), map factories with tiny chunks (so splits,
 * merges and compactions happen constantly), seeds, scaling and a thread runner.
 *
 * <p>System properties:
 * <ul>
 *   <li>{@code oak.test.seed}: a seed, or a comma-separated list of seeds, replacing the default
 *       seeds of every randomized test (to replay a failure);</li>
 *   <li>{@code oak.stress.scale}: a positive integer multiplying iteration counts (default 1).</li>
 * </ul>
 */
final class TestMaps {

    private TestMaps() {
    }

    // ------------------------------------------------------------------------------------------
    // Seeds and scale
    // ------------------------------------------------------------------------------------------

    /** @return the seeds from {@code oak.test.seed} if set, else {@code defaults} */
    static long[] seeds(long... defaults) {
        String prop = System.getProperty("oak.test.seed");
        if (prop == null || prop.isBlank()) {
            return defaults;
        }
        return Arrays.stream(prop.split(",")).map(String::trim).filter(s -> !s.isEmpty())
                .mapToLong(Long::decode).toArray();
    }

    /** @return a Long to Long map with 256 MiB of off-heap capacity and chunks of {@code chunk} entries */
    static OakMap<Long, Long> longMap(int chunk) {
        return new OakMapBuilder<>(OakCommonTypes.LONG_SERIALIZER, OakCommonTypes.LONG_SERIALIZER,
                OakCommonTypes.LONG_COMPARATOR).memoryCapacity(256L << 20).chunkCapacity(chunk).build();
    }

    /**
     * @return whether blocks are mapped by the map itself (Linux, native access enabled, and not
     *     turned off with {@code -Doak.hugePages=false}), so that their pages can be given back
     */
    static boolean nativeAccess() {
        return OakMap.class.getModule().isNativeAccessEnabled()
                && System.getProperty("os.name", "").toLowerCase().contains("linux")
                && !"false".equalsIgnoreCase(System.getProperty("oak.hugePages"));
    }

    /** @return the iteration multiplier from {@code oak.stress.scale} (default 1) */
    static int scale() {
        return Math.max(1, Integer.getInteger("oak.stress.scale", 1));
    }

    // ------------------------------------------------------------------------------------------
    // Integer keys: 4 bytes, sign bit flipped, big-endian, so unsigned byte order = int order
    // ------------------------------------------------------------------------------------------

    static final OakSerializer<Integer> INT_KEY = new OakSerializer<>() {
        @Override
        public void serialize(Integer key, OakScopedWriteBuffer target) {
            target.putInt(0, key ^ Integer.MIN_VALUE);
        }

        @Override
        public Integer deserialize(OakScopedReadBuffer source) {
            return source.getInt(0) ^ Integer.MIN_VALUE;
        }

        @Override
        public int calculateSize(Integer key) {
            return 4;
        }
    };

    static int readIntKey(OakBuffer b) {
        if (b.capacity() != 4) {
            throw new AssertionError("key buffer has capacity " + b.capacity() + ", expected 4");
        }
        return b.getInt(0) ^ Integer.MIN_VALUE;
    }

    /** Integers in their natural order, serialized as by {@link #INT_KEY}; tests extend it to set key prefixes. */
    static class IntComparator implements OakComparator<Integer> {
        @Override
        public int compareKeys(Integer a, Integer b) {
            return Integer.compare(a, b);
        }

        @Override
        public int compareSerializedKeys(OakScopedReadBuffer a, OakScopedReadBuffer b) {
            return Integer.compareUnsigned(a.getInt(0), b.getInt(0));
        }

        @Override
        public int compareKeyAndSerializedKey(Integer key, OakScopedReadBuffer b) {
            return Integer.compareUnsigned(key ^ Integer.MIN_VALUE, b.getInt(0));
        }
    }

    static final OakComparator<Integer> INT_CMP = new IntComparator();

    // ------------------------------------------------------------------------------------------
    // Long values: 8 bytes big-endian
    // ------------------------------------------------------------------------------------------

    static final OakSerializer<Long> LONG_VAL = new OakSerializer<>() {
        @Override
        public void serialize(Long v, OakScopedWriteBuffer target) {
            target.putLong(0, v);
        }

        @Override
        public Long deserialize(OakScopedReadBuffer source) {
            if (source.capacity() != 8) {
                throw new AssertionError("long value buffer has capacity " + source.capacity());
            }
            return source.getLong(0);
        }

        @Override
        public int calculateSize(Long v) {
            return 8;
        }
    };

    // ------------------------------------------------------------------------------------------
    // String values: int length, UTF-16 chars, int checksum
    // ------------------------------------------------------------------------------------------

    static final OakSerializer<String> STRING_VAL = new OakSerializer<>() {
        @Override
        public void serialize(String s, OakScopedWriteBuffer target) {
            target.putInt(0, s.length());
            for (int i = 0; i < s.length(); i++) {
                target.putChar(4 + 2 * i, s.charAt(i));
            }
            target.putInt(4 + 2 * s.length(), s.hashCode());
        }

        @Override
        public String deserialize(OakScopedReadBuffer source) {
            int len = source.getInt(0);
            if (len < 0 || source.capacity() != 8 + 2 * len) {
                throw new CorruptValueException("string value: length " + len + ", capacity " + source.capacity());
            }
            char[] cs = new char[len];
            for (int i = 0; i < len; i++) {
                cs[i] = source.getChar(4 + 2 * i);
            }
            String s = new String(cs);
            if (source.getInt(4 + 2 * len) != s.hashCode()) {
                throw new CorruptValueException("string value: bad checksum for \"" + s + "\"");
            }
            return s;
        }

        @Override
        public int calculateSize(String s) {
            return 8 + 2 * s.length();
        }
    };

    // ------------------------------------------------------------------------------------------
    // Blob values: self-describing, self-checking values of variable size
    // ------------------------------------------------------------------------------------------

    /**
     * Raised when a value read back from the map is not a value any writer ever wrote. It is a
     * {@link RuntimeException} on purpose: the map reads values optimistically and may run a
     * deserializer over bytes torn by a concurrent writer, deferring a runtime exception until it
     * has validated the read (and retrying if the read was torn). If it escapes the map, the map
     * returned bytes that were validated, and the value really is corrupt.
     */
    static final class CorruptValueException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        CorruptValueException(String message) {
            super(message);
        }
    }

    /**
     * A value that names the key it belongs to, a sequence number and a length; its serialized
     * form is {@code int key, long seq, int len, len filler bytes (a function of key, seq and
     * index), long checksum}, {@code 24 + len} bytes. Any torn, shifted or foreign bytes are
     * detected on reading.
     */
    record Blob(int key, long seq, int len) {
        Blob {
            if (len < 0) {
                throw new IllegalArgumentException("len " + len);
            }
        }

        int size() {
            return 24 + len;
        }

        static byte filler(int key, long seq, int i) {
            long x = key * 0x9E3779B97F4A7C15L + seq * 0xC2B2AE3D27D4EB4FL + i * 31L;
            return (byte) (x ^ (x >>> 29));
        }

        static long checksum(int key, long seq, int len) {
            long h = 0xcbf29ce484222325L;
            h = (h ^ key) * 0x100000001b3L;
            h = (h ^ seq) * 0x100000001b3L;
            h = (h ^ len) * 0x100000001b3L;
            return h ^ (h >>> 31);
        }

        /** Reads and validates a blob from any Oak buffer (scoped or unscoped). */
        static Blob read(OakBuffer b) {
            int cap = b.capacity();
            if (cap < 24) {
                throw new CorruptValueException("blob buffer too small: " + cap);
            }
            int key = b.getInt(0);
            long seq = b.getLong(4);
            int len = b.getInt(12);
            if (len < 0 || cap != 24 + len) {
                throw new CorruptValueException("blob: key " + key + " seq " + seq + " len " + len
                        + " but capacity " + cap);
            }
            for (int i = 0; i < len; i++) {
                if (b.get(16 + i) != filler(key, seq, i)) {
                    throw new CorruptValueException("blob: key " + key + " seq " + seq + " len " + len
                            + ": bad filler byte at " + i);
                }
            }
            long sum = b.getLong(16 + len);
            if (sum != checksum(key, seq, len)) {
                throw new CorruptValueException("blob: key " + key + " seq " + seq + " len " + len
                        + ": bad checksum");
            }
            return new Blob(key, seq, len);
        }

        void write(OakScopedWriteBuffer t) {
            t.putInt(0, key);
            t.putLong(4, seq);
            t.putInt(12, len);
            for (int i = 0; i < len; i++) {
                t.put(16 + i, filler(key, seq, i));
            }
            t.putLong(16 + len, checksum(key, seq, len));
        }

        /** Asserts this blob belongs to {@code expectedKey}. @return this */
        Blob ofKey(int expectedKey) {
            if (key != expectedKey) {
                throw new CorruptValueException("blob of key " + key + " found under key " + expectedKey);
            }
            return this;
        }
    }

    static final OakSerializer<Blob> BLOB_VAL = new OakSerializer<>() {
        @Override
        public void serialize(Blob v, OakScopedWriteBuffer target) {
            v.write(target);
        }

        @Override
        public Blob deserialize(OakScopedReadBuffer source) {
            return Blob.read(source);
        }

        @Override
        public int calculateSize(Blob v) {
            return v.size();
        }
    };

    // ------------------------------------------------------------------------------------------
    // Map factories
    // ------------------------------------------------------------------------------------------

    static final long SMALL_CAPACITY = 64L << 20;
    static final long SMALL_BLOCK = 1L << 20;

    static <V> OakMapBuilder<Integer, V> builder(OakSerializer<V> values, int chunkCapacity) {
        return new OakMapBuilder<>(INT_KEY, values, INT_CMP)
                .chunkCapacity(chunkCapacity)
                .memoryCapacity(SMALL_CAPACITY)
                .blockSize(SMALL_BLOCK);
    }

    static OakMap<Integer, Long> intLongMap(int chunkCapacity) {
        return builder(LONG_VAL, chunkCapacity).build();
    }

    static OakMap<Integer, Blob> intBlobMap(int chunkCapacity) {
        return builder(BLOB_VAL, chunkCapacity).build();
    }

    static OakMap<Integer, String> intStringMap(int chunkCapacity) {
        return builder(STRING_VAL, chunkCapacity).build();
    }

    // ------------------------------------------------------------------------------------------
    // Content comparison against a sequential model
    // ------------------------------------------------------------------------------------------

    static <K, V> List<Map.Entry<K, V>> entries(Iterable<Map.Entry<K, V>> it) {
        List<Map.Entry<K, V>> out = new ArrayList<>();
        for (Map.Entry<K, V> e : it) {
            out.add(Map.entry(e.getKey(), e.getValue()));
        }
        return out;
    }

    static <T> List<T> list(Iterable<T> it) {
        List<T> out = new ArrayList<>();
        for (T t : it) {
            out.add(t);
        }
        return out;
    }

    static <T> List<T> list(Iterator<T> it) {
        List<T> out = new ArrayList<>();
        while (it.hasNext()) {
            out.add(it.next());
        }
        return out;
    }

    /**
     * Asserts that a quiescent {@code map} holds exactly {@code model}: equals both ways, size,
     * ascending and descending iteration of entries, keys and values, first/last, navigation at
     * random probes, random sub-map views and the zero-copy key set.
     */
    static <V> void assertSameContents(String ctx, ConcurrentNavigableMap<Integer, V> map,
                                       NavigableMap<Integer, V> model, Random rnd, int keyRange) {
        assertEquals(model.size(), map.size(), ctx + ": size");
        assertEquals(model.isEmpty(), map.isEmpty(), ctx + ": isEmpty");
        assertEquals(entries(model.entrySet()), entries(map.entrySet()), ctx + ": ascending entries");
        assertEquals(entries(model.descendingMap().entrySet()), entries(map.descendingMap().entrySet()),
                ctx + ": descending entries");
        assertEquals(list(model.keySet()), list(map.keySet()), ctx + ": keySet");
        assertEquals(list(model.descendingKeySet()), list(map.descendingKeySet()), ctx + ": descendingKeySet");
        assertEquals(list(model.descendingKeySet()), list(map.navigableKeySet().descendingIterator()),
                ctx + ": navigableKeySet().descendingIterator()");
        assertEquals(list(model.values()), list(map.values()), ctx + ": values");
        assertTrue(map.equals(model), ctx + ": map.equals(model)");
        assertTrue(model.equals(map), ctx + ": model.equals(map)");
        assertEquals(model.hashCode(), map.hashCode(), ctx + ": hashCode");
        if (!model.isEmpty()) {
            assertEquals(model.firstKey(), map.firstKey(), ctx + ": firstKey");
            assertEquals(model.lastKey(), map.lastKey(), ctx + ": lastKey");
            assertEquals(model.firstEntry(), map.firstEntry(), ctx + ": firstEntry");
            assertEquals(model.lastEntry(), map.lastEntry(), ctx + ": lastEntry");
        }
        for (int i = 0; i < 50; i++) {
            int k = rnd.nextInt(keyRange + 2) - 1;
            assertEquals(model.get(k), map.get(k), ctx + ": get(" + k + ")");
            assertEquals(model.ceilingKey(k), map.ceilingKey(k), ctx + ": ceilingKey(" + k + ")");
            assertEquals(model.floorKey(k), map.floorKey(k), ctx + ": floorKey(" + k + ")");
            assertEquals(model.higherKey(k), map.higherKey(k), ctx + ": higherKey(" + k + ")");
            assertEquals(model.lowerKey(k), map.lowerKey(k), ctx + ": lowerKey(" + k + ")");
            assertEquals(model.ceilingEntry(k), map.ceilingEntry(k), ctx + ": ceilingEntry(" + k + ")");
            assertEquals(model.lowerEntry(k), map.lowerEntry(k), ctx + ": lowerEntry(" + k + ")");
        }
        for (int i = 0; i < 20; i++) {
            int a = rnd.nextInt(keyRange + 2) - 1;
            int b = rnd.nextInt(keyRange + 2) - 1;
            int lo = Math.min(a, b);
            int hi = Math.max(a, b);
            boolean loInc = rnd.nextBoolean();
            boolean hiInc = rnd.nextBoolean();
            String r = ctx + ": subMap(" + lo + "," + loInc + "," + hi + "," + hiInc + ")";
            assertView(r, map.subMap(lo, loInc, hi, hiInc), model.subMap(lo, loInc, hi, hiInc));
            assertView(ctx + ": headMap(" + hi + "," + hiInc + ")", map.headMap(hi, hiInc),
                    model.headMap(hi, hiInc));
            assertView(ctx + ": tailMap(" + lo + "," + loInc + ")", map.tailMap(lo, loInc),
                    model.tailMap(lo, loInc));
            assertView(ctx + ": descendingMap().subMap(" + hi + "," + lo + ")",
                    map.descendingMap().subMap(hi, hiInc, lo, loInc),
                    model.descendingMap().subMap(hi, hiInc, lo, loInc));
        }
        if (map instanceof OakMap<Integer, V> oak) {
            List<Integer> zcKeys = new ArrayList<>();
            for (OakUnscopedBuffer kb : oak.zc().keySet()) {
                zcKeys.add(readIntKey(kb));
            }
            assertEquals(list(model.keySet()), zcKeys, ctx + ": zc().keySet()");
            List<Integer> zcStreamKeys = new ArrayList<>();
            for (OakUnscopedBuffer kb : oak.zc().keyStreamSet()) {
                zcStreamKeys.add(readIntKey(kb));
            }
            assertEquals(list(model.keySet()), zcStreamKeys, ctx + ": zc().keyStreamSet()");
        }
    }

    private static <V> void assertView(String ctx, NavigableMap<Integer, V> view, NavigableMap<Integer, V> model) {
        assertEquals(model.size(), view.size(), ctx + ": size");
        assertEquals(entries(model.entrySet()), entries(view.entrySet()), ctx + ": entries");
        assertEquals(entries(model.descendingMap().entrySet()), entries(view.descendingMap().entrySet()),
                ctx + ": descending entries");
        if (!model.isEmpty()) {
            assertEquals(model.firstKey(), view.firstKey(), ctx + ": firstKey");
            assertEquals(model.lastKey(), view.lastKey(), ctx + ": lastKey");
        }
    }

    // ------------------------------------------------------------------------------------------
    // Running threads
    // ------------------------------------------------------------------------------------------

    @FunctionalInterface
    interface Task {
        void run() throws Exception;
    }

    /**
     * Runs the tasks in parallel threads started together; waits at most {@code timeoutSeconds};
     * on timeout dumps the stacks of the test threads and fails; rethrows the first failure with
     * the others suppressed.
     */
    static void runConcurrently(String ctx, long timeoutSeconds, List<Task> tasks) throws InterruptedException {
        CountDownLatch start = new CountDownLatch(1);
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < tasks.size(); i++) {
            Task task = tasks.get(i);
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    task.run();
                } catch (Throwable e) {
                    failures.add(e);
                }
            }, "oak-test-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        start.countDown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        for (Thread t : threads) {
            long left = deadline - System.nanoTime();
            if (left > 0) {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
        }
        List<Thread> alive = threads.stream().filter(Thread::isAlive).collect(Collectors.toList());
        if (!alive.isEmpty()) {
            StringBuilder sb = new StringBuilder(ctx + ": threads still running after " + timeoutSeconds
                    + " s (deadlock or livelock?):\n");
            for (Thread t : alive) {
                sb.append(t.getName()).append(": ").append(t.getState()).append('\n');
                for (StackTraceElement el : t.getStackTrace()) {
                    sb.append("    at ").append(el).append('\n');
                }
                t.interrupt();
            }
            AssertionError err = new AssertionError(sb.toString());
            failures.forEach(err::addSuppressed);
            throw err;
        }
        if (!failures.isEmpty()) {
            Throwable first = failures.get(0);
            AssertionError err = new AssertionError(ctx + ": " + first, first);
            for (int i = 1; i < failures.size(); i++) {
                err.addSuppressed(failures.get(i));
            }
            throw err;
        }
    }

    /**
     * Wraps {@code workers} so that {@code done} is set once all of them have finished (normally
     * or not); background tasks loop until then. @return a new mutable list of the wrapped tasks
     */
    static List<Task> signalWhenDone(List<Task> workers, java.util.concurrent.atomic.AtomicBoolean done) {
        java.util.concurrent.atomic.AtomicInteger running = new java.util.concurrent.atomic.AtomicInteger(workers.size());
        List<Task> out = new ArrayList<>();
        for (Task t : workers) {
            out.add(() -> {
                try {
                    t.run();
                } finally {
                    if (running.decrementAndGet() == 0) {
                        done.set(true);
                    }
                }
            });
        }
        return out;
    }

    static void failWith(String msg, Throwable cause) {
        fail(msg, cause);
    }
}
