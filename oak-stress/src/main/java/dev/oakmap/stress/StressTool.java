package dev.oakmap.stress;

import dev.oakmap.DeletedMemoryAccessException;
import dev.oakmap.OakMap;
import dev.oakmap.MemoryScheme;
import dev.oakmap.OakMapBuilder;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.common.OakCommonTypes;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * A long-running stress test of OakMap: a mixed workload on many threads, with invariant checks,
 * for a given time. Run it with {@code bin/stress}; CI runs it for about ten seconds
 * ({@code StressToolTest}).
 *
 * <h2>Keys</h2>
 * <ul>
 * <li><b>Counters</b>, keys -16..-1: 8-byte values incremented by every thread, in place
 *     ({@code zc().putIfAbsentComputeIfPresent}, {@code zc().computeIfPresent}) and with the
 *     atomic legacy {@code merge} and {@code compute}. Each successful increment is also added to
 *     a global tally, so the counters' sum must lie between the tally read before and the tally
 *     read after summing them (plus the increments in flight), and must equal it at the end: no
 *     increment lost or applied twice.
 * <li><b>Stable keys</b>, every 8th key of {@code [0, keys)}: inserted before the run and never
 *     updated; every scan over a range must return all of them.
 * <li><b>Owned keys</b>, the others: split between the threads, each thread the only writer of its
 *     keys, with a private model (key to sequence number). Every read of an owned key by its owner
 *     must match the model, and every owner validates all its keys periodically; at the end the
 *     map must equal the union of the models plus the stable keys and counters.
 * </ul>
 *
 * <h2>Values</h2>
 * Every non-counter value is {@code --value-size} bytes that check themselves: key, sequence
 * number, filler derived from both, and a checksum of all that. Any read (get, zero-copy view,
 * scan, in-place rewrite) that sees a torn or foreign value fails the run.
 *
 * <h2>Operations</h2>
 * put, putIfAbsent, remove, replace, compute, merge, computeIfPresent, zero-copy put, remove and
 * in-place rewrites of owned keys (churn); increments of counters; get and zero-copy get of any key;
 * ascending and descending scans over random ranges and from the ends of the map, through the
 * legacy entry set or the zero-copy stream set, checking order, self-checking values, stable keys
 * and the scanning thread's own keys.
 *
 * <p>Prints progress every few seconds and a summary; exits with status 1 on the first failure
 * (after printing it), 0 otherwise.
 */
public final class StressTool {

    static final int COUNTERS = 16;
    static final int STABLE_EVERY = 8;

    // ------------------------------------------------------------------ configuration

    record Config(int threads, int seconds, int keys, int chunk, int valueSize, long seed, int progressSeconds,
                  MemoryScheme keyMemory, MemoryScheme valueMemory) {

        static Config parse(String[] args) {
            Map<String, String> m = new HashMap<>();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                if (a.equals("--help") || a.equals("-h")) {
                    throw new IllegalArgumentException("help");
                }
                if (!a.startsWith("--")) {
                    throw new IllegalArgumentException("unexpected argument: " + a);
                }
                String name = a.substring(2);
                String value;
                int eq = name.indexOf('=');
                if (eq >= 0) {
                    value = name.substring(eq + 1);
                    name = name.substring(0, eq);
                } else if (i + 1 < args.length) {
                    value = args[++i];
                } else {
                    throw new IllegalArgumentException("missing value for --" + name);
                }
                m.put(name, value);
            }
            for (String k : m.keySet()) {
                if (!List.of("threads", "seconds", "keys", "chunk", "value-size", "seed", "progress",
                        "key-memory", "value-memory").contains(k)) {
                    throw new IllegalArgumentException("unknown option --" + k);
                }
            }
            Config c = new Config(
                    Integer.parseInt(m.getOrDefault("threads", "4")),
                    Integer.parseInt(m.getOrDefault("seconds", "10")),
                    Integer.parseInt(m.getOrDefault("keys", "20000")),
                    Integer.parseInt(m.getOrDefault("chunk", "64")),
                    Integer.parseInt(m.getOrDefault("value-size", "64")),
                    Long.decode(m.getOrDefault("seed", String.valueOf(System.nanoTime()))),
                    Integer.parseInt(m.getOrDefault("progress", "5")),
                    scheme(m.getOrDefault("key-memory", OakMapBuilder.DEFAULT_KEY_MEMORY.name())),
                    scheme(m.getOrDefault("value-memory", OakMapBuilder.DEFAULT_VALUE_MEMORY.name())));
            if (c.threads < 1 || c.seconds < 1 || c.keys < 2 * STABLE_EVERY || c.chunk < 4 || c.valueSize < Value.MIN_SIZE
                    || c.progressSeconds < 1) {
                throw new IllegalArgumentException("need --threads >= 1, --seconds >= 1, --keys >= "
                        + 2 * STABLE_EVERY + ", --chunk >= 4, --value-size >= " + Value.MIN_SIZE + ", --progress >= 1");
            }
            return c;
        }

        private static MemoryScheme scheme(String name) {
            try {
                return MemoryScheme.valueOf(name.trim().toUpperCase(java.util.Locale.ROOT).replace('-', '_'));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("unknown memory scheme '" + name + "'; known: "
                        + java.util.Arrays.toString(MemoryScheme.values()));
            }
        }
    }

    static final String USAGE = """
            usage: StressTool [--threads N] [--seconds S] [--keys K] [--chunk C] [--value-size B] [--seed X] [--progress P]
                              [--key-memory SCHEME] [--value-memory SCHEME]
              --threads     worker threads (default 4)
              --seconds     how long to run (default 10)
              --keys        key space [0, K) besides the 16 counters (default 20000); every 8th key is stable
              --chunk       OakMap chunk capacity, >= 4; small values force constant rebalancing (default 64)
              --value-size  bytes per value, >= 24 (default 64)
              --seed        random seed (default: from the clock; printed, to replay the same choices)
              --progress    seconds between progress lines (default 5)
              --key-memory, --value-memory
                            grow-only, lock-based or nova (default: the builder's defaults)
            exit status: 0 if every invariant held, 1 on a failure, 2 on bad arguments""";

    // ------------------------------------------------------------------ self-checking values

    /** Layout: key (4), sequence (8), filler, checksum (8, over everything before it). */
    static final class Value {
        static final int MIN_SIZE = 24;

        static byte[] make(int key, long seq, int size) {
            byte[] b = new byte[size];
            putInt(b, 0, key);
            putLong(b, 4, seq);
            for (int i = 12; i < size - 8; i++) {
                b[i] = filler(key, seq, i);
            }
            putLong(b, size - 8, checksum(b, size - 8));
            return b;
        }

        static byte filler(int key, long seq, int i) {
            return (byte) (key * 31 + seq * 17 + i * 13);
        }

        static long checksum(byte[] b, int len) {
            long h = 0xcbf29ce484222325L;
            for (int i = 0; i < len; i++) {
                h = (h ^ (b[i] & 0xff)) * 0x100000001b3L;
            }
            return h;
        }

        /** @return the sequence number in {@code b}, after checking it is a whole value of {@code key} */
        static long check(int key, byte[] b, int size) {
            if (b.length != size) {
                throw new Failure("value of key " + key + " has " + b.length + " bytes, expected " + size);
            }
            if (getInt(b, 0) != key) {
                throw new Failure("value of key " + key + " belongs to key " + getInt(b, 0));
            }
            long seq = getLong(b, 4);
            if (getLong(b, size - 8) != checksum(b, size - 8)) {
                throw new Failure("torn or corrupt value for key " + key + " (seq " + seq + "): checksum mismatch");
            }
            for (int i = 12; i < size - 8; i++) {
                if (b[i] != filler(key, seq, i)) {
                    throw new Failure("corrupt filler in value of key " + key + " at byte " + i);
                }
            }
            return seq;
        }

        static byte[] copy(OakScopedReadBuffer buf) {
            byte[] b = new byte[buf.capacity()];
            buf.getBytes(0, b, 0, b.length);
            return b;
        }

        static void putInt(byte[] b, int at, int v) {
            for (int i = 0; i < 4; i++) {
                b[at + i] = (byte) (v >>> (24 - 8 * i));
            }
        }

        static void putLong(byte[] b, int at, long v) {
            for (int i = 0; i < 8; i++) {
                b[at + i] = (byte) (v >>> (56 - 8 * i));
            }
        }

        static int getInt(byte[] b, int at) {
            int v = 0;
            for (int i = 0; i < 4; i++) {
                v = (v << 8) | (b[at + i] & 0xff);
            }
            return v;
        }

        static long getLong(byte[] b, int at) {
            long v = 0;
            for (int i = 0; i < 8; i++) {
                v = (v << 8) | (b[at + i] & 0xff);
            }
            return v;
        }

        static byte[] counter(long v) {
            byte[] b = new byte[8];
            putLong(b, 0, v);
            return b;
        }
    }

    /** An invariant violation. */
    static final class Failure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Failure(String msg) {
            super(msg);
        }
    }

    // ------------------------------------------------------------------ the run

    enum OpKind { PUT, PUT_IF_ABSENT, REMOVE, REPLACE, COMPUTE, MERGE, COMPUTE_IF_PRESENT, ZC_PUT, ZC_REMOVE,
        ZC_REWRITE, GET, ZC_GET, COUNTER_ZC, COUNTER_ZC_IF_PRESENT, COUNTER_MERGE, COUNTER_COMPUTE,
        SCAN_ASC, SCAN_DESC, ZC_SCAN_ASC, ZC_SCAN_DESC, VALIDATE_OWN }

    private final Config cfg;
    private final PrintStream out;
    private final OakMap<Integer, byte[]> map;
    private final int[][] owned;
    private final LongAdder tally = new LongAdder();
    private final AtomicLongArray opCounts = new AtomicLongArray(OpKind.values().length);
    private final LongAdder totalOps = new LongAdder();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final List<Map<Integer, Long>> models = new ArrayList<>();

    StressTool(Config cfg, PrintStream out) {
        this.cfg = cfg;
        this.out = out;
        this.map = new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER, OakCommonTypes.BYTE_ARRAY_SERIALIZER,
                OakCommonTypes.INTEGER_COMPARATOR)
                .chunkCapacity(cfg.chunk)
                .blockSize(8L << 20)
                .keyMemory(cfg.keyMemory)
                .valueMemory(cfg.valueMemory)
                .build();
        List<List<Integer>> lists = new ArrayList<>();
        for (int t = 0; t < cfg.threads; t++) {
            lists.add(new ArrayList<>());
            models.add(new HashMap<>());
        }
        int next = 0;
        for (int k = 0; k < cfg.keys; k++) {
            if (!isStable(k)) {
                lists.get(next++ % cfg.threads).add(k);
            }
        }
        owned = new int[cfg.threads][];
        for (int t = 0; t < cfg.threads; t++) {
            owned[t] = lists.get(t).stream().mapToInt(Integer::intValue).toArray();
        }
    }

    static boolean isStable(int k) {
        return k >= 0 && k % STABLE_EVERY == 0;
    }

    /** Runs the tool; @return the exit status. */
    public static int run(String[] args, PrintStream out) {
        Config cfg;
        try {
            cfg = Config.parse(args);
        } catch (IllegalArgumentException e) {
            if (!"help".equals(e.getMessage())) {
                out.println("error: " + e.getMessage());
            }
            out.println(USAGE);
            return "help".equals(e.getMessage()) ? 0 : 2;
        }
        StressTool tool = new StressTool(cfg, out);
        try {
            return tool.runWorkload();
        } finally {
            tool.map.close();
        }
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out));
    }

    private int runWorkload() {
        out.printf("oak stress: threads=%d seconds=%d keys=%d chunk=%d value-size=%d key-memory=%s value-memory=%s"
                        + " seed=%d (%s, %d cpus)%n",
                cfg.threads, cfg.seconds, cfg.keys, cfg.chunk, cfg.valueSize, cfg.keyMemory, cfg.valueMemory, cfg.seed,
                Runtime.version(), Runtime.getRuntime().availableProcessors());
        for (int k = 0; k < cfg.keys; k++) {
            if (isStable(k)) {
                map.put(k, Value.make(k, 0, cfg.valueSize));
            }
        }
        for (int c = 0; c < COUNTERS; c++) {
            map.put(counterKey(c), Value.counter(0));
        }
        long start = System.nanoTime();
        long deadline = start + TimeUnit.SECONDS.toNanos(cfg.seconds);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < cfg.threads; t++) {
            int id = t;
            long seed = cfg.seed * 1_000_003L + t;
            workers.add(Thread.ofPlatform().name("stress-" + t).start(() -> worker(id, seed)));
        }
        long lastOps = 0;
        long lastTime = start;
        try {
            while (!stop.get() && System.nanoTime() < deadline) {
                long wait = Math.min(TimeUnit.SECONDS.toNanos(cfg.progressSeconds), deadline - System.nanoTime());
                sleepNanos(Math.max(0, wait));
                if (failure.get() != null) {
                    break;
                }
                try {
                    checkCountersWhileRunning();
                } catch (Throwable e) {
                    fail(e);
                    break;
                }
                long now = System.nanoTime();
                long ops = totalOps.sum();
                out.printf("[%5.1fs] %,d ops (%,.0f ops/s), size %,d, counters %,d, off-heap used %,d KiB%n",
                        (now - start) / 1e9, ops, (ops - lastOps) / ((now - lastTime) / 1e9), map.size(), tally.sum(),
                        map.memoryUsed() >> 10);
                lastOps = ops;
                lastTime = now;
            }
        } finally {
            stop.set(true);
        }
        for (Thread w : workers) {
            try {
                w.join(TimeUnit.SECONDS.toMillis(60));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (w.isAlive()) {
                fail(new Failure("worker " + w.getName() + " did not stop within 60 s (hang or livelock)"));
            }
        }
        if (failure.get() == null) {
            try {
                finalChecks();
            } catch (Throwable e) {
                fail(e);
            }
        }
        double secs = (System.nanoTime() - start) / 1e9;
        out.printf("summary: %,d operations in %.1f s (%,.0f ops/s), final size %,d, counter total %,d%n",
                totalOps.sum(), secs, totalOps.sum() / secs, map.size(), tally.sum());
        StringBuilder sb = new StringBuilder("  by kind:");
        for (OpKind k : OpKind.values()) {
            sb.append(' ').append(k.name().toLowerCase()).append('=').append(opCounts.get(k.ordinal()));
        }
        out.println(sb);
        Throwable f = failure.get();
        if (f != null) {
            out.println("FAILED (seed " + cfg.seed + "): " + f);
            f.printStackTrace(out);
            return 1;
        }
        out.println("OK: all invariants held");
        return 0;
    }

    private void fail(Throwable e) {
        failure.compareAndSet(null, e);
        stop.set(true);
    }

    private static void sleepNanos(long nanos) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static int counterKey(int c) {
        return -1 - c;
    }

    private long readCounter(int c) {
        byte[] b = map.get(counterKey(c));
        if (b == null) {
            throw new Failure("counter " + c + " disappeared");
        }
        if (b.length != 8) {
            throw new Failure("counter " + c + " has " + b.length + " bytes");
        }
        return Value.getLong(b, 0);
    }

    /** tally before <= sum of counters <= tally after + increments in flight (one per thread). */
    private void checkCountersWhileRunning() {
        long before = tally.sum();
        long sum = 0;
        for (int c = 0; c < COUNTERS; c++) {
            sum += readCounter(c);
        }
        long after = tally.sum();
        if (sum < before || sum > after + cfg.threads) {
            throw new Failure("counters sum to " + sum + " but the tally was " + before + ".." + after
                    + " (an increment was lost or applied twice)");
        }
    }

    private void finalChecks() {
        long sum = 0;
        for (int c = 0; c < COUNTERS; c++) {
            sum += readCounter(c);
        }
        if (sum != tally.sum()) {
            throw new Failure("final counters sum " + sum + " != " + tally.sum() + " successful increments");
        }
        int expectedSize = COUNTERS;
        for (int k = 0; k < cfg.keys; k++) {
            if (isStable(k)) {
                expectedSize++;
                byte[] v = map.get(k);
                if (v == null || Value.check(k, v, cfg.valueSize) != 0) {
                    throw new Failure("stable key " + k + " lost or changed");
                }
            }
        }
        for (int t = 0; t < cfg.threads; t++) {
            Map<Integer, Long> model = models.get(t);
            expectedSize += model.size();
            for (int k : owned[t]) {
                checkOwned(k, map.get(k), model.get(k), "final check");
            }
        }
        int counted = 0;
        Integer prev = null;
        for (Map.Entry<Integer, byte[]> e : map.entrySet()) {
            if (prev != null && e.getKey() <= prev) {
                throw new Failure("final scan out of order: " + prev + " then " + e.getKey());
            }
            prev = e.getKey();
            counted++;
        }
        if (counted != expectedSize || map.size() != expectedSize) {
            throw new Failure("expected " + expectedSize + " mappings, scan found " + counted + ", size() says " + map.size());
        }
        out.printf("final checks: %d counters sum to %,d = successful increments; %,d mappings = stable + union of %d thread models%n",
                COUNTERS, sum, expectedSize, cfg.threads);
    }

    private void checkOwned(int key, byte[] actual, Long expectedSeq, String ctx) {
        if (expectedSeq == null) {
            if (actual != null) {
                throw new Failure(ctx + ": owned key " + key + " should be absent, found seq "
                        + Value.getLong(actual, 4));
            }
            return;
        }
        if (actual == null) {
            throw new Failure(ctx + ": owned key " + key + " should hold seq " + expectedSeq + ", found nothing");
        }
        long seq = Value.check(key, actual, cfg.valueSize);
        if (seq != expectedSeq) {
            throw new Failure(ctx + ": owned key " + key + " holds seq " + seq + ", expected " + expectedSeq);
        }
    }

    // ------------------------------------------------------------------ workers

    private void worker(int id, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        Map<Integer, Long> model = models.get(id);
        int[] mine = owned[id];
        long seq = 1;
        long ops = 0;
        OpKind[] kinds = OpKind.values();
        try {
            while (!stop.get()) {
                OpKind kind = kinds[rnd.nextInt(kinds.length)];
                if (kind == OpKind.VALIDATE_OWN && rnd.nextInt(50) != 0) {
                    kind = OpKind.GET; // full validation is expensive: do it about 1 time in 1000
                }
                int key = mine.length == 0 ? 0 : mine[rnd.nextInt(mine.length)];
                byte[] fresh = Value.make(key, seq++, cfg.valueSize);
                Long cur = model.get(key);
                String ctx = kind + "(" + key + ")";
                switch (kind) {
                    case PUT -> {
                        checkOwned(key, map.put(key, fresh), cur, ctx);
                        model.put(key, Value.getLong(fresh, 4));
                    }
                    case PUT_IF_ABSENT -> {
                        checkOwned(key, map.putIfAbsent(key, fresh), cur, ctx);
                        if (cur == null) {
                            model.put(key, Value.getLong(fresh, 4));
                        }
                    }
                    case REMOVE -> {
                        checkOwned(key, map.remove(key), cur, ctx);
                        model.remove(key);
                    }
                    case REPLACE -> {
                        checkOwned(key, map.replace(key, fresh), cur, ctx);
                        if (cur != null) {
                            model.put(key, Value.getLong(fresh, 4));
                        }
                    }
                    case COMPUTE -> {
                        boolean removeIt = rnd.nextInt(3) == 0;
                        byte[] r = map.compute(key, (k, old) -> {
                            checkOwned(k, old, cur, ctx + " function argument");
                            return removeIt ? null : fresh;
                        });
                        checkOwned(key, r, removeIt ? null : Value.getLong(fresh, 4), ctx);
                        if (removeIt) {
                            model.remove(key);
                        } else {
                            model.put(key, Value.getLong(fresh, 4));
                        }
                    }
                    case MERGE -> {
                        byte[] r = map.merge(key, fresh, (old, given) -> {
                            checkOwned(key, old, cur, ctx + " function argument");
                            return given;
                        });
                        checkOwned(key, r, Value.getLong(fresh, 4), ctx);
                        model.put(key, Value.getLong(fresh, 4));
                    }
                    case COMPUTE_IF_PRESENT -> {
                        byte[] r = map.computeIfPresent(key, (k, old) -> fresh);
                        checkOwned(key, r, cur == null ? null : Value.getLong(fresh, 4), ctx);
                        if (cur != null) {
                            model.put(key, Value.getLong(fresh, 4));
                        }
                    }
                    case ZC_PUT -> {
                        map.zc().put(key, fresh);
                        model.put(key, Value.getLong(fresh, 4));
                    }
                    case ZC_REMOVE -> {
                        boolean removed = map.zc().remove(key);
                        if (removed != (cur != null)) {
                            throw new Failure(ctx + ": zc remove returned " + removed + " but model has " + cur);
                        }
                        model.remove(key);
                    }
                    case ZC_REWRITE -> {
                        // In-place rewrite of the whole value, byte by byte: readers must never see it torn.
                        boolean ran = map.zc().computeIfPresent(key, buf -> {
                            checkOwned(key, Value.copy(buf), cur, ctx + " in place");
                            for (int i = 0; i < fresh.length; i++) {
                                buf.put(i, fresh[i]);
                            }
                        });
                        if (ran != (cur != null)) {
                            throw new Failure(ctx + ": zc computeIfPresent returned " + ran + " but model has " + cur);
                        }
                        if (ran) {
                            model.put(key, Value.getLong(fresh, 4));
                        }
                    }
                    case GET -> {
                        int any = rnd.nextInt(cfg.keys);
                        byte[] v = map.get(any);
                        if (v != null) {
                            Value.check(any, v, cfg.valueSize);
                        } else if (isStable(any)) {
                            throw new Failure("get(" + any + ") of a stable key returned null");
                        }
                        checkOwned(key, map.get(key), cur, ctx);
                    }
                    case ZC_GET -> {
                        int any = rnd.nextInt(cfg.keys);
                        OakUnscopedBuffer view = map.zc().get(any);
                        if (view == null) {
                            if (isStable(any)) {
                                throw new Failure("zc get(" + any + ") of a stable key returned null");
                            }
                        } else {
                            try {
                                Value.check(any, view.transform(Value::copy), cfg.valueSize);
                            } catch (DeletedMemoryAccessException removedMeanwhile) {
                                if (isStable(any)) {
                                    throw new Failure("view of stable key " + any + " reports deletion");
                                }
                            }
                        }
                        OakUnscopedBuffer own = map.zc().get(key);
                        checkOwned(key, own == null ? null : own.transform(Value::copy), cur, ctx);
                    }
                    case COUNTER_ZC -> {
                        map.zc().putIfAbsentComputeIfPresent(counterKey(rnd.nextInt(COUNTERS)), Value.counter(1),
                                buf -> buf.putLong(0, buf.getLong(0) + 1));
                        tally.increment();
                    }
                    case COUNTER_ZC_IF_PRESENT -> {
                        if (!map.zc().computeIfPresent(counterKey(rnd.nextInt(COUNTERS)),
                                buf -> buf.putLong(0, buf.getLong(0) + 1))) {
                            throw new Failure("a counter was absent");
                        }
                        tally.increment();
                    }
                    case COUNTER_MERGE -> {
                        map.merge(counterKey(rnd.nextInt(COUNTERS)), Value.counter(1),
                                (a, b) -> Value.counter(Value.getLong(a, 0) + Value.getLong(b, 0)));
                        tally.increment();
                    }
                    case COUNTER_COMPUTE -> {
                        map.compute(counterKey(rnd.nextInt(COUNTERS)),
                                (k, v) -> Value.counter(v == null ? 1 : Value.getLong(v, 0) + 1));
                        tally.increment();
                    }
                    case SCAN_ASC, SCAN_DESC, ZC_SCAN_ASC, ZC_SCAN_DESC -> scan(kind, rnd, id, model);
                    case VALIDATE_OWN -> {
                        for (int k : mine) {
                            checkOwned(k, map.get(k), model.get(k), "periodic validation");
                        }
                    }
                }
                opCounts.incrementAndGet(kind.ordinal());
                if ((++ops & 63) == 0) {
                    totalOps.add(64);
                }
            }
        } catch (Throwable e) {
            fail(new Failure("thread " + id + ": " + e).initCause(e));
        }
    }

    /**
     * A scan, ascending or descending, legacy or zero-copy, of one of four shapes: a random range
     * of up to 400 keys; the keys from a random key to the end of the map, from the start of the
     * map to a random key, or the whole map, each of these cut off after up to 400 mappings. The
     * open-ended shapes start at the map's ends (a descending scan of the whole map starts at the
     * last chunk, which a bounded range never does) and stop early, so the first steps of scans
     * are exercised as often as their middles. Checks: strict order, keys within the range, every
     * value whole, every stable key of the part covered returned, and this thread's own keys of
     * that part exactly as in its model (they cannot change during the scan).
     */
    private void scan(OpKind kind, SplittableRandom rnd, int id, Map<Integer, Long> model) {
        boolean desc = kind == OpKind.SCAN_DESC || kind == OpKind.ZC_SCAN_DESC;
        boolean zc = kind == OpKind.ZC_SCAN_ASC || kind == OpKind.ZC_SCAN_DESC;
        int from = rnd.nextInt(cfg.keys);
        int to = Math.min(cfg.keys, from + 1 + rnd.nextInt(400));
        int shape = rnd.nextInt(4);
        NavigableMap<Integer, byte[]> range = switch (shape) {
            case 0 -> map.subMap(from, true, to, false);
            case 1 -> map.tailMap(from, true);
            case 2 -> map.headMap(to, false);
            default -> map;
        };
        int lo = shape == 0 || shape == 1 ? from : -COUNTERS; // the counters lie below every other key
        int hi = shape == 0 || shape == 2 ? to : cfg.keys;
        int limit = shape == 0 ? Integer.MAX_VALUE : 1 + rnd.nextInt(400);
        String what = kind + " [" + lo + "," + hi + ")" + (limit < Integer.MAX_VALUE ? " first " + limit : "");
        OakMap<Integer, byte[]> view = (OakMap<Integer, byte[]>) (desc ? range.descendingMap() : range);
        List<Integer> stableSeen = new ArrayList<>();
        Map<Integer, Long> mineSeen = new HashMap<>();
        int[] prev = {Integer.MIN_VALUE};
        int[] count = {0};
        java.util.function.IntConsumer step = k -> {
            if (count[0] > 0 && (desc ? k >= prev[0] : k <= prev[0])) {
                throw new Failure(what + ": " + prev[0] + " then " + k);
            }
            if (k < lo || k >= hi) {
                throw new Failure(what + ": returned key " + k + " outside the range");
            }
            count[0]++;
            prev[0] = k;
        };
        java.util.function.BiConsumer<Integer, byte[]> visit = (k, v) -> {
            step.accept(k);
            if (k < 0) {
                return; // a counter: 8 bytes, checked by the counter invariant
            }
            long seq = Value.check(k, v, cfg.valueSize);
            if (isStable(k)) {
                stableSeen.add(k);
            } else if (isOwnedBy(k, id)) {
                mineSeen.put(k, seq);
            }
        };
        if (zc) {
            for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : view.zc().entryStreamSet()) {
                if (count[0] == limit) {
                    break;
                }
                int k = e.getKey().transform(OakCommonTypes.INTEGER_SERIALIZER::deserialize);
                if (k < 0) {
                    visit.accept(k, null);
                    continue;
                }
                byte[] v;
                try {
                    v = e.getValue().transform(Value::copy);
                } catch (DeletedMemoryAccessException removedMeanwhile) {
                    if (isStable(k) || isOwnedBy(k, id)) {
                        throw new Failure(kind + ": value of stable or own key " + k + " reported deleted");
                    }
                    step.accept(k);
                    continue;
                }
                visit.accept(k, v);
            }
        } else {
            for (Map.Entry<Integer, byte[]> e : view.entrySet()) {
                if (count[0] == limit) {
                    break;
                }
                visit.accept(e.getKey(), e.getValue());
            }
        }
        // the part of the range the scan covered: all of it, or up to the last key if cut off
        boolean cut = count[0] == limit;
        int coveredLo = cut && desc ? prev[0] : lo;
        int coveredHi = cut && !desc ? prev[0] + 1 : hi;
        int expectedStable = 0;
        for (int k = Math.max(coveredLo, 0); k < coveredHi; k++) {
            if (isStable(k)) {
                expectedStable++;
            }
        }
        if (stableSeen.size() != expectedStable) {
            throw new Failure(what + ": saw " + stableSeen.size() + " stable keys in [" + coveredLo + "," + coveredHi
                    + "), expected " + expectedStable + ": " + stableSeen);
        }
        for (int k : owned[id]) {
            if (k >= coveredLo && k < coveredHi && !java.util.Objects.equals(model.get(k), mineSeen.get(k))) {
                throw new Failure(what + ": own key " + k + " seen with seq " + mineSeen.get(k)
                        + ", model has " + model.get(k));
            }
        }
    }

    private boolean isOwnedBy(int k, int id) {
        return Arrays.binarySearch(owned[id], k) >= 0;
    }
}
