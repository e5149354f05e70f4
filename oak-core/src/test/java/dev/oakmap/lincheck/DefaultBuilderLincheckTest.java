package dev.oakmap.lincheck;

import dev.oakmap.OakMap;
import dev.oakmap.OakMapBuilder;
import dev.oakmap.common.OakCommonTypes;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.Test;

/**
 * The Lincheck test a user would write first: a map from the default builder in a field, never
 * closed (Lincheck builds an instance per invocation and offers no tear-down), warm blocks left as
 * they are by default, and the map's point operations, computes and navigation against the usual
 * specification ({@link MapSpec}, a {@code TreeMap}). Thousands of invocations drop thousands of
 * maps, whose blocks come back only through collections and the cleaner thread, outside the
 * checker's schedule.
 *
 * <p>Unlike the other Lincheck tests here it neither closes maps nor turns warm blocks off
 * ({@link LincheckTestBase}), on purpose. Before a dropped map's blocks went straight back to the
 * OS ({@code BlockAllocator#close}), its blocks became warm blocks that the pool's keeper thread
 * zeroed while a checked thread looked for one, and model checking failed with a
 * {@code ConcurrentModificationException} (the checker replaces the monitor that kept them apart),
 * after some 50,000 invocations: this test, sized for CI, is a smoke test of that path, which
 * {@code UnreachableMapTest} pins exactly. {@code size()} is left out: like the skiplist's, it
 * counts insertions after they are visible, so it is not linearizable.
 */
@Param(name = "key", gen = IntGen.class, conf = "1:5")
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class DefaultBuilderLincheckTest {

    private final OakMap<Integer, Long> map = new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER,
            OakCommonTypes.LONG_SERIALIZER, OakCommonTypes.INTEGER_COMPARATOR).build();

    @Operation
    public Long put(@Param(name = "key") int key, @Param(name = "value") long value) {
        return map.put(key, value);
    }

    @Operation
    public Long get(@Param(name = "key") int key) {
        return map.get(key);
    }

    @Operation
    public Long remove(@Param(name = "key") int key) {
        return map.remove(key);
    }

    @Operation
    public Long putIfAbsent(@Param(name = "key") int key, @Param(name = "value") long value) {
        return map.putIfAbsent(key, value);
    }

    @Operation
    public boolean removeValue(@Param(name = "key") int key, @Param(name = "value") long value) {
        return map.remove(key, value);
    }

    @Operation
    public Long replace(@Param(name = "key") int key, @Param(name = "value") long value) {
        return map.replace(key, value);
    }

    @Operation
    public Long compute(@Param(name = "key") int key) {
        return map.compute(key, LincheckOps::computeFn);
    }

    @Operation
    public Long merge(@Param(name = "key") int key, @Param(name = "value") long value) {
        return map.merge(key, value, LincheckOps::mergeFn);
    }

    @Operation
    public Long computeIfAbsent(@Param(name = "key") int key) {
        return map.computeIfAbsent(key, Spec::initial);
    }

    @Operation
    public boolean isEmpty() {
        return map.isEmpty();
    }

    @Operation
    public Integer ceilingKey(@Param(name = "key") int key) {
        return map.ceilingKey(key);
    }

    @Operation
    public Integer lowerKey(@Param(name = "key") int key) {
        return map.lowerKey(key);
    }

    @Operation
    public String pollFirstEntry() {
        return LincheckOps.entry(map.pollFirstEntry());
    }

    /** The specification: {@link MapSpec}, and the operations it does not have. */
    public static class Spec extends MapSpec {
        static Long initial(Integer key) {
            return 10L * key;
        }

        public Long computeIfAbsent(int key) {
            return map.computeIfAbsent(key, Spec::initial);
        }

        public boolean isEmpty() {
            return map.isEmpty();
        }

        public String pollFirstEntry() {
            return LincheckOps.entry(map.pollFirstEntry());
        }
    }

    // Sized for CI: 10,000 dropped maps in stress mode, 2,000 in model checking; -Doak.lincheck.scale=N multiplies.
    @Test
    void stress() {
        new StressOptions().iterations(20 * LincheckMaps.scale()).invocationsPerIteration(500)
                .sequentialSpecification(Spec.class).check(getClass());
    }

    @Test
    void modelChecking() {
        new ModelCheckingOptions().iterations(10 * LincheckMaps.scale()).invocationsPerIteration(200)
                .sequentialSpecification(Spec.class).check(getClass());
    }
}
