package dev.oakmap.lincheck;

import dev.oakmap.OakMap;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;

/**
 * Rebalances of neighbouring chunks at the same time (see {@code Rebalancer}, "Concurrent
 * rebalances"): each copies and builds without the map's lock, and the links, made one at a time,
 * must each find the neighbours the other left.
 *
 * <h2>Layout</h2>
 * Chunks of 4 entries. The constructor puts the stable keys 10, 20, ..., 60, which the rebalances
 * of the first puts spread over a few chunks of two or three entries; a chunk built with two
 * entries has room for one more. The operations put and remove keys next to the stable ones
 * (11 to 16, one in each stretch), so almost every put fills a chunk and rebalances it, and two
 * threads rebalance neighbouring chunks, or merge into a neighbour the other is splitting.
 * Queries of the stable keys and of the moving ones check that no rebalance loses or revives a
 * mapping.
 */
@Param(name = "near", gen = IntGen.class, conf = "1:6")
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class NeighbourRebalanceLincheckTest implements LincheckTestBase.BothModes {

    static final int[] STABLE = {10, 20, 30, 40, 50, 60};

    private final OakMap<Integer, Long> map = LincheckMaps.open(4);

    public NeighbourRebalanceLincheckTest() {
        for (int k : STABLE) {
            map.put(k, (long) k);
        }
    }

    /** The specification: the stable keys, as the constructor leaves the map. */
    public static class Spec extends MapSpec {
        public Spec() {
            super(STABLE);
        }

        public Long putNear(int near, long value) {
            return map.put(10 * near + 1, value);
        }

        public Long removeNear(int near) {
            return map.remove(10 * near + 1);
        }

        public Long getNear(int near) {
            return map.get(10 * near + 1);
        }

        public Long getStable(int near) {
            return map.get(10 * near);
        }
    }

    @Operation
    public Long putNear(@Param(name = "near") int near, @Param(name = "value") long value) {
        return map.put(10 * near + 1, value);
    }

    @Operation
    public Long removeNear(@Param(name = "near") int near) {
        return map.remove(10 * near + 1);
    }

    @Operation
    public Long getNear(@Param(name = "near") int near) {
        return map.get(10 * near + 1);
    }

    @Operation
    public Long getStable(@Param(name = "near") int near) {
        return map.get(10 * near);
    }

    // Sized for CI (a few seconds); -Doak.lincheck.scale=N multiplies the iterations.
    @Override
    public Checks checks() {
        return Checks.against(Spec.class).modelChecking(20, 100).stress(15, 500);
    }
}
