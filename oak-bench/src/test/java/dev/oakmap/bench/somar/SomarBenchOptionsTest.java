package dev.oakmap.bench.somar;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The SOMAR benchmark's command line: names it does not know are refused before anything runs. */
class SomarBenchOptionsTest {

    @Test
    void knownStructuresAndSchemesAreTaken() {
        SomarBench.Options o = SomarBench.Options.parse(new String[] {"--structures", "cslm,ll", "--schemes", "nova,heap"});
        assertEquals(List.of("cslm", "ll"), o.structures);
        assertEquals(List.of("nova", "heap"), o.schemes);
    }

    @Test
    void anUnknownStructureIsRefusedUpFront() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SomarBench.Options.parse(new String[] {"--structures", "ll,list"}));
        assertTrue(e.getMessage().contains("'list'") && e.getMessage().contains("ll, cslm"), e.getMessage());
    }

    @Test
    void anUnknownSchemeIsRefusedUpFront() {
        assertThrows(IllegalArgumentException.class,
                () -> SomarBench.Options.parse(new String[] {"--schemes", "nova,rcu"}));
    }
}
