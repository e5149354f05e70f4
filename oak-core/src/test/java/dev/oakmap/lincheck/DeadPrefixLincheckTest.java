package dev.oakmap.lincheck;

import dev.oakmap.OakMap;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;

import java.util.stream.IntStream;

/**
 * The chunks' dead-prefix and dead-suffix hints under Lincheck: {@code firstKey} and
 * {@code lastKey} walk past removed entries at the ends of the map and move the hints, while
 * other operations put back a key behind them.
 *
 * <h2>Layout</h2>
 * The constructor puts keys 1-3, 49-51 and the stable keys 10-19, in that order, so that the
 * 16-entry chunk is rebuilt once (into two chunks of eight) and the end keys become sorted
 * entries, then removes the end keys. Keys 1, 3, 49 and 51 stay removed: dead entries around the
 * two changing keys, {@link #LOW} (2) and {@link #HIGH} (50), which operations put and remove.
 * Each query depends on one changing key and one stable key (10 or 19), so Oak's scan guarantee
 * for navigation and linearizability coincide: a violation of either is a failure here. (The
 * map is kept this small because Lincheck's model checker reports long loops, such as a
 * rebalance copying dozens of entries while the other thread waits, as a hang.)
 */
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class DeadPrefixLincheckTest implements LincheckTestBase.BothModes {

    static final int LOW = 2;
    static final int HIGH = 50;
    static final int[] STABLE = IntStream.rangeClosed(10, 19).toArray();
    static final int[] ENDS = {1, 2, 3, 49, 50, 51};

    private final OakMap<Integer, Long> map = LincheckMaps.open(16);

    public DeadPrefixLincheckTest() {
        for (int k : ENDS) {
            map.put(k, 0L);
        }
        for (int k : STABLE) {
            map.put(k, (long) k);
        }
        for (int k : ENDS) {
            map.remove(k);
        }
    }

    /** The specification: the stable keys only, as the constructor leaves the map. */
    public static class Spec extends MapSpec {
        public Spec() {
            super(STABLE);
        }

        public Long putLow(long value) {
            return map.put(LOW, value);
        }

        public Long removeLow() {
            return map.remove(LOW);
        }

        public Long putHigh(long value) {
            return map.put(HIGH, value);
        }

        public Long removeHigh() {
            return map.remove(HIGH);
        }
    }

    @Operation
    public Long putLow(@Param(name = "value") long value) {
        return map.put(LOW, value);
    }

    @Operation
    public Long removeLow() {
        return map.remove(LOW);
    }

    @Operation
    public Long putHigh(@Param(name = "value") long value) {
        return map.put(HIGH, value);
    }

    @Operation
    public Long removeHigh() {
        return map.remove(HIGH);
    }

    @Operation
    public int firstKey() {
        return map.firstKey();
    }

    @Operation
    public int lastKey() {
        return map.lastKey();
    }

    // Sized for CI (a few seconds); -Doak.lincheck.scale=N multiplies the iterations.
    @Override
    public Checks checks() {
        return Checks.against(Spec.class).modelChecking(30, 100).stress(20, 500);
    }
}
