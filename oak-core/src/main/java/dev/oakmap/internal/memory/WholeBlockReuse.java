package dev.oakmap.internal.memory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.LongAdder;

/**
 * The bookkeeping by which a {@link BlockAllocator} hands out a block whose slices have all been
 * freed as fresh memory again, instead of only slice by slice (see the allocator's "Whole free
 * blocks"). Off unless the allocator's owner asks for it ({@link BlockAllocator#reuseWholeBlocks}).
 *
 * <h2>A word per block</h2>
 * Each block id has one {@code long}: how many bytes of the block are free (in granules, the low
 * 37 bits) and the block's <em>generation</em> (the next 26). A byte counts as free once it was
 * handed out and freed, or pushed on the free lists as part of a region's uncarved rest
 * ({@code BlockAllocator.recycleRest}); the bytes a bump region has not carved yet do not count.
 * So the count reaches the block's size exactly when every byte of the block is on the free
 * lists: while the block is a region with bytes left to carve, it cannot (and once its region
 * has carved it all, it may be recycled while still nominally the region, which is harmless, as
 * that region has nothing left to hand out). Bumping costs nothing here; only freeing and
 * reusing a slice touch the word.
 *
 * <h2>Free-list entries carry their block's generation</h2>
 * A slice going to the free lists is first counted free ({@link #addFree}, which returns the
 * word), then pushed with the generation read from that same atomic update in its reference's
 * aux field. Taking a slice off a list ({@link #claim}) decrements the count by a CAS that also
 * requires the entry's generation to be the block's: so a slice is never handed out from a block
 * that was recycled after it was pushed. Because the count is raised before the push, a claim
 * never finds it lower than the entry it takes, and because a claim lowers it, a block one of
 * whose slices was just taken is not all free.
 *
 * <h2>Recycling</h2>
 * The thread whose free makes the count reach the block's size tries one CAS from that exact
 * word to the next generation with a count of zero. At most one thread succeeds, and only if no slice was claimed meanwhile.
 * Its entries still on the free lists are now stale: claims drop them, and {@link #isStale} lets
 * the allocator purge them once stale bytes outnumber the listed ones (so their heap cost stays
 * bounded by what the free lists would hold anyway). The block then waits in {@link #ready}
 * until a region needs a block; before its bytes are carved again the owner's {@link BlockAllocator.ReuseGuard} is
 * told, so that references into its old layout can be told apart from the new one.
 *
 * <h2>Early retirement</h2>
 * A block may empty but for a few slices that cannot be freed yet (keys that unfinished scans
 * protect, after a relocation pass). {@link #retireAllBut} then bumps its generation as a
 * recycle would, but leaves its free count where it is: its listed entries turn stale, so none of
 * its slices is handed out again, and the owner may give back the pages the pinned slices do not
 * touch. When the pinned slices are freed, the count reaches the block's size and the block is
 * recycled as any other ({@link #tryRecycle} forgets the early retirement's bookkeeping).
 *
 * <p>Generations wrap after 2^26 recycles of one block; an entry that waited on a free list
 * through exactly that many recycles of its block would be taken as current. The free lists
 * are purged long before (every time stale bytes outnumber the listed ones).
 */
final class WholeBlockReuse {

    private static final int FREE_BITS = 37;
    private static final long FREE_MASK = (1L << FREE_BITS) - 1;
    static final int GEN_BITS = 26;
    private static final long GEN_MASK = (1L << GEN_BITS) - 1;
    private static final VarHandle WORD = MethodHandles.arrayElementVarHandle(long[].class);

    private final long[] words = new long[Refs.MAX_BLOCK_ID + 1];
    final BlockAllocator.ReuseGuard guard;
    /**
     * Recycled blocks waiting to become a region (lock-free: the free path takes no allocator
     * lock). Added to by {@link #offer}, taken from by {@link #takeReady}.
     */
    private final ConcurrentLinkedDeque<Block> ready = new ConcurrentLinkedDeque<>();
    /** Bytes of the blocks on {@link #ready} and {@link #discarded}; read racily, as an estimate. */
    private final LongAdder readyBytes = new LongAdder();
    /**
     * Recycled blocks whose pages were given back to the OS ({@link BlockAllocator#discardSurplusBlocks}),
     * taken after those of {@link #ready}. Added to and taken from holding the allocator's lock.
     */
    private final ConcurrentLinkedDeque<Block> discarded = new ConcurrentLinkedDeque<>();
    /** Bytes of the blocks on {@link #discarded}. */
    private final LongAdder discardedBytes = new LongAdder();
    /** Bytes of stale entries still on the free lists. */
    private final LongAdder stale = new LongAdder();
    private final LongAdder recycled = new LongAdder();

    WholeBlockReuse(BlockAllocator.ReuseGuard guard) {
        this.guard = guard;
    }

    private static int generation(long word) {
        return (int) ((word >>> FREE_BITS) & GEN_MASK);
    }

    /**
     * Counts {@code bytes} of block {@code blockId} as free.
     *
     * @return the block's word after the update: the generation to tag the free-list entry with,
     *     and what {@link #tryRecycle} needs
     */
    long addFree(int blockId, long bytes) {
        long granules = bytes / Refs.GRANULE;
        // an add, not a CAS: the count cannot overflow into the generation (at most a block's size)
        return (long) WORD.getAndAdd(words, blockId, granules) + granules;
    }

    /** @return {@code ref} tagged with the generation of {@code word} (its aux field) */
    static long tag(long ref, long word) {
        return Refs.withAux(ref, generation(word));
    }

    /**
     * Takes a slice of {@code bytes} bytes, popped from a free list, off its block's free count,
     * if the entry's generation is still its block's.
     *
     * @return false if the entry is stale (its block was recycled since it was pushed): drop it
     */
    boolean claim(long taggedRef, long bytes) {
        int blockId = Refs.blockId(taggedRef);
        long granules = bytes / Refs.GRANULE;
        while (true) {
            long w = (long) WORD.getVolatile(words, blockId);
            if (generation(w) != Refs.aux(taggedRef)) {
                stale.add(-bytes);
                return false;
            }
            if (WORD.compareAndSet(words, blockId, w, w - granules)) {
                return true;
            }
        }
    }

    /**
     * Recycles the block if {@code word} (produced by an update of this thread) says that all of
     * its {@code size} bytes are free, and the word has not changed since. Lock-free, as the
     * free path is; also forgets an early retirement of the block ({@link #retireAllBut}).
     *
     * @return -1 if this call did not recycle it; else the bytes of its free-list entries that
     *     counted as listed until now (all of them, or those freed since an early retirement): the
     *     caller puts the block on {@link #ready} and stops counting them as free
     */
    long tryRecycle(int blockId, long word, long size) {
        if ((word & FREE_MASK) * Refs.GRANULE != size) {
            return -1;
        }
        long next = (long) ((generation(word) + 1) & GEN_MASK) << FREE_BITS; // nothing free
        if (!WORD.compareAndSet(words, blockId, word, next)) {
            return -1;
        }
        // set before the CAS that retired the block early, which this CAS follows (and the
        // tables were made before that: none here means that no block was retired early)
        EarlyRetirements e = earlyRetirements;
        long early = 0;
        if (e != null) {
            early = (long) WORD.getAndSet(e.retiredEarly, blockId, 0L);
            retiredEarlyBytes.add(-early);
            partlyDiscardedBytes.add(-(long) WORD.getAndSet(e.partlyDiscarded, blockId, 0L));
        }
        stale.add(size - early); // the rest went stale when it was retired early
        recycled.increment();
        return size - early;
    }

    /**
     * The per-block tables of early retirements, made by the first {@link #retireAllBut} (under
     * the allocator's lock; a volatile write, before that retirement's CAS): only maps that place
     * pairs retire blocks early, and the two tables take 64 KiB, half of an empty map's heap.
     */
    private volatile EarlyRetirements earlyRetirements;

    /** Per block id, accessed through {@link #WORD}. */
    private static final class EarlyRetirements {
        /**
         * Bytes of each block whose free-list entries {@link #retireAllBut} made stale before the
         * block was recycled (they no longer count as listed); 0 for other blocks. Set before the
         * CAS that retires the block, so that the thread whose {@link #tryRecycle} later wins it
         * reads it, and taken back by that thread. (A retirement whose CAS fails clears it again;
         * a recycle racing that, of a block all free, would count its stale bytes short:
         * {@link #staleBytes} is an estimate that only paces purges.)
         */
        final long[] retiredEarly = new long[Refs.MAX_BLOCK_ID + 1];
        /** Bytes of pages given back by {@link BlockAllocator#discardAllBut}, per block, until it is recycled. */
        final long[] partlyDiscarded = new long[Refs.MAX_BLOCK_ID + 1];
    }

    private final LongAdder partlyDiscardedBytes = new LongAdder();
    private final LongAdder retiredEarlyBytes = new LongAdder();

    /**
     * Retires block {@code blockId} early, if its only bytes in use are {@code pinned} bytes
     * (slices nobody may free yet; the caller knows which): bumps its generation, as
     * {@link #tryRecycle} does, but leaves its free count at {@code size - pinned}. Every entry of
     * the block then on the free lists turns stale, so no slice of the block is handed out again
     * before the pinned ones are freed too, and then the block is recycled as usual. Call holding
     * the allocator's lock.
     *
     * @return the bytes of the block's listed entries that turned stale, or -1 if the block holds
     *     more than {@code pinned} bytes in use (or a region still carves it), was retired early
     *     already, or changed meanwhile
     */
    long retireAllBut(int blockId, long pinned, long size) {
        EarlyRetirements e = earlyRetirements;
        if (e == null) {
            e = new EarlyRetirements();
            earlyRetirements = e; // under the allocator's lock: made once
        }
        long word = (long) WORD.getVolatile(words, blockId);
        long listed = (word & FREE_MASK) * Refs.GRANULE;
        if ((long) WORD.getVolatile(e.retiredEarly, blockId) != 0 || pinned <= 0 || listed != size - pinned) {
            return -1;
        }
        long next = ((long) ((generation(word) + 1) & GEN_MASK) << FREE_BITS) | (word & FREE_MASK);
        WORD.setVolatile(e.retiredEarly, blockId, listed); // before the CAS: see tryRecycle
        if (!WORD.compareAndSet(words, blockId, word, next)) {
            WORD.setVolatile(e.retiredEarly, blockId, 0L);
            return -1;
        }
        stale.add(listed);
        retiredEarlyBytes.add(listed);
        return listed;
    }

    /**
     * Counts {@code bytes} of pages of early-retired block {@code blockId} as given back, unless
     * the block was recycled meanwhile (then {@link #tryRecycle} has forgotten it, and the count
     * is taken back here: whichever side takes the block's figure takes it once).
     */
    void partlyDiscarded(int blockId, long bytes) {
        EarlyRetirements e = earlyRetirements; // made by the retirement of this block
        WORD.getAndAdd(e.partlyDiscarded, blockId, bytes);
        partlyDiscardedBytes.add(bytes);
        if ((long) WORD.getVolatile(e.retiredEarly, blockId) == 0) {
            partlyDiscardedBytes.add(-(long) WORD.getAndSet(e.partlyDiscarded, blockId, 0L));
        }
    }

    /** @return whether the early-retirement tables were made (by a first {@link #retireAllBut}, successful or not), for tests */
    boolean madeEarlyRetirementTables() {
        return earlyRetirements != null;
    }

    /** @return free bytes of blocks retired early and not yet recycled: not handed out meanwhile */
    long retiredEarlyBytes() {
        return retiredEarlyBytes.sum();
    }

    /** @return bytes of pages given back by early retirements of blocks not yet recycled */
    long partlyDiscardedBytes() {
        return partlyDiscardedBytes.sum();
    }

    /** @return true if free-list entry {@code taggedRef} belongs to an earlier generation of its block */
    boolean isStale(long taggedRef) {
        long w = (long) WORD.getVolatile(words, Refs.blockId(taggedRef));
        return generation(w) != Refs.aux(taggedRef);
    }

    /** Counts {@code bytes} of stale entries dropped by a purge. */
    void purged(long bytes) {
        stale.add(-bytes);
    }

    /** @return bytes of stale entries still on the free lists */
    long staleBytes() {
        return stale.sum();
    }

    /** @return how many blocks were recycled */
    long recycledCount() {
        return recycled.sum();
    }

    /** Puts all-free block {@code b} on {@link #ready}, for the next region. */
    void offer(Block b) {
        readyBytes.add(b.size());
        ready.push(b);
    }

    /** @return bytes of recycled blocks waiting for a region (an estimate while they come and go) */
    long readyBytes() {
        return readyBytes.sum();
    }

    /** @return bytes of recycled blocks waiting whose pages were given back to the OS */
    long discardedBytes() {
        return discardedBytes.sum();
    }

    /** Forgets the ready blocks (the allocator is closing and releases every block it owns). */
    void dropReady() {
        partlyDiscardedBytes.reset();
        retiredEarlyBytes.reset();
        ready.clear();
        discarded.clear();
        readyBytes.reset();
        discardedBytes.reset();
    }

    /**
     * @return a recycled block of at least {@code bytes} bytes, taken off {@link #ready} (or, if
     *     none is there, off {@link #discarded}), or null
     */
    Block takeReady(long bytes) {
        Block b = takeFrom(ready, bytes);
        if (b == null && (b = takeFrom(discarded, bytes)) != null) {
            discardedBytes.add(-b.size());
        }
        return b;
    }

    private Block takeFrom(ConcurrentLinkedDeque<Block> blocks, long bytes) {
        for (Iterator<Block> it = blocks.iterator(); it.hasNext(); ) {
            Block b = it.next();
            if (b.size() >= bytes && blocks.removeFirstOccurrence(b)) {
                readyBytes.add(-b.size());
                return b;
            }
        }
        return null;
    }

    /**
     * @return the block that waited longest on {@link #ready}, taken off it, if the ready blocks
     *     whose pages are still committed hold more than {@code keep} bytes; else null
     */
    Block takeSurplus(long keep) {
        if (readyBytes.sum() - discardedBytes.sum() <= keep) {
            return null;
        }
        Block b = ready.pollLast(); // offer pushes at the head
        if (b != null) {
            readyBytes.add(-b.size());
        }
        return b;
    }

    /** Puts all-free block {@code b}, whose pages were given back, on {@link #discarded}. */
    void offerDiscarded(Block b) {
        readyBytes.add(b.size());
        discardedBytes.add(b.size());
        discarded.push(b);
    }
}
