package dev.oakmap.internal.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One large off-heap region, owned by its own shared {@link Arena} so that it can be returned to
 * the operating system on its own. Mapped with page-size advice where native access is enabled
 * ({@link NativeMemory}): into its id's slot of the block region for the shared pool, else as a
 * mapping of its own; otherwise allocated by the arena. Every access to it goes through
 * {@link #segment}, which is bounds-checked: a bad offset is an exception, never a crash, and an
 * access after the block was freed fails with {@link IllegalStateException}. (Only look-ahead
 * touches read a slotted block through the region instead, see {@link BlockAllocator#touch}.)
 */
public final class Block {
    /** Identifier packed into references (1..{@link Refs#MAX_BLOCK_ID}). */
    public final int id;
    /** The block's memory, 4 KiB aligned. */
    public final MemorySegment segment;
    private final Arena arena;

    /**
     * @param populate fault the pages in now rather than on first use
     * @param huge use huge pages rather than small ones (see {@link NativeMemory#map})
     * @param slotted map the block into its id's slot of the region ({@link NativeMemory#mapSlot})
     */
    Block(int id, long size, boolean populate, boolean huge, boolean slotted) {
        this.id = id;
        this.arena = Arena.ofShared();
        MemorySegment mapped = slotted ? NativeMemory.mapSlot(id, size, arena, populate, huge)
                : NativeMemory.map(size, arena, populate, huge);
        this.segment = mapped != null ? mapped : arena.allocate(size, 4096);
        this.mappedHere = mapped != null;
        this.inSlot = slotted && mapped != null;
    }

    /**
     * A block over the pages that a released block left committed in slot {@code id} (see
     * {@link BlockPool}, "Warm blocks"): zeroed here unless they were already, so that it reads as
     * a fresh mapping would, and pages of the slot beyond {@code size} up to {@code committed}
     * given back to the OS.
     */
    private Block(int id, long size, long committed, boolean zeroed) {
        this.id = id;
        this.arena = Arena.ofShared();
        this.segment = NativeMemory.slot(id, size, arena);
        this.mappedHere = true;
        this.inSlot = true;
        if (!zeroed) {
            segment.fill((byte) 0);
        }
        long tail = (size + 4095) & ~4095L; // madvise takes page-aligned ranges
        if (committed > tail) {
            NativeMemory.discardSlot(id, tail, committed - tail);
        }
    }

    /**
     * @param committed bytes of the slot the released block covered ({@code size} or more)
     * @param zeroed whether those bytes are all zero already
     * @return a zeroed block of {@code size} bytes over slot {@code id}'s committed pages
     */
    static Block overWarmSlot(int id, long size, long committed, boolean zeroed) {
        return new Block(id, size, committed, zeroed);
    }

    /** Whether this class mapped the block itself (rather than {@link Arena#allocate}): its pages can be discarded. */
    private final boolean mappedHere;
    /** Whether the block lies in its id's slot of the block region ({@link NativeMemory#mapSlot}). */
    private final boolean inSlot;

    /** @return true if the block lies in its id's slot of the block region */
    boolean inSlot() {
        return inSlot;
    }

    /**
     * Gives the block's pages back to the OS, keeping it mapped: it reads as zeros afterwards
     * and its pages fault in again on first write. Only for a block nobody uses, and only where
     * this class mapped it.
     *
     * @return false if nothing was given back (the block came from {@link Arena#allocate})
     */
    boolean discardPages() {
        return mappedHere && NativeMemory.discardPages(segment);
    }

    /**
     * Gives back the pages of {@code length} bytes from {@code offset}, page-aligned, as
     * {@link #discardPages()} does for the whole block. Only for bytes nobody uses.
     *
     * @return false if nothing was given back
     */
    boolean discardPages(long offset, long length) {
        return mappedHere && NativeMemory.discardPages(segment.asSlice(offset, length));
    }

    /** @return the block size in bytes */
    public long size() {
        return segment.byteSize();
    }

    /**
     * Gives the block's memory back (unmapped, or discarded in its slot). Concurrent readers then
     * get {@link IllegalStateException}.
     */
    void free() {
        arena.close();
        if (inSlot) {
            NativeMemory.discardSlot(id, 0, size());
        }
    }

    /**
     * Ends the block's life as {@link #free()} does, but leaves its pages committed in its slot
     * for a {@linkplain #overWarmSlot warm reuse}. Only for a block {@link #inSlot()}.
     */
    void freeKeepingPages() {
        arena.close();
    }
}
