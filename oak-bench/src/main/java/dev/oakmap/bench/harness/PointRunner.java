package dev.oakmap.bench.harness;

import java.io.PrintStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs one point (map, workload, thread count, repetition) in the current JVM, the seeds' way:
 * <ol>
 *   <li>the <b>ingestion stage</b>: one thread (or, for the {@code ingest} workload, the point's
 *       threads, striped) puts-if-absent 50% of the key range, a random subset in random order
 *       (or in key order, {@code --key-order ascending});</li>
 *   <li>the <b>memory measurement</b>: heap in use after full collections, against the same figure
 *       taken before the map was built, plus the map's off-heap bytes;</li>
 *   <li>the <b>sustained-rate stage</b>: the workload on {@code threads} worker threads for
 *       {@code warmup} seconds (discarded), then again for {@code duration} seconds (measured); each
 *       thread picks keys uniformly (or Zipfian) over the whole range with its own generator,
 *       seeded from the run's seed, so every map sees the same key sequences. The warm-up runs in
 *       slices of a second, each logged with its rate and the map's {@link BenchMap#state}, so a
 *       run's log shows how the map warms up (the JIT, and a map that reorganizes itself under
 *       the workload: for Oak, the pairs it moved and the memory it held and gave back).</li>
 * </ol>
 * For {@code ingest}, the warm-up is ingestion into throwaway maps, one after another, for
 * {@code warmup} seconds, and the measured figure is the ingestion stage itself. For the other
 * workloads the ingestion stage runs cold (its {@code ingest_ops_per_s} column is informative only).
 */
final class PointRunner {

    /** Keeps the workers' results alive. */
    static volatile long blackhole;

    private PointRunner() {
    }

    /**
     * @param offHeapCapacity the off-heap map's capacity in bytes (0: the map's default)
     * @return the measured columns of the run's CSV row
     */
    static Map<String, String> run(Options o, MapKind kind, Workload w, int threads, int rep, long offHeapCapacity,
                                   PrintStream log) throws InterruptedException {
        if (w.isMemory()) {
            Map<String, String> r = MemoryRunner.run(o, kind, w, rep, offHeapCapacity, log);
            r.put("jvm", Machine.jvm());
            r.put("jvm_flags", String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()));
            r.put("max_heap_bytes", Long.toString(Runtime.getRuntime().maxMemory()));
            return r;
        }
        long runSeed = Keys.mix(o.seed * 1_000_003L + rep);
        long keySeed = o.seed; // the key space is the same in every run
        byte[] valueTemplate = new byte[o.valueSize];
        new SplittableRandom(runSeed).nextBytes(valueTemplate);
        Keys.Zipf zipf = o.distribution.equals("zipf") ? new Keys.Zipf(o.keys, o.zipfTheta, runSeed) : null;
        int pairs = o.ingestedPairs();
        int ingestThreads = w == Workload.INGEST ? threads : 1;
        Map<String, String> r = new LinkedHashMap<>();

        if (w == Workload.INGEST && o.warmup > 0) {
            // ingest into throwaway maps, one after another, until the warm-up time is up
            int[] perm = ingestionOrder(o, pairs, runSeed ^ 0x5EED);
            long deadline = System.nanoTime() + (long) (o.warmup * 1e9);
            long n = 0;
            int maps = 0;
            do {
                try (BenchMap warm = kind.factory().apply(offHeapCapacity)) {
                    n += ingest(warm, perm, pairs, ingestThreads, keySeed, o.keySize, o.keyLayout(),
                            valueTemplate, deadline);
                    maps++;
                }
            } while (System.nanoTime() < deadline);
            log.printf(Locale.ROOT, "warm-up ingestion: %,d pairs into %d throwaway map%s%n", n, maps,
                    maps == 1 ? "" : "s");
        }

        long heapBefore = heapUsed(o);
        BenchMap map = kind.factory().apply(offHeapCapacity);
        try {
            int[] perm = ingestionOrder(o, pairs, runSeed);
            long[] gcIngest0 = gcStats();
            long t0 = System.nanoTime();
            long ingested = ingest(map, perm, pairs, ingestThreads, keySeed, o.keySize, o.keyLayout(),
                    valueTemplate, Long.MAX_VALUE);
            double ingestSeconds = (System.nanoTime() - t0) / 1e9;
            long[] gcIngest1 = gcStats();
            perm = null;
            long size = map.size();
            if (size != ingested) {
                throw new IllegalStateException(kind.name() + " holds " + size + " pairs after ingesting " + ingested);
            }
            log.printf(Locale.ROOT, "ingested %,d pairs in %.2f s%n", size, ingestSeconds);
            r.put("pairs_ingested", Long.toString(size));
            r.put("ingest_s", fmt(ingestSeconds));
            r.put("ingest_ops_per_s", fmt(size / ingestSeconds));
            measureMemory(map, size, heapBefore, o, r, log);

            double opsPerSecond;
            long ops;
            double seconds;
            long[] gc0;
            long[] gc1;
            if (w == Workload.INGEST) {
                ops = size;
                seconds = ingestSeconds;
                opsPerSecond = size / ingestSeconds;
                gc0 = gcIngest0;
                gc1 = gcIngest1;
            } else {
                int scan = Math.max(1, Math.min(o.scan, pairs));
                long slice = 0;
                for (double left = o.warmup; left > 0; left -= 1, slice++) {
                    double seconds1 = Math.min(1, left);
                    long[] res = sustained(map, w, o, threads, valueTemplate, zipf, scan, runSeed ^ (0xABCDL + slice), seconds1);
                    log.printf(Locale.ROOT, "warm-up %d: %,d ops in %.2f s, %,.0f ops/s%s%n", slice + 1, res[0], res[1] / 1e9,
                            res[0] / (res[1] / 1e9), suffix(map.state()));
                }
                gc0 = gcStats();
                long[] res = sustained(map, w, o, threads, valueTemplate, zipf, scan, runSeed, o.duration);
                ops = res[0];
                seconds = res[1] / 1e9;
                opsPerSecond = ops / seconds;
                gc1 = gcStats();
            }
            r.put("ops", Long.toString(ops));
            r.put("seconds", fmt(seconds));
            r.put("ops_per_s", fmt(opsPerSecond));
            r.put("size_after", Long.toString(map.size()));
            r.put("offheap_used_after", Long.toString(map.offHeapUsed()));
            r.put("gc_count", Long.toString(gc1[0] - gc0[0]));
            r.put("gc_ms", Long.toString(gc1[1] - gc0[1]));
            long huge = Machine.anonHugePageBytes();
            log.printf(Locale.ROOT, "%s %s %d threads: %,.0f ops/s%s%s%n", kind.name(), w.id, threads, opsPerSecond,
                    suffix(map.state()), huge < 0 ? "" : String.format(Locale.ROOT, "; anonymous huge pages %,d MB", huge >> 20));
        } finally {
            map.close();
        }
        r.put("jvm", Machine.jvm());
        r.put("jvm_flags", String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()));
        r.put("max_heap_bytes", Long.toString(Runtime.getRuntime().maxMemory()));
        return r;
    }

    /**
     * The memory-per-pair measurement, taken after an ingestion: heap in use after full collections
     * minus {@code heapBefore} (the same figure taken before the map was built), the map's off-heap
     * bytes in use and reserved, and the overhead beyond the raw key and value bytes, all per pair.
     * Puts the {@code heap_growth_bytes .. overhead_b_per_pair} columns into {@code r}.
     */
    static void measureMemory(BenchMap map, long pairs, long heapBefore, Options o, Map<String, String> r,
                              PrintStream log) throws InterruptedException {
        long heapGrowth = heapUsed(o) - heapBefore;
        long offUsed = map.offHeapUsed();
        long offReserved = map.offHeapReserved();
        long raw = pairs * (long) (o.keySize + o.valueSize);
        log.printf(Locale.ROOT, "memory after %,d pairs: heap +%,d B, off-heap used %,d B, reserved %,d B; "
                        + "%.1f B/pair beyond the raw data%n", pairs, heapGrowth, offUsed, offReserved,
                (double) (heapGrowth + offUsed - raw) / pairs);
        r.put("heap_base_bytes", Long.toString(heapBefore));
        r.put("heap_growth_bytes", Long.toString(heapGrowth));
        r.put("offheap_used_bytes", Long.toString(offUsed));
        r.put("offheap_reserved_bytes", Long.toString(offReserved));
        r.put("heap_b_per_pair", fmt((double) heapGrowth / pairs));
        r.put("offheap_used_b_per_pair", fmt((double) offUsed / pairs));
        r.put("offheap_reserved_b_per_pair", fmt((double) offReserved / pairs));
        r.put("overhead_b_per_pair", fmt((double) (heapGrowth + offUsed - raw) / pairs));
    }

    /**
     * @return the key indexes the ingestion stage inserts, {@code [0, pairs)} of the result: a
     *     random half of the range (for {@code pairs} half the keys), in random order, or in
     *     ascending order with {@code --key-order ascending}
     */
    static int[] ingestionOrder(Options o, int pairs, long seed) {
        int[] perm = Keys.permutation(o.keys, seed);
        if (o.ascendingKeys()) {
            Arrays.sort(perm, 0, pairs);
        }
        return perm;
    }

    /**
     * Puts-if-absent keys {@code perm[0..pairs)} on {@code threads} threads (thread t takes indexes
     * t, t + threads, ...), stopping early at {@code deadline} (System.nanoTime).
     *
     * @return the number of pairs inserted
     */
    static long ingest(BenchMap map, int[] perm, int pairs, int threads, long keySeed, int keySize,
                       Keys.Layout layout, byte[] value, long deadline) throws InterruptedException {
        long[] inserted = new long[threads];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts[t] = new Thread(() -> {
                try {
                    BenchMap.Session s = map.newSession(value);
                    byte[] key = new byte[keySize];
                    long n = 0;
                    int step = 0;
                    for (int i = id; i < pairs; i += threads) {
                        Keys.key(keySeed, perm[i], key, layout);
                        if (s.putIfAbsent(key)) {
                            n++;
                        }
                        if ((++step & 255) == 0 && System.nanoTime() > deadline) {
                            break;
                        }
                    }
                    inserted[id] = n;
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "bench-ingest-" + t);
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("ingestion failed: " + failure.get(), failure.get());
        }
        long sum = 0;
        for (long n : inserted) {
            sum += n;
        }
        return sum;
    }

    /** One operation of a workload, bound to a thread's session and key chooser. */
    private interface Op {
        long run();
    }

    private static Op op(Workload w, BenchMap.Session s, Keys.Chooser c, SplittableRandom rnd, byte[] key,
                         long keySeed, Keys.Layout layout, int scan) {
        return switch (w) {
            case PUT -> () -> s.put(next(c, keySeed, layout, key));
            case UPDATE -> () -> s.update(next(c, keySeed, layout, key));
            case GET_ZC -> () -> s.get(next(c, keySeed, layout, key));
            case GET_COPY -> () -> s.getCopy(next(c, keySeed, layout, key));
            case MIX95 -> () -> rnd.nextInt(100) < 95 ? s.get(next(c, keySeed, layout, key)) : s.put(next(c, keySeed, layout, key));
            case SCAN_ASC -> () -> s.scan(next(c, keySeed, layout, key), scan, false, false);
            case SCAN_DESC -> () -> s.scan(next(c, keySeed, layout, key), scan, true, false);
            case SCAN_ASC_STREAM -> () -> s.scan(next(c, keySeed, layout, key), scan, false, true);
            case SCAN_DESC_STREAM -> () -> s.scan(next(c, keySeed, layout, key), scan, true, true);
            case CHURN -> () -> rnd.nextBoolean() ? s.put(next(c, keySeed, layout, key)) : s.remove(next(c, keySeed, layout, key));
            case RW_MIX -> () -> {
                int p = rnd.nextInt(4);
                return p == 0 ? s.put(next(c, keySeed, layout, key))
                        : p == 1 ? s.remove(next(c, keySeed, layout, key)) : s.get(next(c, keySeed, layout, key));
            };
            case INGEST, CAPACITY, INGEST_RAM -> throw new IllegalArgumentException(w.id + " has no sustained stage");
        };
    }

    private static byte[] next(Keys.Chooser c, long keySeed, Keys.Layout layout, byte[] key) {
        Keys.key(keySeed, c.next(), key, layout);
        return key;
    }

    /** Written by the measuring thread, read by every worker once per operation. */
    private static final class Stopper {
        volatile boolean stop;
    }

    /**
     * Runs the workload on {@code threads} threads for {@code seconds}.
     *
     * @return {operations completed, elapsed nanoseconds}
     */
    static long[] sustained(BenchMap map, Workload w, Options o, int threads, byte[] value, Keys.Zipf zipf,
                            int scan, long seed, double seconds) throws InterruptedException {
        long[] counts = new long[threads];
        long[] sinks = new long[threads];
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        Stopper stopper = new Stopper();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int id = t;
            workers[t] = new Thread(() -> {
                boolean counted = false;
                try {
                    SplittableRandom rnd = new SplittableRandom(Keys.mix(seed + 1000L * id));
                    Keys.Chooser chooser = zipf != null ? zipf.chooser(rnd.split()) : Keys.uniform(o.keys, rnd.split());
                    Op op = op(w, map.newSession(value), chooser, rnd, new byte[o.keySize], o.seed, o.keyLayout(), scan);
                    ready.countDown();
                    counted = true;
                    go.await();
                    long n = 0;
                    long sink = 0;
                    while (!stopper.stop) {
                        sink += op.run();
                        n++;
                    }
                    counts[id] = n;
                    sinks[id] = sink;
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    stopper.stop = true;
                    if (!counted) {
                        ready.countDown();
                    }
                }
            }, "bench-worker-" + t);
            workers[t].start();
        }
        ready.await();
        long start = System.nanoTime();
        go.countDown();
        long end = start + (long) (seconds * 1e9);
        for (long now; !stopper.stop && (now = System.nanoTime()) < end; ) {
            Thread.sleep(Math.max(1, Math.min(100, (end - now) / 1_000_000)));
        }
        stopper.stop = true;
        long stop = System.nanoTime();
        for (Thread t : workers) {
            t.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("a worker failed: " + failure.get(), failure.get());
        }
        long total = 0;
        long sink = 0;
        for (int t = 0; t < threads; t++) {
            total += counts[t];
            sink += sinks[t];
        }
        blackhole ^= sink;
        return new long[]{total, stop - start};
    }

    /** Heap bytes in use after a few full collections (one, quickly, in the harness's own JVM). */
    static long heapUsed(Options o) throws InterruptedException {
        // in the harness's own JVM (--fork false: tests, debugging) the figure means little anyway
        int rounds = o.fork ? 4 : 1;
        long used = Long.MAX_VALUE;
        for (int i = 0; i < rounds; i++) {
            System.gc();
            Thread.sleep(o.fork ? 40 : 1);
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    /** @return {collections, milliseconds} summed over the collectors */
    private static long[] gcStats() {
        long n = 0;
        long ms = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, gc.getCollectionCount());
            ms += Math.max(0, gc.getCollectionTime());
        }
        return new long[]{n, ms};
    }

    /** @return {@code state} as a suffix of a log line ("; state"), or "" if empty */
    private static String suffix(String state) {
        return state.isEmpty() ? "" : "; " + state;
    }

    static String fmt(double v) {
        return String.format(Locale.ROOT, "%.6g", v);
    }
}
