package dev.oakmap.lincheck;

import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.TreeMap;

/**
 * The sequential specification of the Lincheck tests: the same operations as the tests, on a
 * {@link TreeMap}. Lincheck matches operations by name and parameter types, so every test
 * operation has a twin here (a test uses a subset of them).
 */
public class MapSpec {

    protected final TreeMap<Integer, Long> map = new TreeMap<>();

    public MapSpec() {
    }

    /** Used by the scan test, whose maps start with the stable keys. */
    protected MapSpec(int... stableKeys) {
        for (int k : stableKeys) {
            map.put(k, (long) k);
        }
    }

    // ---------------------------------------------------------------- legacy point operations

    public Long get(int key) {
        return map.get(key);
    }

    public boolean containsKey(int key) {
        return map.containsKey(key);
    }

    public Long put(int key, long value) {
        return map.put(key, value);
    }

    public Long putIfAbsent(int key, long value) {
        return map.putIfAbsent(key, value);
    }

    public Long remove(int key) {
        return map.remove(key);
    }

    public boolean removeValue(int key, long value) {
        return map.remove(key, value);
    }

    public Long replace(int key, long value) {
        return map.replace(key, value);
    }

    public boolean replaceValue(int key, long oldValue, long newValue) {
        return map.replace(key, oldValue, newValue);
    }

    public Long computeIfPresent(int key) {
        return map.computeIfPresent(key, (k, v) -> v + 1);
    }

    public Long compute(int key) {
        return map.compute(key, LincheckOps::computeFn);
    }

    public Long merge(int key, long value) {
        return map.merge(key, value, LincheckOps::mergeFn);
    }

    // ---------------------------------------------------------------- zero-copy operations

    public Long zcGet(int key) {
        return map.get(key);
    }

    public boolean zcIncrement(int key) {
        Long v = map.get(key);
        if (v == null) {
            map.put(key, 1L);
            return true;
        }
        map.put(key, v + 1);
        return false;
    }

    public boolean zcComputeIfPresent(int key) {
        return map.computeIfPresent(key, (k, v) -> v + 1) != null;
    }

    public boolean zcIncrementThenFail(int key) {
        return map.containsKey(key); // the failed computer's write is undone
    }

    public boolean zcPutIfAbsent(int key, long value) {
        return map.putIfAbsent(key, value) == null;
    }

    public boolean zcRemove(int key) {
        return map.remove(key) != null;
    }

    // ---------------------------------------------------------------- navigation

    public Integer ceilingKey(int key) {
        return map.ceilingKey(key);
    }

    public Integer floorKey(int key) {
        return map.floorKey(key);
    }

    public Integer higherKey(int key) {
        return map.higherKey(key);
    }

    public Integer lowerKey(int key) {
        return map.lowerKey(key);
    }

    public int firstKey() {
        return map.firstKey();
    }

    public int lastKey() {
        return map.lastKey();
    }

    public String firstEntry() {
        return LincheckOps.entry(map.firstEntry());
    }

    public String lastEntry() {
        return LincheckOps.entry(map.lastEntry());
    }

    public String ceilingEntry(int key) {
        return LincheckOps.entry(map.ceilingEntry(key));
    }

    public String floorEntry(int key) {
        return LincheckOps.entry(map.floorEntry(key));
    }

    public String tailFirstEntry(int key) {
        return LincheckOps.entry(map.tailMap(key, false).firstEntry());
    }

    public String headLastEntry(int key) {
        return LincheckOps.entry(map.headMap(key, false).lastEntry());
    }

    // ---------------------------------------------------------------- scan test (see OakMapScanLincheckTest)

    public List<String> scanAscending(int gap) {
        return LincheckOps.render(map.subMap(2 * gap, true, 2 * gap + 2, true));
    }

    public List<String> scanDescending(int gap) {
        return LincheckOps.render(map.subMap(2 * gap, true, 2 * gap + 2, true).descendingMap());
    }

    public List<Integer> zcScanKeys(int gap) {
        return List.copyOf(map.subMap(2 * gap, true, 2 * gap + 2, true).keySet());
    }

    public List<Integer> zcStreamKeysAscending(int gap) {
        return zcScanKeys(gap);
    }

    public List<Integer> zcStreamKeysDescending(int gap) {
        return List.copyOf(map.subMap(2 * gap, true, 2 * gap + 2, true).descendingKeySet());
    }

    public List<Integer> descendingKeySetScan(int gap) {
        return List.copyOf(map.subMap(2 * gap, true, 2 * gap + 2, true).descendingKeySet());
    }

    public Integer gapCeiling(int gap) {
        return map.ceilingKey(2 * gap + 1);
    }

    public Integer gapFloor(int gap) {
        return map.floorKey(2 * gap + 1);
    }

    public Integer gapHigher(int gap) {
        return map.higherKey(2 * gap);
    }

    public Integer gapLower(int gap) {
        return map.lowerKey(2 * gap + 2);
    }

    public int gapFirstKey(int gap) {
        NavigableMap<Integer, Long> inner = map.subMap(2 * gap, false, 2 * gap + 2, false);
        if (inner.isEmpty()) {
            throw new NoSuchElementException();
        }
        return inner.firstKey();
    }

    public String gapPollFirst(int gap) {
        Map.Entry<Integer, Long> e = map.subMap(2 * gap, false, 2 * gap + 2, false).pollFirstEntry();
        return e == null ? null : e.getKey() + "=" + e.getValue();
    }

    public Long gapPut(int gap, long value) {
        return map.put(2 * gap + 1, value);
    }

    public Long gapRemove(int gap) {
        return map.remove(2 * gap + 1);
    }

    public boolean gapIncrement(int gap) {
        return zcIncrement(2 * gap + 1);
    }

    public Long gapCompute(int gap) {
        return compute(2 * gap + 1);
    }
}
