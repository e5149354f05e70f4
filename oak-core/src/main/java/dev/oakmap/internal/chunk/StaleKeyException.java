package dev.oakmap.internal.chunk;

/**
 * Thrown by {@link KeyOps} when a serialized key it read turned out to be deleted, and possibly
 * reused, by the time the read was validated. That happens only to keys the rebalancer dropped,
 * so only to operations still reading a replaced chunk or an old index snapshot: they catch it
 * and start over from the index. Never seen by users. Shared and stackless: it is control flow.
 */
public final class StaleKeyException extends RuntimeException {
    /** The one instance. */
    public static final StaleKeyException INSTANCE = new StaleKeyException();

    private StaleKeyException() {
        super("stale key reference", null, false, false);
    }
}
