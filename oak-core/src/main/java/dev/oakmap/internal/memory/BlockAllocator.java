package dev.oakmap.internal.memory;

import dev.oakmap.OakOutOfMemoryException;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;

/**
 * The off-heap allocator of one map: hands out 8-aligned slices of blocks taken from a
 * {@link BlockPool}, and reuses freed slices.
 *
 * <p><b>Allocation.</b> New space comes from a bump pointer in the current block (one CAS). When
 * the block is exhausted, a new one is taken from the pool, unless that would exceed the map's
 * capacity, in which case {@link OakOutOfMemoryException} is thrown (after trying the free lists).
 *
 * <p><b>Reuse.</b> Freed slices go to exact-size free lists (sizes are multiples of 8), kept
 * separately per {@link Kind}. A slice is never split or merged, and a slice freed as a value is
 * only ever reused as a value. That keeps every value header at a fixed address for the life of
 * the map, which the version check of the value managers relies on: a stale reference always
 * finds a header (with a newer version), never somebody's payload.
 *
 * <p><b>Mapping ahead.</b> Once a map is growing (it holds two blocks or more), each new block is
 * followed by the mapping of a <em>spare</em> one on a background thread, pages faulted in, so
 * the writer that exhausts the current block takes a ready one instead of waiting for the kernel
 * to zero 64 MiB (tens to hundreds of milliseconds where the host backs guest memory lazily).
 * Blocks smaller than {@link #MAP_AHEAD_MIN_BLOCK} are cheap to map and are not worth a thread.
 * The spare counts as reserved from the moment its mapping starts and is mapped only within the
 * capacity, so at most one block more than needed is held, and only by a map that grew. A writer
 * that needs a block while the spare is still being mapped, with no room for another block
 * beside it, waits for it (releasing the lock); {@link #close()} waits for it too, then releases
 * it with the others.
 *
 * <p><b>Huge pages.</b> Huge pages make random access to a large map cheaper (fewer TLB misses),
 * but where the host backs memory lazily they are slow to get, several times slower than small
 * ones (see {@link NativeMemory}). So the page size follows the pace of growth. Spares are mapped
 * as huge pages while they are ready before a writer needs them. A writer that needs a block
 * while the spare is still being mapped, with room for another block beside it, does not wait:
 * it maps a block of small pages itself, and later spares are mapped as small pages too, which
 * keep up; once a spare has waited, ready, longer than the last huge one took to map, spares are
 * huge again. Every block mapped as small pages (the first one included) is collapsed into huge
 * pages ({@link Block#collapseToHugePages}) once full, by the background thread started when a
 * block is installed (after mapping a spare, if it maps one), one block at a time, and only while
 * the map has not grown by a block for {@link #QUIET_NANOS}, leaving the cores to writers that
 * ingest fast. Writers never wait for a collapse. At most one thread collapses at a time;
 * {@link #close()} waits for it before releasing blocks.
 *
 * <p><b>Accounting.</b> {@link #reservedBytes()} (blocks held, the spare included) and
 * {@link #usedBytes()} (slices live) are maintained incrementally and cost a few loads to read.
 */
public final class BlockAllocator {

    /** Which free lists a slice belongs to. */
    public enum Kind { KEY, VALUE }

    private static final int SMALL_CLASSES = 1 << 13; // exact lists for sizes up to 64 KiB
    /** Blocks smaller than this are mapped when needed: cheap to fault in, not worth a thread each. */
    static final long MAP_AHEAD_MIN_BLOCK = 1L << 20;

    private final BlockPool pool;
    private final long blockSize;
    private final long capacity;
    private final MemorySegment[] segments = new MemorySegment[Refs.MAX_BLOCK_ID + 1];
    private final List<Block> owned = new ArrayList<>();
    /** Exact-size free lists per kind, indexed by size / 8; created on the first free (keeps empty maps small). */
    private final AtomicReferenceArray<AtomicReferenceArray<LongStack>> smallFree =
            new AtomicReferenceArray<>(Kind.values().length);
    private final List<Map<Long, LongStack>> largeFree = List.of(new HashMap<>(), new HashMap<>());
    private final LongAdder used = new LongAdder();
    private final AtomicLong reserved = new AtomicLong();
    private volatile Region current;
    private volatile boolean closed;
    /** A block mapped ahead for the next region, or null. Guarded by this. */
    private Block spare;
    /** True while a background thread maps the spare (already counted as reserved). Guarded by this. */
    private boolean spareInFlight;
    /** True while a background thread collapses full blocks into huge pages. Guarded by this. */
    private boolean collapsing;
    /** Full blocks mapped as small pages, waiting to be collapsed into huge ones. Guarded by this. */
    private final List<Block> toCollapse = new ArrayList<>();
    /** Whether the next spare is mapped as huge pages (see the class comment). Guarded by this. */
    private boolean spareHuge = true;
    /** How long mapping the last huge spare took, in nanoseconds. Guarded by this. */
    private long hugeSpareNanos;
    /** When the spare became ready ({@link System#nanoTime}). Guarded by this. */
    private long spareReadyAt;
    /** When the last block was installed ({@link System#nanoTime}). Guarded by this. */
    private long lastInstall = System.nanoTime();
    /** How long the map must not have grown by a block before full blocks are collapsed. */
    private static final long QUIET_NANOS = 100_000_000L;

    /** The part of a block being carved by the bump pointer: {@code [top, limit)}. */
    private record Region(Block block, AtomicLong top, long limit) {}

    /**
     * @param pool where blocks come from
     * @param blockSize bytes per block (at most {@link Refs#MAX_BLOCK_SIZE})
     * @param capacity the most bytes of blocks this allocator may hold
     */
    public BlockAllocator(BlockPool pool, long blockSize, long capacity) {
        if (blockSize < 4096 || blockSize > Refs.MAX_BLOCK_SIZE) {
            throw new IllegalArgumentException("block size must be in [4096, " + Refs.MAX_BLOCK_SIZE + "]: " + blockSize);
        }
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive: " + capacity);
        }
        this.pool = pool;
        this.blockSize = Refs.align8(blockSize);
        this.capacity = capacity;
    }

    /**
     * Allocates {@code size} bytes (rounded up to 8) of the given kind.
     *
     * @return a reference with aux 0 whose slice is 8-aligned; reused slices keep their old bytes
     * @throws OakOutOfMemoryException if the capacity is exhausted
     */
    public long allocate(long size, Kind kind) {
        long bytes = Refs.align8(Math.max(size, 8));
        long ref = popFree(bytes, kind);
        if (ref == Refs.NULL) {
            ref = bump(bytes);
        }
        used.add(bytes);
        return ref;
    }

    /** Returns a slice of {@code size} bytes (the size it was allocated with) for reuse. */
    public void free(long ref, long size, Kind kind) {
        long bytes = Refs.align8(Math.max(size, 8));
        long clean = Refs.withAux(ref, 0);
        used.add(-bytes);
        freeList(bytes, kind, true).push(clean);
    }

    /** @return the segment of the block that {@code ref} points into */
    public MemorySegment segment(long ref) {
        return segments[Refs.blockId(ref)];
    }

    /** @return the segment of block {@code blockId} */
    public MemorySegment segmentOfBlock(int blockId) {
        return segments[blockId];
    }

    /** @return bytes of blocks held from the pool */
    public long reservedBytes() {
        return reserved.get();
    }

    /** @return bytes of slices currently allocated and not freed */
    public long usedBytes() {
        return used.sum();
    }

    /** @return the configured capacity in bytes */
    public long capacity() {
        return capacity;
    }

    /** Gives every block back to the pool (unmapping it). Idempotent. */
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        current = null;
        notifyAll(); // a collapsing thread waiting for quiet: stop
        awaitBackground();
        if (spare != null) {
            pool.release(spare);
            spare = null;
        }
        for (Block b : owned) {
            pool.release(b);
        }
        owned.clear();
        reserved.set(0);
        smallFree.set(0, null); // let the heap metadata go with the memory
        smallFree.set(1, null);
        largeFree.forEach(m -> { synchronized (m) { m.clear(); } });
    }

    private long popFree(long bytes, Kind kind) {
        LongStack list = freeList(bytes, kind, false);
        return list == null ? Refs.NULL : list.pop();
    }

    private LongStack freeList(long bytes, Kind kind, boolean create) {
        long cls = bytes >>> 3;
        if (cls < SMALL_CLASSES) {
            AtomicReferenceArray<LongStack> lists = smallLists(kind, create);
            if (lists == null) {
                return null;
            }
            LongStack s = lists.get((int) cls);
            if (s == null && create) {
                lists.compareAndSet((int) cls, null, new LongStack());
                s = lists.get((int) cls);
            }
            return s;
        }
        Map<Long, LongStack> large = largeFree.get(kind.ordinal());
        synchronized (large) {
            LongStack s = large.get(bytes);
            if (s == null && create) {
                s = new LongStack();
                large.put(bytes, s);
            }
            return s;
        }
    }

    private AtomicReferenceArray<LongStack> smallLists(Kind kind, boolean create) {
        AtomicReferenceArray<LongStack> lists = smallFree.get(kind.ordinal());
        if (lists == null && create) {
            smallFree.compareAndSet(kind.ordinal(), null, new AtomicReferenceArray<>(SMALL_CLASSES));
            lists = smallFree.get(kind.ordinal());
        }
        return lists;
    }

    private long bump(long bytes) {
        while (true) {
            Region r = current;
            if (r != null) {
                long top = r.top.get();
                long end = top + bytes;
                if (end <= r.limit) {
                    if (r.top.compareAndSet(top, end)) {
                        return Refs.encode(r.block.id, top, 0);
                    }
                    continue;
                }
            }
            newRegion(r, bytes);
        }
    }

    private synchronized void newRegion(Region exhausted, long bytes) {
        if (!spareInFlight || capacity - reserved.get() < Math.max(blockSize, bytes)) {
            awaitSpare(); // no spare coming, or no room for a block beside it: the spare is the block
        }
        if (closed) {
            throw new dev.oakmap.OakClosedException();
        }
        if (current != exhausted) {
            return; // another thread already switched blocks
        }
        Block block = null;
        if (spareInFlight) {
            spareHuge = false; // the writer outran the mapping: small pages keep up
        } else {
            block = takeSpare(bytes);
        }
        if (block == null) {
            block = mapBlock(bytes);
            if (block == null) {
                return; // a salvaged free slice became the region
            }
        }
        if (exhausted != null && exhausted.block.smallPages && owned.contains(exhausted.block)
                && !toCollapse.contains(exhausted.block)) {
            toCollapse.add(exhausted.block); // full now
        }
        owned.add(block);
        segments[block.id] = block.segment;
        current = new Region(block, new AtomicLong(), block.size());
        lastInstall = System.nanoTime();
        startBackgroundWork();
    }

    /**
     * Maps a block for a slice of {@code bytes} now, on this thread, or salvages a free slice at
     * capacity.
     *
     * @return the block, counted as reserved; null if a salvaged slice was installed instead
     * @throws OakOutOfMemoryException if neither fits
     */
    private Block mapBlock(long bytes) {
        long room = capacity - reserved.get();
        long size = Math.min(Math.max(blockSize, bytes), room & ~7L);
        if (size < bytes) {
            if (!salvage(bytes)) {
                throw new OakOutOfMemoryException(capacity, bytes);
            }
            return null;
        }
        if (size > Refs.MAX_BLOCK_SIZE) {
            throw new IllegalArgumentException("a single slice of " + bytes + " bytes exceeds the largest block");
        }
        // A map's first block fills on demand, so small maps cost only the pages they touch. From
        // the second on, the map is growing: pages are faulted in with the mapping, one pass of
        // kernel zeroing instead of a page fault on the writing thread every few slices (ingesting
        // 1M Druid rows of 300 B: 1.57-1.74 s without, 1.17-1.22 s with). A writer maps small
        // pages, which it gets quickly whatever the host; they are collapsed once full.
        Block block = pool.allocate(size, !owned.isEmpty(), false);
        reserved.addAndGet(size);
        return block;
    }

    /**
     * @return the spare block if it can hold {@code bytes}, taken; otherwise null, and a spare
     *     too small for this (oversized) slice is released so that its room counts again
     */
    private Block takeSpare(long bytes) {
        Block b = spare;
        spare = null;
        if (b != null && System.nanoTime() - spareReadyAt > hugeSpareNanos) {
            spareHuge = true; // a huge spare would have been ready in time
        }
        if (b != null && b.size() < bytes) {
            pool.release(b);
            reserved.addAndGet(-b.size());
            b = null;
        }
        return b;
    }

    /** Waits, releasing the lock, until no spare is being mapped. Call holding the lock. */
    private void awaitSpare() {
        awaitWhile(() -> spareInFlight);
    }

    /**
     * Waits, releasing the lock, until no block has been installed for {@link #QUIET_NANOS} or
     * the allocator is closed. A collapse takes a core for a while; while the map grows fast its
     * writers may need both cores. Call holding the lock.
     */
    private void awaitQuiet() {
        while (!closed) {
            long quietFor = System.nanoTime() - lastInstall;
            if (quietFor >= QUIET_NANOS) {
                return;
            }
            try {
                wait(Math.max(1, (QUIET_NANOS - quietFor) / 1_000_000));
            } catch (InterruptedException e) {
                return; // a daemon's own interrupt: collapse now, and let the thread end
            }
        }
    }

    /** Waits, releasing the lock, until no background thread maps or collapses. Call holding the lock. */
    private void awaitBackground() {
        awaitWhile(() -> spareInFlight || collapsing);
    }

    /** For tests: waits until no background thread maps or collapses. */
    synchronized void awaitBackgroundWork() {
        awaitBackground();
    }

    private void awaitWhile(BooleanSupplier busy) {
        boolean interrupted = false;
        while (busy.getAsBoolean()) {
            try {
                wait();
            } catch (InterruptedException e) {
                interrupted = true; // background work ends soon; keep the interrupt for the caller
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Starts a background thread, if there is work for one: mapping a spare block (if there is
     * none yet, the map is growing and the spare fits in the capacity) and collapsing full blocks
     * into huge pages (if no thread does yet). Call holding the lock. The spare is counted as
     * reserved from now on, so the capacity holds while it is in flight.
     */
    private void startBackgroundWork() {
        if (blockSize < MAP_AHEAD_MIN_BLOCK || closed) {
            return;
        }
        boolean map = owned.size() >= 2 && spare == null && !spareInFlight && capacity - reserved.get() >= blockSize;
        boolean collapse = !collapsing && !toCollapse.isEmpty();
        if (!map && !collapse) {
            return;
        }
        boolean huge = spareHuge;
        if (map) {
            spareInFlight = true;
            reserved.addAndGet(blockSize);
        }
        collapsing |= collapse;
        try {
            Thread.ofPlatform().daemon().name("oak-block-ahead").start(() -> {
                if (map) {
                    depositSpare(blockSize, huge);
                }
                if (collapse) {
                    collapseFullBlocks();
                }
            });
        } catch (Throwable t) { // no thread to be had: blocks are mapped on demand and stay small-paged
            if (map) {
                spareInFlight = false;
                reserved.addAndGet(-blockSize);
            }
            if (collapse) {
                collapsing = false;
            }
        }
    }

    /** The first half of the background work: maps the spare block and hands it over. */
    private void depositSpare(long size, boolean huge) {
        Block b = null;
        long start = System.nanoTime();
        try {
            b = pool.allocate(size, true, huge);
        } catch (Throwable t) {
            // the OS refused, or no block id was free: the writer that needs a block will map it and
            // get the error itself
        }
        synchronized (this) {
            spareInFlight = false;
            if (b == null) {
                reserved.addAndGet(-size);
            } else {
                spare = b; // close() waits for this and releases it
                spareReadyAt = System.nanoTime();
                if (huge) {
                    hugeSpareNanos = spareReadyAt - start;
                }
            }
            notifyAll();
        }
    }

    /** Collapses full blocks, one at a time, until none is left or the allocator is closed. */
    private void collapseFullBlocks() {
        while (true) {
            Block next;
            synchronized (this) {
                awaitQuiet();
                if (closed || toCollapse.isEmpty()) {
                    collapsing = false;
                    notifyAll();
                    return;
                }
                next = toCollapse.remove(0);
            }
            next.collapseToHugePages(); // outside the lock: slow; close() waits for it
        }
    }

    /**
     * At capacity, turns a free slice (of either kind, large enough for {@code bytes}) into the
     * bump region, so space freed by removals serves any later allocation. A value slice keeps
     * its first 8 bytes, the state word, as a permanent tombstone (it still says DELETED), so
     * stale references to it keep failing their version check; only its interior is reused. No
     * address inside a slice's interior was ever the start of a slice, so no stale reference can
     * point there.
     *
     * @return true if a region was installed
     */
    private boolean salvage(long bytes) {
        for (Kind kind : new Kind[] {Kind.VALUE, Kind.KEY}) {
            long keep = 8; // a header-bearing slice keeps its state word; harmless for the others
            AtomicReferenceArray<LongStack> lists = smallLists(kind, false);
            for (int cls = lists == null ? 0 : SMALL_CLASSES - 1; cls > 0 && (long) cls * 8 >= bytes + keep; cls--) {
                LongStack list = lists.get(cls);
                long ref = list == null ? Refs.NULL : list.pop();
                if (ref != Refs.NULL) {
                    installSalvaged(ref, (long) cls * 8, keep);
                    return true;
                }
            }
            Map<Long, LongStack> large = largeFree.get(kind.ordinal());
            synchronized (large) {
                for (Map.Entry<Long, LongStack> e : large.entrySet()) {
                    if (e.getKey() >= bytes + keep) {
                        long ref = e.getValue().pop();
                        if (ref != Refs.NULL) {
                            installSalvaged(ref, e.getKey(), keep);
                            return true;
                        }
                    }
                }
            }
        }
        return false;
    }

    private void installSalvaged(long ref, long size, long keep) {
        used.add(keep); // the tombstone stays in use; the rest is counted as it is carved
        Block block = pool.block(Refs.blockId(ref));
        long start = Refs.offset(ref) + keep;
        current = new Region(block, new AtomicLong(start), Refs.offset(ref) + size);
    }
}
