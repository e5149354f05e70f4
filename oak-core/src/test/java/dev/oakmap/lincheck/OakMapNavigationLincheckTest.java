package dev.oakmap.lincheck;

import dev.oakmap.OakMap;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * Navigation ({@code firstKey/lastKey/ceilingKey/floorKey}) over unrestricted ranges, against a
 * TreeMap. <b>Disabled: it fails on the current core</b>, which implements these methods as the
 * first element of a weakly consistent scan. Lincheck's model checker finds, from the initial map
 * {2}:
 * <pre>
 *   Thread 1                 Thread 2
 *   lastKey(): NoSuchElement put(3, 1): null
 *                            remove(2): 1
 * </pre>
 * The map goes {2} → {2,3} → {3} and is never empty, yet lastKey throws: the descending cursor
 * reads key 2 in chunk C, Thread 2 then inserts 3 (rebuilding C) and removes 2; the cursor finds
 * 2's value gone in the released C, re-locates at key 2 and continues <em>below</em> 2, never
 * looking at 3. That is allowed by the weak scan guarantee (neither key was present throughout)
 * but contradicts OakMap's "all point operations are linearizable" if navigation counts as a
 * point operation. Either the documentation should say navigation has scan semantics, or
 * navigation should retry from the top when its candidate vanishes. Enable this test to check a
 * fix (takes about a minute). {@link OakMapScanLincheckTest} checks navigation where the two
 * semantics coincide.
 */
@Param(name = "key", gen = IntGen.class, conf = "1:4")
@Param(name = "value", gen = LongGen.class, conf = "1:2")
public class OakMapNavigationLincheckTest {
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

    @AfterEach
    void closeMaps() {
        LincheckMaps.closeLast();
    }

    @Test
    @Disabled("navigation is documented as weakly consistent (OakMap class doc); this check finds a non-linearizable history (lastKey() throws on a never-empty map) and is kept for a future linearizable navigation")
    void modelChecking() {
        new ModelCheckingOptions().iterations(30).invocationsPerIteration(100).threads(2).actorsPerThread(3)
                .sequentialSpecification(Spec.class).check(OakMapNavigationLincheckTest.class);
    }
}
