package dev.oakmap;

import dev.oakmap.internal.memory.BlockPool;
import dev.oakmap.internal.memory.Refs;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Handles of a closed map never show the bytes of the map built over its warm blocks.
 *
 * <p>The shared block pool keeps the blocks of a closed map committed for a while and makes the
 * next map's blocks over the same slots, at the same addresses and under the same block ids
 * ({@code BlockPool}, "Warm blocks"). What keeps the closed map's handles (zero-copy views, scan
 * buffers, iterators, streams, sub and descending views, scoped buffers kept past their callback)
 * from reading the new map's bytes is, first, the closed flag most operations check, and second,
 * for a reader that passed that check just before the close, the closed arena of the old block's
 * segment: the map's handles resolve references through the closed map's own segments, which fail
 * once closed, never through the pool's id table, which now names the new map's blocks.
 * (A zero-copy {@code transform} checked no flag until this test's review; it checks it now, as
 * the getters do, and the closed segment stays the second line.)
 *
 * <p>Each test builds map A, whose every key and value byte carries A's tag (0xA1) and A's index
 * range, takes handles of it, closes it, then builds map B of the same shape whose bytes carry
 * B's tag (0xB2) and another index range, and checks that B's blocks lie in A's old slots (same
 * block ids, same addresses). Then it uses A's handles: a read must throw one of the exceptions
 * the Javadoc allows or return exactly A's bytes; B's bytes (or any bytes that are not A's) are a
 * failure, and so is any other exception. A's serializer and comparator check every buffer they
 * are given too, so that a deserialization or comparison over foreign bytes is caught even where
 * the handle returns only an object.
 */
class WarmReuseStaleViewsTest {

    private static final byte TAG_A = (byte) 0xA1;
    private static final byte TAG_B = (byte) 0xB2;
    /** Indexes of B are offset by this, so that even B's index bytes differ from A's. */
    private static final int B_OFFSET = 1 << 20;
    private static final int KEY_BYTES = 16;
    private static final int VALUE_BYTES = 120;
    private static final int PAIRS = 1500;
    private static final long BLOCK = 64 << 10;

    /** Bytes a serializer of {@code tag} writes for index {@code i} in {@code size} bytes. */
    static byte[] expected(int i, byte tag, int size) {
        byte[] b = new byte[size];
        int v = i ^ Integer.MIN_VALUE; // unsigned byte order = index order
        b[0] = (byte) (v >>> 24);
        b[1] = (byte) (v >>> 16);
        b[2] = (byte) (v >>> 8);
        b[3] = (byte) v;
        for (int k = 4; k < size; k++) {
            b[k] = tag;
        }
        return b;
    }

    /**
     * A serializer and comparator of one map's keys or values: an index, then the map's tag. Every
     * buffer it is handed is checked to hold its own map's bytes; a foreign one is recorded in
     * {@link #foreign} (and not thrown, so that the map cannot turn it into another exception).
     * It can also park one call inside {@code deserialize} ({@link #trap}), holding the scoped
     * buffer while the test closes the map.
     */
    static final class Tagged implements OakSerializer<Integer>, OakComparator<Integer> {
        final byte tag;
        final int size;
        final ConcurrentLinkedQueue<String> foreign = new ConcurrentLinkedQueue<>();
        /** Set by a test to park the next deserialize; taken by the call that parks. */
        final AtomicReference<Trap> trap = new AtomicReference<>();
        /** The last scoped buffer deserialize saw, to be used after its callback (must throw). */
        volatile OakScopedReadBuffer lastSeen;

        Tagged(byte tag, int size) {
            this.tag = tag;
            this.size = size;
        }

        @Override
        public void serialize(Integer i, OakScopedWriteBuffer target) {
            byte[] b = expected(i, tag, size);
            target.putBytes(0, b, 0, b.length);
        }

        @Override
        public Integer deserialize(OakScopedReadBuffer source) {
            lastSeen = source;
            Trap t = trap.getAndSet(null);
            if (t != null) {
                t.park();
            }
            return check(source, "deserialize");
        }

        @Override
        public int calculateSize(Integer i) {
            return size;
        }

        /** Reads the whole buffer; records it unless it holds this map's bytes. @return its index */
        int check(OakBuffer b, String where) {
            byte[] got = new byte[b.capacity()];
            b.getBytes(0, got, 0, got.length);
            int i = (((got[0] & 0xFF) << 24) | ((got[1] & 0xFF) << 16) | ((got[2] & 0xFF) << 8) | (got[3] & 0xFF))
                    ^ Integer.MIN_VALUE;
            if (got.length != size || !java.util.Arrays.equals(got, expected(i, tag, size))) {
                foreign.add(where + " saw bytes not of its map: " + hex(got));
            }
            return i;
        }

        @Override
        public int compareKeys(Integer a, Integer b) {
            return Integer.compare(a, b);
        }

        @Override
        public int compareSerializedKeys(OakScopedReadBuffer a, OakScopedReadBuffer b) {
            checkTag(a);
            checkTag(b);
            return Integer.compareUnsigned(a.getInt(0), b.getInt(0));
        }

        @Override
        public int compareKeyAndSerializedKey(Integer key, OakScopedReadBuffer b) {
            checkTag(b);
            return Integer.compareUnsigned(key ^ Integer.MIN_VALUE, b.getInt(0));
        }

        /** A cheap check for the comparator, which runs often: the last byte holds the tag. */
        private void checkTag(OakScopedReadBuffer b) {
            byte last = b.get(b.capacity() - 1);
            if (last != tag) {
                foreign.add("comparator saw a key whose last byte is " + hex(new byte[] {last}));
            }
        }
    }

    /** One parked call: it says it arrived, then waits to be let go. */
    static final class Trap {
        final CountDownLatch arrived = new CountDownLatch(1);
        final CountDownLatch go = new CountDownLatch(1);

        void park() {
            arrived.countDown();
            try {
                if (!go.await(20, TimeUnit.SECONDS)) {
                    throw new AssertionError("trap never released");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < Math.min(b.length, 24); i++) {
            s.append(String.format("%02x", b[i]));
        }
        return s.append(b.length > 24 ? "..(" + b.length + " bytes)" : "").toString();
    }

    /** A map with its codecs. */
    record Tagged2(OakMap<Integer, Integer> map, Tagged keys, Tagged values, int offset) {
    }

    static Tagged2 build(byte tag, int offset, MemoryScheme ks, MemoryScheme vs) {
        Tagged keys = new Tagged(tag, KEY_BYTES);
        Tagged values = new Tagged(tag, VALUE_BYTES);
        OakMap<Integer, Integer> m = new OakMapBuilder<>(keys, values, keys)
                .keyMemory(ks).valueMemory(vs)
                .blockSize(BLOCK).memoryCapacity(64L << 20).chunkCapacity(64)
                .build();
        for (int i = 0; i < PAIRS; i++) {
            m.put(offset + i, offset + i);
        }
        return new Tagged2(m, keys, values, offset);
    }

    /** @return ids of the blocks the map holds */
    static Set<Integer> blockIds(OakMap<?, ?> m) {
        Set<Integer> ids = new TreeSet<>();
        for (int id = 1; id <= Refs.MAX_BLOCK_ID; id++) {
            if (m.internal.allocator().segmentOfBlock(id) != null) {
                ids.add(id);
            }
        }
        return ids;
    }

    /**
     * Closes A and builds B (B's tag and indexes), checking that B's blocks were made over A's warm
     * slots: the pool's warm bytes grow by A's blocks at the close and shrink as B takes them, and
     * B holds blocks under A's ids, at the same addresses.
     */
    static Tagged2 closeAndReuse(Tagged2 a, MemoryScheme ks, MemoryScheme vs) {
        Set<Integer> idsA = blockIds(a.map);
        Map<Integer, Long> addrA = new java.util.HashMap<>();
        idsA.forEach(id -> addrA.put(id, a.map.internal.allocator().segmentOfBlock(id).address()));
        BlockPool pool = BlockPool.shared();
        long warm0 = pool.warmBytes();
        a.map.close();
        long warm1 = pool.warmBytes();
        assertTrue(warm1 > warm0, "A's blocks were kept warm: " + warm0 + " -> " + warm1);
        Tagged2 b = build(TAG_B, B_OFFSET, ks, vs);
        long warm2 = pool.warmBytes();
        assertTrue(warm2 < warm1, "B took warm blocks: " + warm1 + " -> " + warm2);
        Set<Integer> shared = new TreeSet<>(blockIds(b.map));
        shared.retainAll(idsA);
        assertFalse(shared.isEmpty(), "B's blocks lie in A's old slots: A " + idsA + ", B " + blockIds(b.map));
        for (int id : shared) {
            assertEquals(addrA.get(id), b.map.internal.allocator().segmentOfBlock(id).address(),
                    "B's block " + id + " is over A's pages");
        }
        return b;
    }

    /** Whether {@code t} is one of the exceptions a stale handle may throw. */
    static boolean acceptable(Throwable t) {
        return t instanceof OakClosedException || t instanceof DeletedMemoryAccessException
                || t instanceof IllegalStateException;
    }

    @BeforeEach
    void warmPoolOnly() {
        assumeTrue(TestMaps.nativeAccess(), "warm blocks need the block region (native access on Linux)");
        BlockPool.shared().trimWarm(); // only A's blocks are warm when B is built
    }

    // ==============================================================================================
    // single-threaded
    // ==============================================================================================

    /** One use of a stale handle after the close: it must throw, or yield exactly {@code expected}. */
    interface Use {
        Object run();
    }

    /**
     * Checks of one closed map's handles. {@code strict}: the use must throw (after a close,
     * single-threaded, the Javadoc promises an exception from every operation, except the scoped
     * buffer, which promises {@link IllegalStateException}); otherwise it may also return A's bytes.
     */
    static final class Checks {
        final List<String> failures = new ArrayList<>();
        final String ctx;
        final boolean strict;
        int thrown;
        int returned;

        Checks(String ctx, boolean strict) {
            this.ctx = ctx;
            this.strict = strict;
        }

        /** {@code expected}: what A's handle would give (null: nothing returned is acceptable). */
        void check(String what, Object expected, Use use) {
            Object got;
            try {
                got = use.run();
            } catch (Throwable t) {
                if (acceptable(t) && (!strict || t instanceof OakClosedException || what.startsWith("scoped"))) {
                    thrown++;
                } else {
                    failures.add(ctx + ": " + what + " threw " + t);
                }
                return;
            }
            returned++;
            if (strict) {
                failures.add(ctx + ": " + what + " returned " + show(got) + " after the close (expected an exception)");
            } else if (expected == null || !equal(expected, got)) {
                failures.add(ctx + ": " + what + " returned " + show(got) + ", A's is " + show(expected));
            }
        }

        static boolean equal(Object a, Object b) {
            return a instanceof byte[] x && b instanceof byte[] y ? java.util.Arrays.equals(x, y) : a.equals(b);
        }

        static String show(Object o) {
            return o instanceof byte[] b ? hex(b) : String.valueOf(o);
        }
    }

    /** Every read of an unscoped (or scoped) buffer, each checked against A's bytes {@code a}. */
    static void checkBuffer(Checks c, String what, OakBuffer b, byte[] a) {
        c.check(what + ".capacity", a.length, b::capacity);
        c.check(what + ".get(last)", a[a.length - 1], () -> b.get(a.length - 1));
        c.check(what + ".getInt(0)", ((a[0] & 0xFF) << 24) | ((a[1] & 0xFF) << 16) | ((a[2] & 0xFF) << 8) | (a[3] & 0xFF),
                () -> b.getInt(0));
        c.check(what + ".getLong(8)", java.nio.ByteBuffer.wrap(a).getLong(8), () -> b.getLong(8));
        c.check(what + ".getBytes", a, () -> {
            byte[] d = new byte[a.length];
            b.getBytes(0, d, 0, d.length);
            return d;
        });
        if (b instanceof OakUnscopedBuffer u) {
            c.check(what + ".transform", a, () -> u.transform(s -> {
                byte[] d = new byte[s.capacity()];
                s.getBytes(0, d, 0, d.length);
                return d;
            }));
        }
        if (b instanceof OakScopedReadBuffer s) {
            c.check(what + ".segment", a, () -> s.segment().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        }
    }

    /** The handles of A taken before its close, with what A held in them. */
    static final class Handles {
        final List<Map.Entry<String, OakUnscopedBuffer>> views = new ArrayList<>();
        final List<byte[]> viewBytes = new ArrayList<>();
        final List<Map.Entry<String, Iterator<?>>> iterators = new ArrayList<>();
        final List<Map.Entry<String, Stream<?>>> streams = new ArrayList<>();
        final List<Map.Entry<String, OakScopedReadBuffer>> scoped = new ArrayList<>();
        final List<byte[]> scopedBytes = new ArrayList<>();
        final List<Map.Entry<String, Use>> mapOps = new ArrayList<>();

        void view(String what, OakUnscopedBuffer b, byte[] a) {
            views.add(Map.entry(what, b));
            viewBytes.add(a);
        }

        <T> Iterator<T> iterator(String what, Iterator<T> it) {
            it.next(); // started before the close
            iterators.add(Map.entry(what, it));
            return it;
        }
    }

    /** Takes one handle of every kind of map {@code a}, all of them read once while A is open. */
    static Handles takeHandles(Tagged2 a) {
        OakMap<Integer, Integer> m = a.map;
        Handles h = new Handles();
        for (int i : new int[] {0, PAIRS / 3, PAIRS / 2, PAIRS - 1}) {
            OakUnscopedBuffer v = m.zc().get(i);
            h.view("zc().get(" + i + ")", v, expected(i, TAG_A, VALUE_BYTES));
        }
        // buffers handed out by scans, kept, and the scans themselves left open
        Iterator<OakUnscopedBuffer> ks = m.zc().keySet().iterator();
        for (int i = 0; i < 3; i++) {
            h.view("zc().keySet() key " + i, ks.next(), expected(i, TAG_A, KEY_BYTES));
        }
        h.iterator("zc().keySet().iterator()", ks);
        Iterator<OakUnscopedBuffer> vs = m.zc().values().iterator();
        h.view("zc().values() value 0", vs.next(), expected(0, TAG_A, VALUE_BYTES));
        h.iterator("zc().values().iterator()", vs);
        Iterator<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> es = m.zc().entrySet().iterator();
        Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e0 = es.next();
        h.view("zc().entrySet() entry key", e0.getKey(), expected(0, TAG_A, KEY_BYTES));
        h.view("zc().entrySet() entry value", e0.getValue(), expected(0, TAG_A, VALUE_BYTES));
        h.iterator("zc().entrySet().iterator()", es);
        // a stream set's buffer is one object that follows its iterator: it shows pair 1 once the
        // iterator below has been advanced past pair 0
        Iterator<OakUnscopedBuffer> kss = m.zc().keyStreamSet().iterator();
        h.view("zc().keyStreamSet() key", kss.next(), expected(1, TAG_A, KEY_BYTES));
        h.iterator("zc().keyStreamSet().iterator()", kss);
        Iterator<OakUnscopedBuffer> vss = m.zc().valueStreamSet().iterator();
        h.view("zc().valueStreamSet() value", vss.next(), expected(1, TAG_A, VALUE_BYTES));
        h.iterator("zc().valueStreamSet().iterator()", vss);
        Iterator<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> ess = m.zc().entryStreamSet().iterator();
        Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> se = ess.next();
        h.view("zc().entryStreamSet() value", se.getValue(), expected(1, TAG_A, VALUE_BYTES));
        h.iterator("zc().entryStreamSet().iterator()", ess);
        // legacy iterators, streams, sub and descending views
        h.iterator("keySet().iterator()", m.keySet().iterator());
        h.iterator("values().iterator()", m.values().iterator());
        h.iterator("entrySet().iterator()", m.entrySet().iterator());
        h.iterator("descendingMap().entrySet().iterator()", m.descendingMap().entrySet().iterator());
        h.iterator("subMap(10, 900).values().iterator()", m.subMap(10, 900).values().iterator());
        h.iterator("values().stream().iterator()", m.values().stream().iterator());
        h.streams.add(Map.entry("keySet().stream()", m.keySet().stream()));
        h.streams.add(Map.entry("zc().values().stream()", m.zc().values().stream()));
        h.streams.add(Map.entry("entrySet().parallelStream()", m.entrySet().parallelStream()));
        OakMap<Integer, Integer> sub = m.subMap(100, true, 1200, false);
        OakMap<Integer, Integer> desc = m.descendingMap();
        h.view("subMap.zc().get(500)", sub.zc().get(500), expected(500, TAG_A, VALUE_BYTES));
        h.view("descendingMap.zc().get(7)", desc.zc().get(7), expected(7, TAG_A, VALUE_BYTES));
        h.mapOps.add(Map.entry("get(5)", () -> m.get(5)));
        h.mapOps.add(Map.entry("zc().get(5)", () -> m.zc().get(5)));
        h.mapOps.add(Map.entry("subMap.get(500)", () -> sub.get(500)));
        h.mapOps.add(Map.entry("subMap.firstKey()", sub::firstKey));
        h.mapOps.add(Map.entry("descendingMap.firstEntry()", desc::firstEntry));
        h.mapOps.add(Map.entry("descendingMap.headMap(3).size()", () -> desc.headMap(3).size()));
        h.mapOps.add(Map.entry("ceilingKey(77)", () -> m.ceilingKey(77)));
        // scoped buffers kept past their callback: a transform's, a deserializer's
        AtomicReference<OakScopedReadBuffer> kept = new AtomicReference<>();
        m.zc().get(42).transform(s -> {
            kept.set(s);
            return null;
        });
        h.scoped.add(Map.entry("scoped buffer of a transform", kept.get()));
        h.scopedBytes.add(expected(42, TAG_A, VALUE_BYTES));
        m.get(43);
        h.scoped.add(Map.entry("scoped buffer of a deserialize", a.values.lastSeen));
        h.scopedBytes.add(expected(43, TAG_A, VALUE_BYTES));
        // A's handles read A's bytes while A is open
        Checks open = new Checks("open A", false);
        for (int i = 0; i < h.views.size(); i++) {
            checkBuffer(open, h.views.get(i).getKey(), h.views.get(i).getValue(), h.viewBytes.get(i));
        }
        assertEquals(List.of(), open.failures, "A's handles read A's bytes while A is open");
        assertEquals(0, open.thrown);
        return h;
    }

    /** Uses every handle of closed A: each must throw; none may show B's bytes. */
    static void useClosedHandles(String ctx, Tagged2 a, Handles h) {
        Checks c = new Checks(ctx, true);
        for (int i = 0; i < h.views.size(); i++) {
            checkBuffer(c, h.views.get(i).getKey(), h.views.get(i).getValue(), h.viewBytes.get(i));
        }
        for (var it : h.iterators) {
            c.check(it.getKey() + ".next()", null, () -> it.getValue().next());
        }
        for (var s : h.streams) {
            c.check(s.getKey() + ".toList()", null, () -> s.getValue().toList());
        }
        for (var op : h.mapOps) {
            c.check(op.getKey(), null, op.getValue());
        }
        for (int i = 0; i < h.scoped.size(); i++) {
            // kept past its callback: the Javadoc promises IllegalStateException
            checkBuffer(c, "scoped: " + h.scoped.get(i).getKey(), h.scoped.get(i).getValue(), h.scopedBytes.get(i));
        }
        List<String> all = new ArrayList<>(c.failures);
        all.addAll(a.keys.foreign);
        all.addAll(a.values.foreign);
        assertEquals(List.of(), all, ctx + ": A's handles after A closed and B took its blocks");
        assertEquals(0, c.returned, ctx);
        assertTrue(c.thrown > 50, ctx + ": every check ran: " + c.thrown);
    }

    /**
     * Every kind of handle of A, under every pair of memory schemes: taken while A is open (and
     * read then, to A's bytes), used after A was closed and B was built and filled over A's warm
     * blocks. Each use must throw {@link OakClosedException} (a scoped buffer kept past its
     * callback, {@link IllegalStateException}), as the Javadoc of {@link OakMap} ("Memory and
     * closing") promises; none may return, deserialize or compare B's bytes.
     */
    @Test
    @Timeout(60)
    void everyHandleOfAClosedMapThrowsAfterItsBlocksAreReused() {
        for (MemoryScheme ks : MemoryScheme.values()) {
            for (MemoryScheme vs : MemoryScheme.values()) {
                String ctx = "keys " + ks + ", values " + vs;
                BlockPool.shared().trimWarm();
                Tagged2 a = build(TAG_A, 0, ks, vs);
                Handles h = takeHandles(a);
                Tagged2 b = closeAndReuse(a, ks, vs);
                try {
                    useClosedHandles(ctx, a, h);
                    assertIntact(ctx, b);
                } finally {
                    b.map.close();
                }
            }
        }
    }

    // ==============================================================================================
    // concurrent
    // ==============================================================================================

    /**
     * A reader parked inside a callback of A holds a scoped buffer over A's slice while A is closed
     * and B is built and filled over A's blocks; then it reads on. Deterministic: the close falls
     * exactly between the reader's check that A is open and its read of the bytes, the window a
     * closed flag alone cannot cover, so only the closed segment of A's block stands between the
     * reader and B's bytes. Three callbacks: a zero-copy transform, the value deserializer of a
     * legacy get, and the value deserializer of a legacy iterator's next. The reader's reads must
     * throw or give A's bytes; the operation must end with an acceptable exception or A's value.
     */
    @Test
    @Timeout(60)
    void aReaderParkedInACallbackNeverSeesTheNextMapsBytes() throws Exception {
        for (MemoryScheme ks : MemoryScheme.values()) {
            for (MemoryScheme vs : MemoryScheme.values()) {
                for (String how : List.of("transform", "get", "iterator")) {
                    parkedReader("keys " + ks + ", values " + vs + ", " + how, ks, vs, how);
                }
            }
        }
    }

    private void parkedReader(String ctx, MemoryScheme ks, MemoryScheme vs, String how) throws Exception {
        BlockPool.shared().trimWarm();
        Tagged2 a = build(TAG_A, 0, ks, vs);
        int k = 321;
        byte[] mine = expected(k, TAG_A, VALUE_BYTES);
        Trap trap = new Trap();
        AtomicReference<Object> outcome = new AtomicReference<>();
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        Function<OakScopedReadBuffer, Object> parkThenRead = s -> {
            trap.park();
            byte[] d = new byte[s.capacity()];
            s.getBytes(0, d, 0, d.length);
            if (!java.util.Arrays.equals(d, mine)) {
                failures.add(ctx + ": the parked reader read " + hex(d));
            }
            return d;
        };
        Iterator<Integer> values = a.map.values().iterator(); // made while A is open
        OakUnscopedBuffer view = a.map.zc().get(k);
        Thread reader = Thread.ofPlatform().daemon().name("parked-reader").start(() -> {
            try {
                switch (how) {
                    case "transform" -> outcome.set(view.transform(parkThenRead));
                    case "get" -> {
                        a.values.trap.set(trap);
                        outcome.set(a.map.get(k));
                    }
                    default -> {
                        a.values.trap.set(trap);
                        outcome.set(values.next());
                    }
                }
            } catch (Throwable t) {
                outcome.set(t);
            }
        });
        assertTrue(trap.arrived.await(10, TimeUnit.SECONDS), ctx + ": the reader reached its callback");
        Tagged2 b = closeAndReuse(a, ks, vs);
        try {
            trap.go.countDown();
            reader.join(TimeUnit.SECONDS.toMillis(10));
            assertFalse(reader.isAlive(), ctx + ": the parked reader finished");
            Object o = outcome.get();
            if (o instanceof Throwable t) {
                if (!acceptable(t)) {
                    throw new AssertionError(ctx + ": the parked reader's operation threw " + t, t);
                }
            } else if (how.equals("transform")) {
                assertTrue(o instanceof byte[] d && java.util.Arrays.equals(d, mine), ctx + ": returned " + o);
            } else {
                assertTrue(o instanceof Integer i && (how.equals("get") ? i == k : i < PAIRS), ctx + ": returned " + o);
            }
            failures.addAll(a.keys.foreign);
            failures.addAll(a.values.foreign);
            assertEquals(List.of(), List.copyOf(failures), ctx);
            assertIntact(ctx, b);
        } finally {
            b.map.close();
        }
    }

    /**
     * Reader threads hammer handles of A (value views, scan buffers, zero-copy and legacy
     * iterators, transforms) while the main thread closes A and builds and fills B over A's warm
     * blocks, several seeded rounds under every pair of schemes, with a writer of A rewriting A's
     * pairs meanwhile. Every read must give A's bytes or throw an acceptable exception, every key
     * and value of B must hold B's bytes afterwards, and nothing may hang (daemon threads, bounded
     * waits).
     */
    @Test
    @Timeout(90)
    void readersRacingTheCloseAndTheReuseNeverSeeTheNextMapsBytes() throws Exception {
        long[] seeds = TestMaps.seeds(0x5EED_A1B2L, 77L, 4242L);
        for (long seed : seeds) {
            for (MemoryScheme ks : MemoryScheme.values()) {
                for (MemoryScheme vs : MemoryScheme.values()) {
                    race("seed " + seed + ", keys " + ks + ", values " + vs, seed, ks, vs);
                }
            }
        }
    }

    private void race(String ctx, long seed, MemoryScheme ks, MemoryScheme vs) throws Exception {
        BlockPool.shared().trimWarm();
        Tagged2 a = build(TAG_A, 0, ks, vs);
        Random rnd = new Random(seed);
        int readers = 3;
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong reads = new AtomicLong();
        AtomicBoolean reused = new AtomicBoolean();
        CountDownLatch started = new CountDownLatch(readers);
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < readers; r++) {
            long readerSeed = rnd.nextLong();
            int kind = r;
            // handles made before the close (new ones made after it throw at once)
            List<OakUnscopedBuffer> views = new ArrayList<>();
            List<byte[]> want = new ArrayList<>();
            Random pick = new Random(readerSeed);
            for (int i = 0; i < 64; i++) {
                int k = pick.nextInt(PAIRS);
                views.add(a.map.zc().get(k));
                want.add(expected(k, TAG_A, VALUE_BYTES));
            }
            Iterator<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> zcIt = a.map.zc().entrySet().iterator();
            Iterator<Map.Entry<Integer, Integer>> legacyIt = a.map.descendingMap().entrySet().iterator();
            Iterator<OakUnscopedBuffer> streamIt = a.map.zc().valueStreamSet().iterator();
            threads.add(Thread.ofPlatform().daemon().name("stale-reader-" + r).start(() -> {
                Random g = new Random(readerSeed);
                started.countDown();
                boolean zcDone = false, legacyDone = false, streamDone = false;
                while (!stop.get()) {
                    boolean after = reused.get();
                    try {
                        switch (g.nextInt(kind == 0 ? 3 : 6)) {
                            case 0, 1 -> { // a view: one getter or a transform
                                int i = g.nextInt(views.size());
                                readView(views.get(i), want.get(i), g, failures, ctx);
                            }
                            case 2 -> {
                                int i = g.nextInt(views.size());
                                byte[] d = views.get(i).transform(s -> {
                                    byte[] x = new byte[s.capacity()];
                                    s.getBytes(0, x, 0, x.length);
                                    return x;
                                });
                                if (!java.util.Arrays.equals(d, want.get(i))) {
                                    failures.add(ctx + ": transform returned " + hex(d));
                                }
                            }
                            case 3 -> {
                                if (!zcDone && zcIt.hasNext()) {
                                    var e = zcIt.next();
                                    int k = a.keys.check(e.getKey(), "zc entry key");
                                    readView(e.getValue(), expected(k, TAG_A, VALUE_BYTES), g, failures, ctx);
                                } else {
                                    zcDone = true;
                                }
                            }
                            case 4 -> {
                                if (!legacyDone && legacyIt.hasNext()) {
                                    var e = legacyIt.next();
                                    if (!e.getKey().equals(e.getValue()) || e.getKey() < 0 || e.getKey() >= PAIRS) {
                                        failures.add(ctx + ": legacy entry " + e);
                                    }
                                } else {
                                    legacyDone = true;
                                }
                            }
                            default -> {
                                if (!streamDone && streamIt.hasNext()) {
                                    a.values.check(streamIt.next(), "value stream buffer");
                                } else {
                                    streamDone = true;
                                }
                            }
                        }
                        reads.incrementAndGet();
                    } catch (Throwable t) {
                        if (!acceptable(t)) {
                            failures.add(ctx + ": a reader got " + t);
                        }
                        if (after) {
                            Thread.onSpinWait(); // closed for good: nothing more to see
                        }
                    }
                }
            }));
        }
        // a writer of A too: it rewrites A's pairs with A's own bytes, so that readers still see
        // only A's bytes, and B's check below catches a write of A landing in B's blocks
        long writerSeed = rnd.nextLong();
        threads.add(Thread.ofPlatform().daemon().name("stale-writer").start(() -> {
            Random g = new Random(writerSeed);
            while (!stop.get()) {
                int k = g.nextInt(PAIRS);
                try {
                    if (g.nextBoolean()) {
                        a.map.put(k, k);
                    } else {
                        byte[] mine = expected(k, TAG_A, VALUE_BYTES);
                        a.map.zc().computeIfPresent(k, w -> w.putBytes(0, mine, 0, mine.length));
                    }
                } catch (Throwable t) {
                    if (!acceptable(t)) {
                        failures.add(ctx + ": the writer got " + t);
                    }
                    if (reused.get()) {
                        Thread.onSpinWait();
                    }
                }
            }
        }));
        assertTrue(started.await(10, TimeUnit.SECONDS), ctx);
        long until = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(200 + rnd.nextInt(2000));
        while (System.nanoTime() < until) {
            Thread.onSpinWait(); // let the readers get going
        }
        Tagged2 b = closeAndReuse(a, ks, vs);
        reused.set(true);
        try {
            // B's fill is done: overwrite B's values once more while the readers still run
            for (int i = 0; i < PAIRS; i += 7) {
                b.map.put(B_OFFSET + i, B_OFFSET + i);
            }
            Thread.sleep(5);
            stop.set(true);
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(10));
                assertFalse(t.isAlive(), ctx + ": reader " + t.getName() + " finished");
            }
            failures.addAll(a.keys.foreign);
            failures.addAll(a.values.foreign);
            assertEquals(List.of(), List.copyOf(failures).subList(0, Math.min(failures.size(), 10)), ctx);
            assertTrue(reads.get() > 0, ctx + ": the readers read");
            assertIntact(ctx, b);
        } finally {
            b.map.close();
        }
    }

    /** Every key and value of B holds B's bytes: no stale reader or writer of A wrote into them. */
    static void assertIntact(String ctx, Tagged2 b) {
        int n = 0;
        for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : b.map.zc().entrySet()) {
            int k = b.keys.check(e.getKey(), "B's key");
            int v = b.values.check(e.getValue(), "B's value");
            assertEquals(k, v, ctx + ": B's pair");
            n++;
        }
        assertEquals(PAIRS, n, ctx + ": B's size");
        List<String> foreign = new ArrayList<>(b.keys.foreign);
        foreign.addAll(b.values.foreign);
        assertEquals(List.of(), foreign.subList(0, Math.min(10, foreign.size())), ctx + ": B's bytes");
    }

    /** One random read of a value view, checked against A's bytes {@code a}. */
    static void readView(OakUnscopedBuffer v, byte[] a, Random g, ConcurrentLinkedQueue<String> failures, String ctx) {
        int at = 4 + g.nextInt(a.length - 12);
        switch (g.nextInt(4)) {
            case 0 -> {
                byte x = v.get(at);
                if (x != a[at]) {
                    failures.add(ctx + ": get(" + at + ") returned " + hex(new byte[] {x}));
                }
            }
            case 1 -> {
                long x = v.getLong(at);
                if (x != java.nio.ByteBuffer.wrap(a).getLong(at)) {
                    failures.add(ctx + ": getLong(" + at + ") returned " + Long.toHexString(x));
                }
            }
            case 2 -> {
                int x = v.getInt(0);
                if (x != java.nio.ByteBuffer.wrap(a).getInt(0)) {
                    failures.add(ctx + ": getInt(0) returned " + Integer.toHexString(x));
                }
            }
            default -> {
                byte[] d = new byte[a.length];
                v.getBytes(0, d, 0, d.length);
                if (!java.util.Arrays.equals(d, a)) {
                    failures.add(ctx + ": getBytes returned " + hex(d));
                }
            }
        }
    }
}
