package dev.oakmap.bench.somar;

import java.io.PrintStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One measured point of the SOMAR benchmark, in the current JVM: build the structure under the
 * scheme, fill it, measure memory, run the workload for the warm-up time (discarded) and for the
 * measured time, measure memory again.
 *
 * <p>Key {@code i} of the range is {@code keySize} bytes whose first 8 are {@code i} big-endian
 * (so key order is index order, and the lists can be filled in O(n) by inserting in descending
 * order) and whose rest is a filler derived from {@code i}. The initial contents are each key of
 * the range with probability 1/2, so about half of the puts insert and half of the removes
 * succeed, as in the thesis (§4.2.1).
 */
final class SomarPoint {

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    /** Keeps the workers' results alive. */
    static volatile long blackhole;

    private SomarPoint() {
    }

    /** The thesis's three workloads: percentages of put and remove; the rest are gets. */
    enum Mix {
        WRITE_HEAVY("write-heavy", 50, 50),
        READ_HEAVY("read-heavy", 5, 5),
        READ_WRITE("read-write", 25, 25);

        final String id;
        final int put;
        final int remove;

        Mix(String id, int put, int remove) {
            this.id = id;
            this.put = put;
            this.remove = remove;
        }

        static Mix byId(String s) {
            for (Mix m : values()) {
                if (m.id.equalsIgnoreCase(s.trim())) {
                    return m;
                }
            }
            throw new IllegalArgumentException("unknown workload '" + s + "' (write-heavy, read-heavy, read-write)");
        }

        String describe() {
            return put + "% put, " + remove + "% remove, " + (100 - put - remove) + "% get";
        }
    }

    /** What a point runs. */
    record Spec(String structure, String scheme, Mix mix, int threads, int entries, int keySize, int valueSize,
                double warmup, double duration, long seed, int rep, long capacity) {
        int range() {
            return 2 * entries;
        }
    }

    static void key(int i, byte[] out) {
        LONGS.set(out, 0, (long) i);
        long z = i * 0x9E3779B97F4A7C15L;
        for (int j = 8; j + 8 <= out.length; j += 8) {
            z = mix(z + j);
            LONGS.set(out, j, z);
        }
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    static Map<String, String> run(Spec s, PrintStream log) throws InterruptedException {
        Map<String, String> r = new LinkedHashMap<>();
        long heapBaseline = heapUsedAfterGc();
        r.put("heap_baseline_bytes", Long.toString(heapBaseline));
        long t0 = System.nanoTime();
        try (BenchTarget target = BenchTarget.create(s.structure(), s.scheme(), s.capacity())) {
            int inserted = fill(target, s);
            long size = target.size();
            if (size != inserted) {
                throw new IllegalStateException("holds " + size + " entries after inserting " + inserted);
            }
            log.printf(Locale.ROOT, "filled %,d of %,d keys in %.2f s%n", size, s.range(), (System.nanoTime() - t0) / 1e9);
            r.put("entries_init", Long.toString(size));
            r.put("heap_after_init_bytes", Long.toString(heapUsedAfterGc()));
            r.put("offheap_after_init_bytes", Long.toString(target.offHeapUsed()));
            if (s.warmup() > 0) {
                long[] w = sustained(target, s, s.seed() ^ 0x5EEDL, s.warmup());
                log.printf(Locale.ROOT, "warm-up: %,d ops in %.2f s%n", w[0], w[1] / 1e9);
            }
            long[] gc0 = gcStats();
            long[] res = sustained(target, s, s.seed() * 1_000_003L + s.rep(), s.duration());
            long[] gc1 = gcStats();
            double seconds = res[1] / 1e9;
            r.put("ops", Long.toString(res[0]));
            r.put("seconds", fmt(seconds));
            r.put("ops_per_s", fmt(res[0] / seconds));
            r.put("gc_count", Long.toString(gc1[0] - gc0[0]));
            r.put("gc_ms", Long.toString(gc1[1] - gc0[1]));
            r.put("size_after", Long.toString(target.size()));
            r.put("heap_after_run_bytes", Long.toString(heapUsedAfterGc()));
            r.put("offheap_used_after_run_bytes", Long.toString(target.offHeapUsed()));
            r.put("offheap_reserved_after_run_bytes", Long.toString(target.offHeapReserved()));
            log.printf(Locale.ROOT, "%s %s %s %d threads: %,.0f ops/s%n", s.structure(), s.scheme(), s.mix().id,
                    s.threads(), res[0] / seconds);
        }
        return r;
    }

    /** Inserts every key of the range with probability 1/2 (descending, so the lists insert at their head). */
    private static int fill(BenchTarget target, Spec s) {
        SplittableRandom rnd = new SplittableRandom(s.seed());
        boolean[] chosen = new boolean[s.range()];
        int n = 0;
        while (n < s.entries()) { // exactly `entries` keys, each chosen uniformly
            int i = rnd.nextInt(s.range());
            if (!chosen[i]) {
                chosen[i] = true;
                n++;
            }
        }
        byte[] key = new byte[s.keySize()];
        byte[] value = new byte[s.valueSize()];
        rnd.nextBytes(value);
        for (int i = s.range() - 1; i >= 0; i--) {
            if (chosen[i]) {
                key(i, key);
                target.put(key, value);
            }
        }
        return n;
    }

    /** @return {operations, nanoseconds} over all threads */
    private static long[] sustained(BenchTarget target, Spec s, long seed, double seconds) throws InterruptedException {
        int threads = s.threads();
        long[] ops = new long[threads];
        long[] sums = new long[threads];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        long[] deadline = new long[1];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts[t] = new Thread(() -> {
                try {
                    SplittableRandom rnd = new SplittableRandom(seed + 7919L * id);
                    byte[] key = new byte[s.keySize()];
                    byte[] value = new byte[s.valueSize()];
                    byte[] dst = new byte[s.valueSize()];
                    rnd.nextBytes(value);
                    int range = s.range();
                    int put = s.mix().put;
                    int putOrRemove = put + s.mix().remove;
                    ready.countDown();
                    go.await();
                    long end = deadline[0];
                    long n = 0;
                    long sum = 0;
                    while (true) {
                        key(rnd.nextInt(range), key);
                        int op = rnd.nextInt(100);
                        if (op < put) {
                            LONGS.set(value, 0, n); // values differ from put to put
                            target.put(key, value);
                        } else if (op < putOrRemove) {
                            target.remove(key);
                        } else if (target.get(key, dst)) {
                            sum += dst[0];
                        }
                        n++;
                        if ((n & 7) == 0 && System.nanoTime() >= end) {
                            break;
                        }
                    }
                    ops[id] = n;
                    sums[id] = sum;
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    ready.countDown();
                }
            }, "somar-bench-" + t);
            ts[t].start();
        }
        ready.await();
        long start = System.nanoTime();
        deadline[0] = start + (long) (seconds * 1e9);
        go.countDown(); // publishes deadline[0]
        for (Thread t : ts) {
            t.join();
        }
        long elapsed = System.nanoTime() - start;
        if (failure.get() != null) {
            throw new IllegalStateException("a worker failed: " + failure.get(), failure.get());
        }
        long total = 0;
        long sum = 0;
        for (int t = 0; t < threads; t++) {
            total += ops[t];
            sum += sums[t];
        }
        blackhole = sum;
        return new long[]{total, elapsed};
    }

    /** @return heap bytes in use after full collections */
    static long heapUsedAfterGc() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 2; i++) {
            System.gc();
            Thread.sleep(20);
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    private static long[] gcStats() {
        long count = 0;
        long ms = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, gc.getCollectionCount());
            ms += Math.max(0, gc.getCollectionTime());
        }
        return new long[]{count, ms};
    }

    static String fmt(double d) {
        return String.format(Locale.ROOT, "%.1f", d);
    }
}
