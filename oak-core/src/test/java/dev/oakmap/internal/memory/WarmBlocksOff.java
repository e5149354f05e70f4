package dev.oakmap.internal.memory;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Turns the shared pool's warm blocks off for one test class and back on after it
 * ({@code @ExtendWith(WarmBlocksOff.class)}), for the Lincheck tests.
 *
 * <p>Lincheck's model checker schedules the threads of a scenario itself, and replays an
 * interleaving to print the trace of a failure it found. Warm blocks bring in a thread it does not
 * schedule, the pool's keeper: a block allocation that finds its only fit being zeroed waits on
 * the pool's monitor for the keeper's notify, which the checker cannot see (it reported the
 * scenario as hung), and whether an allocation takes a warm block or maps a new one depends on
 * the keeper's timing, so the replay of an interleaving can take another path than its first run
 * (it reported non-determinism). With nothing kept warm an allocation never waits on the keeper
 * and always takes the same path.
 */
public final class WarmBlocksOff implements BeforeAllCallback, AfterAllCallback {

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(WarmBlocksOff.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        BlockPool pool = BlockPool.shared();
        context.getStore(NS).put("limits", pool.warmLimits());
        pool.setWarmLimits(0, 0); // gives back the warm blocks kept now too
    }

    @Override
    public void afterAll(ExtensionContext context) {
        long[] limits = context.getStore(NS).get("limits", long[].class);
        if (limits != null) {
            BlockPool.shared().setWarmLimits(limits[0], limits[1]);
        }
    }
}
