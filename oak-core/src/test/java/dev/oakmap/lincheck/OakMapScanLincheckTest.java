package dev.oakmap.lincheck;

import dev.oakmap.OakMap;
import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.common.OakCommonTypes;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Scans and navigation under Lincheck, over ranges where Oak's weak scan guarantee and
 * linearizability coincide.
 *
 * <h2>Why restricted ranges</h2>
 * Oak promises for scans only that every mapping present throughout the scan is returned exactly
 * once, in order, and no mapping absent throughout is returned. A scan over several keys that
 * change concurrently is therefore not linearizable (it may see a later insertion of one key and
 * miss an earlier one of another), and a sequential specification would reject correct
 * executions. But when a range holds <em>stable</em> keys (never changed during the scenario) and
 * at most <em>one</em> key that changes, the weak guarantee says exactly: all stable keys, in
 * order, once each, plus the changing key at most once, with a value it held at some moment during
 * the scan, which is what a linearizable scan would return. So every violation of the weak
 * guarantee on such a range (a stable key missed or repeated, order broken, a value never held, a
 * removed key reported) is a linearizability failure here.
 *
 * <h2>Layout</h2>
 * Stable keys 0, 2, 4, 6, 8 are put by the constructor and never touched by an update. Updates
 * ({@code put, remove, compute, zero-copy increment}) touch only the odd keys 1, 3, 5, 7, chosen
 * by a "gap" g in 0..3 (key 2g+1). Scans and navigation queries take a gap and read the range
 * [2g, 2g+2], which has exactly one changing key: ascending and descending entry scans, zero-copy
 * key scans (ascending {@code keySet}, stream {@code keyStreamSet} both ways), the legacy
 * {@code descendingKeySet}, {@code ceilingKey/floorKey/higherKey/lowerKey} around the gap, and
 * {@code firstKey()} / {@code pollFirstEntry()} of the open sub-map (2g, 2g+2). With chunks of 4,
 * the 5 to 9 keys span 2 to 4 chunks, so scans cross chunk boundaries, and chunks are split and
 * merged as odd keys come and go.
 *
 * <p>Scans over arbitrary ranges (all keys changing) are checked against the weak guarantee by
 * {@code ScanGuaranteeTest} (stress) and single-threaded against a TreeMap by the jqwik fuzz tests.
 */
@Param(name = "gap", gen = IntGen.class, conf = "0:3")
@Param(name = "key", gen = IntGen.class, conf = "0:8")
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class OakMapScanLincheckTest implements LincheckTestBase.BothModes {

    static final int[] STABLE = {0, 2, 4, 6, 8};

    private final OakMap<Integer, Long> map = LincheckMaps.open();

    public OakMapScanLincheckTest() {
        for (int k : STABLE) {
            map.put(k, (long) k);
        }
    }

    public static class Spec extends MapSpec {
        public Spec() {
            super(STABLE);
        }
    }

    private OakMap<Integer, Long> gapRange(int gap) {
        return map.subMap(2 * gap, true, 2 * gap + 2, true);
    }

    // ---------------------------------------------------------------- updates of odd keys

    @Operation
    public Long gapPut(@Param(name = "gap") int gap, @Param(name = "value") long value) {
        return map.put(2 * gap + 1, value);
    }

    @Operation
    public Long gapRemove(@Param(name = "gap") int gap) {
        return map.remove(2 * gap + 1);
    }

    @Operation
    public boolean gapIncrement(@Param(name = "gap") int gap) {
        return map.zc().putIfAbsentComputeIfPresent(2 * gap + 1, 1L, LincheckMaps::increment);
    }

    @Operation
    public Long gapCompute(@Param(name = "gap") int gap) {
        return map.compute(2 * gap + 1, LincheckOps::computeFn);
    }

    @Operation
    public String gapPollFirst(@Param(name = "gap") int gap) {
        Map.Entry<Integer, Long> e = map.subMap(2 * gap, false, 2 * gap + 2, false).pollFirstEntry();
        return e == null ? null : e.getKey() + "=" + e.getValue();
    }

    // ---------------------------------------------------------------- reads

    @Operation
    public Long get(@Param(name = "key") int key) {
        return map.get(key);
    }

    @Operation
    public List<String> scanAscending(@Param(name = "gap") int gap) {
        return LincheckOps.render(gapRange(gap));
    }

    @Operation
    public List<String> scanDescending(@Param(name = "gap") int gap) {
        return LincheckOps.render(gapRange(gap).descendingMap());
    }

    /** Reads every key view in iteration order, each before the iterator moves on. */
    private static List<Integer> decode(Iterable<OakUnscopedBuffer> keys) {
        List<Integer> out = new ArrayList<>();
        for (OakUnscopedBuffer k : keys) {
            out.add(k.transform(OakCommonTypes.INTEGER_SERIALIZER::deserialize));
        }
        return out;
    }

    @Operation
    public List<Integer> zcScanKeys(@Param(name = "gap") int gap) {
        return decode(gapRange(gap).zc().keySet());
    }

    /** Keys read in place by the stream scan (no copy), protected while the scan is on them. */
    @Operation
    public List<Integer> zcStreamKeysAscending(@Param(name = "gap") int gap) {
        return decode(gapRange(gap).zc().keyStreamSet());
    }

    @Operation
    public List<Integer> zcStreamKeysDescending(@Param(name = "gap") int gap) {
        return decode(gapRange(gap).descendingMap().zc().keyStreamSet());
    }

    @Operation
    public List<Integer> descendingKeySetScan(@Param(name = "gap") int gap) {
        return new ArrayList<>(gapRange(gap).descendingKeySet());
    }

    @Operation
    public Integer gapCeiling(@Param(name = "gap") int gap) {
        return map.ceilingKey(2 * gap + 1);
    }

    @Operation
    public Integer gapFloor(@Param(name = "gap") int gap) {
        return map.floorKey(2 * gap + 1);
    }

    @Operation
    public Integer gapHigher(@Param(name = "gap") int gap) {
        return map.higherKey(2 * gap);
    }

    @Operation
    public Integer gapLower(@Param(name = "gap") int gap) {
        return map.lowerKey(2 * gap + 2);
    }

    @Operation
    public int gapFirstKey(@Param(name = "gap") int gap) {
        return map.subMap(2 * gap, false, 2 * gap + 2, false).firstKey();
    }

    // ---------------------------------------------------------------- the checks

    // Sized for CI (about 20 s here); -Doak.lincheck.scale=N multiplies the iterations for longer runs.
    @Override
    public Checks checks() {
        return Checks.against(Spec.class).modelChecking(30, 50).stress(20, 500);
    }
}
