package dev.oakmap.lincheck;

import dev.oakmap.internal.memory.WarmBlocksOff;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What every Lincheck test class here shares, so that each states only what it checks.
 *
 * <p>It owns the JUnit lifecycle: warm blocks are off for the class ({@link WarmBlocksOff}); before
 * each test the count of maps created is reset (for the {@code [lincheck]} report line), and after
 * each the map of the last invocation is closed ({@link LincheckMaps#closeLast}), which Lincheck
 * offers no hook for. A test class implements this interface and writes its {@code @Test}
 * methods.
 *
 * <p>An interface, not a superclass: Lincheck reads the test class and each of its superclasses,
 * and draws random seeds for every class it reads, so a superclass would shift the seed of the
 * scenario generator and change the scenarios of every test. It does not read interfaces. It still
 * builds each invocation's instance of the concrete class with its no-arg constructor and finds the
 * {@code @Operation} and {@code @Param} annotations there.
 */
@ExtendWith(WarmBlocksOff.class)
interface LincheckTestBase {

    @BeforeEach
    default void resetCount() {
        LincheckMaps.resetCount();
    }

    @AfterEach
    default void closeMaps() {
        LincheckMaps.closeLast();
    }
}
