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

import java.util.NavigableMap;

/**
 * Navigation through views, against a TreeMap: {@code lowerKey/higherKey} of the map and of its
 * {@code descendingMap()} (where they swap directions), {@code firstEntry/ceilingEntry} of the
 * descending map, the first and last entries and {@code isEmpty} of bounded sub-maps (inclusive
 * and exclusive ends), {@code lowerEntry} of a tail map and {@code higherEntry} of a head map
 * (keys outside the view clamp to its end), a descending sub-map's {@code lowerKey}, the whole
 * map's {@code isEmpty}, and {@code getOrDefault}; while keys come and go by {@code put},
 * {@code remove}, {@code remove(k, v)}, the zero-copy remove, and {@code compute} and
 * {@code merge} whose functions remove (null) as well as insert and update.
 * {@link OakMapNavigationLincheckTest} checks the whole map's ascending queries with
 * {@code put/remove} only, under Nova; this one runs in model-checking mode under Nova and in
 * stress mode under every scheme (and, in {@link PlacementLincheckTest}, with placement).
 * Chunks of 4 entries: every few insertions rebalance.
 */
@Param(name = "key", gen = IntGen.class, conf = "1:5")
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class ViewNavigationLincheckTest implements LincheckTestBase {
    private final OakMap<Integer, Long> map = LincheckMaps.open();

    public ViewNavigationLincheckTest() {
        map.put(2, 1L);
        map.put(4, 2L);
    }

    public static class Spec extends MapSpec {
        public Spec() {
            map.put(2, 1L);
            map.put(4, 2L);
        }

        public Integer descLowerKey(int key) { return map.descendingMap().lowerKey(key); }
        public Integer descHigherKey(int key) { return map.descendingMap().higherKey(key); }
        public String descFirstEntry() { return LincheckOps.entry(map.descendingMap().firstEntry()); }
        public String descCeilingEntry(int key) { return LincheckOps.entry(map.descendingMap().ceilingEntry(key)); }
        public String subFirst() { return LincheckOps.entry(map.subMap(2, true, 4, true).firstEntry()); }
        public String subLast() { return LincheckOps.entry(map.subMap(2, false, 5, false).lastEntry()); }
        public boolean subIsEmpty() { return map.subMap(2, false, 4, true).isEmpty(); }
        public boolean isEmptyMap() { return map.isEmpty(); }
        public Integer subDescLower(int key) { return map.subMap(1, false, 5, true).descendingMap().lowerKey(key); }
        public String tailLowerEntry(int key) { return LincheckOps.entry(map.tailMap(2, false).lowerEntry(key)); }
        public String headHigherEntry(int key) { return LincheckOps.entry(map.headMap(4, true).higherEntry(key)); }
        public Long getOrDefault(int key) { return map.getOrDefault(key, -1L); }
    }

    @Operation public Long put(@Param(name = "key") int key, @Param(name = "value") long value) { return map.put(key, value); }
    @Operation public Long remove(@Param(name = "key") int key) { return map.remove(key); }
    @Operation public Long compute(@Param(name = "key") int key) { return map.compute(key, LincheckOps::computeFn); }
    @Operation public Long merge(@Param(name = "key") int key, @Param(name = "value") long value) { return map.merge(key, value, LincheckOps::mergeFn); }
    @Operation public boolean removeValue(@Param(name = "key") int key, @Param(name = "value") long value) { return map.remove(key, value); }
    @Operation public boolean zcRemove(@Param(name = "key") int key) { return map.zc().remove(key); }
    @Operation public Integer lowerKey(@Param(name = "key") int key) { return map.lowerKey(key); }
    @Operation public Integer higherKey(@Param(name = "key") int key) { return map.higherKey(key); }
    @Operation public Integer descLowerKey(@Param(name = "key") int key) { return map.descendingMap().lowerKey(key); }
    @Operation public Integer descHigherKey(@Param(name = "key") int key) { return map.descendingMap().higherKey(key); }
    @Operation public String descFirstEntry() { return LincheckOps.entry(map.descendingMap().firstEntry()); }
    @Operation public String descCeilingEntry(@Param(name = "key") int key) { return LincheckOps.entry(map.descendingMap().ceilingEntry(key)); }
    @Operation public String subFirst() { return LincheckOps.entry(map.subMap(2, true, 4, true).firstEntry()); }
    @Operation public String subLast() { return LincheckOps.entry(map.subMap(2, false, 5, false).lastEntry()); }
    @Operation public boolean subIsEmpty() { return map.subMap(2, false, 4, true).isEmpty(); }
    @Operation public boolean isEmptyMap() { return map.isEmpty(); }
    @Operation public Integer subDescLower(@Param(name = "key") int key) {
        NavigableMap<Integer, Long> m = map.subMap(1, false, 5, true).descendingMap();
        return m.lowerKey(key);
    }
    @Operation public String tailLowerEntry(@Param(name = "key") int key) { return LincheckOps.entry(map.tailMap(2, false).lowerEntry(key)); }
    @Operation public String headHigherEntry(@Param(name = "key") int key) { return LincheckOps.entry(map.headMap(4, true).higherEntry(key)); }
    @Operation public Long getOrDefault(@Param(name = "key") int key) { return map.getOrDefault(key, -1L); }

    // Sized for CI (model checking is the slow part: about 4 minutes per scheme at 30 x 100 on a shared core);
    // -Doak.lincheck.scale=N multiplies the iterations. Found nothing at 30 x 100 under Nova,
    // lock-based, grow-only and Nova keys with lock-based values (2026-11-27).
    @Test
    void modelChecking() {
        LincheckMaps.modelCheck(ViewNavigationLincheckTest.class, Spec.class, 6 * LincheckMaps.scale(), 40);
    }

    @ParameterizedTest(name = "keys={0} values={1}")
    @CsvSource({"NOVA, NOVA", "LOCK_BASED, LOCK_BASED", "GROW_ONLY, GROW_ONLY", "NOVA, LOCK_BASED"})
    void stress(MemoryScheme keys, MemoryScheme values) {
        LincheckMaps.withSchemes(keys, values, () -> LincheckMaps.stress(ViewNavigationLincheckTest.class,
                Spec.class, 10 * LincheckMaps.scale(), 200));
    }
}
