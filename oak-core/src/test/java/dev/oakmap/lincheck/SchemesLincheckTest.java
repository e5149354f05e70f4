package dev.oakmap.lincheck;

import dev.oakmap.MemoryScheme;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The point-operation linearizability check of {@link OakMapLincheckTest} (which runs with the
 * default, Nova for keys and values), repeated in stress mode with maps under the other memory
 * schemes, so that each way of reading, locking and reusing slices is checked against the same
 * sequential specification. Chunks of 4 entries make the rebalancer drop (and, except under
 * grow-only keys, reclaim) keys inside the scenarios.
 */
class SchemesLincheckTest implements LincheckTestBase {

    @ParameterizedTest(name = "keys={0} values={1}")
    @CsvSource({"LOCK_BASED, LOCK_BASED", "GROW_ONLY, GROW_ONLY", "NOVA, LOCK_BASED", "GROW_ONLY, NOVA"})
    void stress(MemoryScheme keys, MemoryScheme values) {
        LincheckMaps.withSchemes(keys, values, () -> LincheckMaps.stress(OakMapLincheckTest.class,
                OakMapLincheckTest.Spec.class, 20 * LincheckMaps.scale(), 500));
    }
}
