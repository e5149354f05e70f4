package dev.oakmap.lincheck;

import dev.oakmap.OakMap;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Prefix windows under concurrency (see {@code KeyOps}, "Prefix windows"): keys that share
 * their first bytes, in chunks of 4 entries, so that every few puts rebalance a chunk and pick its
 * head again while other threads search it.
 *
 * <h2>Layout</h2>
 * Key {@code i} is the bytes of {@code "tenant/0001/"} or {@code "tenant/0002/"} (the first for
 * {@code i < 35}) followed by {@code i}, big-endian: ordered as the ints are, so the
 * specification is the usual one over ints. The constructor puts the stable keys 10, 20, ..., 60;
 * chunks within one tenant share 15 bytes, and a chunk that straddles the two shares 10, so
 * splits and merges change heads. ({@code byte[]} keys rather than strings: Lincheck's model
 * checker takes the character loops of a string serializer, run for every window, for spin
 * locks, and reports a hang.) The operations put and remove keys next to the stable ones and query both,
 * and {@code ceilingNear} searches through windows for a key that may be absent.
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
        byte[] k = Arrays.copyOf((i < 35 ? "tenant/0001/" : "tenant/0002/").getBytes(StandardCharsets.US_ASCII), 16);
        ByteBuffer.wrap(k).putInt(12, i);
        return k;
    }

    static Integer id(byte[] key) {
        return key == null ? null : ByteBuffer.wrap(key).getInt(12);
    }

    /** The specification: the neighbour test's (the same stable keys and operations), and {@code ceilingNear}. */
    public static class Spec extends NeighbourRebalanceLincheckTest.Spec {
        public Integer ceilingNear(int near) {
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

    // Sized for CI (a few seconds); -Doak.lincheck.scale=N multiplies the iterations.
    @Override
    public Checks checks() {
        return Checks.against(Spec.class).modelChecking(20, 100).stress(15, 500);
    }
}
