package dev.oakmap;

import dev.oakmap.TestMaps.Blob;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Memory reclamation under every {@link MemoryScheme}, for keys and for values.
 *
 * <ul>
 *   <li>{@link #noForeignReads}: keys and values are {@link Blob}s that name their key and carry a
 *       checksum. Writers put (with new sizes, so values move), remove, re-insert and update in
 *       place; readers get, scan, and keep old zero-copy views of keys and values to read again
 *       later, after their memory may have been reused (whole, or split for smaller slices).
 *       Every read must return an intact blob of the right key, or throw
 *       {@link ConcurrentModificationException}: zero foreign reads.</li>
 *   <li>{@link #churnKeepsMemoryFlat}: put/remove at a steady live size: with Nova or lock-based
 *       keys and values, memory in use stays within 25% of the live data plus a fixed
 *       allowance; with grow-only it grows with the churn.</li>
 *   <li>{@link #stalledWriterDoesNotStopReclamation}: a thread stopped inside an in-place update
 *       (after removing some entries itself) does not stop the reclamation of everything else.</li>
 * </ul>
 * Seeded ({@code -Doak.test.seed}); {@code -Doak.stress.scale=N} runs N times longer.
 */
class ReclamationTest {

    private static final MemoryScheme G = MemoryScheme.GROW_ONLY;
    private static final MemoryScheme L = MemoryScheme.LOCK_BASED;
    private static final MemoryScheme N = MemoryScheme.NOVA;

    /** Keys are blobs too: the key's id, a fixed sequence, a length that depends on the id. */
    static Blob key(int id) {
        return new Blob(id, 7, 4 + Math.floorMod(id, 5) * 12);
    }

    static final OakComparator<Blob> KEY_ORDER = new OakComparator<>() {
        @Override
        public int compareKeys(Blob a, Blob b) {
            return Integer.compare(a.key(), b.key());
        }

        @Override
        public int compareSerializedKeys(OakScopedReadBuffer a, OakScopedReadBuffer b) {
            return Integer.compare(a.getInt(0), b.getInt(0));
        }

        @Override
        public int compareKeyAndSerializedKey(Blob key, OakScopedReadBuffer b) {
            return Integer.compare(key.key(), b.getInt(0));
        }
    };

    static OakMap<Blob, Blob> map(MemoryScheme keys, MemoryScheme values, int chunkCapacity, long capacity) {
        return map(keys, values, chunkCapacity, capacity, 1 << 20);
    }

    static OakMap<Blob, Blob> map(MemoryScheme keys, MemoryScheme values, int chunkCapacity, long capacity,
                                  int blockSize) {
        return new OakMapBuilder<>(TestMaps.BLOB_VAL, TestMaps.BLOB_VAL, KEY_ORDER)
                .keyMemory(keys).valueMemory(values)
                .chunkCapacity(chunkCapacity).memoryCapacity(capacity).blockSize(blockSize)
                .build();
    }

    /** The smallest blocks: a few hundred bytes of live pairs each, so that churn empties whole blocks. */
    private static final int SMALL_BLOCKS = 4096;

    static Stream<Arguments> allSchemePairs() {
        List<Arguments> out = new ArrayList<>();
        for (long seed : TestMaps.seeds(0x5EED_0003L)) {
            for (MemoryScheme k : MemoryScheme.values()) {
                for (MemoryScheme v : MemoryScheme.values()) {
                    out.add(Arguments.of(k, v, seed, 1 << 20));
                }
            }
            // small blocks, where blocks whose slices are all free are reused whole: Nova, and
            // lock-based keys or values, whose lockers CAS headers a stale reference may point at
            out.add(Arguments.of(N, N, seed, SMALL_BLOCKS));
            out.add(Arguments.of(L, L, seed, SMALL_BLOCKS));
            out.add(Arguments.of(N, L, seed, SMALL_BLOCKS));
            out.add(Arguments.of(L, N, seed, SMALL_BLOCKS));
        }
        return out.stream();
    }

    // ------------------------------------------------------------------------------------------

    @ParameterizedTest(name = "keys={0} values={1} seed={2} blocks={3}")
    @MethodSource("allSchemePairs")
    void noForeignReads(MemoryScheme keys, MemoryScheme values, long seed, int blockSize) throws Exception {
        int range = 300;
        long millis = 700L * TestMaps.scale();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong staleFailures = new AtomicLong();
        AtomicLong staleReads = new AtomicLong();
        // grow-only memory grows with the run's length, which oak.stress.scale multiplies
        try (OakMap<Blob, Blob> map = map(keys, values, 8, (64L << 20) * TestMaps.scale(), blockSize)) {
            List<TestMaps.Task> tasks = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                long s = seed * 31 + w;
                int writerId = w;
                boolean growing = blockSize == SMALL_BLOCKS;
                tasks.add(() -> writer(map, range, new SplittableRandom(s), stop, writerId, growing));
            }
            for (int r = 0; r < 2; r++) {
                long s = seed * 37 + r;
                tasks.add(() -> reader(map, range, new SplittableRandom(s), stop, staleFailures, staleReads));
            }
            tasks.add(() -> {
                Thread.sleep(millis);
                stop.set(true);
            });
            TestMaps.runConcurrently("keys=" + keys + " values=" + values + " seed=" + seed + " blocks=" + blockSize,
                    120, tasks);
            if (keys != G && values != G) {
                // sizes vary, so freed slices are split for smaller ones (BlockAllocator.splitLarger):
                // the foreign-read checks cover split slices too (459-735 splits a run when written)
                assertTrue(map.internal.allocator().splitCount() > 0, "no free slice was split");
            }
            long recycled = map.internal.allocator().recycledBlocks();
            if (blockSize == SMALL_BLOCKS && map.internal.allocator().reusesWholeBlocks()) { // not with -Doak.reuseBlocks=false
                // stale views and scans then meet blocks reused whole, their old headers under new
                // payload (45 and 318 blocks in two runs when written)
                assertTrue(recycled > 0, "no block was reused whole");
            }
            System.out.println("noForeignReads keys=" + keys + " values=" + values + " blocks=" + blockSize
                    + ": recycled blocks " + recycled + ", reserved " + map.memoryReserved());
            // quiescent: everything left must read back intact, through every path
            for (Map.Entry<Blob, Blob> e : map.entrySet()) {
                e.getValue().ofKey(e.getKey().key());
            }
            for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : map.zc().entrySet()) {
                Blob k = Blob.read(e.getKey());
                Blob.read(e.getValue()).ofKey(k.key());
            }
        }
        assertTrue(staleFailures.get() > 0, "old views were read after their mappings were removed");
    }

    /**
     * Puts, removes, re-inserts and updates in place. {@code growing}: value sizes climb from 40 B
     * to 2 KB and start again, so that freed slices are not reused for the next sizes and whole
     * blocks empty out (to be reused whole where the scheme allows).
     */
    private static void writer(OakMap<Blob, Blob> map, int range, SplittableRandom rnd, AtomicBoolean stop, int w,
                               boolean growing) {
        long seq = (long) w << 40;
        while (!stop.get()) {
            int id = rnd.nextInt(range);
            int len = growing ? 40 + (int) (((seq & 0xFF_FFFF) >>> 5) % 2000)
                    : rnd.nextInt(4) == 0 ? rnd.nextInt(200) : 40;
            switch (rnd.nextInt(6)) {
                case 0, 1 -> map.put(key(id), new Blob(id, ++seq, len));
                case 2 -> map.remove(key(id));
                case 3 -> map.zc().putIfAbsent(key(id), new Blob(id, ++seq, len));
                case 4 -> {
                    long next = ++seq;
                    map.zc().computeIfPresent(key(id), b -> {
                        int l = b.getInt(12);
                        new Blob(id, next, l).write(b); // same size: in place
                    });
                }
                default -> map.zc().remove(key(id));
            }
        }
    }

    private static void reader(OakMap<Blob, Blob> map, int range, SplittableRandom rnd, AtomicBoolean stop,
                               AtomicLong staleFailures, AtomicLong staleReads) {
        OakUnscopedBuffer[] oldValues = new OakUnscopedBuffer[64];
        int[] oldValueKeys = new int[64];
        OakUnscopedBuffer[] oldKeys = new OakUnscopedBuffer[64];
        int[] oldKeyIds = new int[64];
        int n = 0;
        while (!stop.get()) {
            int id = rnd.nextInt(range);
            int slot = n++ & 63;
            switch (rnd.nextInt(6)) {
                case 0 -> {
                    Blob v = map.get(key(id));
                    if (v != null) {
                        v.ofKey(id);
                    }
                }
                case 1 -> {
                    OakUnscopedBuffer view = map.zc().get(key(id));
                    if (view != null) {
                        oldValues[slot] = view;
                        oldValueKeys[slot] = id;
                        readOld(view, id, staleFailures, staleReads);
                    }
                }
                case 2 -> { // a short zero-copy scan, keeping some views for later
                    Iterator<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> it =
                            map.zc().entrySet().iterator();
                    for (int i = 0; i < 20 && it.hasNext(); i++) {
                        Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e = it.next();
                        try {
                            int k = Blob.read(e.getKey()).key();
                            oldKeys[(slot + i) & 63] = e.getKey();
                            oldKeyIds[(slot + i) & 63] = k;
                            // kept for later re-reads: a scan's view starts from the scan's own
                            // liveness check, which must stop counting once the value changes
                            oldValues[(slot + i) & 63] = e.getValue();
                            oldValueKeys[(slot + i) & 63] = k;
                            e.getValue().transform(Blob::read).ofKey(k);
                        } catch (ConcurrentModificationException gone) {
                            staleFailures.incrementAndGet(); // removed after the iterator reached it
                        }
                    }
                }
                case 3 -> { // a descending stream scan from a random key, with the copying API
                    for (Map.Entry<Blob, Blob> e : map.headMap(key(id), true).descendingMap().entrySet()) {
                        e.getValue().ofKey(e.getKey().key());
                        if (rnd.nextInt(8) == 0) {
                            break;
                        }
                    }
                }
                case 4 -> { // a zero-copy stream scan reading single fields of the reused views
                    int i = 0;
                    for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : map.tailMap(key(id), true).zc().entryStreamSet()) {
                        try {
                            int k = e.getKey().getInt(0);
                            assertEquals(k, e.getValue().getInt(0), "a scanned value shows another key's value");
                            int len = e.getValue().getInt(12);
                            assertTrue(len >= 0 && len <= 4096, "a scanned value with a torn length: " + len);
                        } catch (ConcurrentModificationException gone) {
                            staleFailures.incrementAndGet(); // removed after the scan reached it
                        }
                        if (++i == 20) {
                            break;
                        }
                    }
                }
                default -> { // re-read old views, whose mappings may be long gone
                    for (int i = 0; i < 4; i++) {
                        int s = rnd.nextInt(64);
                        if (oldValues[s] != null) {
                            readOld(oldValues[s], oldValueKeys[s], staleFailures, staleReads);
                        }
                        if (oldKeys[s] != null) {
                            try {
                                Blob k = Blob.read(oldKeys[s]);
                                assertEquals(oldKeyIds[s], k.key(), "an old key view shows another key");
                                staleReads.incrementAndGet();
                            } catch (ConcurrentModificationException gone) {
                                staleFailures.incrementAndGet();
                            }
                        }
                    }
                }
            }
        }
    }

    /**
     * Reads an old value view: atomically through {@code transform} (must be an intact blob of
     * {@code id}), then one field on its own (the key field, which no write of {@code id} changes).
     * Reading the whole blob field by field is not done: each access is atomic on its own, so a
     * concurrent in-place update between two of them would legitimately mix two writes.
     */
    private static void readOld(OakUnscopedBuffer view, int id, AtomicLong staleFailures, AtomicLong staleReads) {
        try {
            view.transform(Blob::read).ofKey(id);
            assertEquals(id, view.getInt(0), "a view shows another key's value");
            staleReads.incrementAndGet();
        } catch (ConcurrentModificationException gone) {
            staleFailures.incrementAndGet();
        }
    }

    // ------------------------------------------------------------------------------------------

    static Stream<Arguments> churnSchemes() {
        List<Arguments> out = new ArrayList<>();
        for (long seed : TestMaps.seeds(0x5EED_0004L)) {
            out.add(Arguments.of(N, N, seed));
            out.add(Arguments.of(L, L, seed));
            out.add(Arguments.of(G, G, seed));
            out.add(Arguments.of(G, N, seed));
        }
        return out.stream();
    }

    static final int CHURN_KEY_LEN = 100;
    static final int CHURN_VALUE_LEN = 1000;

    /** Bytes of key and value slices for one live pair (headers included, as for Nova). */
    static long liveBytesPerPair() {
        return align8(12 + 24 + CHURN_KEY_LEN) + align8(12 + 24 + CHURN_VALUE_LEN);
    }

    static long align8(long n) {
        return (n + 7) & ~7L;
    }

    @ParameterizedTest(name = "keys={0} values={1} seed={2}")
    @MethodSource("churnSchemes")
    void churnKeepsMemoryFlat(MemoryScheme keys, MemoryScheme values, long seed) throws Exception {
        int live = 10_000;
        int rounds = 4 * live * TestMaps.scale();
        try (OakMap<Blob, Blob> map = map(keys, values, 256, 1L << 30)) {
            ChurnResult r = churn(map, live, rounds, seed, null);
            long fixed = 2L << 20;
            String report = String.format("keys=%s values=%s: live %d pairs = %.1f MB; used after fill %.1f MB,"
                            + " after %d replacements %.1f MB (%.2fx live); reserved %.1f MB",
                    keys, values, live, r.liveBytes / 1e6, r.usedAfterFill / 1e6, rounds, r.usedAfterChurn / 1e6,
                    (double) r.usedAfterChurn / r.liveBytes, map.memoryReserved() / 1e6);
            System.out.println("[churn] " + report);
            if (keys == G && values == G) {
                assertTrue(r.usedAfterChurn > 3 * r.liveBytes, "grow-only should grow with churn: " + report);
            } else if (keys == G) {
                // values are reclaimed, keys are not: growth is bounded by the key bytes churned
                assertTrue(r.usedAfterChurn < 1.25 * r.liveBytes + fixed
                        + (long) rounds * align8(24 + CHURN_KEY_LEN), report);
            } else {
                assertTrue(r.usedAfterChurn <= 1.25 * r.liveBytes + fixed, "memory must stay flat: " + report);
            }
        }
    }

    /**
     * The churn of {@link #churnKeepsMemoryFlat}, with every replacement (a removal and a put)
     * run by a virtual thread of its own, as a server with a thread per request does. With a
     * release list per thread, each thread's one deleted value stayed listed after the thread
     * ended, and memory grew by a value per replacement (about 7x the live data here).
     */
    @ParameterizedTest(name = "seed={0}")
    @MethodSource("stallSeeds")
    void churnOnAThreadPerTaskKeepsMemoryFlat(long seed) throws Exception {
        int live = 4_000;
        int rounds = 8 * live * TestMaps.scale();
        try (OakMap<Blob, Blob> map = map(N, N, 256, 1L << 30)) {
            for (int id = 0; id < live; id++) {
                map.zc().put(churnKey(id), new Blob(id, 0, CHURN_VALUE_LEN));
            }
            int[] keyAt = new int[live];
            for (int slot = 0; slot < live; slot++) {
                keyAt[slot] = slot;
            }
            // one task per slot at a time: a slot's key is replaced by a fresh one, as in churn()
            SplittableRandom rnd = new SplittableRandom(seed);
            int next = live;
            try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int batch = 0; batch < rounds / live; batch++) {
                    List<Future<?>> done = new ArrayList<>();
                    for (int slot = 0; slot < live; slot++) {
                        if (rnd.nextInt(4) == 0) {
                            continue; // a quarter of the slots sit each batch out
                        }
                        int old = keyAt[slot];
                        int fresh = next++;
                        keyAt[slot] = fresh;
                        done.add(executor.submit(() -> {
                            assertTrue(map.zc().remove(churnKey(old)));
                            map.zc().put(churnKey(fresh), new Blob(fresh, 1, CHURN_VALUE_LEN));
                        }));
                    }
                    for (Future<?> f : done) {
                        f.get(60, TimeUnit.SECONDS);
                    }
                }
            }
            assertEquals(live, map.size());
            for (int slot = 0; slot < live; slot += 97) {
                assertEquals(keyAt[slot], map.get(churnKey(keyAt[slot])).key());
            }
            long liveBytes = live * liveBytesPerPair();
            String report = String.format("live %.1f MB, used %.1f MB after %d replacements on as many threads",
                    liveBytes / 1e6, map.memoryUsed() / 1e6, next - live);
            System.out.println("[thread-per-task churn] " + report);
            assertTrue(map.memoryUsed() <= 1.25 * liveBytes + (2L << 20), "memory must stay flat: " + report);
        }
    }

    record ChurnResult(long liveBytes, long usedAfterFill, long usedAfterChurn) {}

    /**
     * Fills {@code live} pairs, then replaces random live pairs by new keys, on two threads
     * (disjoint key sets), {@code rounds} replacements in all.
     */
    static ChurnResult churn(OakMap<Blob, Blob> map, int live, int rounds, long seed, Runnable midway) throws Exception {
        int threads = 2;
        int perThread = live / threads;
        int[][] keysOf = new int[threads][perThread];
        int before = map.size();
        for (int t = 0; t < threads; t++) {
            for (int i = 0; i < perThread; i++) {
                keysOf[t][i] = i * threads + t;
                map.zc().put(churnKey(keysOf[t][i]), new Blob(keysOf[t][i], 0, CHURN_VALUE_LEN));
            }
        }
        long usedAfterFill = map.memoryUsed();
        List<TestMaps.Task> tasks = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int me = t;
            tasks.add(() -> {
                SplittableRandom rnd = new SplittableRandom(seed + me);
                int next = live + me;
                for (int i = 0; i < rounds / threads; i++) {
                    int slot = rnd.nextInt(perThread);
                    assertTrue(map.zc().remove(churnKey(keysOf[me][slot])));
                    keysOf[me][slot] = next;
                    map.zc().put(churnKey(next), new Blob(next, i, CHURN_VALUE_LEN));
                    next += threads;
                    if (midway != null && me == 0 && i == rounds / threads / 2) {
                        midway.run();
                    }
                }
            });
        }
        TestMaps.runConcurrently("churn", 300, tasks);
        assertEquals(before + live, map.size());
        return new ChurnResult(live * liveBytesPerPair(), usedAfterFill, map.memoryUsed());
    }

    /** Keys of the churn tests: 100 payload bytes (124 serialized), ordered by id. */
    static Blob churnKey(int id) {
        return new Blob(id, 1, CHURN_KEY_LEN);
    }

    // ------------------------------------------------------------------------------------------

    static long[] stallSeeds() {
        return TestMaps.seeds(0x5EED_0005L);
    }

    @ParameterizedTest(name = "keys=NOVA values=NOVA seed={0}")
    @MethodSource("stallSeeds")
    void stalledWriterDoesNotStopReclamation(long seed) throws Exception {
        try (OakMap<Blob, Blob> map = map(N, N, 256, 1L << 30)) {
            int stalledId = -1;
            map.put(churnKey(stalledId), new Blob(stalledId, 0, CHURN_VALUE_LEN));
            for (int i = -1000; i < -2; i++) { // entries the stalled thread removes before it stalls
                map.put(churnKey(i), new Blob(i, 0, CHURN_VALUE_LEN));
            }
            CountDownLatch inside = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Thread stalled = new Thread(() -> {
                for (int i = -1000; i < -2; i++) {
                    map.zc().remove(churnKey(i)); // its release list is not empty when it stalls
                }
                map.zc().computeIfPresent(churnKey(stalledId), b -> {
                    inside.countDown();
                    try {
                        release.await(); // stalled in the middle of a write
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    new Blob(stalledId, 42, CHURN_VALUE_LEN).write(b);
                });
            }, "stalled-writer");
            stalled.setDaemon(true);
            stalled.start();
            assertTrue(inside.await(30, TimeUnit.SECONDS));
            int live = 10_000;
            int rounds = 4 * live;
            ChurnResult r = churn(map, live, rounds, seed, null);
            System.out.printf("[stalled] used %.1f MB for %.1f MB live while a writer is stalled%n",
                    r.usedAfterChurn / 1e6, r.liveBytes / 1e6);
            assertTrue(r.usedAfterChurn <= 1.25 * r.liveBytes + (2L << 20),
                    "reclamation stopped while a writer was stalled: used " + r.usedAfterChurn
                            + " for " + r.liveBytes + " live");
            assertTrue(stalled.isAlive(), "the writer is still stalled during the churn");
            release.countDown();
            stalled.join(30_000);
            assertFalse(stalled.isAlive());
            assertEquals(42, map.get(churnKey(stalledId)).seq());
        }
    }

    /**
     * Values of many sizes reuse each other's freed memory: 100,000 replacements over 300 keys with
     * values of 1 B to 60 KB (about 9 MB live) stay within 8x the live bytes. With exact-size free
     * lists each freed slice waited for a value of its very size, and the same churn held 511 MB.
     */
    @ParameterizedTest(name = "memory={0}")
    @org.junit.jupiter.params.provider.EnumSource(value = MemoryScheme.class, names = {"NOVA", "LOCK_BASED"})
    void valuesOfVariedSizesReuseFreedMemory(MemoryScheme scheme) {
        try (OakMap<Integer, byte[]> map = bytesByInt(scheme)) {
            SplittableRandom rnd = new SplittableRandom(7);
            int[] lengths = new int[300];
            for (int i = 0; i < 100_000; i++) {
                int k = rnd.nextInt(lengths.length);
                int len = 1 + rnd.nextInt(60_000);
                map.zc().put(k, new byte[len]);
                lengths[k] = len;
            }
            long live = 0;
            for (int len : lengths) {
                live += len;
            }
            System.out.printf("varied sizes, %s: %d bytes live, %d used, %d reserved%n", scheme, live,
                    map.memoryUsed(), map.memoryReserved());
            assertTrue(map.memoryReserved() < 8 * live, map.memoryReserved() + " bytes reserved for " + live + " live");
        }
    }

    /**
     * Values that shrink reuse the memory of larger ones: 2,000 keys whose values go from 4 KB
     * down to 700 B in six steps end within 1.5x the memory the 4 KB values took. While a free
     * slice served only its own size, each step mapped new blocks and the larger sizes' bytes sat
     * free: 9.4 MB reserved at 4 KB, 26.1 MB at the end (2.8x). Now 11.5 MB: the first step takes
     * new memory until a quarter of the bytes in use sits free, and none after it.
     */
    @ParameterizedTest(name = "memory={0}")
    @org.junit.jupiter.params.provider.EnumSource(value = MemoryScheme.class, names = {"NOVA", "LOCK_BASED"})
    void shrinkingValuesReuseTheMemoryOfLargerOnes(MemoryScheme scheme) {
        try (OakMap<Integer, byte[]> map = bytesByInt(scheme)) {
            int keys = 2000;
            long atLargest = 0;
            StringBuilder steps = new StringBuilder();
            for (int size : new int[] {4000, 3000, 2000, 1500, 1000, 700}) {
                replaceAll(map, keys, size);
                if (size == 4000) {
                    atLargest = map.memoryReserved();
                }
                steps.append(String.format(" %d B: %.1f MB;", size, map.memoryReserved() / 1e6));
            }
            System.out.println("shrinking values, " + scheme + ", reserved after each step:" + steps);
            long split = map.internal.allocator().splitCount();
            assertTrue(split > 0, "no free slice was split");
            assertTrue(map.memoryReserved() <= atLargest * 3 / 2,
                    "reserved grew from " + atLargest + " to " + map.memoryReserved() + ":" + steps);
        }
    }

    /**
     * Values that grow reuse the blocks of smaller ones once those are all free (Nova values,
     * whose readers check a reused block's layout era): 2,000 keys whose values go from 700 B up
     * to 4 KB in six steps, and back, end within 2.5x the memory the 4 KB values take. No free
     * slice can serve a larger size, so without whole blocks reused every step mapped new memory:
     * 26.1 MB reserved at the end (with {@code -Doak.reuseBlocks=false}), against 12.5 MB with
     * them, for 8.2 MB in use at 4 KB.
     */
    @org.junit.jupiter.api.Test
    void growingValuesReuseTheBlocksOfSmallerOnes() {
        try (OakMap<Integer, byte[]> map = bytesByInt(MemoryScheme.NOVA)) {
            org.junit.jupiter.api.Assumptions.assumeTrue(map.internal.allocator().reusesWholeBlocks(),
                    "blocks are not reused whole (-Doak.reuseBlocks=false)");
            int keys = 2000;
            long atLargest = 0;
            StringBuilder steps = new StringBuilder();
            for (int size : new int[] {700, 1000, 1500, 2000, 3000, 4000, 700, 1000, 1500, 2000, 3000, 4000}) {
                replaceAll(map, keys, size);
                if (size == 4000 && atLargest == 0) {
                    atLargest = map.memoryUsed();
                }
                steps.append(String.format(" %d B: %.1f MB;", size, map.memoryReserved() / 1e6));
            }
            System.out.println("growing values, reserved after each step:" + steps + " in use at 4 KB "
                    + atLargest + ", recycled blocks " + map.internal.allocator().recycledBlocks());
            assertTrue(map.memoryReserved() <= atLargest * 5 / 2,
                    "reserved " + map.memoryReserved() + " for " + atLargest + " in use at 4 KB:" + steps);
        }
    }

    /** Puts a value of {@code size} bytes for keys 0 to {@code keys - 1}, then checks a sample of them. */
    private static void replaceAll(OakMap<Integer, byte[]> map, int keys, int size) {
        byte[] value = new byte[size];
        value[size - 1] = (byte) size;
        for (int k = 0; k < keys; k++) {
            map.zc().put(k, value);
        }
        for (int k = 0; k < keys; k += 97) {
            byte[] v = map.get(k);
            assertEquals(size, v.length);
            assertEquals((byte) size, v[size - 1]);
        }
    }

    /** A map of byte arrays by int, with 1 MiB blocks, keys and values under {@code scheme}. */
    private static OakMap<Integer, byte[]> bytesByInt(MemoryScheme scheme) {
        return new OakMapBuilder<>(dev.oakmap.common.OakCommonTypes.INTEGER_SERIALIZER,
                dev.oakmap.common.OakCommonTypes.BYTE_ARRAY_SERIALIZER, dev.oakmap.common.OakCommonTypes.INTEGER_COMPARATOR)
                .blockSize(1 << 20).keyMemory(scheme).valueMemory(scheme).build();
    }
}
