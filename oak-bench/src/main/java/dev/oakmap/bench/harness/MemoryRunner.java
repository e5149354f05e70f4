package dev.oakmap.bench.harness;

import dev.oakmap.OakOutOfMemoryException;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Runs one point of the memory-budget experiments (the Oak paper's Figure 3) in the current JVM,
 * whose heap limit ({@code -Xmx}) and, for off-heap maps, off-heap capacity and direct-memory limit
 * the parent has set from the point's RAM budget:
 * <ul>
 *   <li>{@link Workload#CAPACITY}: one thread puts-if-absent fresh keys (key {@code 0, 1, 2, ...}
 *       of the key space, which is random key order) until the map runs out of memory, and reports
 *       how many pairs fit and the ingestion rate until then;</li>
 *   <li>{@link Workload#INGEST_RAM}: one thread puts-if-absent {@code --ram-pairs} fresh keys and
 *       reports the ingestion rate and the memory per pair, or that the map ran out first.</li>
 * </ul>
 * "Runs out" means: {@link OakOutOfMemoryException} (Oak's off-heap capacity), an
 * {@link OutOfMemoryError} (Java heap, or direct memory for MapDB, which wraps it in its own
 * exception), or a stall: an ingestion that makes no progress for {@code --stall} seconds, which is
 * how a heap map thrashing in full collections just under its limit ends (the JVM may take minutes
 * to give up). A short warm-up (a few thousand pairs into a throwaway map, then full collections)
 * runs first when {@code --warmup} is positive; no key ordering work (permutation array) is done, so
 * the heap holds nothing but the map and the JVM's own objects.
 *
 * <p>While it runs, the child prints {@code @@progress pairs=N seconds=S} lines, so that the parent
 * can still report how far a run got if it has to kill it.
 */
final class MemoryRunner {

    /** Prefix of the progress lines a child prints on its standard output. */
    static final String PROGRESS_PREFIX = "@@progress ";

    /**
     * Loaded before any ingestion: after a heap map has run out of memory, loading a class can fail
     * (a ClassNotFoundException seen in practice), and {@link #outOfMemory} needs this one.
     */
    private static final Class<?> OAK_OUT_OF_MEMORY = OakOutOfMemoryException.class;

    /** Pairs between two looks at the clock (stall check, progress line). */
    private static final int CHECK_EVERY = 16;

    private MemoryRunner() {
    }

    /**
     * How an ingestion ended: {@code failure} is the throwable that ended it, if any, and
     * {@code stalledNanos} how long it had made no progress, if it stalled; in both cases the map is
     * already closed. Allocated before the ingestion starts, so that recording how it ended needs
     * no memory: a map that filled the heap stays reachable until {@link #fill} returns.
     */
    private static final class Fill {
        long pairs;
        double seconds;
        Throwable failure;
        long stalledNanos;
        long offUsed;
        long offReserved;

        /** @return the reason the ingestion stalled, or null */
        String stall() {
            return stalledNanos == 0 ? null : String.format(Locale.ROOT,
                    "stalled: %d pairs took %.1f s (GC thrashing at the limit)", CHECK_EVERY, stalledNanos / 1e9);
        }
    }

    static Map<String, String> run(Options o, MapKind kind, Workload w, int rep, long offHeapCapacity,
                                   PrintStream log) throws InterruptedException {
        long runSeed = Keys.mix(o.seed * 1_000_003L + rep);
        byte[] value = new byte[o.valueSize];
        new SplittableRandom(runSeed).nextBytes(value);
        long target = w == Workload.CAPACITY ? Integer.MAX_VALUE : o.ramPairs();
        Map<String, String> r = new LinkedHashMap<>();
        log.printf(Locale.ROOT, "%s %s: max heap %s, off-heap capacity %s, target %s%n", kind.name(), w.id,
                Options.size(Runtime.getRuntime().maxMemory()), Options.size(offHeapCapacity),
                w == Workload.CAPACITY ? "until out of memory" : String.format(Locale.ROOT, "%,d pairs", target));

        if (o.warmup > 0) {
            // JIT warm-up on a throwaway map, kept small so that the budget is not disturbed
            long pairs = Math.min(20_000, Math.max(1_000, (long) (o.ramPairs() * 0.05)));
            BenchMap warm = kind.factory().apply(offHeapCapacity);
            Fill f;
            try {
                f = fill(warm, o, value, pairs, false, log);
            } finally {
                closeQuietly(warm);
                warm = null; // the interpreter would keep it reachable: MapDB frees its buffers only on GC
            }
            log.printf(Locale.ROOT, "warm-up: %,d pairs into a throwaway map in %.2f s%n", f.pairs, f.seconds);
            if (f.failure != null) {
                f.failure.printStackTrace(log);
                throw new IllegalStateException("the warm-up ingestion of " + pairs + " pairs failed: " + f.failure,
                        f.failure);
            }
        }

        long heapBefore = PointRunner.heapUsed(o);
        BenchMap map = kind.factory().apply(offHeapCapacity);
        Fill f;
        try {
            f = fill(map, o, value, target, true, log);
            if (f.failure == null && f.stalledNanos == 0 && w == Workload.INGEST_RAM) {
                long size = map.size();
                if (size != f.pairs) {
                    throw new IllegalStateException(kind.name() + " holds " + size + " pairs after ingesting "
                            + f.pairs);
                }
                PointRunner.measureMemory(map, size, heapBefore, o, r, log);
            }
        } finally {
            closeQuietly(map); // first of all after running out: frees the heap map's memory
            map = null;
        }
        String reason = f.stall();
        if (f.failure != null) {
            f.failure.printStackTrace(log);
            reason = outOfMemory(f.failure);
            if (reason == null) {
                throw new IllegalStateException("ingestion failed: " + f.failure, f.failure);
            }
        }
        r.put("pairs_ingested", Long.toString(f.pairs));
        r.put("ingest_s", PointRunner.fmt(f.seconds));
        r.put("ingest_ops_per_s", PointRunner.fmt(f.pairs / f.seconds));
        r.putIfAbsent("offheap_used_bytes", Long.toString(f.offUsed));
        r.putIfAbsent("offheap_reserved_bytes", Long.toString(f.offReserved));
        if (reason != null) {
            r.put("stop_reason", reason);
        }
        log.printf(Locale.ROOT, "%s: %,d pairs in %.2f s (%,.0f pairs/s)%s%n", w.id, f.pairs, f.seconds,
                f.pairs / f.seconds, reason == null ? "" : "; stopped: " + reason);
        if (w == Workload.CAPACITY) {
            r.put("pairs_fit", Long.toString(f.pairs));
        }
        if (w == Workload.CAPACITY || reason == null) {
            r.put("ops", Long.toString(f.pairs));
            r.put("seconds", PointRunner.fmt(f.seconds));
            r.put("ops_per_s", PointRunner.fmt(f.pairs / f.seconds));
        }
        return r;
    }

    /**
     * Puts-if-absent keys {@code 0, 1, 2, ...} of the key space until {@code target} pairs are in,
     * the map runs out of memory (the throwable is returned, not thrown), or the ingestion stalls
     * for {@code --stall} seconds. In those two cases the map is closed before anything else is
     * allocated: a heap map that ran out fills the heap, and the JVM could not even build the result.
     */
    private static Fill fill(BenchMap map, Options o, byte[] value, long target, boolean progress, PrintStream log) {
        Fill f = new Fill();
        BenchMap.Session s = map.newSession(value);
        byte[] key = new byte[o.keySize];
        long stallNanos = (long) (o.stall * 1e9);
        long progressNanos = 2_000_000_000L;
        long n = 0;
        Throwable failure = null;
        long stalled = 0;
        long t0 = System.nanoTime();
        long lastProgress = t0;
        long lastCheck = t0;
        for (int i = 0; n < target && i < Integer.MAX_VALUE; i++) {
            Keys.key(o.seed, i, key, o.keyLayout());
            try {
                if (s.putIfAbsent(key)) {
                    n++;
                }
                if (i % CHECK_EVERY == 0) {
                    long now = System.nanoTime();
                    if (now - lastCheck > stallNanos) {
                        stalled = now - lastCheck;
                        break;
                    }
                    lastCheck = now;
                    if (progress && now - lastProgress > progressNanos) {
                        lastProgress = now;
                        // inside the try: a heap map that filled the heap may leave the OutOfMemoryError
                        // to this line's formatting, and that is running out too, not a failed run
                        log.printf(Locale.ROOT, "%spairs=%d seconds=%.3f%n", PROGRESS_PREFIX, n, (now - t0) / 1e9);
                    }
                }
            } catch (Throwable e) {
                failure = e;
                break;
            }
        }
        f.seconds = (System.nanoTime() - t0) / 1e9;
        f.pairs = n;
        f.failure = failure;
        f.stalledNanos = stalled;
        try {
            f.offUsed = map.offHeapUsed();
            f.offReserved = map.offHeapReserved();
        } catch (RuntimeException | OutOfMemoryError e) {
            // a map broken by running out: the figures are informative only
        }
        if (failure != null || stalled > 0) {
            closeQuietly(map);
        }
        return f;
    }

    /**
     * @return a short description if {@code e} (or one of its causes) says the map ran out of memory,
     *         else null
     */
    static String outOfMemory(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (OAK_OUT_OF_MEMORY.isInstance(t)) {
                return "off-heap capacity exhausted (OakOutOfMemoryException)";
            }
            if (t instanceof OutOfMemoryError) {
                String m = String.valueOf(t.getMessage());
                String what = m.contains("direct buffer") ? "direct memory exhausted"
                        : m.contains("heap") ? "Java heap exhausted" : "out of memory";
                return what + " (" + (t == e ? "" : e.getClass().getSimpleName() + ": ") + "OutOfMemoryError: "
                        + m + ")";
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }

    private static void closeQuietly(BenchMap map) {
        try {
            map.close();
        } catch (RuntimeException | OutOfMemoryError e) {
            // a map broken by running out of memory may fail to close; the JVM ends soon anyway
        }
    }
}
