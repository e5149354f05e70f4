package dev.oakmap.internal.memory;

import dev.oakmap.OakOutOfMemoryException;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Cleaner;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongUnaryOperator;

/**
 * The off-heap allocator of one map: hands out 4-aligned slices of blocks taken from a
 * {@link BlockPool}, and reuses freed slices.
 *
 * <p><b>Allocation.</b> New space comes from a bump pointer in the current block (one CAS). When
 * the block is exhausted, a new one is taken from the pool, unless that would exceed the map's
 * capacity, in which case {@link OakOutOfMemoryException} is thrown (after trying the free lists).
 *
 * <p><b>Reuse.</b> Freed slices go to exact-size free lists, kept separately per {@link Kind}.
 * Slices up to {@link #EXACT_SLOTS} bytes take their size rounded to the 4-byte granule; larger
 * ones are rounded up to a size class, {@link #CLASSES_PER_DOUBLING} per power of two (less than
 * 3.2% wasted), so that values of varied sizes find freed slices to reuse: with exact sizes, a
 * map churning 1,000 values of 1 B to 60 KB (29 MB live) grew past 1.1 GB, each freed slice
 * waiting for a value of its very size. There are two such series of classes: multiples of the
 * step, and the same plus {@link #CLASS_ORIGIN}, the size of a value header ({@link #slotBytes}
 * takes the nearer). So both a request of a round size (a power of two, a whole block) and a
 * value whose payload is one, header included, take no padding. With the first series alone, as
 * until 2026-11-27, a 1,024-byte value (a 1,036-byte slice) took 1,056 bytes, and the map's
 * overhead beyond the raw data was 54.3 bytes a pair at 1M pairs of 100 B / 1,024 B, against
 * 34.3 with 1,000-byte values. A free slice is reused only as the kind it was
 * freed as, and only from its start; slices never merge. So every position where a slice ever
 * started is still the start of a slice (live or free) of that kind: every value header stays at
 * a fixed address for the life of the map, which the version check of the value managers relies
 * on: a stale reference always finds a header (with a newer version), never somebody's payload
 * (blocks reused whole are the exception, with a check of their own: see below).
 * Within that rule a free slice can be cut up, since no slice ever started inside it:
 * <ul>
 * <li>when no free slice of the size asked for is left but the free lists hold more than a
 *     quarter of the bytes in use, the smallest larger free slice (up to four times the size) is
 *     <em>split</em> ({@link #splitLarger}): the request takes its front, and the rest goes back
 *     cut into slot-sized pieces. Without this, memory freed by values of one size served only
 *     that size: a map whose values shrank (4 KB, then 3 KB, then 1.5 KB) mapped new blocks at
 *     every step while the bytes of the larger sizes sat free;</li>
 * <li>at capacity, any large enough free slice becomes the bump region ({@link #salvage}, which
 *     keeps its first bytes as a tombstone);</li>
 * <li>the unused rest of a region that is replaced goes back to the free lists, cut into
 *     slot-sized pieces ({@link #recycleRest}).</li>
 * </ul>
 * Values that grow find no larger free slices, and keep taking new memory until the capacity is
 * reached, unless whole blocks are reused (below).
 *
 * <p><b>Whole free blocks</b> (only where the owner asks, {@link #reuseWholeBlocks}). A block whose
 * slices have all been freed becomes fresh memory again: the next region is carved from it before
 * any new block is mapped, so memory freed by one size serves every size. This breaks the rule
 * above (a position that was a slice start may now hold payload), so it is for owners that can
 * tell a reference into a block's old layout from one into its new layout: the allocator tells
 * them ({@link ReuseGuard}) before it hands out the first slice of the new layout (Nova and
 * lock-based slices do, with a layout era per block: {@code OptimisticSlices} and
 * {@code LockBasedSlices}, "Blocks reused whole"). The
 * bookkeeping, a word per block with its free bytes and a generation that tags its free-list
 * entries, is described in {@link WholeBlockReuse}. Blocks that held a salvaged region keep its
 * tombstone and are never recycled.
 *
 * <p><b>Growth.</b> Block sizes start small and double, from {@link #FIRST_BLOCK} up to the
 * configured block size (a block mapped larger for an oversized slice counts as the last size),
 * so a map that holds a few pairs takes a few pages, not a whole block: 64 MiB by default, which
 * a map without native access gets from {@link java.lang.foreign.Arena#allocate}, zeroed and
 * committed (500 maps of one pair each grew to 22 GB and the kernel's OOM killer ended the JVM);
 * with native access each map still faulted in a 2 MiB huge page (5 ms, and 1 GB for the 500).
 * A large map spends about ten extra block ids on the small blocks, and nothing else.
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
 * <p><b>Page sizes.</b> Huge pages make random access to a large map cheaper (fewer TLB misses),
 * but where the host backs memory lazily they can be many times slower to get than small ones
 * (see {@link NativeMemory}). So the page size follows the pace of growth. Spares are mapped as
 * huge pages as long as they are ready before a writer needs them. A writer that needs a block
 * while the spare is still being mapped, with room for another block beside it, does not wait:
 * it maps a block of small pages itself, and later spares are mapped as small pages too, which
 * keep up; once a spare has waited, ready, longer than the last huge one took to map, spares are
 * huge again. The first block is faulted in on demand (it is advised huge, but at 64 KiB it is
 * too small for a huge page); a block that a writer maps after it is small. With
 * {@code -Doak.hugePages=always} every block is huge: a writer waits for a spare in flight, and
 * maps huge pages itself when there is none. That trades ingestion speed for scans over maps
 * larger than the TLB's reach, and only where the default would have left many blocks small
 * (4M pairs of 1.1 KB on this host, a throwaway driver, three alternated runs each: with a first
 * variant, in which writers mapped huge pages themselves, ingestion took 11.8-12.2 s against
 * 8.7-9.6 s, the default left 15-16% of the blocks huge, and 10K-pair stream scans ran 616-862
 * against 489-665 scans/s ascending, 498-655 against 412-500 descending; with this one,
 * 10.6-11.4 s against 9.4-10.5 s, the default left 21-81% huge, and the scans could not be told
 * apart: 542-699 against 505-703 ascending, 493-788 against 419-650 descending). Blocks keep
 * the pages they were mapped with (collapsing small ones into huge ones in the background, with
 * {@code MADV_COLLAPSE}, was tried: it took a core for 17-170 ms per 64 MiB right after an
 * ingestion, and put and update throughput fell by a third while it ran).
 *
 * <p><b>Accounting.</b> {@link #reservedBytes()} (blocks held, the spare included) and
 * {@link #usedBytes()} (slices live) are maintained incrementally and cost a few loads to read.
 *
 * <p><b>Owners dropped without closing.</b> The map or SOMAR manager that owns an allocator
 * registers itself with {@link #closeWhenUnreachable}: once the garbage collector finds the owner
 * unreachable (and with it every view, iterator and buffer, which all hold it), a shared daemon
 * thread closes the allocator, as the JDK does for direct buffers. The registered action holds the
 * allocator only, never the owner, or the owner could not become unreachable. An owner's own
 * {@code close()} runs the same action at once, through the registration, so it runs once.
 */
public final class BlockAllocator {

    /** The thread of {@link #CLEANER}, once it has made it. */
    private static volatile Thread cleanerThread;
    /** Closes the allocators of owners that became unreachable unclosed (one daemon thread per process). */
    private static final Cleaner CLEANER =
            Cleaner.create(r -> cleanerThread = Thread.ofPlatform().daemon().name("oak-cleaner").unstarted(r));

    /** Which free lists a slice belongs to. */
    public enum Kind { KEY, VALUE }

    /**
     * Told before a block whose slices were all freed is carved afresh ({@link #reuseWholeBlocks}),
     * so that the owner can tell references into the block's old layout from the new one.
     */
    @FunctionalInterface
    public interface ReuseGuard {
        /**
         * Called holding the allocator's lock, before any slice of block {@code blockId} is handed
         * out again; every slice of its previous layout had been freed. Must not allocate or free.
         */
        void beforeReuse(int blockId);
    }

    private static final int SMALL_CLASSES = 1 << 14; // exact lists for sizes up to 64 KiB
    /**
     * Bytes at the start of a salvaged slice that stay as they are: every slice manager keeps its
     * state word within a slice's first 12 bytes (an 8-byte word after a 4-byte length, in a
     * slice that starts 4 bytes off an 8-byte boundary).
     */
    static final long TOMBSTONE_BYTES = 12;
    /** Blocks smaller than this are mapped when needed: cheap to fault in, not worth a thread each. */
    static final long MAP_AHEAD_MIN_BLOCK = 1L << 20;
    /** The smallest slice handed out: requests for fewer bytes get this many. */
    static final long MIN_SLOT = 8;
    /** Slices up to this size take exactly their size (rounded to the granule); see "Reuse". */
    static final long EXACT_SLOTS = 1024;
    /**
     * Where the second series of size classes counts from: the header of a value slice
     * ({@code SliceManager}'s 12-byte state word and length), so that a header plus a power of
     * two (or plus any multiple of the class step) is a class (see "Reuse").
     */
    static final long CLASS_ORIGIN = 12;
    /** Size classes per doubling above {@link #EXACT_SLOTS}: a slice wastes less than 1/32 of its size. */
    static final long CLASSES_PER_DOUBLING = 32;
    /**
     * {@link #splitLarger} splits free slices up to this many times the size asked for: a few
     * pieces each, and a bounded search (values that grew past every free slice must not pay a
     * scan of all the lists at each allocation).
     */
    static final long SPLIT_REACH = 4;
    /** The size of a map's first block (or the configured size, if smaller); each next one doubles. */
    static final long FIRST_BLOCK = 64L << 10;

    private final BlockPool pool;
    /** Whether this allocator's blocks lie in the block region ({@link BlockPool#slotted()}). */
    private final boolean slotted;
    private final long blockSize;
    private final long capacity;
    private final MemorySegment[] segments = new MemorySegment[Refs.MAX_BLOCK_ID + 1];
    private final List<Block> owned = new ArrayList<>();
    /** Exact-size free lists per kind, indexed by size / 4; created on the first free (keeps empty maps small). */
    private final AtomicReferenceArray<AtomicReferenceArray<LongStack>> smallFree =
            new AtomicReferenceArray<>(Kind.values().length);
    /**
     * Per kind, a hint of which exact free lists may hold slices: bit {@code c} is set after a
     * push to list {@code c}, and cleared by {@link #splitLarger} when it finds the list empty
     * (set again if a push raced with the clearing). Created with the lists.
     */
    private final AtomicReferenceArray<long[]> smallMarks = new AtomicReferenceArray<>(Kind.values().length);
    /** Atomic access to the words of {@link #smallMarks}. */
    private static final VarHandle MARK = MethodHandles.arrayElementVarHandle(long[].class);
    private final List<Map<Long, LongStack>> largeFree = List.of(new HashMap<>(), new HashMap<>());
    /**
     * A hint that the free lists may hold more than a quarter of the bytes in use: set by
     * {@link #pushFree} when it finds them so, cleared by {@link #splitLarger} when they no longer
     * are, so that allocations that find no free slice (all of them while a map grows) pay one
     * volatile read for {@link #splitLarger}, not the sums.
     */
    private volatile boolean stranded;
    /** Slices split by {@link #splitLarger}, for tests. */
    private final LongAdder splits = new LongAdder();
    private final LongAdder used = new LongAdder();
    /** Bytes of the slices on the free lists. */
    private final LongAdder free = new LongAdder();
    private final AtomicLong reserved = new AtomicLong();
    /** Whole-block reuse, or null while off (see "Whole free blocks"); set before first use. */
    private WholeBlockReuse reuse;
    /** Run when the capacity is exhausted ({@link #reclaimAtCapacity}); copy-on-write. */
    private volatile Runnable[] reclaimers = new Runnable[0];
    private volatile Region current;
    private volatile boolean closed;
    /** A block mapped ahead for the next region, or null. Guarded by this. */
    private Block spare;
    /** True while a background thread maps the spare (already counted as reserved). Guarded by this. */
    private boolean spareInFlight;
    /** Whether the next spare is mapped as huge pages (see the class comment). Guarded by this. */
    private boolean spareHuge = true;
    /**
     * Every block as huge pages: a writer waits for a spare in flight instead of mapping small
     * pages itself ({@code -Doak.hugePages=always}; see "Page sizes"). Guarded by this.
     */
    private boolean hugeAlways = NativeMemory.hugePagesAlways();
    /** How long mapping the last huge spare took, in nanoseconds. Guarded by this. */
    private long hugeSpareNanos;
    /** When the spare became ready ({@link System#nanoTime}). Guarded by this. */
    private long spareReadyAt;
    /** Blocks mapped by writers themselves, for tests. Guarded by this. */
    private long writerMapped;
    /** The size of the block mapped last, by a writer or as a spare (0: none yet). Guarded by this. */
    private long lastBlock;

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
        this.slotted = pool.slotted();
        this.blockSize = Refs.alignGranule(blockSize);
        this.capacity = capacity;
    }

    /**
     * Allocates {@code size} bytes (rounded up to {@link Refs#GRANULE}, at least 8) of the given kind.
     *
     * @return a reference with aux 0 whose slice is 4-aligned; reused slices keep their old bytes
     * @throws OakOutOfMemoryException if the capacity is exhausted
     */
    public long allocate(long size, Kind kind) {
        long bytes = slotBytes(size);
        long ref = popFree(bytes, kind);
        if (ref == Refs.NULL) {
            ref = splitLarger(bytes, kind);
        }
        if (ref == Refs.NULL) {
            ref = bumpOrReclaim(bytes, kind);
        }
        used.add(bytes);
        return ref;
    }

    /**
     * When the free lists hold more than a quarter of the bytes in use (memory freed by sizes that
     * are no longer asked for, rather than the slices a churning map frees and reuses), takes the
     * smallest free slice of {@code kind} larger than {@code bytes} that leaves a rest of at least
     * {@link #MIN_SLOT}, up to {@link #SPLIT_REACH} times {@code bytes}: the request gets its
     * front, so the slice's start stays a slice start of its kind (see "Reuse"), and the rest is
     * pushed back in slot-sized pieces. Only the exact lists (slices up to 64 KiB) are searched,
     * through {@link #smallMarks}.
     *
     * @return the front slice, or {@link Refs#NULL} if none was split
     */
    private long splitLarger(long bytes, Kind kind) {
        long[] marks = smallMarks.get(kind.ordinal());
        long wanted = bytes / Refs.GRANULE;
        if (!stranded || marks == null || wanted >= SMALL_CLASSES - 1) {
            return Refs.NULL;
        }
        if (!freeBytesStranded()) {
            stranded = false; // a push that strands bytes again sets it again
            return Refs.NULL;
        }
        AtomicReferenceArray<LongStack> lists = smallLists(kind, false);
        if (lists == null) {
            return Refs.NULL; // closed meanwhile
        }
        long last = Math.min(SMALL_CLASSES - 1, SPLIT_REACH * wanted);
        for (long cls = nextMarked(marks, wanted + 1, last); cls >= 0; cls = nextMarked(marks, cls + 1, last)) {
            long size = cls * Refs.GRANULE;
            if (size - bytes < MIN_SLOT) {
                continue; // a rest too small to be a slice would be lost
            }
            LongStack list = lists.get((int) cls);
            long ref = popClaimed(list, size);
            if (ref == Refs.NULL) {
                unmark(marks, cls, list);
                continue;
            }
            free.add(-size);
            pushPieces(Refs.blockId(ref), Refs.offset(ref) + bytes, Refs.offset(ref) + size, kind);
            splits.increment();
            return ref;
        }
        return Refs.NULL;
    }

    /** @return true if the free lists hold more than a quarter of the bytes in use */
    private boolean freeBytesStranded() {
        return free.sum() * 4 > used.sum();
    }

    /**
     * @return the first class in {@code [from, last]} whose bit is set in {@code marks}, or -1
     *     ({@code last} below the number of classes)
     */
    private static long nextMarked(long[] marks, long from, long last) {
        if (from > last) {
            return -1;
        }
        int w = (int) (from >>> 6);
        int lastWord = (int) (last >>> 6);
        long bits = (long) MARK.getOpaque(marks, w) & (-1L << (from & 63));
        while (bits == 0) {
            if (++w > lastWord) {
                return -1;
            }
            bits = (long) MARK.getOpaque(marks, w);
        }
        long cls = ((long) w << 6) + Long.numberOfTrailingZeros(bits);
        return cls <= last ? cls : -1;
    }

    /**
     * Clears the bit of class {@code cls}, found empty, then sets it again if its list is not
     * empty after all: a push sets the bit after pushing, so a push that raced with the clearing
     * is either seen here (its volatile size) or sets the bit after the clearing.
     */
    private static void unmark(long[] marks, long cls, LongStack list) {
        MARK.getAndBitwiseAnd(marks, (int) (cls >>> 6), ~(1L << (cls & 63))); // volatile: before the size read below
        if (list != null && list.size() > 0) {
            mark(marks, cls);
        }
    }

    /**
     * Sets the bit of class {@code cls}, if it is not set: called after a push to its list, whose
     * size store the volatile read-modify-write follows (see {@link #unmark}).
     */
    private static void mark(long[] marks, long cls) {
        int w = (int) (cls >>> 6);
        long bit = 1L << (cls & 63);
        if (((long) MARK.getOpaque(marks, w) & bit) == 0) {
            MARK.getAndBitwiseOr(marks, w, bit);
        }
    }

    /**
     * Turns on whole-block reuse (see "Whole free blocks"): a block whose slices have all been
     * freed becomes fresh memory for later regions, after {@code guard} was told. Call before
     * the allocator is used or shared: from its owner's constructor.
     *
     * @throws IllegalStateException if a block was already taken
     */
    public synchronized void reuseWholeBlocks(ReuseGuard guard) {
        if (reuse != null || reserved.get() != 0 || current != null) {
            throw new IllegalStateException("whole-block reuse must be set up before the first allocation");
        }
        reuse = new WholeBlockReuse(Objects.requireNonNull(guard, "guard"));
    }

    /**
     * Recycles block {@code blockId} if {@code word}, its reuse word as just updated, says that it
     * is all free: its listed bytes stop counting as free, and it waits for a region.
     */
    private void recycleIfAllFree(WholeBlockReuse whole, int blockId, long word) {
        MemorySegment seg = segments[blockId];
        long listed;
        if (seg != null && (listed = whole.tryRecycle(blockId, word, seg.byteSize())) >= 0) {
            free.add(-listed);
            Block b = pool.block(blockId);
            // Once the allocator closed (a free may race the close: frees take no lock) the id is
            // not ours any more: no block under it, or another allocator's block made since
            // (ids are reused, warm slots too). Only a block whose segment is ours is recycled.
            if (b != null && b.segment == seg) {
                whole.offer(b);
            }
        }
    }

    /**
     * Gives back to the OS the pages of a block in which nothing is in use but slices that cannot
     * be freed yet: after a relocation pass, keys that scans which broke off still protect (see
     * {@code KeyHazards}) would otherwise keep whole blocks from emptying until the collector
     * finds those scans. For each block that {@code pinnedRefs} point into, if the slices given
     * are the only bytes of the block in use, the block is retired early (its free slices are
     * handed out no more: see {@link WholeBlockReuse#retireAllBut}), the guard is told as before
     * a reuse, and every page that none of those slices touches is discarded. Once the pinned
     * slices are freed, the block is recycled as usual. A block is retired so only while the
     * capacity has room for fresh blocks in place of the free bytes of all blocks retired so. Does
     * nothing without whole-block reuse or native access.
     *
     * @param pinnedRefs references of slices in use that nobody may free while this runs (the
     *     caller holds what keeps them from being freed), in any order; sorted by this call
     * @param sizeOf the size a pinned slice was allocated with
     * @return bytes of pages given back
     */
    public synchronized long discardAllBut(long[] pinnedRefs, LongUnaryOperator sizeOf) {
        WholeBlockReuse whole = reuse;
        if (whole == null || closed || !NativeMemory.available() || pinnedRefs.length == 0) {
            return 0;
        }
        // a reference's bits are its block id, then its offset: sorted as numbers, the slices of
        // a block come together, by offset (blocks with the top id bit set sort first: no matter)
        Arrays.sort(pinnedRefs);
        long given = 0;
        for (int from = 0; from < pinnedRefs.length; ) {
            int blockId = Refs.blockId(pinnedRefs[from]);
            int to = from;
            long pinned = 0;
            while (to < pinnedRefs.length && Refs.blockId(pinnedRefs[to]) == blockId) {
                pinned += slotBytes(sizeOf.applyAsLong(pinnedRefs[to]));
                to++;
            }
            given += discardAllBut(whole, blockId, pinnedRefs, from, to, pinned, sizeOf);
            from = to;
        }
        return given;
    }

    /** {@link #discardAllBut(long[], LongUnaryOperator)} for one block, whose pinned slices are {@code refs[from, to)}. */
    private long discardAllBut(WholeBlockReuse whole, int blockId, long[] refs, int from, int to, long pinned,
                               LongUnaryOperator sizeOf) {
        MemorySegment seg = segments[blockId];
        // a retired block's free bytes are handed out no more until it is recycled: only while
        // the capacity still has room for as many fresh ones (else writers would run out first)
        if (seg == null || capacity - reserved.get() < whole.retiredEarlyBytes() + seg.byteSize() - pinned
                || whole.retireAllBut(blockId, pinned, seg.byteSize()) < 0) {
            return 0;
        }
        free.add(-(seg.byteSize() - pinned)); // its listed entries turned stale
        whole.guard.beforeReuse(blockId); // the discarded pages read as zeros: as before a reuse
        Block block = pool.block(blockId);
        long given = 0;
        long keptTo = 0; // pages below this hold a pinned slice
        for (int i = from; i <= to; i++) {
            long start = i < to ? Refs.offset(refs[i]) : seg.byteSize();
            long gapFrom = pageCeil(keptTo);
            long gapTo = i < to ? pageFloor(start) : seg.byteSize();
            if (gapTo > gapFrom && block.discardPages(gapFrom, gapTo - gapFrom)) {
                given += gapTo - gapFrom;
            }
            if (i < to) {
                keptTo = Math.max(keptTo, start + slotBytes(sizeOf.applyAsLong(refs[i])));
            }
        }
        whole.partlyDiscarded(blockId, given);
        return given;
    }

    private static long pageFloor(long offset) {
        return offset & -PAGE;
    }

    private static long pageCeil(long offset) {
        return (offset + PAGE - 1) & -PAGE;
    }

    /** The page size that discards go by. */
    private static final long PAGE = 4096;

    /**
     * Stale free-list entries, in bytes, that may wait beyond the listed ones before a purge: at
     * least a block's worth, and not so little that small blocks purge at nearly every recycle
     * (each purge visits every list with entries).
     */
    static final long PURGE_FLOOR = 1L << 20;

    /**
     * Replaces the exhausted region with a recycled block that holds {@code bytes}, if one is
     * ready, telling the guard first; purges stale free-list entries once their bytes outnumber
     * the listed ones by {@link #PURGE_FLOOR} or a block, whichever is more. Call holding the lock.
     *
     * @return true if a recycled block became the region
     */
    private boolean reuseReadyBlock(Region exhausted, long bytes) {
        Block block = reuse.takeReady(bytes);
        if (block == null) {
            return false;
        }
        if (exhausted != null) {
            recycleRest(exhausted);
        }
        try {
            reuse.guard.beforeReuse(block.id);
        } catch (RuntimeException | Error e) {
            reuse.offer(block); // still all free: not lost, and retried by the next region
            throw e;
        }
        current = new Region(block, new AtomicLong(), block.size());
        if (reuse.staleBytes() > free.sum() + Math.max(blockSize, PURGE_FLOOR)) {
            purgeStale();
        }
        return true;
    }

    /** Drops the entries of recycled blocks from every free list. Call holding the lock. */
    private void purgeStale() {
        WholeBlockReuse whole = reuse;
        for (Kind kind : Kind.values()) {
            AtomicReferenceArray<LongStack> lists = smallLists(kind, false);
            long[] marks = smallMarks.get(kind.ordinal());
            // a list that holds entries has its bit set (see smallMarks): only those are visited
            for (long cls = lists == null ? -1 : nextMarked(marks, 0, SMALL_CLASSES - 1); cls >= 0;
                 cls = nextMarked(marks, cls + 1, SMALL_CLASSES - 1)) {
                LongStack list = lists.get((int) cls);
                if (list != null && list.size() > 0) {
                    whole.purged(cls * Refs.GRANULE * list.removeIf(whole::isStale));
                }
            }
            Map<Long, LongStack> large = largeFree.get(kind.ordinal());
            synchronized (large) {
                for (Map.Entry<Long, LongStack> e : large.entrySet()) {
                    whole.purged(e.getKey() * e.getValue().removeIf(whole::isStale));
                }
            }
        }
    }

    /** @return true if blocks whose slices are all free are reused whole ({@link #reuseWholeBlocks}) */
    public boolean reusesWholeBlocks() {
        return reuse != null;
    }

    /** For tests: how many blocks were recycled whole (0 without {@link #reuseWholeBlocks}). */
    public long recycledBlocks() {
        return reuse == null ? 0 : reuse.recycledCount();
    }

    /** @return whether this allocator made its early-retirement tables (at its first attempt to retire a block early), for tests */
    boolean madeEarlyRetirementTables() {
        WholeBlockReuse r = reuse;
        return r != null && r.madeEarlyRetirementTables();
    }

    /** For tests: bytes of recycled blocks waiting for a region (0 without {@link #reuseWholeBlocks}). */
    long readyBytes() {
        return reuse == null ? 0 : reuse.readyBytes();
    }

    /** For tests: bytes of entries of recycled blocks still on the free lists. */
    long staleFreeBytes() {
        return reuse == null ? 0 : reuse.staleBytes();
    }

    /** For tests: how many free slices {@link #allocate} split. */
    public long splitCount() {
        return splits.sum();
    }

    /**
     * Carves a new slice; at capacity, first has the reclaimers hand back the deleted slices they
     * still hold, then tries the free lists and the bump pointer (which may salvage) once more.
     * Without this, slices deleted since the last reclamation round (up to a batch of them, many
     * megabytes with large values) would stay out of reach while insertions fail.
     */
    private long bumpOrReclaim(long bytes, Kind kind) {
        try {
            return bump(bytes);
        } catch (OakOutOfMemoryException full) {
            Runnable[] hooks = reclaimers;
            if (hooks.length == 0) {
                throw full;
            }
            for (Runnable r : hooks) {
                r.run();
            }
            long ref = popFree(bytes, kind);
            return ref != Refs.NULL ? ref : bump(bytes);
        }
    }

    /**
     * Registers a reclaimer that holds deleted slices of this allocator back until it runs a
     * round: {@link #allocate} runs it when the capacity is exhausted, on the allocating thread,
     * holding no lock of this allocator. It must not allocate.
     */
    public synchronized void reclaimAtCapacity(Runnable reclaimer) {
        Runnable[] grown = Arrays.copyOf(reclaimers, reclaimers.length + 1);
        grown[reclaimers.length] = reclaimer;
        reclaimers = grown; // volatile: read without the lock by allocate
    }

    /**
     * Allocates like {@link #allocate}, but from the bump pointer only, never a freed slice, so
     * that slices one thread allocates one after the other lie side by side (unless another thread
     * bumps in between): the rebalancer lays pairs out in key order this way, while
     * {@link #fewFreeSlices()} says that memory stays bounded.
     *
     * @throws OakOutOfMemoryException if the capacity is exhausted
     */
    public long allocateFresh(long size) {
        long bytes = slotBytes(size);
        long ref = bump(bytes);
        used.add(bytes);
        return ref;
    }

    /**
     * @return true if the free lists hold at most an eighth of the bytes in use. Fresh allocations
     *     that replace live slices (which are then freed) grow the memory held only while freed
     *     slices are reused by others; past this point they must reuse them too.
     */
    public boolean fewFreeSlices() {
        return free.sum() <= used.sum() / 8;
    }

    /**
     * Whether {@code bytes} of fresh memory may be taken to relocate live slices (which are then
     * freed), for a pass that lays a whole map out anew: blocks recycled whole and waiting cover
     * them, or the blocks held afterwards stay within the capacity and within
     * {@link #RELOCATION_HEADROOM} times the bytes in use plus two blocks. A pass over a map laid
     * out at random empties no old block before it is nearly over: at its end the map holds its
     * old blocks (the bytes in use and their fragmentation) and the copies. The blocks it empties
     * are then the fresh memory of the next pass. Only with {@link #reusesWholeBlocks()}
     * (otherwise false).
     */
    public boolean roomToRelocate(long bytes) {
        WholeBlockReuse whole = reuse;
        if (whole == null) {
            return false;
        }
        long ready = whole.readyBytes();
        if (bytes <= ready) {
            return true;
        }
        long held = reserved.get() + bytes - ready;
        return held <= capacity && held <= (long) (RELOCATION_HEADROOM * used.sum()) + 2 * blockSize;
    }

    /**
     * Gives back to the OS the pages of recycled blocks waiting for a region beyond {@code keep}
     * bytes, oldest first: after a relocation pass they are as large as the old layout was, and
     * the map keeps them (for its next regions) but need not keep their memory. The guard is told
     * first, as before a reuse: the discarded pages read as zeros, a state word that a stale
     * reference whose version is 0 (eras wrap) would otherwise take for its live header; after the
     * guard, every reference into the block is older than its layout. Does nothing where blocks
     * came from {@link java.lang.foreign.Arena#allocate} (no native access).
     *
     * @return how many blocks were discarded
     */
    public int discardSurplusBlocks(long keep) {
        WholeBlockReuse whole = reuse;
        if (whole == null || whole.readyBytes() - whole.discardedBytes() <= keep) {
            return 0; // the usual case, without the lock
        }
        return discardSurplus(whole, keep);
    }

    private synchronized int discardSurplus(WholeBlockReuse whole, long keep) {
        if (closed || !NativeMemory.available()) {
            return 0;
        }
        int n = 0;
        for (Block b; (b = whole.takeSurplus(keep)) != null; n++) {
            try {
                whole.guard.beforeReuse(b.id);
            } catch (RuntimeException | Error e) {
                whole.offer(b); // still all free: not lost
                throw e;
            }
            if (!b.discardPages()) {
                whole.offer(b); // committed still: waits for a region as before
                break;
            }
            whole.offerDiscarded(b);
        }
        return n;
    }

    /**
     * @return bytes of held blocks whose pages were given back to the OS: recycled blocks
     *     ({@link #discardSurplusBlocks}) and blocks retired early ({@link #discardAllBut})
     */
    public long discardedBytes() {
        WholeBlockReuse whole = reuse;
        return whole == null ? 0 : whole.discardedBytes() + whole.partlyDiscardedBytes();
    }

    /**
     * Blocks held for relocation ({@link #roomToRelocate}), as a multiple of the bytes in use:
     * twice for the originals and their copies, and a quarter for the old blocks' fragmentation.
     * With less, a pass that had moved most pairs would stop, with no old block empty, for good.
     */
    static final double RELOCATION_HEADROOM = 2.25;

    /**
     * @return the bytes a slice of {@code size} bytes takes: at least 8, rounded up to
     *     {@link Refs#GRANULE} up to {@link #EXACT_SLOTS}, and above it up to the next of
     *     {@link #CLASSES_PER_DOUBLING} size classes between two powers of two (see "Reuse")
     */
    static long slotBytes(long size) {
        long bytes = Refs.alignGranule(Math.max(size, MIN_SLOT));
        return Math.min(classAtOrAbove(bytes, 0), classAtOrAbove(bytes, CLASS_ORIGIN));
    }

    /**
     * @return the smallest size of the series of classes counted from {@code origin} (see
     *     "Reuse") not below {@code bytes}, a multiple of the granule; {@code bytes} itself if no
     *     more than {@link #EXACT_SLOTS} beyond the origin
     */
    private static long classAtOrAbove(long bytes, long origin) {
        long payload = bytes - origin;
        if (payload <= EXACT_SLOTS) {
            return bytes;
        }
        long step = Long.highestOneBit(payload) / CLASSES_PER_DOUBLING;
        return origin + ((payload + step - 1) & -step);
    }

    /** @return the largest size of the series counted from {@code origin} not above {@code bytes} */
    private static long classAtOrBelow(long bytes, long origin) {
        long payload = bytes - origin;
        if (payload <= EXACT_SLOTS) {
            return bytes;
        }
        long step = Long.highestOneBit(payload) / CLASSES_PER_DOUBLING;
        return origin + (payload & -step);
    }

    /** Returns a slice of {@code size} bytes (the size it was allocated with) for reuse. */
    public void free(long ref, long size, Kind kind) {
        long bytes = slotBytes(size);
        used.add(-bytes);
        pushFree(Refs.withAux(ref, 0), bytes, kind);
    }

    /**
     * Puts a slice of exactly {@code bytes} bytes on its free list, counting it as free. With
     * whole-block reuse, counts it in its block's word first and tags the entry with the
     * generation read from that same update, then recycles the block if that made it all free.
     */
    private void pushFree(long ref, long bytes, Kind kind) {
        WholeBlockReuse r = reuse;
        long word = 0;
        if (r != null) {
            word = r.addFree(Refs.blockId(ref), bytes); // before the push: a claim never finds it lower
            ref = WholeBlockReuse.tag(ref, word);
        }
        free.add(bytes);
        freeList(bytes, kind, true).push(ref);
        long cls = bytes / Refs.GRANULE;
        if (cls < SMALL_CLASSES) {
            mark(smallMarks.get(kind.ordinal()), cls); // created with the list pushed to
        }
        if (!stranded && freeBytesStranded()) {
            stranded = true;
        }
        if (r != null) {
            recycleIfAllFree(r, Refs.blockId(ref), word);
        }
    }

    /**
     * Pushes {@code [from, to)} of block {@code blockId}, where no slice ever started, on the free
     * lists of {@code kind} as slices of slot sizes, largest first ({@link #allocate} looks only
     * for free slices of the slot size it needs); a last piece below {@link #MIN_SLOT} is lost.
     */
    private void pushPieces(int blockId, long from, long to, Kind kind) {
        while (to - from >= MIN_SLOT) {
            long piece = largestSlotWithin(to - from);
            pushFree(Refs.encode(blockId, from, 0), piece, kind);
            from += piece;
        }
        if (to > from && reuse != null) {
            // a 4-byte tail, which no request takes, still goes on a list: the block's free count
            // must reach its size for the block to be recycled
            pushFree(Refs.encode(blockId, from, 0), to - from, kind);
        }
    }

    /** @return the segment of the block that {@code ref} points into */
    public MemorySegment segment(long ref) {
        return segments[Refs.blockId(ref)];
    }

    /**
     * Reads byte {@code at} of the slice {@code ref} to bring its cache line in ahead of use: a
     * hint that never fails. Through the block region when the blocks lie there (a few
     * instructions, see {@link NativeMemory}), else through the block's segment if the byte is
     * within it. A stale reference, or a block freed meanwhile, yields some byte or zero.
     *
     * @param at bytes from the slice's start; any value (one beyond the slot's reach reads nothing)
     */
    public byte touch(long ref, long at) {
        if (slotted) {
            return at >= 0 && at < Refs.MAX_BLOCK_SIZE ? touchRegion(regionPosition(ref) + at) : 0;
        }
        MemorySegment seg = segment(ref);
        long off = Refs.offset(ref) + at;
        return off < seg.byteSize() ? seg.get(ValueLayout.JAVA_BYTE, off) : 0;
    }

    /**
     * @return true if this allocator's blocks lie in the block region, so that their bytes can
     *     be touched by position ({@link #regionPosition}, {@link #touchRegion})
     */
    public boolean slotted() {
        return slotted;
    }

    /**
     * @return the position in the block region of the slice {@code ref}'s first byte (meaningful
     *     only if {@link #slotted()}); a cache line's position is that of its bytes in the slice,
     *     as slots start on huge-page boundaries
     */
    public static long regionPosition(long ref) {
        return NativeMemory.slotPosition(Refs.blockId(ref)) + Refs.offset(ref);
    }

    /**
     * Reads the byte at {@code position} of the block region, to bring its line into the caches;
     * the result is meaningless. Never fails for a position from {@link #regionPosition} plus less
     * than {@link Refs#MAX_BLOCK_SIZE}, whatever the block's state (see {@link NativeMemory}).
     */
    public static byte touchRegion(long position) {
        return NativeMemory.touchRegion(position);
    }

    /** @return the segment of block {@code blockId} */
    public MemorySegment segmentOfBlock(int blockId) {
        return segments[blockId];
    }

    /** @return bytes of blocks held from the pool */
    public long reservedBytes() {
        return reserved.get();
    }

    /**
     * @return bytes of slices currently allocated and not freed; 0 once closed, when every slice
     *     went back with its block (operations still running then may not have counted theirs)
     */
    public long usedBytes() {
        return closed ? 0 : used.sum();
    }

    /** @return the size of the blocks this allocator maps (the first ones may be smaller) */
    public long blockSize() {
        return blockSize;
    }

    /** @return the configured capacity in bytes */
    public long capacity() {
        return capacity;
    }

    /**
     * Arranges for this allocator to be {@linkplain #close() closed} once {@code owner} becomes
     * unreachable (see the class comment). Call once, from the owner's constructor.
     *
     * @return the registration; the owner's {@code close()} calls its {@code clean()}, which closes
     *     this allocator at once and cancels the registration
     */
    public Cleaner.Cleanable closeWhenUnreachable(Object owner) {
        return CLEANER.register(owner, this::close); // a bound reference to this allocator, not to the owner
    }

    /** @return true once {@link #close()} has run (by the owner, or because the owner was unreachable) */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Gives every block back to the pool (unmapping it). Idempotent. Blocks of an owner dropped
     * unclosed (this runs on the cleaner's thread then) go straight back to the OS, not into the
     * pool's warm blocks: nothing is waiting to reuse them at that moment, and it keeps the pool's
     * keeper thread out of the way of threads that never close their maps, such as Lincheck's
     * invocations, whose checker the keeper's timing would confuse (see {@code BlockPool}).
     */
    public synchronized void close() {
        if (closed) {
            return;
        }
        boolean keepWarm = Thread.currentThread() != cleanerThread;
        closed = true;
        current = null;
        awaitSpare();
        if (spare != null) {
            pool.release(spare, keepWarm);
            spare = null;
        }
        if (reuse != null) {
            reuse.dropReady(); // owned blocks, released below
        }
        for (Block b : owned) {
            pool.release(b, keepWarm);
        }
        owned.clear();
        reserved.set(0);
        smallFree.set(0, null); // let the heap metadata go with the memory
        smallFree.set(1, null);
        largeFree.forEach(m -> { synchronized (m) { m.clear(); } });
    }

    private long popFree(long bytes, Kind kind) {
        long ref = popClaimed(freeList(bytes, kind, false), bytes);
        if (ref != Refs.NULL) {
            free.add(-bytes);
        }
        return ref;
    }

    /**
     * Pops a free slice of {@code bytes} bytes from {@code list} (null: none), dropping entries
     * of blocks recycled since they were pushed when whole blocks are reused.
     *
     * @return its reference, aux 0, or {@link Refs#NULL}
     */
    private long popClaimed(LongStack list, long bytes) {
        if (list == null) {
            return Refs.NULL;
        }
        WholeBlockReuse r = reuse;
        while (true) {
            long ref = list.pop();
            if (r == null || ref == Refs.NULL) {
                return ref; // entries carry aux 0 without reuse
            }
            if (r.claim(ref, bytes)) {
                return Refs.withAux(ref, 0);
            }
        }
    }

    private LongStack freeList(long bytes, Kind kind, boolean create) {
        long cls = bytes / Refs.GRANULE;
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
            smallMarks.compareAndSet(kind.ordinal(), null, new long[SMALL_CLASSES / 64]); // before the lists
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
        if (reuse != null && current == exhausted && !closed && reuseReadyBlock(exhausted, bytes)) {
            return;
        }
        if (!spareInFlight || hugeAlways || capacity - reserved.get() < Math.max(nextBlockSize(), bytes)) {
            awaitSpare(); // no spare coming, no room for a block beside it, or huge pages wanted: the spare is the block
        }
        if (closed) {
            throw new dev.oakmap.OakClosedException();
        }
        if (current != exhausted) {
            return; // another thread already switched blocks
        }
        if (exhausted != null) {
            recycleRest(exhausted);
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
        owned.add(block);
        segments[block.id] = block.segment;
        current = new Region(block, new AtomicLong(), block.size());
        if (owned.size() >= 2) {
            mapSpareAhead();
        }
    }

    /**
     * Puts what is left of a region that is being replaced on the free lists, so that it is not
     * lost: the end of a block, or, at capacity, most of a salvaged slice (a region
     * carved from a freed slice is replaced as soon as a request does not fit in what is left, and
     * each such rest used to be lost until the map was closed: under churn at capacity the losses
     * added up until insertions failed with the map nearly empty). The rest is claimed first
     * (an atomic swap of the region's top to its limit), so no thread can still carve from it. No
     * slice ever started inside it, so no stale reference points into it. It goes back in
     * slot-sized pieces ({@link #pushPieces}): a rest of its exact size above {@link #EXACT_SLOTS}
     * (rarely a slot size) waited for {@link #salvage} at capacity and was never reused before.
     * Call holding the lock.
     */
    private void recycleRest(Region r) {
        long top = r.top.getAndSet(r.limit);
        pushPieces(r.block.id, top, r.limit, Kind.VALUE); // with whole-block reuse, may recycle the block
    }

    /**
     * @return the largest slot size ({@link #slotBytes}) not above {@code bytes}, which must be at
     *     least {@link #MIN_SLOT}: a free slice of that size is one that {@link #allocate} hands out
     */
    static long largestSlotWithin(long bytes) {
        long b = bytes & -Refs.GRANULE;
        return Math.max(classAtOrBelow(b, 0), classAtOrBelow(b, CLASS_ORIGIN));
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
        long size = Math.min(Math.max(nextBlockSize(), bytes), room & -Refs.GRANULE);
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
        // 1M Druid rows of 300 B: 1.57-1.74 s without, 1.17-1.22 s with), and as small pages,
        // which the writer gets quickly whatever the host.
        boolean first = owned.isEmpty();
        Block block = pool.allocate(size, !first, first || hugeAlways);
        reserved.addAndGet(size);
        writerMapped++;
        lastBlock = size;
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
        boolean interrupted = false;
        while (spareInFlight) {
            try {
                wait();
            } catch (InterruptedException e) {
                interrupted = true; // the mapping ends soon; keep the interrupt for the caller
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** For tests: waits until no spare is being mapped. */
    synchronized void awaitSpareMapped() {
        awaitSpare();
    }

    /** For tests: how many blocks writers mapped themselves (not taken from a spare). */
    synchronized long blocksMappedByWriters() {
        return writerMapped;
    }

    /** For tests: maps every block as huge pages, as {@code -Doak.hugePages=always} does. */
    synchronized void mapEveryBlockHuge() {
        hugeAlways = true;
    }

    /** For tests: whether the next spare will be mapped as huge pages. */
    synchronized boolean sparesHuge() {
        return spareHuge;
    }

    /**
     * Starts mapping a spare block on a background thread, if there is none yet and it fits in
     * the capacity. Call holding the lock. The spare is counted as reserved from now on, so the
     * capacity holds while it is in flight.
     */
    private void mapSpareAhead() {
        long size = nextBlockSize();
        if (size < MAP_AHEAD_MIN_BLOCK || spare != null || spareInFlight || closed
                || capacity - reserved.get() < size) {
            return;
        }
        spareInFlight = true;
        reserved.addAndGet(size);
        long before = lastBlock;
        lastBlock = size;
        boolean huge = spareHuge;
        try {
            Thread.ofPlatform().daemon().name("oak-block-ahead").start(() -> depositSpare(size, huge));
        } catch (Throwable t) { // no thread to be had: the next block is mapped on demand, as before
            spareInFlight = false;
            reserved.addAndGet(-size);
            lastBlock = before;
        }
    }

    /**
     * @return the size of the next block to map: twice the last one (which an oversized slice may
     *     have made larger), from {@link #FIRST_BLOCK} up to the block size (see "Growth"). Call
     *     holding the lock.
     */
    private long nextBlockSize() {
        return Math.min(blockSize, lastBlock == 0 ? FIRST_BLOCK : 2 * lastBlock);
    }

    /** The background half of {@link #mapSpareAhead}: maps the block and hands it over. */
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

    /**
     * At capacity, turns a free slice (of either kind, large enough for {@code bytes}) into the
     * bump region, so space freed by removals serves any later allocation. A slice keeps its
     * first {@link #TOMBSTONE_BYTES}, which hold its state word, as a permanent tombstone (it
     * still says DELETED), so
     * stale references to it keep failing their version check; only its interior is reused. No
     * address inside a slice's interior was ever the start of a slice, so no stale reference can
     * point there.
     *
     * @return true if a region was installed
     */
    private boolean salvage(long bytes) {
        for (Kind kind : new Kind[] {Kind.VALUE, Kind.KEY}) {
            // a header-bearing slice keeps its state word (harmless for the others), and the region
            // starts at the next 8-byte boundary after it
            long keep = TOMBSTONE_BYTES + 4;
            AtomicReferenceArray<LongStack> lists = smallLists(kind, false);
            for (int cls = lists == null ? 0 : SMALL_CLASSES - 1;
                 cls > 0 && (long) cls * Refs.GRANULE >= bytes + keep; cls--) {
                long ref = popClaimed(lists.get(cls), (long) cls * Refs.GRANULE);
                if (ref != Refs.NULL) {
                    free.add(-(long) cls * Refs.GRANULE);
                    installSalvaged(ref, (long) cls * Refs.GRANULE);
                    return true;
                }
            }
            Map<Long, LongStack> large = largeFree.get(kind.ordinal());
            synchronized (large) {
                for (Map.Entry<Long, LongStack> e : large.entrySet()) {
                    if (e.getKey() >= bytes + keep) {
                        long ref = popClaimed(e.getValue(), e.getKey());
                        if (ref != Refs.NULL) {
                            free.add(-e.getKey());
                            installSalvaged(ref, e.getKey());
                            return true;
                        }
                    }
                }
            }
        }
        return false;
    }

    private void installSalvaged(long ref, long size) {
        Block block = pool.block(Refs.blockId(ref));
        // 8-aligned, so that a client that allocates only multiples of 8 keeps 8-aligned slices
        long start = (Refs.offset(ref) + TOMBSTONE_BYTES + 7) & ~7L;
        used.add(start - Refs.offset(ref)); // the tombstone stays in use; the rest is counted as it is carved
        current = new Region(block, new AtomicLong(start), Refs.offset(ref) + size);
    }
}
