package dev.oakmap.lincheck;

import dev.oakmap.OakMap;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Navigation that returns mappings ({@code first/last/ceiling/floorEntry}, and first and last
 * entries of open-ended sub-maps), against a TreeMap, with values updated in place meanwhile:
 * the key and the value returned must be those of one instant (see {@code Navigator}, whose
 * value read spans its second walk).
 */
@Param(name = "key", gen = IntGen.class, conf = "1:4")
@Param(name = "value", gen = LongGen.class, conf = "1:2")
public class OakMapNavigationEntryLincheckTest {
    private final OakMap<Integer, Long> map = LincheckMaps.open();

    public OakMapNavigationEntryLincheckTest() {
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

    @AfterEach
    void closeMaps() {
        LincheckMaps.closeLast();
    }

    @Test
    void modelChecking() {
        new ModelCheckingOptions().iterations(30 * LincheckMaps.scale()).invocationsPerIteration(100).threads(2)
                .actorsPerThread(3).sequentialSpecification(Spec.class).check(OakMapNavigationEntryLincheckTest.class);
    }
}
