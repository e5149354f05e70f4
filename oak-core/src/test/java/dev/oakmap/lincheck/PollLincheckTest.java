package dev.oakmap.lincheck;

import dev.oakmap.OakMap;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.TreeMap;

/**
 * {@code pollFirstEntry} against a TreeMap, with insertions and membership queries. It is not
 * linearizable: from the map {3}, the model checker finds
 * <pre>
 *   Thread 1            Thread 2
 *   pollFirst(): 3=3    put(2): null
 *                       containsKey(3): true
 * </pre>
 * {@code OakMap.poll} finds the first key (linearizably, {@code Navigator}) and then removes it by
 * key: Thread 2 inserts 2 and sees 3 present between the two steps, so there is no instant at
 * which 3 was the least key and was removed (removing 3 before {@code put(2)} contradicts
 * {@code containsKey(3)}; after it, 2 was the least key). The class documentation describes
 * exactly these two steps, and {@code ConcurrentSkipListMap.doRemoveFirstEntry} has the same
 * window (it reads the first node, then CASes its value to null while a smaller key may be linked
 * in front of it): this test with the skiplist in place of Oak fails too (run once, 2026-11-27:
 * from {3}, {@code pollFirst(): 3=3} in one thread while the other's {@code put(2)} returned
 * null and its {@code put(3)} returned 3, the key still present). A fix needs the removal of the key found to fail when a lesser key appeared
 * meanwhile, and what Thread 2 saw shows that holding the key's value lock across a second
 * navigation is not enough: {@code containsKey} (and key-only navigation) report a write-locked
 * value as live. Disabled until then; enabled, it fails within a few seconds (the model
 * checker's exploration is deterministic).
 */
@Param(name = "key", gen = IntGen.class, conf = "1:3")
public class PollLincheckTest {
    private final OakMap<Integer, Long> map = LincheckMaps.open();

    public PollLincheckTest() {
        map.put(3, 3L);
    }

    public static class Spec {
        private final TreeMap<Integer, Long> map = new TreeMap<>(Map.of(3, 3L));

        public Long put(int key) {
            return map.put(key, (long) key);
        }

        public boolean containsKey(int key) {
            return map.containsKey(key);
        }

        public String pollFirst() {
            return LincheckOps.entry(map.pollFirstEntry());
        }
    }

    @Operation
    public Long put(@Param(name = "key") int key) {
        return map.put(key, (long) key);
    }

    @Operation
    public boolean containsKey(@Param(name = "key") int key) {
        return map.containsKey(key);
    }

    @Operation
    public String pollFirst() {
        return LincheckOps.entry(map.pollFirstEntry());
    }

    @AfterEach
    void closeMaps() {
        LincheckMaps.closeLast();
    }

    @Test
    @Disabled("pollFirstEntry finds the first key, then removes it by key: not linearizable against an insertion "
            + "of a lesser key in between (as ConcurrentSkipListMap's); see the class comment")
    void modelChecking() {
        new ModelCheckingOptions().iterations(40).invocationsPerIteration(200).threads(2).actorsPerThread(3)
                .actorsBefore(0).actorsAfter(0)
                .sequentialSpecification(Spec.class).check(PollLincheckTest.class);
    }
}
