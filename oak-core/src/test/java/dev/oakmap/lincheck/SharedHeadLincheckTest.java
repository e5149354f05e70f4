package dev.oakmap.lincheck;

import dev.oakmap.OakMap;
import dev.oakmap.OakUnscopedBuffer;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Iterator;

/**
 * Prefix windows under concurrency (see {@code KeyOps}, "Prefix windows"): keys that share
 * their first bytes, in chunks of 4 entries, so that every few puts rebalance a chunk and pick its
 * head again while other threads search it.
 *
 * <h2>Layout</h2>
 * Key {@code i} is 100 bytes: those of {@code "tenant/0001/"} or {@code "tenant/0002/"} (the
 * first for {@code i < 35}), then {@code i}, big-endian, then zeros; ordered as the ints are, so
 * the specification is the usual one over ints. The constructor puts the stable keys 10, 20, ...,
 * 60; chunks within one tenant share 15 bytes, and a chunk that straddles the two shares 10, so
 * splits and merges change heads. The operations put and remove keys next to the stable ones and
 * query both, {@code ceilingNear} searches through windows for a key that may be absent, and
 * {@code ceilingViewNear} finds it through a zero-copy key view.
 *
 * <p>The map uses the ready-made {@code byte[]} comparator, and its keys are long enough for the
 * map's word-loop copies ({@code Bytes}): neither may read arrays through an array-view
 * {@code VarHandle}, which the model checker rejects. {@link StringKeysLincheckTest} checks the
 * same operations with string keys.
 */
@Param(name = "near", gen = IntGen.class, conf = "1:6")
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class SharedHeadLincheckTest implements LincheckTestBase.BothModes {

    private final OakMap<byte[], Long> map = LincheckMaps.openBytes(4);

    public SharedHeadLincheckTest() {
        for (int k : NeighbourRebalanceLincheckTest.STABLE) {
            map.put(key(k), (long) k);
        }
    }

    static byte[] key(int i) {
        byte[] k = Arrays.copyOf((i < 35 ? "tenant/0001/" : "tenant/0002/").getBytes(StandardCharsets.US_ASCII), 100);
        ByteBuffer.wrap(k).putInt(12, i);
        return k;
    }

    static Integer id(byte[] key) {
        return key == null ? null : ByteBuffer.wrap(key).getInt(12);
    }

    /**
     * The specification: the neighbour test's (the same stable keys and operations), and two
     * ceilings.
     */
    public static class Spec extends NeighbourRebalanceLincheckTest.Spec {
        public Integer ceilingNear(int near) {
            return map.ceilingKey(10 * near + 1);
        }

        public Integer ceilingViewNear(int near) {
            return map.ceilingKey(10 * near + 1);
        }
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

    /** The ceiling through the first key view of a zero-copy key set (an on-heap copy of the key). */
    @Operation
    public Integer ceilingViewNear(@Param(name = "near") int near) {
        Iterator<OakUnscopedBuffer> it = map.tailMap(key(10 * near + 1)).zc().keySet().iterator();
        return it.hasNext() ? it.next().getInt(12) : null;
    }

    // Sized for CI (a few seconds); -Doak.lincheck.scale=N multiplies the iterations.
    @Override
    public Checks checks() {
        return Checks.against(Spec.class).modelChecking(20, 100).stress(15, 500);
    }
}
