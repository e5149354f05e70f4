package dev.oakmap.lincheck;

import org.junit.jupiter.api.Test;

/**
 * The Lincheck checks of point operations ({@link OakMapLincheckTest}), of navigation through
 * views ({@link ViewNavigationLincheckTest}) and of polls ({@link PollLincheckTest}), repeated
 * with placement on ({@code -Doak.placePairs}, see {@code Rebalancer}, "Placement"): rebalances
 * then move live values to fresh slices in key order, so reads, in-place writes (which wait for
 * a move), zero-copy views (which follow one), navigation (whose two walks compare value
 * references) and polls (which lock the value they found) meet values changing place. The other
 * Lincheck tests build their maps without placement. Chunks of 4 entries: a few pairs move in
 * almost every scenario (about 2 to 4 per map in a probe of such sequences).
 */
class PlacementLincheckTest implements LincheckTestBase {

    // Sized for CI; -Doak.lincheck.scale=N multiplies the iterations. Found nothing at 30 x 50
    // (model checking) and 30 x 500 / 20 x 300 (stress) (2026-11-27).

    @Test
    void pointOperationsModelChecking() {
        LincheckMaps.withPlacement(() -> LincheckMaps.modelCheck(OakMapLincheckTest.class,
                OakMapLincheckTest.Spec.class, 6 * LincheckMaps.scale(), 40));
    }

    @Test
    void pointOperationsStress() {
        LincheckMaps.withPlacement(() -> LincheckMaps.stress(OakMapLincheckTest.class,
                OakMapLincheckTest.Spec.class, 15 * LincheckMaps.scale(), 300));
    }

    @Test
    void navigationStress() {
        LincheckMaps.withPlacement(() -> LincheckMaps.stress(ViewNavigationLincheckTest.class,
                ViewNavigationLincheckTest.Spec.class, 10 * LincheckMaps.scale(), 200));
    }

    @Test
    void pollsModelChecking() {
        LincheckMaps.withPlacement(() -> LincheckMaps.modelCheck(PollLincheckTest.class,
                PollLincheckTest.Spec.class, 4 * LincheckMaps.scale(), 40));
    }
}
