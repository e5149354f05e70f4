package dev.oakmap;

import dev.oakmap.TestMaps.Blob;
import dev.oakmap.TestMaps.Task;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * The scan guarantees of the Oak paper (§4.2), checked under concurrent inserts, removes and
 * value replacements, with chunks of 8 entries so that every scan crosses many rebalances:
 *
 * <ol>
 *   <li>a scan returns every key in its range that is present throughout the scan;</li>
 *   <li>it never returns a key that was never present;</li>
 *   <li>it never returns a key twice, and returns keys strictly in its direction's order;</li>
 *   <li>(ours) every value it returns is well-formed and belongs to its key.</li>
 * </ol>
 *
 * Keys are split by residue modulo 4: {@code 0} stable (present all the time; their values are
 * replaced, grown and updated in place), {@code 1} and {@code 2} volatile (inserted and removed
 * all the time), {@code 3} never inserted.
 */
class ScanGuaranteeTest {

    private static final int CHUNK = 8;
    private static final int UNIVERSE = 2400;
    private static final long TIMEOUT_S = 120;

    static Stream<Long> seeds() {
        return java.util.Arrays.stream(TestMaps.seeds(3L, 0xBEEFL, 424242L, 77L)).boxed();
    }

    static boolean stable(int k) {
        return (k & 3) == 0;
    }

    static boolean never(int k) {
        return (k & 3) == 3;
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void scansKeepGuaranteesUnderChurn(long seed) throws Exception {
        runScenario(seed, 2, 2, 300 * TestMaps.scale());
    }

    /** One writer, three scanners: scans see bursts of removals (merges) and insertions (splits). */
    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void manyScannersOneWriter(long seed) throws Exception {
        runScenario(seed ^ 0x5555, 1, 3, 200 * TestMaps.scale());
    }

    /**
     * Same as {@link #scansKeepGuaranteesUnderChurn}, but stable keys are only updated in place
     * with values of the same size, so no value ever moves: only inserts, removes and the
     * rebalances they cause race with the scans. Tells a failure caused by rebalancing apart from
     * one caused by value moves.
     */
    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void scansKeepGuaranteesWithoutValueMoves(long seed) throws Exception {
        runScenario(seed ^ 0xAAAA, 2, 2, 200 * TestMaps.scale(), false);
    }

    /**
     * No insertions or removals at all (so no rebalance is triggered): all keys are stable and a
     * writer keeps replacing their values with ones of alternating small and large sizes, so that
     * every put moves the value to another slice. Every scan must return every key. Isolates the
     * handling of value moves in the cursors from rebalancing.
     */
    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void scansReturnEveryKeyWhileValuesMove(long seed) throws Exception {
        final int n = 600;
        String ctx = "value moves seed=" + seed;
        try (OakMap<Integer, Blob> map = TestMaps.intBlobMap(CHUNK)) {
            for (int k = 0; k < n; k++) {
                map.put(4 * k, new Blob(4 * k, 0, 8));
            }
            AtomicBoolean done = new AtomicBoolean();
            AtomicLong moves = new AtomicLong();
            List<Task> scanners = new ArrayList<>();
            for (int s = 0; s < 2; s++) {
                Random rnd = new Random(seed + s);
                scanners.add(() -> {
                    for (int i = 0; i < 500 * TestMaps.scale(); i++) {
                        boolean desc = rnd.nextBoolean();
                        boolean zcScan = rnd.nextBoolean();
                        List<Integer> seen = new ArrayList<>(n);
                        if (zcScan) {
                            OakZeroCopyMap<Integer, Blob> zc = (desc ? map.descendingMap() : map).zc();
                            for (OakUnscopedBuffer kb : zc.keySet()) {
                                seen.add(TestMaps.readIntKey(kb));
                            }
                        } else {
                            for (Map.Entry<Integer, Blob> e : (desc ? map.descendingMap() : map).entrySet()) {
                                e.getValue().ofKey(e.getKey());
                                seen.add(e.getKey());
                            }
                        }
                        if (seen.size() != n) {
                            java.util.Set<Integer> got = new java.util.HashSet<>(seen);
                            List<Integer> missing = new ArrayList<>();
                            for (int k = 0; k < n && missing.size() < 10; k++) {
                                if (!got.contains(4 * k)) {
                                    missing.add(4 * k);
                                }
                            }
                            throw new AssertionError(ctx + " scan#" + i + " (" + (desc ? "descending" : "ascending")
                                    + (zcScan ? " zc().keySet()" : " entrySet()") + "): returned " + seen.size()
                                    + " of " + n + " keys, all present throughout; missing (first 10): " + missing);
                        }
                    }
                });
            }
            List<Task> all = TestMaps.signalWhenDone(scanners, done);
            all.add(() -> {
                Random rnd = new Random(seed ^ 0x77);
                long i = 0;
                while (!done.get()) {
                    int k = 4 * rnd.nextInt(n);
                    map.put(k, new Blob(k, ++i, (i & 1) == 0 ? 8 : 200 + rnd.nextInt(200)));
                }
                moves.set(i);
            });
            long t0 = System.nanoTime();
            TestMaps.runConcurrently(ctx, TIMEOUT_S, all);
            System.out.printf("%s: %d value moves during %d scans, %d ms%n", ctx, moves.get(),
                    2 * 500 * TestMaps.scale(), (System.nanoTime() - t0) / 1_000_000);
        }
    }

    private void runScenario(long seed, int writers, int scanners, int scansPerScanner) throws Exception {
        runScenario(seed, writers, scanners, scansPerScanner, true);
    }

    private void runScenario(long seed, int writers, int scanners, int scansPerScanner, boolean moveStable)
            throws Exception {
        String ctx = "scan seed=" + seed + " writers=" + writers + " scanners=" + scanners
                + (moveStable ? "" : " (no value moves)");
        try (OakMap<Integer, Blob> map = TestMaps.intBlobMap(CHUNK)) {
            Random init = new Random(seed);
            for (int k = 0; k < UNIVERSE; k++) {
                if (stable(k) || (!never(k) && init.nextBoolean())) {
                    map.put(k, new Blob(k, 0, init.nextInt(30)));
                }
            }
            AtomicBoolean done = new AtomicBoolean();
            AtomicLong writes = new AtomicLong();
            AtomicLong relaxed = new AtomicLong();
            AtomicLong returned = new AtomicLong();
            List<Task> scannerTasks = new ArrayList<>();
            for (int s = 0; s < scanners; s++) {
                Random rnd = new Random(seed * 131 + s);
                int sid = s;
                scannerTasks.add(() -> {
                    for (int i = 0; i < scansPerScanner; i++) {
                        Scan scan = Scan.random(map, rnd);
                        try {
                            returned.addAndGet(scan.runAndCheck(ctx + " scanner=" + sid + " scan#" + i));
                        } catch (RelaxedScan r) {
                            relaxed.incrementAndGet();
                        }
                    }
                });
            }
            List<Task> all = TestMaps.signalWhenDone(scannerTasks, done);
            for (int w = 0; w < writers; w++) {
                Random rnd = new Random(seed * 977 + w);
                int wid = w;
                all.add(() -> writer(map, rnd, wid, moveStable, done, writes));
            }
            long t0 = System.nanoTime();
            TestMaps.runConcurrently(ctx, TIMEOUT_S, all);
            // and once more, quiescent, every kind of scan
            for (int kind = 0; kind < Scan.KINDS; kind++) {
                Scan scan = Scan.of(map, init, kind);
                scan.runAndCheck(ctx + " final scan kind " + kind);
            }
            for (int k = 0; k < UNIVERSE; k += 4) {
                Blob b = map.get(k);
                if (b == null) {
                    throw new AssertionError(ctx + ": stable key " + k + " missing at the end");
                }
                b.ofKey(k);
            }
            System.out.printf("%s: %d scans (%d relaxed by concurrent zc value removal), %d keys returned, "
                            + "%d writes, %d ms%n", ctx, scanners * scansPerScanner, relaxed.get(), returned.get(),
                    writes.get(), (System.nanoTime() - t0) / 1_000_000);
        }
    }

    /**
     * Inserts and removes volatile keys (in bursts, so chunks split and merge) and replaces,
     * grows and updates in place the values of stable keys, never removing a stable key.
     */
    private static void writer(OakMap<Integer, Blob> map, Random rnd, int wid, boolean moveStable,
                               AtomicBoolean done, AtomicLong writes) {
        OakZeroCopyMap<Integer, Blob> zc = map.zc();
        long seq = ((long) wid + 1) << 40;
        long n = 0;
        while (!done.get()) {
            // phases: insert-heavy, then remove-heavy, over a random window of the key space
            boolean inserting = rnd.nextBoolean();
            int base = rnd.nextInt(UNIVERSE);
            int width = 16 + rnd.nextInt(400);
            for (int j = 0; j < 200 && !done.get(); j++) {
                int k = Math.min(UNIVERSE - 1, base + rnd.nextInt(width));
                if (never(k)) {
                    k--;
                }
                Blob v = new Blob(k, ++seq, rnd.nextInt(6) == 0 ? 60 + rnd.nextInt(200) : rnd.nextInt(30));
                int kk = k;
                if (stable(k)) {
                    switch (moveStable ? rnd.nextInt(5) : 2) {
                        case 0 -> map.put(k, v).ofKey(k);
                        case 1 -> zc.put(k, v);
                        case 2 -> zc.computeIfPresent(k, b -> {
                            Blob o = Blob.read(b).ofKey(kk);
                            new Blob(kk, o.seq() + 1, o.len()).write(b);
                        });
                        case 3 -> map.compute(k, (x, o) -> new Blob(kk, o.seq() + 1, (o.len() + 7) % 250));
                        default -> map.merge(k, v, (a, b) -> b);
                    }
                } else if (inserting == (rnd.nextInt(4) != 0)) {
                    switch (rnd.nextInt(4)) {
                        case 0 -> map.put(k, v);
                        case 1 -> map.putIfAbsent(k, v);
                        case 2 -> zc.putIfAbsentComputeIfPresent(k, v, b -> { });
                        default -> map.computeIfAbsent(k, x -> v);
                    }
                } else {
                    switch (rnd.nextInt(4)) {
                        case 0 -> map.remove(k);
                        case 1 -> zc.remove(k);
                        case 2 -> map.compute(k, (x, o) -> null);
                        default -> map.computeIfPresent(k, (x, o) -> null);
                    }
                }
                n++;
            }
        }
        writes.addAndGet(n);
    }

    /** Thrown by a zero-copy value scan that could not read a value because it was removed meanwhile. */
    static final class RelaxedScan extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RelaxedScan() {
            super(null, null, false, false);
        }
    }

    /** A scan: a view, its bounds in key order, its direction and how its elements are read. */
    static final class Scan {
        static final int KINDS = 12;

        final String name;
        final Integer lo;
        final boolean loInc;
        final Integer hi;
        final boolean hiInc;
        final boolean descending;
        final Iterator<?> it;
        final int kind;

        Scan(String name, Integer lo, boolean loInc, Integer hi, boolean hiInc, boolean descending, Iterator<?> it,
             int kind) {
            this.name = name;
            this.lo = lo;
            this.loInc = loInc;
            this.hi = hi;
            this.hiInc = hiInc;
            this.descending = descending;
            this.it = it;
            this.kind = kind;
        }

        static Scan random(OakMap<Integer, Blob> map, Random rnd) {
            return of(map, rnd, rnd.nextInt(KINDS));
        }

        static Scan of(OakMap<Integer, Blob> map, Random rnd, int what) {
            int a = rnd.nextInt(UNIVERSE + 10) - 5;
            int b = rnd.nextInt(UNIVERSE + 10) - 5;
            // mostly short ranges, sometimes long ones
            if (rnd.nextInt(3) != 0) {
                b = a + rnd.nextInt(80);
            }
            int lo = Math.min(a, b);
            int hi = Math.max(a, b);
            boolean li = rnd.nextBoolean();
            boolean hiI = rnd.nextBoolean();
            boolean desc = rnd.nextBoolean();
            // the view whose iterator we take, and its bounds
            ConcurrentNavigableMap<Integer, Blob> view;
            Integer vlo = null;
            Integer vhi = null;
            boolean vli = true;
            boolean vhiI = true;
            String vname;
            switch (rnd.nextInt(5)) {
                case 0 -> {
                    view = map;
                    vname = "map";
                }
                case 1 -> {
                    view = map.subMap(lo, li, hi, hiI);
                    vlo = lo;
                    vhi = hi;
                    vli = li;
                    vhiI = hiI;
                    vname = "subMap(" + lo + "," + li + "," + hi + "," + hiI + ")";
                }
                case 2 -> {
                    view = map.headMap(hi, hiI);
                    vhi = hi;
                    vhiI = hiI;
                    vname = "headMap(" + hi + "," + hiI + ")";
                }
                case 3 -> {
                    view = map.tailMap(lo, li);
                    vlo = lo;
                    vli = li;
                    vname = "tailMap(" + lo + "," + li + ")";
                }
                default -> {
                    // bounds given in descending order to a descending view, then flipped back
                    view = map.descendingMap().subMap(hi, hiI, lo, li).descendingMap();
                    vlo = lo;
                    vhi = hi;
                    vli = li;
                    vhiI = hiI;
                    vname = "descendingMap().subMap(" + hi + "," + hiI + "," + lo + "," + li + ").descendingMap()";
                }
            }
            ConcurrentNavigableMap<Integer, Blob> dir = desc ? view.descendingMap() : view;
            String dname = vname + (desc ? ".descendingMap()" : "");
            Iterator<?> it;
            String how;
            switch (what) {
                case 0 -> {
                    it = dir.entrySet().iterator();
                    how = ".entrySet()";
                }
                case 1 -> {
                    it = dir.keySet().iterator();
                    how = ".keySet()";
                }
                case 2 -> {
                    it = desc ? view.descendingKeySet().iterator() : view.navigableKeySet().iterator();
                    how = desc ? "[view].descendingKeySet()" : "[view].navigableKeySet()";
                }
                case 3 -> {
                    it = desc ? view.navigableKeySet().descendingIterator() : view.keySet().iterator();
                    how = desc ? "[view].navigableKeySet().descendingIterator()" : "[view].keySet()";
                }
                case 4 -> {
                    it = dir.values().iterator();
                    how = ".values()";
                }
                case 5 -> {
                    it = dir.entrySet().stream().iterator();
                    how = ".entrySet().stream()";
                }
                default -> {
                    if (!(dir instanceof OakMap<Integer, Blob> oak)) {
                        it = dir.entrySet().iterator();
                        how = ".entrySet() (view is not an OakMap, no zc())";
                        what = 0;
                    } else {
                        OakZeroCopyMap<Integer, Blob> zc = oak.zc();
                        switch (what) {
                            case 6 -> {
                                it = zc.keySet().iterator();
                                how = ".zc().keySet()";
                            }
                            case 7 -> {
                                it = zc.keyStreamSet().iterator();
                                how = ".zc().keyStreamSet()";
                            }
                            case 8 -> {
                                it = zc.entrySet().iterator();
                                how = ".zc().entrySet()";
                            }
                            case 9 -> {
                                it = zc.entryStreamSet().iterator();
                                how = ".zc().entryStreamSet()";
                            }
                            case 10 -> {
                                it = zc.values().iterator();
                                how = ".zc().values()";
                            }
                            default -> {
                                it = zc.valueStreamSet().iterator();
                                how = ".zc().valueStreamSet()";
                            }
                        }
                    }
                }
            }
            return new Scan(dname + how, vlo, vli, vhi, vhiI, desc, it, what);
        }

        boolean inRange(int k) {
            if (lo != null && (loInc ? k < lo : k <= lo)) {
                return false;
            }
            return hi == null || (hiInc ? k <= hi : k < hi);
        }

        /** Reads the key of one element, validating its value where there is one. */
        @SuppressWarnings("unchecked")
        int keyOf(Object o) {
            switch (kind) {
                case 0, 5 -> {
                    Map.Entry<Integer, Blob> e = (Map.Entry<Integer, Blob>) o;
                    int k = e.getKey();
                    Blob v = e.getValue();
                    if (v == null) {
                        throw new AssertionError("null value for key " + k);
                    }
                    v.ofKey(k);
                    return k;
                }
                case 1, 2, 3 -> {
                    return (Integer) o;
                }
                case 4 -> {
                    return ((Blob) o).key();
                }
                case 6, 7 -> {
                    return readKeyView((OakUnscopedBuffer) o);
                }
                case 8, 9 -> {
                    Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e = (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>) o;
                    int k = readKeyView(e.getKey());
                    try {
                        // single getters are atomic, but only transform() reads several consistently
                        int owner = e.getValue().getInt(0);
                        if (owner != k) {
                            throw new TestMaps.CorruptValueException("value view of key " + k
                                    + " reads the key field " + owner);
                        }
                        e.getValue().transform(Blob::read).ofKey(k);
                    } catch (DeletedMemoryAccessException removed) {
                        // the value was removed or moved since the iterator stepped on it: fine
                        if (stable(k)) {
                            relaxedStable = true;
                        }
                    }
                    return k;
                }
                default -> {
                    try {
                        return ((OakUnscopedBuffer) o).transform(Blob::read).key();
                    } catch (DeletedMemoryAccessException removed) {
                        // a value view that can no longer be read: we do not know its key
                        throw new RelaxedScan();
                    }
                }
            }
        }

        boolean relaxedStable;

        /**
         * Reads a key view. The contract only promises key views while their mapping exists; if
         * the mapping was removed meanwhile and the view says so, we cannot tell which key it was,
         * so the scan's completeness check is skipped (counted as relaxed).
         */
        /**
         * Key views never throw: {@code keySet()} views hold a copy, and a stream scan keeps the
         * key it is on from being reclaimed.
         */
        private static int readKeyView(OakUnscopedBuffer b) {
            try {
                return TestMaps.readIntKey(b);
            } catch (DeletedMemoryAccessException removed) {
                throw new AssertionError("a scan's key view became unreadable: " + removed.getMessage(), removed);
            }
        }

        /** Runs the scan to its end and checks the guarantees. @return the number of elements */
        int runAndCheck(String ctx) {
            String where = ctx + " " + name + " [lo=" + lo + (loInc ? " incl" : " excl") + ", hi=" + hi
                    + (hiInc ? " incl" : " excl") + "]";
            List<Integer> seen = new ArrayList<>();
            Integer prev = null;
            while (it.hasNext()) {
                Object o = it.next();
                int k;
                try {
                    k = keyOf(o);
                } catch (TestMaps.CorruptValueException e) {
                    throw new AssertionError(where + ": malformed element after " + seen.size() + " elements (last "
                            + prev + "): " + e.getMessage(), e);
                }
                if (k < 0 || k >= UNIVERSE || never(k)) {
                    throw new AssertionError(where + ": returned key " + k + " that was never inserted");
                }
                if (!inRange(k)) {
                    throw new AssertionError(where + ": returned key " + k + " out of the view's range");
                }
                if (prev != null && (descending ? k >= prev : k <= prev)) {
                    throw new AssertionError(where + ": order violated (descending=" + descending + "): " + prev
                            + " then " + k + (k == prev ? " (duplicate)" : "") + "; tail of scan: "
                            + seen.subList(Math.max(0, seen.size() - 10), seen.size()));
                }
                prev = k;
                seen.add(k);
            }
            // every stable key in range must have been returned (exactly once, by strict order)
            int from = lo == null ? 0 : lo;
            int to = hi == null ? UNIVERSE - 1 : Math.min(hi, UNIVERSE - 1);
            List<Integer> missing = new ArrayList<>();
            java.util.Set<Integer> got = new java.util.HashSet<>(seen);
            for (int k = Math.max(0, from - (from & 3)); k <= to; k += 4) {
                if (inRange(k) && !got.contains(k)) {
                    missing.add(k);
                }
            }
            if (!missing.isEmpty()) {
                throw new AssertionError(where + ": missed " + missing.size() + " stable keys present throughout, "
                        + "first: " + missing.subList(0, Math.min(10, missing.size())) + "; returned "
                        + seen.size() + " keys");
            }
            return seen.size();
        }
    }
}
