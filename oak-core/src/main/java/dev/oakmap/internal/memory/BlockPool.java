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

    private static final BlockPool SHARED = new BlockPool();

    /** @return the pool shared by every map of this process */
    public static BlockPool shared() {
        return SHARED;
    }

    private final AtomicReferenceArray<Block> blocks = new AtomicReferenceArray<>(Refs.MAX_BLOCK_ID + 1);
    private final AtomicLong reserved = new AtomicLong();
    private int nextIdHint = 1;

    /**
     * Maps a new block.
     *
     * @param size bytes, at most {@link Refs#MAX_BLOCK_SIZE}
     * @param populate fault the pages in now rather than on first use
     * @param huge use huge pages rather than small ones (see {@link Block})
     * @throws OutOfMemoryError if the OS refuses the memory or all block ids are taken
     */
    public synchronized Block allocate(long size, boolean populate, boolean huge) {
        if (size <= 0 || size > Refs.MAX_BLOCK_SIZE) {
            throw new IllegalArgumentException("block size out of range: " + size);
        }
        for (int n = 0; n < Refs.MAX_BLOCK_ID; n++) {
            int id = nextIdHint;
            nextIdHint = id == Refs.MAX_BLOCK_ID ? 1 : id + 1;
            if (blocks.get(id) == null) {
                Block block = new Block(id, size, populate, huge);
                blocks.set(id, block);
                reserved.addAndGet(size);
                return block;
            }
        }
        throw new OutOfMemoryError("all " + Refs.MAX_BLOCK_ID + " off-heap block ids are in use");
    }

    /** Unmaps {@code block} and makes its id available again. */
    public synchronized void release(Block block) {
        if (blocks.compareAndSet(block.id, block, null)) {
            reserved.addAndGet(-block.size());
            block.free();
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
