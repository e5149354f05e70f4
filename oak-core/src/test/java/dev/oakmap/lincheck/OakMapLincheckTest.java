package dev.oakmap.lincheck;

import dev.oakmap.DeletedMemoryAccessException;
import dev.oakmap.OakMap;
import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.common.OakCommonTypes;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Linearizability of OakMap's point operations, checked by Lincheck against {@link MapSpec} (a
 * {@code TreeMap}), in model-checking mode (Lincheck runs the map's own code under its scheduler
 * and explores thread switches inside it) and in stress mode (real threads).
 *
 * <p>Operations: the legacy {@code get, containsKey, put, putIfAbsent, remove, remove(k, v),
 * replace, replace(k, o, n), computeIfPresent, compute, merge}, the zero-copy {@code get} (the
 * long read through the returned view, or null if absent or removed before it was read),
 * {@code putIfAbsentComputeIfPresent} and {@code computeIfPresent} (in-place increments, and
 * an increment that throws after writing, which must change nothing), {@code putIfAbsent} and
 * {@code remove}. Keys are 1..5 and chunks hold 4 entries, so splits,
 * merges and compactions happen inside the scenarios (an empty chunk has one free slot; every
 * chunk is rebuilt after one to a few insertions).
 *
 * <p>Navigation ({@code ceilingKey/floorKey/first/last}) and scans are not in this test.
 * Navigation is linearizable (it once had scan semantics; {@code Navigator} now validates its
 * answer) and is checked in {@link OakMapNavigationLincheckTest}, through views in
 * {@code ViewNavigationLincheckTest}; scans are weakly consistent, and are checked in
 * {@link OakMapScanLincheckTest} over ranges where the weak scan guarantee and linearizability
 * coincide.
 *
 * <p>Deterministic: Lincheck seeds its scenario generator with a fixed seed (0), and the model
 * checker's exploration is deterministic, so a failure replays on the same code.
 */
@Param(name = "key", gen = IntGen.class, conf = "1:5")
@Param(name = "value", gen = LongGen.class, conf = "1:3")
public class OakMapLincheckTest implements LincheckTestBase.BothModes {

    private final OakMap<Integer, Long> map = LincheckMaps.open();

    public OakMapLincheckTest() {
        // Two keys present at the start, so removals and updates have something to act on.
        map.put(2, 1L);
        map.put(4, 2L);
    }

    /** The same initial state as the test instance. */
    public static class Spec extends MapSpec {
        public Spec() {
            map.put(2, 1L);
            map.put(4, 2L);
        }
    }

    // ---------------------------------------------------------------- legacy API

    @Operation
    public Long get(@Param(name = "key") int key) {
        return map.get(key);
    }

    @Operation
    public boolean containsKey(@Param(name = "key") int key) {
        return map.containsKey(key);
    }

    @Operation
    public Long put(@Param(name = "key") int key, @Param(name = "value") long value) {
        return map.put(key, value);
    }

    @Operation
    public Long putIfAbsent(@Param(name = "key") int key, @Param(name = "value") long value) {
        return map.putIfAbsent(key, value);
    }

    @Operation
    public Long remove(@Param(name = "key") int key) {
        return map.remove(key);
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
    public boolean replaceValue(@Param(name = "key") int key, @Param(name = "value") long oldValue,
                                @Param(name = "value") long newValue) {
        return map.replace(key, oldValue, newValue);
    }

    @Operation
    public Long computeIfPresent(@Param(name = "key") int key) {
        return map.computeIfPresent(key, (k, v) -> v + 1);
    }

    @Operation
    public Long compute(@Param(name = "key") int key) {
        return map.compute(key, LincheckOps::computeFn);
    }

    @Operation
    public Long merge(@Param(name = "key") int key, @Param(name = "value") long value) {
        return map.merge(key, value, LincheckOps::mergeFn);
    }

    // ---------------------------------------------------------------- zero-copy API

    @Operation
    public Long zcGet(@Param(name = "key") int key) {
        OakUnscopedBuffer view = map.zc().get(key);
        if (view == null) {
            return null;
        }
        try {
            return view.transform(OakCommonTypes.LONG_SERIALIZER::deserialize);
        } catch (DeletedMemoryAccessException removedSince) {
            return null; // linearized after the removal
        }
    }

    @Operation
    public boolean zcIncrement(@Param(name = "key") int key) {
        return map.zc().putIfAbsentComputeIfPresent(key, 1L, LincheckMaps::increment);
    }

    @Operation
    public boolean zcComputeIfPresent(@Param(name = "key") int key) {
        return map.zc().computeIfPresent(key, LincheckMaps::increment);
    }

    /**
     * An in-place increment whose computer throws after writing: in-place computes are all or
     * nothing, so this changes nothing. @return true if the key was present (the computer ran)
     */
    @Operation
    public boolean zcIncrementThenFail(@Param(name = "key") int key) {
        try {
            return map.zc().computeIfPresent(key, b -> {
                LincheckMaps.increment(b);
                throw LincheckMaps.InjectedFailure.INSTANCE;
            });
        } catch (LincheckMaps.InjectedFailure expected) {
            return true;
        }
    }

    @Operation
    public boolean zcPutIfAbsent(@Param(name = "key") int key, @Param(name = "value") long value) {
        return map.zc().putIfAbsent(key, value);
    }

    @Operation
    public boolean zcRemove(@Param(name = "key") int key) {
        return map.zc().remove(key);
    }

    // ---------------------------------------------------------------- quiescent invariants

    /**
     * After every invocation (no update in progress): the size counter is exact, ascending and
     * descending iteration agree, keys are strictly increasing.
     */
    @Validate
    public void checkQuiescentState() {
        List<Integer> asc = new ArrayList<>(map.keySet());
        List<Integer> desc = new ArrayList<>(map.descendingKeySet());
        Collections.reverse(desc);
        if (!asc.equals(desc)) {
            throw new IllegalStateException("ascending " + asc + " != reversed descending " + desc);
        }
        for (int i = 1; i < asc.size(); i++) {
            if (asc.get(i - 1) >= asc.get(i)) {
                throw new IllegalStateException("keys out of order: " + asc);
            }
        }
        if (map.size() != asc.size()) {
            throw new IllegalStateException("size() " + map.size() + " but iteration found " + asc);
        }
        for (Map.Entry<Integer, Long> e : map.entrySet()) {
            if (!e.getValue().equals(map.get(e.getKey()))) {
                throw new IllegalStateException("entry " + e + " but get says " + map.get(e.getKey()));
            }
        }
    }

    // ---------------------------------------------------------------- the checks

    // Sized for CI (about 20 s here); -Doak.lincheck.scale=N multiplies the iterations for longer runs.
    @Override
    public Checks checks() {
        return Checks.against(Spec.class).modelChecking(30, 50).stress(30, 500);
    }
}
