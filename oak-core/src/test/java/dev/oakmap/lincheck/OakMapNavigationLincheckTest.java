package dev.oakmap.lincheck;

import dev.oakmap.OakMap;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

/**
 * Navigation ({@code firstKey/lastKey/ceilingKey/floorKey}, and the {@code Entry} forms, also of
 * open-ended sub-maps), against a TreeMap, with values updated in place meanwhile: navigation is
 * linearizable, and the value returned is the key's at the same instant (see {@code Navigator}).
 * Before it was, this check found,
 * from the initial map {2}:
 * <pre>
 *   Thread 1                 Thread 2
 *   lastKey(): NoSuchElement put(3, 1): null
 *                            remove(2): 1
 * </pre>
 * The map went {2} → {2,3} → {3} and was never empty, yet lastKey threw: the descending scan
 * that served it read key 2, Thread 2 then inserted 3 and removed 2, and the scan, finding 2's
 * value gone, went on below 2 and never looked at 3 (which a scan may do: neither key was
 * present throughout). {@link OakMapScanLincheckTest} checks scans, and navigation where the two
 * semantics coincide.
 */
@Param(name = "key", gen = IntGen.class, conf = "1:4")
@Param(name = "value", gen = LongGen.class, conf = "1:2")
public class OakMapNavigationLincheckTest implements LincheckTestBase {
    private final OakMap<Integer, Long> map = LincheckMaps.open();

    public OakMapNavigationLincheckTest() {
        map.put(2, 1L);
    }

    public static class Spec extends MapSpec {
        public Spec() {
            map.put(2, 1L);
        }
    }

    @Operation
    public Long put(@Param(name = "key") int key, @Param(name = "value") long value) {
        return map.put(key, value);
    }

    @Operation
    public Long remove(@Param(name = "key") int key) {
        return map.remove(key);
    }

    @Operation
    public Integer ceilingKey(@Param(name = "key") int key) {
        return map.ceilingKey(key);
    }

    @Operation
    public Integer floorKey(@Param(name = "key") int key) {
        return map.floorKey(key);
    }

    @Operation
    public int firstKey() {
        return map.firstKey();
    }

    @Operation
    public int lastKey() {
        return map.lastKey();
    }

    @Operation
    public boolean zcComputeIfPresent(@Param(name = "key") int key) {
        return map.zc().computeIfPresent(key, LincheckMaps::increment);
    }

    @Operation
    public String firstEntry() {
        return LincheckOps.entry(map.firstEntry());
    }

    @Operation
    public String lastEntry() {
        return LincheckOps.entry(map.lastEntry());
    }

    @Operation
    public String ceilingEntry(@Param(name = "key") int key) {
        return LincheckOps.entry(map.ceilingEntry(key));
    }

    @Operation
    public String floorEntry(@Param(name = "key") int key) {
        return LincheckOps.entry(map.floorEntry(key));
    }

    @Operation
    public String tailFirstEntry(@Param(name = "key") int key) {
        return LincheckOps.entry(map.tailMap(key, false).firstEntry());
    }

    @Operation
    public String headLastEntry(@Param(name = "key") int key) {
        return LincheckOps.entry(map.headMap(key, false).lastEntry());
    }

    @Test
    void modelChecking() {
        new ModelCheckingOptions().iterations(30 * LincheckMaps.scale()).invocationsPerIteration(100).threads(2).actorsPerThread(3)
                .sequentialSpecification(Spec.class).check(OakMapNavigationLincheckTest.class);
    }
}
