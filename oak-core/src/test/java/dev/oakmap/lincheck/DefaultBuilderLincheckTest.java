package dev.oakmap.lincheck;

import dev.oakmap.OakMap;
import dev.oakmap.OakMapBuilder;
import dev.oakmap.common.OakCommonTypes;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The Lincheck test a user would write first: a map from the default builder in a field, never
 * closed (Lincheck builds an instance per invocation and offers no tear-down), warm blocks left as
 * they are by default, and the map's point operations, computes and navigation against a
 * {@link ConcurrentSkipListMap}. Thousands of invocations drop thousands of maps, whose blocks
 * come back only through collections and the cleaner thread, outside the checker's schedule.
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
@Param(name = "k", gen = IntGen.class, conf = "1:5")
@Param(name = "v", gen = IntGen.class, conf = "1:3")
public class DefaultBuilderLincheckTest {

    private final OakMap<Integer, Integer> map = new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER,
            OakCommonTypes.INTEGER_SERIALIZER, OakCommonTypes.INTEGER_COMPARATOR).build();

    @Operation
    public Integer put(@Param(name = "k") int k, @Param(name = "v") int v) {
        return map.put(k, v);
    }

    @Operation
    public Integer get(@Param(name = "k") int k) {
        return map.get(k);
    }

    @Operation
    public Integer remove(@Param(name = "k") int k) {
        return map.remove(k);
    }

    @Operation
    public Integer putIfAbsent(@Param(name = "k") int k, @Param(name = "v") int v) {
        return map.putIfAbsent(k, v);
    }

    @Operation
    public boolean removeValue(@Param(name = "k") int k, @Param(name = "v") int v) {
        return map.remove(k, v);
    }

    @Operation
    public Integer replace(@Param(name = "k") int k, @Param(name = "v") int v) {
        return map.replace(k, v);
    }

    @Operation
    public Integer compute(@Param(name = "k") int k) {
        return map.compute(k, Spec::cycle);
    }

    @Operation
    public Integer merge(@Param(name = "k") int k, @Param(name = "v") int v) {
        return map.merge(k, v, Integer::sum);
    }

    @Operation
    public Integer computeIfAbsent(@Param(name = "k") int k) {
        return map.computeIfAbsent(k, x -> x * 10);
    }

    @Operation
    public boolean isEmpty() {
        return map.isEmpty();
    }

    @Operation
    public Integer ceilingKey(@Param(name = "k") int k) {
        return map.ceilingKey(k);
    }

    @Operation
    public Integer lowerKey(@Param(name = "k") int k) {
        return map.lowerKey(k);
    }

    @Operation
    public String pollFirst() {
        return Spec.render(map.pollFirstEntry());
    }

    /** The sequential specification: the same operations on a skiplist. */
    public static class Spec {
        private final ConcurrentSkipListMap<Integer, Integer> map = new ConcurrentSkipListMap<>();

        /** The compute function: 1 when absent, then 2 and 3, then removed. */
        static Integer cycle(Integer key, Integer old) {
            return old == null ? 1 : old >= 3 ? null : old + 1;
        }

        static String render(Map.Entry<Integer, Integer> e) {
            return e == null ? null : e.getKey() + "=" + e.getValue();
        }

        public Integer put(int k, int v) {
            return map.put(k, v);
        }

        public Integer get(int k) {
            return map.get(k);
        }

        public Integer remove(int k) {
            return map.remove(k);
        }

        public Integer putIfAbsent(int k, int v) {
            return map.putIfAbsent(k, v);
        }

        public boolean removeValue(int k, int v) {
            return map.remove(k, v);
        }

        public Integer replace(int k, int v) {
            return map.replace(k, v);
        }

        public Integer compute(int k) {
            return map.compute(k, Spec::cycle);
        }

        public Integer merge(int k, int v) {
            return map.merge(k, v, Integer::sum);
        }

        public Integer computeIfAbsent(int k) {
            return map.computeIfAbsent(k, x -> x * 10);
        }

        public boolean isEmpty() {
            return map.isEmpty();
        }

        public Integer ceilingKey(int k) {
            return map.ceilingKey(k);
        }

        public Integer lowerKey(int k) {
            return map.lowerKey(k);
        }

        public String pollFirst() {
            return render(map.pollFirstEntry());
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
