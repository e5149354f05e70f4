package dev.oakmap;

import java.util.function.Function;

/**
 * A zero-copy view of a key or value that may be kept after the call that returned it.
 *
 * <p>For a value, every read reflects the value as it is at the time of the read: if another
 * thread updates the mapping in place, later reads see the update. Each individual getter is
 * atomic with respect to updates; to read several fields consistently, use
 * {@link #transform(Function)}. Once the mapping is removed, every read throws
 * {@link DeletedMemoryAccessException}, even if the memory has since been reused. The same
 * happens if the value is replaced by one that needs a slice of another size (a legacy
 * {@code put}, {@code compute} or {@code merge}, or a zero-copy {@code put}, with a longer or much
 * shorter serialized form): the view then refers to the old slice, which is released; get a new
 * view. In-place zero-copy updates ({@code computeIfPresent}, {@code putIfAbsentComputeIfPresent})
 * never change the size, so views follow them.
 *
 * <p>Keys never change, so a key view always reads the same bytes while its mapping exists. Key
 * views handed out by scans (key sets, entry sets and their stream variants) stay readable even
 * after their mapping is removed: when the map reclaims key memory they read an on-heap copy
 * taken when the scan reached the key, so a scan never fails because another thread removed an
 * entry it had already returned.
 */
public interface OakUnscopedBuffer extends OakBuffer {

    /**
     * Applies {@code transformer} to a consistent snapshot of the viewed bytes and returns its
     * result. The function sees the value as of a single instant: no concurrent update is
     * partially visible to it. It may be invoked more than once if it races with an update (only
     * the result of a run over consistent bytes is returned), so it should have no side effects.
     * A function over a value that writes or removes the same key of the same map throws
     * {@link IllegalStateException}, leaving the mapping unchanged.
     *
     * @param <T> the type of the result
     * @param transformer the function to apply; the buffer it receives is valid only during the call
     * @return the result of {@code transformer} on a consistent snapshot
     * @throws DeletedMemoryAccessException if the mapping was removed
     * @throws NullPointerException if {@code transformer} is null
     * @throws IllegalStateException if {@code transformer} wrote or removed the viewed value's key
     * @throws OakClosedException if the map was closed
     */
    <T> T transform(Function<OakScopedReadBuffer, T> transformer);
}
