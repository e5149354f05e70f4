package dev.oakmap.internal.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One large off-heap region, owned by its own shared {@link Arena} so that it can be unmapped
 * (returned to the operating system) on its own. Mapped with {@code mmap}, and later collapsed
 * into huge pages, where native access is enabled ({@link NativeMemory}), else allocated by the
 * arena. Every access to it goes through
 * {@link #segment}, which is bounds-checked: a bad offset is an exception, never a crash, and an
 * access after the block was freed fails with {@link IllegalStateException}.
 */
public final class Block {
    /** Identifier packed into references (1..{@link Refs#MAX_BLOCK_ID}). */
    public final int id;
    /** The block's memory, 4 KiB aligned. */
    public final MemorySegment segment;
    /** True if the block was mapped as small pages, to be collapsed into huge ones when full. */
    final boolean smallPages;
    private final Arena arena;

    /**
     * @param populate fault the pages in now rather than on first use
     * @param huge map huge pages, rather than small ones to be collapsed later (see {@link NativeMemory#map})
     */
    Block(int id, long size, boolean populate, boolean huge) {
        this.id = id;
        this.arena = Arena.ofShared();
        MemorySegment mapped = NativeMemory.map(size, arena, populate, huge);
        this.segment = mapped != null ? mapped : arena.allocate(size, 4096);
        this.smallPages = mapped != null && !huge;
    }

    /** @return the block size in bytes */
    public long size() {
        return segment.byteSize();
    }

    /**
     * Turns the block's pages into huge pages (see {@link NativeMemory#collapse}); slow. The caller
     * must keep the block from being freed meanwhile.
     */
    void collapseToHugePages() {
        NativeMemory.collapse(segment);
    }

    /** Unmaps the block. Concurrent readers then get {@link IllegalStateException}. */
    void free() {
        arena.close();
    }
}
