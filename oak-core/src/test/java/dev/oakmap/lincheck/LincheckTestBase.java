package dev.oakmap.lincheck;

import dev.oakmap.internal.memory.WarmBlocksOff;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What every Lincheck test class here shares, so that each states only what it checks.
 *
 * <p>It owns the JUnit lifecycle: warm blocks are off for the class ({@link WarmBlocksOff}); before
 * each test the count of maps created is reset (for the {@code [lincheck]} report line), and after
 * each the map of the last invocation is closed ({@link LincheckMaps#closeLast}), which Lincheck
 * offers no hook for. A test class with checks of its own shape (other options, memory schemes,
 * placement, another class's operations, an expected failure) implements this interface and writes
 * its {@code @Test} methods; one checked in both modes with the usual shape implements
 * {@link BothModes}.
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

    /**
     * A test class whose operations are checked against its sequential specification by the two
     * tests every such class has: {@code modelChecking} ({@link LincheckMaps#modelCheck}) and
     * {@code stress} ({@link LincheckMaps#stress}). The class says only what it is checked against,
     * and how long, in {@link #checks()}; {@code -Doak.lincheck.scale=N} multiplies the iterations.
     */
    interface BothModes extends LincheckTestBase {

        /**
         * Called on JUnit's instance only, not on the instances Lincheck builds for its invocations.
         *
         * @return the specification and the size of the two checks
         */
        Checks checks();

        @Test
        default void modelChecking() {
            Checks c = checks();
            LincheckMaps.modelCheck(getClass(), c.spec(), sized(c.mcIterations()) * LincheckMaps.scale(),
                    sized(c.mcInvocations()));
        }

        @Test
        default void stress() {
            Checks c = checks();
            LincheckMaps.stress(getClass(), c.spec(), sized(c.stressIterations()) * LincheckMaps.scale(),
                    sized(c.stressInvocations()));
        }

        /** A mode {@link #checks()} left unsized would check nothing and pass: it fails instead. */
        private int sized(int n) {
            if (n <= 0) {
                throw new IllegalStateException(getClass().getSimpleName() + ".checks() does not size this mode");
            }
            return n;
        }
    }

    /**
     * The sequential specification of a {@link BothModes} test, and for each mode the scenarios
     * (iterations, before {@code oak.lincheck.scale}) and the invocations of each scenario. Built
     * as {@code Checks.against(Spec.class).modelChecking(30, 100).stress(20, 500)}.
     */
    record Checks(Class<?> spec, int mcIterations, int mcInvocations, int stressIterations,
                  int stressInvocations) {

        static Checks against(Class<?> spec) {
            return new Checks(spec, 0, 0, 0, 0);
        }

        Checks modelChecking(int iterations, int invocations) {
            return new Checks(spec, iterations, invocations, stressIterations, stressInvocations);
        }

        Checks stress(int iterations, int invocations) {
            return new Checks(spec, mcIterations, mcInvocations, iterations, invocations);
        }
    }
}
