package dev.oakmap.lincheck;

import dev.oakmap.OakMap;
import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.common.OakCommonTypes;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;

import java.util.Iterator;

/**
 * {@link SharedHeadLincheckTest}'s operations over the ready-made string keys
 * ({@code STRING_SERIALIZER}, {@code STRING_COMPARATOR}): key {@code i} is
 * {@code "tenant/0001/"} or {@code "tenant/0002/"} (the first for {@code i < 35}) followed by
 * {@code i} in four digits, so keys order as their ints and share 12 to 15 bytes, in chunks of 4.
 *
 * <p>The string serializer and comparator loop over characters, and the model checker switches
 * threads inside any loop that runs ten times, here between an insertion's entry and its value.
 * That found a livelock: two threads inserting into the same full chunk voided each other's
 * entry by rebalancing for ever, while each replacement kept one free slot. Replacements now keep
 * two ({@code Rebalancer.MIN_FREE}); with one, the model-checking test fails with a hang.
 */
@Param(name = "near", gen = IntGen.class, conf = "1:6")
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class StringKeysLincheckTest implements LincheckTestBase.BothModes {

    private final OakMap<String, Long> map = LincheckMaps.openStrings(4);

    public StringKeysLincheckTest() {
        for (int k : NeighbourRebalanceLincheckTest.STABLE) {
            map.put(key(k), (long) k);
        }
    }

    static String key(int i) {
        return (i < 35 ? "tenant/0001/" : "tenant/0002/").concat(String.valueOf(10000 + i).substring(1)); // four digits
    }

    static Integer id(String key) {
        return key == null ? null : Integer.valueOf(key.substring(12));
    }

    @Operation
    public Long putNear(@Param(name = "near") int near, @Param(name = "value") long value) {
        return map.put(key(10 * near + 1), value);
    }

    @Operation
    public Long removeNear(@Param(name = "near") int near) {
        return map.remove(key(10 * near + 1));
    }

    @Operation
    public Long getNear(@Param(name = "near") int near) {
        return map.get(key(10 * near + 1));
    }

    @Operation
    public Long getStable(@Param(name = "near") int near) {
        return map.get(key(10 * near));
    }

    @Operation
    public Integer ceilingNear(@Param(name = "near") int near) {
        return id(map.ceilingKey(key(10 * near + 1)));
    }

    /** The ceiling through the first key view of a zero-copy key set, deserialized. */
    @Operation
    public Integer ceilingViewNear(@Param(name = "near") int near) {
        Iterator<OakUnscopedBuffer> it = map.tailMap(key(10 * near + 1)).zc().keySet().iterator();
        return it.hasNext() ? id(it.next().transform(OakCommonTypes.STRING_SERIALIZER::deserialize)) : null;
    }

    // Sized for CI (a few seconds); -Doak.lincheck.scale=N multiplies the iterations.
    @Override
    public Checks checks() {
        return Checks.against(SharedHeadLincheckTest.Spec.class).modelChecking(40, 100).stress(15, 500);
    }
}
