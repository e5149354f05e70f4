package dev.oakmap.lincheck;

import dev.oakmap.MemoryScheme;
import dev.oakmap.OakMap;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.AbstractMap.SimpleImmutableEntry;

/**
 * Point updates in the forms no other Lincheck test calls, and through views, against a TreeMap:
 * {@code computeIfAbsent}, the zero-copy {@code put}, {@code keySet().remove} (which removes
 * without reading the value), {@code entrySet().remove(entry)}, {@code putIfAbsent} of the
 * descending map, {@code remove} and {@code merge} of a bounded sub-map, {@code compute} of a
 * tail map, {@code replace} of a head map, {@code getOrDefault}, {@code containsKey} of the
 * descending map; with {@code get}, {@code remove}, the in-place zero-copy increment and
 * {@code pollFirstEntry}. Keys outside a view are not passed to its updates (the operation
 * returns -1 instead): {@code ConcurrentSkipListMap}'s sub-maps throw for them, as Oak's do,
 * where a TreeMap's may not. In stress mode under every scheme, in model-checking mode under
 * Nova; chunks of 4 entries.
 */
@Param(name = "key", gen = IntGen.class, conf = "1:5")
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class ViewUpdatesLincheckTest implements LincheckTestBase {
    private final OakMap<Integer, Long> map = LincheckMaps.open();

    public ViewUpdatesLincheckTest() {
        map.put(2, 1L);
        map.put(4, 2L);
    }

    public static class Spec extends MapSpec {
        public Spec() {
            map.put(2, 1L);
            map.put(4, 2L);
        }
        public Long computeIfAbsent(int key, long value) { return map.computeIfAbsent(key, k -> value); }
        public boolean zcPut(int key, long value) { map.put(key, value); return true; }
        public boolean keySetRemove(int key) { return map.keySet().remove(key); }
        public boolean entrySetRemove(int key, long value) { return map.entrySet().remove(new SimpleImmutableEntry<>(key, value)); }
        public Long descPutIfAbsent(int key, long value) { return map.descendingMap().putIfAbsent(key, value); }
        public Long subRemove(int key) { return map.subMap(2, true, 4, true).remove(key); }
        public Long subMerge(int key, long value) {
            if (key < 2 || key > 4) { return -1L; }
            return map.subMap(2, true, 4, true).merge(key, value, LincheckOps::mergeFn);
        }
        public Long tailCompute(int key) {
            if (key < 3) { return -1L; }
            return map.tailMap(3, true).compute(key, LincheckOps::computeFn);
        }
        public Long getOrDefault(int key) { return map.getOrDefault(key, -1L); }
        public boolean descContainsKey(int key) { return map.descendingMap().containsKey(key); }
        public Long headReplace(int key, long value) {
            if (key >= 4) { return -1L; } // out of range: ConcurrentSkipListMap (and Oak) throw
            return map.headMap(4, false).replace(key, value);
        }
        public boolean zcIncrement(int key) { return super.zcIncrement(key); }
        public String pollFirst() { return LincheckOps.entry(map.pollFirstEntry()); }
    }

    @Operation public Long get(@Param(name = "key") int key) { return map.get(key); }
    @Operation public Long remove(@Param(name = "key") int key) { return map.remove(key); }
    @Operation public Long computeIfAbsent(@Param(name = "key") int key, @Param(name = "value") long value) { return map.computeIfAbsent(key, k -> value); }
    @Operation public boolean zcPut(@Param(name = "key") int key, @Param(name = "value") long value) { map.zc().put(key, value); return true; }
    @Operation public boolean keySetRemove(@Param(name = "key") int key) { return map.keySet().remove(key); }
    @Operation public boolean entrySetRemove(@Param(name = "key") int key, @Param(name = "value") long value) { return map.entrySet().remove(new SimpleImmutableEntry<>(key, value)); }
    @Operation public Long descPutIfAbsent(@Param(name = "key") int key, @Param(name = "value") long value) { return map.descendingMap().putIfAbsent(key, value); }
    @Operation public Long subRemove(@Param(name = "key") int key) { return map.subMap(2, true, 4, true).remove(key); }
    @Operation public Long subMerge(@Param(name = "key") int key, @Param(name = "value") long value) {
        if (key < 2 || key > 4) { return -1L; }
        return map.subMap(2, true, 4, true).merge(key, value, LincheckOps::mergeFn);
    }
    @Operation public Long tailCompute(@Param(name = "key") int key) {
        if (key < 3) { return -1L; }
        return map.tailMap(3, true).compute(key, LincheckOps::computeFn);
    }
    @Operation public Long getOrDefault(@Param(name = "key") int key) { return map.getOrDefault(key, -1L); }
    @Operation public boolean descContainsKey(@Param(name = "key") int key) { return map.descendingMap().containsKey(key); }
    @Operation public Long headReplace(@Param(name = "key") int key, @Param(name = "value") long value) {
        if (key >= 4) { return -1L; }
        return map.headMap(4, false).replace(key, value);
    }
    @Operation public boolean zcIncrement(@Param(name = "key") int key) { return map.zc().putIfAbsentComputeIfPresent(key, 1L, LincheckMaps::increment); }
    @Operation public String pollFirst() { return LincheckOps.entry(map.pollFirstEntry()); }

    // Sized for CI; -Doak.lincheck.scale=N multiplies the iterations.
    @ParameterizedTest(name = "keys={0} values={1}")
    @CsvSource({"NOVA, NOVA", "LOCK_BASED, LOCK_BASED", "GROW_ONLY, GROW_ONLY"})
    void stress(MemoryScheme keys, MemoryScheme values) {
        LincheckMaps.withSchemes(keys, values, () -> LincheckMaps.stress(ViewUpdatesLincheckTest.class,
                Spec.class, 10 * LincheckMaps.scale(), 200));
    }

    @Test
    void modelChecking() {
        LincheckMaps.modelCheck(ViewUpdatesLincheckTest.class, Spec.class, 6 * LincheckMaps.scale(), 40);
    }
}
