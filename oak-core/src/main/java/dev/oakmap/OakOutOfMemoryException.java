package dev.oakmap;

/**
 * Thrown when an operation needs off-heap memory beyond the capacity configured for its map
 * (see {@link OakMapBuilder#memoryCapacity(long)}) or for its {@link dev.oakmap.somar.Somar}.
 *
 * <p>The operation that throws has no visible effect: no half-inserted mapping is ever left
 * behind, and the map stays fully usable; removing mappings frees space for later insertions
 * (under every {@link MemoryScheme} but {@link MemoryScheme#GROW_ONLY}). Under
 * {@link MemoryScheme#NOVA}, removed memory is normally reclaimed in batches; an insertion that
 * finds the capacity exhausted first reclaims what has been removed so far, so it throws only if
 * that does not make room either (memory a thread is still writing in place stays held until the
 * write ends).
 */
public class OakOutOfMemoryException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The configured capacity, in bytes, that was exhausted. */
    private final long capacity;

    /**
     * Creates the exception for a request that did not fit in the capacity.
     *
     * @param capacity the configured capacity, in bytes, that the request would have exceeded
     * @param requested the size, in bytes, of the request that failed
     */
    public OakOutOfMemoryException(long capacity, long requested) {
        super("off-heap capacity of " + capacity + " bytes exhausted (request of " + requested
                + " bytes could not be satisfied)");
        this.capacity = capacity;
    }

    /**
     * Returns the capacity that the failed request would have exceeded.
     *
     * @return the configured off-heap capacity, in bytes, that was exhausted
     */
    public long capacity() {
        return capacity;
    }
}
