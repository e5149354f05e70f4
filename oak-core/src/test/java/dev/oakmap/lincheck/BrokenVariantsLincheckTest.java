package dev.oakmap.lincheck;

import dev.oakmap.OakMap;
import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.common.OakCommonTypes;
import org.jetbrains.lincheck.LincheckAssertionError;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.LongGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Proof that the Lincheck checks can fail: test-only wrappers over a correct OakMap that break
 * atomicity the way a buggy map would (a check-then-act insertion; a read-modify-write that is not
 * one atomic step), each of which Lincheck must report with a {@link LincheckAssertionError}.
 * The main code is not touched; the bug lives in the wrapper's operation.
 *
 * <p>The failing scenario and interleaving Lincheck found are printed in the test log (the message
 * of the error), which shows what the checker reports on a real bug.
 */
public class BrokenVariantsLincheckTest implements LincheckTestBase {

    /** putIfAbsent as containsKey-then-put: two threads can both "insert" the same key. */
    @Param(name = "key", gen = IntGen.class, conf = "1:1")
    @Param(name = "value", gen = LongGen.class, conf = "1:2")
    public static class CheckThenActPutIfAbsent {
        private final OakMap<Integer, Long> map = LincheckMaps.open();

        @Operation
        public Long putIfAbsent(@Param(name = "key") int key, @Param(name = "value") long value) {
            if (map.containsKey(key)) {
                return map.get(key);
            }
            map.put(key, value); // BUG: another thread may have inserted in between
            return null;
        }

        @Operation
        public Long get(@Param(name = "key") int key) {
            return map.get(key);
        }

        @Operation
        public Long remove(@Param(name = "key") int key) {
            return map.remove(key);
        }
    }

    /** The zero-copy counter increment done as a read, then a put: increments get lost. */
    @Param(name = "key", gen = IntGen.class, conf = "1:1")
    public static class ReadThenWriteIncrement {
        private final OakMap<Integer, Long> map = LincheckMaps.open();

        @Operation
        public boolean zcIncrement(@Param(name = "key") int key) {
            OakUnscopedBuffer view = map.zc().get(key);
            if (view == null) {
                Thread.yield();
                map.put(key, 1L); // BUG: not atomic with the read
                return true;
            }
            long v = view.transform(OakCommonTypes.LONG_SERIALIZER::deserialize);
            Thread.yield(); // widens the window so that stress mode, too, hits it within CI time
            map.zc().put(key, v + 1); // BUG: overwrites concurrent increments
            return false;
        }

        @Operation
        public Long zcGet(@Param(name = "key") int key) {
            return map.get(key);
        }
    }

    private static void expectFailure(String name, Runnable check) {
        LincheckAssertionError e = assertThrows(LincheckAssertionError.class, check::run,
                name + ": Lincheck did not catch the broken variant");
        String msg = String.valueOf(e.getMessage());
        System.out.println("[lincheck] broken variant " + name + " caught after " + LincheckMaps.count()
                + " invocations; Lincheck reported:\n" + msg.substring(0, Math.min(msg.length(), 3000)));
    }

    @Test
    void modelCheckingCatchesCheckThenActPutIfAbsent() {
        expectFailure("CheckThenActPutIfAbsent/model-checking", () -> new ModelCheckingOptions()
                .iterations(20).invocationsPerIteration(100).threads(2).actorsPerThread(2).actorsBefore(0)
                .sequentialSpecification(MapSpec.class)
                .check(CheckThenActPutIfAbsent.class));
    }

    @Test
    void modelCheckingCatchesReadThenWriteIncrement() {
        expectFailure("ReadThenWriteIncrement/model-checking", () -> new ModelCheckingOptions()
                .iterations(20).invocationsPerIteration(100).threads(2).actorsPerThread(2).actorsBefore(0)
                .sequentialSpecification(MapSpec.class)
                .check(ReadThenWriteIncrement.class));
    }

    @Test
    void stressCatchesReadThenWriteIncrement() {
        expectFailure("ReadThenWriteIncrement/stress", () -> new StressOptions()
                .iterations(50).invocationsPerIteration(1000).threads(3).actorsPerThread(2).actorsBefore(0)
                .sequentialSpecification(MapSpec.class)
                .check(ReadThenWriteIncrement.class));
    }
}
