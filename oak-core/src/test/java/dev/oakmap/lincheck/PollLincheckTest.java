package dev.oakmap.lincheck;

import dev.oakmap.OakMap;
import org.jetbrains.lincheck.datastructures.IntGen;
import dev.oakmap.MemoryScheme;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.TreeMap;

/**
 * {@code pollFirstEntry} against a TreeMap, with insertions and membership queries. From the map
 * {3}, the model checker found, before polls held their key's value with a mark that
 * {@code containsKey} waits for (see {@code Navigator}, "Polls"):
 * <pre>
 *   Thread 1            Thread 2
 *   pollFirst(): 3=3    put(2): null
 *                       containsKey(3): true
 * </pre>
 * The poll found 3 first, then Thread 2 inserted 2 and saw 3 present, then the poll removed 3 by
 * key: there is no instant at which 3 was the least key and was removed. The same test with
 * {@code ConcurrentSkipListMap} in place of Oak fails the same way (run once, 2026-11-27), since
 * its {@code doRemoveFirstEntry} has that window too. Both ends are polled, so that two polls
 * from opposite ends meet (each gives up when it meets the other's mark), and key-only
 * navigation answers too, which wait for a poll's mark as {@code containsKey} does.
 */
@Param(name = "key", gen = IntGen.class, conf = "1:3")
public class PollLincheckTest implements LincheckTestBase {
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

        public Integer ceilingKey(int key) {
            return map.ceilingKey(key);
        }

        public String pollFirst() {
            return LincheckOps.entry(map.pollFirstEntry());
        }

        public String pollLast() {
            return LincheckOps.entry(map.pollLastEntry());
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
    public Integer ceilingKey(@Param(name = "key") int key) {
        return map.ceilingKey(key);
    }

    @Operation
    public String pollFirst() {
        return LincheckOps.entry(map.pollFirstEntry());
    }

    @Operation
    public String pollLast() {
        return LincheckOps.entry(map.pollLastEntry());
    }

    @Test
    void modelChecking() {
        new ModelCheckingOptions().iterations(8 * LincheckMaps.scale()).invocationsPerIteration(60).threads(2)
                .actorsPerThread(3).actorsBefore(0).actorsAfter(0)
                .sequentialSpecification(Spec.class).check(PollLincheckTest.class);
    }

    /** The lock-based scheme marks its values in its own header word. */
    @Test
    void modelCheckingLockBased() {
        LincheckMaps.withSchemes(MemoryScheme.NOVA, MemoryScheme.LOCK_BASED, () -> new ModelCheckingOptions()
                .iterations(4 * LincheckMaps.scale()).invocationsPerIteration(60).threads(2)
                .actorsPerThread(3).actorsBefore(0).actorsAfter(0)
                .sequentialSpecification(Spec.class).check(PollLincheckTest.class));
    }

    @Test
    void stress() {
        new StressOptions().iterations(20 * LincheckMaps.scale()).invocationsPerIteration(1000).threads(3)
                .actorsPerThread(3).actorsBefore(1).actorsAfter(1)
                .sequentialSpecification(Spec.class).check(PollLincheckTest.class);
    }
}
