package dev.oakmap;

import java.lang.foreign.MemorySegment;

/**
 * A read-only view of a serialized key or value that is valid only inside the callback that
 * received it (a serializer, comparator or transform function). Using it after the callback
 * returned throws {@link IllegalStateException}; the map reuses such objects to avoid allocation.
 */
public interface OakScopedReadBuffer extends OakBuffer {

    /**
     * A read-only {@link MemorySegment} over exactly this slice, for power users (bulk
     * comparisons with {@link MemorySegment#mismatch}, for instance). Like the buffer, it must not
     * be used once the callback has returned. Do not rely on its alignment (an off-heap slice is
     * aligned to 4 bytes only, and a segment over a {@code byte[]} to 1): read multi-byte values
     * with unaligned layouts, such as {@link java.lang.foreign.ValueLayout#JAVA_LONG_UNALIGNED}.
     *
     * @return a read-only segment of {@link #capacity()} bytes
     */
    MemorySegment segment();
}
