package dev.oakmap.internal.memory;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The process-wide source of off-heap {@link Block}s, shared by all maps.
 *
 * <p>A map takes blocks as it grows and hands them back when it is closed; a returned block is
 * unmapped at once, so closing a map really gives its memory back to the operating system (the
 * original implementation kept blocks forever). Block ids are recycled: the id table is a fixed
 * array indexed by id, so resolving a reference to its block is one array load.
 *
 * <p>Thread-safe. Reservation accounting ({@link #reservedBytes()}) is a single atomic counter.
 */
public final class BlockPool {

    private static final BlockPool SHARED = new BlockPool(NativeMemory.regionAvailable());

    /** @return the pool shared by every map of this process */
    public static BlockPool shared() {
        return SHARED;
    }

    private final AtomicReferenceArray<Block> blocks = new AtomicReferenceArray<>(Refs.MAX_BLOCK_ID + 1);
    /** Ids handed out and not yet given back; guarded by this. */
    private final boolean[] taken = new boolean[Refs.MAX_BLOCK_ID + 1];
    private final AtomicLong reserved = new AtomicLong();
    private int nextIdHint = 1; // guarded by this
    /**
     * Whether blocks go into their ids' slots of the block region ({@link NativeMemory}). Only
     * one pool may: slots are indexed by id, and ids are unique only within a pool.
     */
    private final boolean slotted;

    /** A pool whose blocks are mapped one by one (for tests: only the shared pool uses the region). */
    BlockPool() {
        this(false);
    }

    private BlockPool(boolean slotted) {
        this.slotted = slotted;
    }

    /**
     * @return true if this pool's blocks lie in the block region, so that
     *     {@link NativeMemory#touchRegion} may read them
     */
    boolean slotted() {
        return slotted;
    }

    /**
     * Maps a new block. Only the choice of an id holds the pool's lock: mapping and faulting in
     * the pages can take a hundred milliseconds on a lazily backed host, and a map's background
     * thread maps its spare block while that map's writers (or other maps) may need one too.
     *
     * @param size bytes, at most {@link Refs#MAX_BLOCK_SIZE}
     * @param populate fault the pages in now rather than on first use
     * @param huge use huge pages rather than small ones (see {@link Block})
     * @throws OutOfMemoryError if the OS refuses the memory or all block ids are taken
     */
    public Block allocate(long size, boolean populate, boolean huge) {
        if (size <= 0 || size > Refs.MAX_BLOCK_SIZE) {
            throw new IllegalArgumentException("block size out of range: " + size);
        }
        int id = takeId();
        Block block;
        try {
            block = new Block(id, size, populate, huge, slotted);
        } catch (RuntimeException | Error e) {
            giveBackId(id);
            throw e;
        }
        blocks.set(id, block); // volatile: the block is visible to block(id) before its id is used
        reserved.addAndGet(size);
        return block;
    }

    private synchronized int takeId() {
        for (int n = 0; n < Refs.MAX_BLOCK_ID; n++) {
            int id = nextIdHint;
            nextIdHint = id == Refs.MAX_BLOCK_ID ? 1 : id + 1;
            if (!taken[id]) {
                taken[id] = true;
                return id;
            }
        }
        throw new OutOfMemoryError("all " + Refs.MAX_BLOCK_ID + " off-heap block ids are in use");
    }

    private synchronized void giveBackId(int id) {
        taken[id] = false;
    }

    /** Unmaps {@code block} and makes its id available again. */
    public void release(Block block) {
        if (blocks.compareAndSet(block.id, block, null)) {
            reserved.addAndGet(-block.size());
            block.free();
            giveBackId(block.id); // only now: the id's next block comes after this one is gone
        }
    }

    /** @return the block with this id; it must be live */
    public Block block(int id) {
        return blocks.get(id);
    }

    /** @return bytes currently mapped by this pool for all maps */
    public long reservedBytes() {
        return reserved.get();
    }
}
