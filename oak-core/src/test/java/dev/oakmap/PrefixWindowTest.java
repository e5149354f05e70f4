package dev.oakmap;

import dev.oakmap.common.ByteStringComparator;
import dev.oakmap.common.OakCommonTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.LongAdder;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Byte-wise ordered keys that share their first bytes, where chunks and the index compare the
 * window after the shared head instead of the comparator's prefix (see {@code KeyOps}, "Prefix
 * windows"). Every search agrees with a {@link TreeMap} for keys of many shapes (one head for
 * the whole map, a few tenants' heads, keys that are prefixes of one another, keys shorter than
 * the head, probes outside every head), inserted at random, ascending and descending, then
 * partly removed so that chunks merge and pick their heads again. And windows pay: a lookup
 * reads two or three keys off-heap, where the comparator's prefix alone would read a dozen.
 */
class PrefixWindowTest {

    /** How the test's keys are shaped. */
    enum Shape {
        /** Every key starts with the same 8 bytes (the comparator's prefix ties everywhere). */
        ONE_HEAD_8,
        /** The same 40 bytes, then random bytes. */
        ONE_HEAD_40,
        /** One of four 12-byte tenant ids, then random bytes. */
        TENANTS,
        /** A shared head, then 0-6 bytes of a three-letter alphabet: many keys are prefixes of others. */
        NESTED,
        /** Keys of 1-12 bytes, most starting with a 10-byte head, some shorter than it. */
        SHORT
    }

    enum Order { RANDOM, ASCENDING, DESCENDING }

    private static final byte[] HEAD = "tenant/0001/rows/shared-head-of-forty-b".getBytes(StandardCharsets.US_ASCII);

    private static byte[] key(Shape shape, SplittableRandom r) {
        switch (shape) {
            case ONE_HEAD_8 -> {
                return withHead(8, 8 + r.nextInt(1, 24), r);
            }
            case ONE_HEAD_40 -> {
                return withHead(39, 39 + r.nextInt(1, 16), r);
            }
            case TENANTS -> {
                byte[] k = withHead(12, 12 + r.nextInt(4, 20), r);
                k[7] = (byte) ('0' + r.nextInt(4));
                return k;
            }
            case NESTED -> {
                byte[] k = Arrays.copyOf(HEAD, 16 + r.nextInt(7));
                for (int i = 16; i < k.length; i++) {
                    k[i] = (byte) new int[] {0, 1, 255}[r.nextInt(3)];
                }
                return k;
            }
            default -> {
                int len = r.nextInt(1, 13);
                byte[] k = Arrays.copyOf(HEAD, len);
                if (r.nextInt(8) == 0) {
                    k[r.nextInt(len)] ^= (byte) (1 + r.nextInt(255)); // off the head
                } else if (len > 10) {
                    for (int i = 10; i < len; i++) {
                        k[i] = (byte) r.nextInt(256);
                    }
                }
                return k;
            }
        }
    }

    private static byte[] withHead(int head, int len, SplittableRandom r) {
        byte[] k = Arrays.copyOf(HEAD, len);
        for (int i = head; i < len; i++) {
            k[i] = (byte) r.nextInt(256);
        }
        return k;
    }

    /** A probe: usually a key of the shape, sometimes one that leaves the head at a random byte. */
    private static byte[] probe(Shape shape, SplittableRandom r) {
        byte[] k = key(shape, r);
        if (r.nextInt(4) == 0) {
            k[r.nextInt(k.length)] = (byte) r.nextInt(256);
        }
        return k;
    }

    @ParameterizedTest
    @EnumSource(Shape.class)
    void searchesAgreeWithATreeMap(Shape shape) {
        for (Order order : Order.values()) {
            check(shape, order, 20260 + shape.ordinal() * 7L + order.ordinal());
        }
    }

    private static void check(Shape shape, Order order, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        TreeMap<byte[], Integer> model = new TreeMap<>(Arrays::compareUnsigned);
        List<byte[]> keys = new ArrayList<>();
        for (int i = 0; i < 6_000; i++) {
            keys.add(key(shape, r));
        }
        if (order != Order.RANDOM) {
            keys.sort(order == Order.ASCENDING ? Arrays::compareUnsigned : (a, b) -> Arrays.compareUnsigned(b, a));
        }
        String where = shape + ", " + order + ", seed " + seed;
        try (OakMap<byte[], Integer> oak = new OakMapBuilder<>(OakCommonTypes.BYTE_ARRAY_SERIALIZER,
                TestMaps.INT_KEY, OakCommonTypes.BYTE_ARRAY_COMPARATOR).chunkCapacity(64).build()) {
            int v = 0;
            for (byte[] k : keys) {
                oak.put(k, v);
                model.put(k, v++);
            }
            compare(oak, model, shape, r, where + ", filled");
            List<byte[]> present = new ArrayList<>(model.keySet());
            for (byte[] k : present) { // most go, so chunks merge and choose their heads again
                if (r.nextInt(10) < 8) {
                    assertEquals(model.remove(k), oak.remove(k), where);
                }
            }
            compare(oak, model, shape, r, where + ", after removals");
            for (int i = 0; i < 2_000; i++) {
                byte[] k = key(shape, r);
                oak.put(k, v);
                model.put(k, v++);
            }
            compare(oak, model, shape, r, where + ", refilled");
        }
    }

    private static void compare(OakMap<byte[], Integer> oak, TreeMap<byte[], Integer> model, Shape shape,
                                SplittableRandom r, String where) {
        assertEquals(model.size(), oak.size(), where);
        for (Map.Entry<byte[], Integer> e : model.entrySet()) {
            assertEquals(e.getValue(), oak.get(e.getKey()), where);
        }
        for (int i = 0; i < 3_000; i++) {
            byte[] p = probe(shape, r);
            assertEquals(model.get(p), oak.get(p), where);
            assertKey(model.floorKey(p), oak.floorKey(p), where);
            assertKey(model.ceilingKey(p), oak.ceilingKey(p), where);
            assertKey(model.lowerKey(p), oak.lowerKey(p), where);
            assertKey(model.higherKey(p), oak.higherKey(p), where);
        }
        assertEquals(values(model), values(oak), where + ", ascending");
        assertEquals(values(model.descendingMap()), values(oak.descendingMap()), where + ", descending");
        for (int i = 0; i < 50; i++) {
            byte[] a = probe(shape, r);
            byte[] b = probe(shape, r);
            if (Arrays.compareUnsigned(a, b) > 0) {
                byte[] t = a;
                a = b;
                b = t;
            }
            assertEquals(values(model.subMap(a, true, b, false)), values(oak.subMap(a, true, b, false)), where);
            assertEquals(values(model.subMap(a, false, b, true).descendingMap()),
                    values(oak.subMap(a, false, b, true).descendingMap()), where);
        }
    }

    private static void assertKey(byte[] expected, byte[] actual, String where) {
        if (expected == null) {
            assertEquals(null, actual, where);
        } else {
            assertArrayEquals(expected, actual, where);
        }
    }

    private static List<Integer> values(Map<byte[], Integer> m) {
        return new ArrayList<>(m.values());
    }

    /**
     * Threads that each own a share of keys with shared heads (three tenants, so chunks that
     * straddle two tenants take short heads and those within one take long ones, and merges
     * change them) put, remove and read them in chunks of 16 entries, rebalanced all the time,
     * while a scanner checks that scans both ways come out in strict order. Every read of a
     * thread's own key matches its model, and at the end the map equals the union of the models.
     * Seeded per round; the interleavings are not reproducible.
     */
    @Test
    void concurrentWritersOnSharedHeadsMatchTheirModels() throws Exception {
        for (long round = 0; round < 3; round++) {
            concurrentRound(4_2000 + round);
        }
    }

    private static byte[] tenantKey(int i) {
        byte[] k = Arrays.copyOf(HEAD, 24);
        k[7] = (byte) ('0' + i % 3); // the tenant
        java.nio.ByteBuffer.wrap(k).putInt(12, i * 0x9E3779B1); // an id, scattered
        k[16] = (byte) i;
        return k;
    }

    private static void concurrentRound(long seed) throws Exception {
        int threads = 3, keysPerThread = 400, steps = 30_000;
        try (OakMap<byte[], Integer> oak = new OakMapBuilder<>(OakCommonTypes.BYTE_ARRAY_SERIALIZER,
                TestMaps.INT_KEY, OakCommonTypes.BYTE_ARRAY_COMPARATOR).chunkCapacity(16).build()) {
            List<TreeMap<byte[], Integer>> models = new ArrayList<>();
            java.util.concurrent.ConcurrentLinkedQueue<String> failures = new java.util.concurrent.ConcurrentLinkedQueue<>();
            java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                TreeMap<byte[], Integer> model = new TreeMap<>(Arrays::compareUnsigned);
                models.add(model);
                int id = t;
                workers.add(Thread.ofPlatform().start(() -> {
                    SplittableRandom r = new SplittableRandom(seed * 31 + id);
                    try {
                        for (int step = 0; step < steps; step++) {
                            byte[] k = tenantKey(id + threads * r.nextInt(keysPerThread));
                            switch (r.nextInt(4)) {
                                case 0 -> {
                                    Integer v = r.nextInt(1_000_000);
                                    Integer before = oak.put(k, v);
                                    Integer expected = model.put(k, v);
                                    check(expected, before, "put", k, failures);
                                }
                                case 1 -> check(model.remove(k), oak.remove(k), "remove", k, failures);
                                default -> check(model.get(k), oak.get(k), "get", k, failures);
                            }
                        }
                    } catch (Throwable e) {
                        failures.add("thread " + id + ": " + e);
                    }
                }));
            }
            Thread scanner = Thread.ofPlatform().start(() -> {
                try {
                    while (!done.get()) {
                        scanInOrder(oak.keySet(), 1, failures);
                        scanInOrder(oak.descendingMap().keySet(), -1, failures);
                    }
                } catch (Throwable e) {
                    failures.add("scanner: " + e);
                }
            });
            for (Thread w : workers) {
                w.join(60_000);
                assertTrue(!w.isAlive(), "a writer hung");
            }
            done.set(true);
            scanner.join(60_000);
            assertTrue(failures.isEmpty(), () -> "seed " + seed + ": " + String.join("\n", failures));
            TreeMap<byte[], Integer> union = new TreeMap<>(Arrays::compareUnsigned);
            models.forEach(union::putAll);
            assertEquals(values(union), values(oak), "seed " + seed);
            assertEquals(union.size(), oak.size(), "seed " + seed);
        }
    }

    private static void check(Integer expected, Integer actual, String op, byte[] k,
                              java.util.Queue<String> failures) {
        if (!java.util.Objects.equals(expected, actual)) {
            failures.add(op + " " + Arrays.toString(k) + ": expected " + expected + ", was " + actual);
        }
    }

    private static void scanInOrder(Iterable<byte[]> keys, int direction, java.util.Queue<String> failures) {
        byte[] before = null;
        for (byte[] k : keys) {
            if (before != null && Integer.signum(Arrays.compareUnsigned(k, before)) != direction) {
                failures.add("scan out of order: " + Arrays.toString(before) + " then " + Arrays.toString(k));
                return;
            }
            before = k;
        }
    }

    /**
     * A String comparator (through the generic serializing path, not the {@code byte[]} one) that
     * counts the keys it reads off-heap: with keys that share 16 bytes, a lookup reads two or
     * three (the key it finds, and the odd tie of the 32 bits a chunk keeps of the window, as
     * with keys that share nothing), where the comparator's prefix (the first 8 bytes, all
     * equal) would leave every step of both binary searches to a key read, 16 per lookup here.
     */
    @Test
    void aLookupOfKeysThatShareTheirFirstBytesReadsAFewKeys() {
        LongAdder reads = new LongAdder();
        ByteStringComparator<String> counting = new ByteStringComparator<>(Comparator.naturalOrder(),
                OakCommonTypes.STRING_SERIALIZER) {
            @Override
            public int compareKeyAndSerializedKey(String key, OakScopedReadBuffer serializedKey) {
                reads.increment();
                return super.compareKeyAndSerializedKey(key, serializedKey);
            }
        };
        SplittableRandom r = new SplittableRandom(7);
        List<String> keys = new ArrayList<>();
        try (OakMap<String, Integer> oak = new OakMapBuilder<>(OakCommonTypes.STRING_SERIALIZER, TestMaps.INT_KEY,
                counting).build()) {
            for (int i = 0; i < 40_000; i++) {
                String k = String.format("user:tenant0042:%012d", r.nextLong(1_000_000_000_000L));
                keys.add(k);
                oak.put(k, i);
            }
            reads.reset();
            for (String k : keys) {
                assertTrue(oak.containsKey(k));
            }
            double perLookup = reads.sum() / (double) keys.size();
            assertTrue(perLookup < 3.5, "key reads per lookup: " + perLookup); // 2.3 here; 16 without windows
        }
    }
}
