package dev.oakmap;

/**
 * How a map manages the off-heap memory of its keys or of its values: whether, and how safely,
 * the memory of removed entries is reused while other threads may still hold references to it.
 * Chosen separately for keys and for values with {@link OakMapBuilder#keyMemory} and
 * {@link OakMapBuilder#valueMemory}.
 *
 * <p>Under every scheme a view of a removed value (or key) never shows another mapping's bytes:
 * reading it throws {@link DeletedMemoryAccessException}. The schemes differ in speed and in
 * how much memory a map with removals holds.
 */
public enum MemoryScheme {
    /**
     * Nothing removed is reused while the map lives: the fastest accesses, but memory in use only
     * grows under removals (it all comes back at {@link OakMap#close()}).
     */
    GROW_ONLY,
    /**
     * Each slice has a read-write lock in its off-heap header: readers and writers lock it, and a
     * removed slice is reused as soon as its lock is released. Simple and compact, but every read
     * writes shared memory, so it scales poorly.
     */
    LOCK_BASED,
    /**
     * Nova: versioned headers, optimistic reads validated after reading, one announced slice per
     * write in progress, and shared release lists that return removed slices for reuse once the
     * era has advanced and no writer announces them. Reads never write shared memory, and a
     * stalled thread holds back at most the one slice it is writing. Nothing is kept per thread,
     * so a thread per task (virtual threads) costs no more memory than a pool. Reclamation never
     * waits for other threads; a read of a slice that is being written retries until the write
     * ends (the write lock is per slice, as under the other schemes). Keys, never written in place, carry no
     * header under this scheme: a key read is validated against the map's own metadata it was
     * found through, which records when keys it links start being reclaimed.
     */
    NOVA
}
