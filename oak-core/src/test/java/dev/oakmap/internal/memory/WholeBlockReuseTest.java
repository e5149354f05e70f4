package dev.oakmap.internal.memory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Whole-block reuse ({@link BlockAllocator#reuseWholeBlocks}): a block whose slices were all freed
 * is carved again, after the guard is told, and never while a slice of it is live or one of its
 * old free-list entries could still be handed out.
 */
class WholeBlockReuseTest {

    private static final long BLOCK = 1 << 16; // every block is 64 KiB: none is mapped ahead
    /** Blocks for the concurrent churn, small so that they empty often. */
    private static final long SMALL_BLOCK = 1 << 13;

    /**
     * The stamps' layout: plain reads and writes at slice offsets, which are 4-aligned only. This
     * test makes no atomic access to off-heap memory (atomic words must be 8-aligned).
     */
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    /** Writes {@code stamp} at both ends of slice {@code ref} of {@code size} bytes. */
    private static void stamp(BlockAllocator a, long ref, long size, long stamp) {
        MemorySegment seg = a.segment(ref);
        seg.set(LONG, Refs.offset(ref), stamp);
        seg.set(LONG, Refs.offset(ref) + size - 8, stamp);
    }

    /** Asserts that nobody wrote over the stamps of slice {@code ref}. */
    private static void assertStamped(BlockAllocator a, long ref, long size, long stamp) {
        MemorySegment seg = a.segment(ref);
        assertEquals(stamp, seg.get(LONG, Refs.offset(ref)), "slice start overwritten");
        assertEquals(stamp, seg.get(LONG, Refs.offset(ref) + size - 8), "slice end overwritten");
    }

    @Test
    void aBlockWhoseSlicesAreAllFreedIsCarvedAgainBeforeANewOneIsMapped() {
        List<Integer> told = new ArrayList<>();
        BlockAllocator a = reusing(told::add);
        try {
            List<long[]> live = new ArrayList<>();
            while (a.reservedBytes() < 3 * BLOCK) {
                long ref = a.allocate(1000, BlockAllocator.Kind.VALUE);
                stamp(a, ref, 1000, live.size());
                live.add(new long[] {ref, 1000, live.size()});
            }
            int first = Refs.blockId(live.get(0)[0]);
            List<long[]> firstBlock = live.stream().filter(s -> Refs.blockId(s[0]) == first).toList();
            for (long[] s : firstBlock.subList(0, firstBlock.size() - 1)) {
                a.free(s[0], s[1], BlockAllocator.Kind.VALUE);
            }
            assertEquals(0, a.recycledBlocks(), "a block with a live slice was recycled");
            a.free(firstBlock.getLast()[0], 1000, BlockAllocator.Kind.VALUE);
            assertEquals(1, a.recycledBlocks());
            assertTrue(told.isEmpty(), "the guard is told when the block is carved, not before");
            live.removeAll(firstBlock);

            long reserved = a.reservedBytes();
            List<long[]> fresh = new ArrayList<>();
            while (told.isEmpty() || fresh.size() < 10) { // past the current block, into the recycled one
                long ref = a.allocate(1000, BlockAllocator.Kind.VALUE);
                fresh.add(new long[] {ref, 1000, -1 - fresh.size()});
                stamp(a, ref, 1000, -1 - fresh.size() + 1);
            }
            assertEquals(List.of(first), told);
            assertEquals(reserved, a.reservedBytes(), "a new block was mapped while a free one was ready");
            long firstRecarved = fresh.stream().filter(s -> Refs.blockId(s[0]) == first).findFirst().orElseThrow()[0];
            assertEquals(0, Refs.offset(firstRecarved), "the recycled block is carved from its start");
            List<List<long[]>> all = List.of(live, fresh);
            BlockPoolTest.assertNoneOverlap(all); // its old free-list entries were not handed out
            for (long[] s : live) {
                assertStamped(a, s[0], s[1], s[2]);
            }
        } finally {
            a.close();
        }
    }

    /**
     * Values that grow by a fifth at each step (1,000 B to 6,200 B), replaced one at a time in
     * random order: with whole blocks reused, the memory held stays within about twice the
     * largest live set (the old and new generation side by side); the free lists alone keep
     * every size's slices, which no larger size can take.
     */
    @Test
    void valuesThatGrowReuseTheBlocksOfSmallerOnes() {
        long withReuse = reservedAfterGrowth(true);
        long without = reservedAfterGrowth(false);
        long maxLive = 500L * BlockAllocator.slotBytes(GROWTH[GROWTH.length - 1]);
        assertTrue(withReuse <= 2.5 * maxLive + 4 * BLOCK,
                "held " + withReuse + " bytes for at most " + maxLive + " live (" + without + " without reuse)");
        assertTrue(without > 2 * withReuse, "without reuse " + without + ", with " + withReuse);
    }

    private static final long[] GROWTH = {1000, 1200, 1440, 1730, 2070, 2490, 2990, 3580, 4300, 5160, 6200};

    private static long reservedAfterGrowth(boolean reuse) {
        BlockAllocator a = new BlockAllocator(new BlockPool(), BLOCK, 1L << 30);
        if (reuse) {
            a.reuseWholeBlocks(id -> { });
        }
        try {
            SplittableRandom rnd = new SplittableRandom(7);
            long[] refs = new long[500];
            long[] sizes = new long[500];
            for (long size : GROWTH) {
                List<Integer> order = new ArrayList<>();
                for (int i = 0; i < refs.length; i++) {
                    order.add(i);
                }
                Collections.shuffle(order, new Random(rnd.nextLong()));
                for (int i : order) {
                    long ref = a.allocate(size, BlockAllocator.Kind.VALUE);
                    if (refs[i] != Refs.NULL) {
                        a.free(refs[i], sizes[i], BlockAllocator.Kind.VALUE);
                    }
                    refs[i] = ref;
                    sizes[i] = size;
                }
            }
            if (reuse) {
                assertTrue(a.recycledBlocks() > 50, "recycled " + a.recycledBlocks());
            }
            return a.reservedBytes();
        } finally {
            a.close();
        }
    }

    /**
     * Sizes that never repeat leave the entries of recycled blocks on lists nobody pops: they are
     * purged, so their count stays bounded instead of growing with every recycle.
     */
    @Test
    void entriesOfRecycledBlocksDoNotPileUp() {
        BlockAllocator a = reusing(id -> { });
        try {
            long[] refs = new long[300];
            for (int cycle = 0; cycle < 60; cycle++) {
                long size = 1000 + 40L * cycle; // a new size class every cycle
                for (int i = 0; i < refs.length; i++) {
                    refs[i] = a.allocate(size, BlockAllocator.Kind.VALUE);
                }
                for (long ref : refs) {
                    a.free(ref, size, BlockAllocator.Kind.VALUE);
                }
            }
            assertTrue(a.recycledBlocks() > 100, "recycled " + a.recycledBlocks());
            // without purges, about 30 MB by now
            assertTrue(a.staleFreeBytes() <= BlockAllocator.PURGE_FLOOR + 20 * BLOCK,
                    "stale entries of " + a.staleFreeBytes() + " bytes");
            assertTrue(a.reservedBytes() <= 20 * BLOCK, "held " + a.reservedBytes());
        } finally {
            a.close();
        }
    }

    /**
     * Four threads churn slices whose sizes drift upwards, keys and values, freeing most; each
     * slice carries a stamp at both ends that is checked when it is freed. A block recycled while
     * a slice of it was live, or a stale free-list entry handed out, would let a thread carve over
     * another's slice and fail a check.
     */
    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {101, 202, 303, 404})
    void concurrentChurnNeverCarvesOverALiveSlice(long firstSeed) throws Exception {
        BlockAllocator a = new BlockAllocator(new BlockPool(), SMALL_BLOCK, 1L << 30);
        CopyOnWriteArrayList<Integer> told = new CopyOnWriteArrayList<>();
        a.reuseWholeBlocks(told::add);
        int threads = 4;
        List<List<long[]>> live = new ArrayList<>();
        Thread[] ts = new Thread[threads];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try {
            for (int t = 0; t < threads; t++) {
                List<long[]> mine = new ArrayList<>();
                live.add(mine);
                long seed = firstSeed + t;
                long base = (long) t << 40;
                ts[t] = new Thread(() -> {
                    try {
                        SplittableRandom rnd = new SplittableRandom(seed);
                        BlockAllocator.Kind[] kinds = BlockAllocator.Kind.values();
                        for (int i = 0; i < 60_000; i++) {
                            long size = 16 + 4L * rnd.nextInt(10 + i / 200); // 16 B up to 1.2 KB, growing
                            int kind = rnd.nextInt(2);
                            long ref = a.allocate(size, kinds[kind]);
                            stamp(a, ref, size, base + i);
                            mine.add(new long[] {ref, size, kind, base + i});
                            while (mine.size() > 50 || (!mine.isEmpty() && rnd.nextInt(10) < 4)) {
                                long[] gone = mine.remove(rnd.nextInt(mine.size()));
                                assertStamped(a, gone[0], gone[1], gone[3]);
                                a.free(gone[0], gone[1], kinds[(int) gone[2]]);
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                ts[t].start();
            }
            for (Thread t : ts) {
                t.join();
            }
            assertNull(failure.get(), () -> "a thread failed: " + failure.get());
            BlockPoolTest.assertNoneOverlap(live);
            for (List<long[]> mine : live) {
                for (long[] s : mine) {
                    assertStamped(a, s[0], s[1], s[3]);
                }
            }
            assertTrue(a.recycledBlocks() > 100, "recycled " + a.recycledBlocks());
            assertTrue(told.size() > 50, "reused " + told.size());
            System.out.println("churn: recycled " + a.recycledBlocks() + ", reused " + told.size() + ", held " + a.reservedBytes());
            assertTrue(a.reservedBytes() < 160 * SMALL_BLOCK, "held " + a.reservedBytes()); // 200 live slices under 1.2 KB
        } finally {
            a.close();
        }
    }

    /** A guard that fails leaves the block ready: the allocation fails, and the next one reuses it. */
    @Test
    void aFailingGuardLosesNoBlock() {
        BlockAllocator a = new BlockAllocator(new BlockPool(), BLOCK, 1L << 30);
        List<Integer> told = new ArrayList<>();
        boolean[] fail = {true};
        a.reuseWholeBlocks(id -> {
            told.add(id);
            if (fail[0]) {
                fail[0] = false;
                throw new IllegalStateException("guard failed");
            }
        });
        try {
            List<Long> first = new ArrayList<>();
            long ref = a.allocate(1000, BlockAllocator.Kind.VALUE);
            int firstBlock = Refs.blockId(ref);
            while (Refs.blockId(ref) == firstBlock) {
                first.add(ref);
                ref = a.allocate(1000, BlockAllocator.Kind.VALUE);
            }
            for (long r : first) {
                a.free(r, 1000, BlockAllocator.Kind.VALUE);
            }
            assertEquals(1, a.recycledBlocks());
            IllegalStateException failed = null;
            long reserved = a.reservedBytes();
            while (failed == null) {
                try {
                    a.allocate(1000, BlockAllocator.Kind.VALUE);
                } catch (IllegalStateException e) {
                    failed = e;
                }
            }
            assertEquals("guard failed", failed.getMessage());
            long next = a.allocate(1000, BlockAllocator.Kind.VALUE);
            assertEquals(firstBlock, Refs.blockId(next), "the block was not reused after the guard failed");
            assertEquals(List.of(firstBlock, firstBlock), told);
            assertEquals(reserved, a.reservedBytes());
        } finally {
            a.close();
        }
    }

    @Test
    void reuseMustBeSetUpBeforeTheFirstAllocation() {
        BlockAllocator a = new BlockAllocator(new BlockPool(), BLOCK, 1L << 30);
        try {
            a.allocate(100, BlockAllocator.Kind.VALUE);
            assertThrows(IllegalStateException.class, () -> a.reuseWholeBlocks(id -> { }));
        } finally {
            a.close();
        }
    }

    /** @return an allocator of {@link #BLOCK}-byte blocks, 1 GiB of capacity, reusing blocks whole behind {@code guard} */
    private static BlockAllocator reusing(BlockAllocator.ReuseGuard guard) {
        BlockAllocator a = new BlockAllocator(new BlockPool(), BLOCK, 1L << 30);
        a.reuseWholeBlocks(guard);
        return a;
    }

    /**
     * A free that races its allocator's close (frees take no lock) can empty a block after the
     * close gave it back, when the pool may have made another allocator's block under the same id.
     * That block is not the closed allocator's to recycle: it is never offered for reuse there.
     */
    @Test
    void aFreeAfterTheCloseNeverRecyclesTheBlockNowUnderItsId() {
        BlockPool pool = new BlockPool();
        BlockAllocator a = new BlockAllocator(pool, BLOCK, 1L << 30);
        a.reuseWholeBlocks(id -> { });
        List<Long> refs = fillBlocks(a, 2);
        int first = Refs.blockId(refs.get(0));
        List<Long> firstBlock = refs.stream().filter(r -> Refs.blockId(r) == first).toList();
        for (long r : firstBlock.subList(0, firstBlock.size() - 1)) {
            a.free(r, 1000, BlockAllocator.Kind.VALUE);
        }
        assertEquals(0, a.recycledBlocks());
        a.close();
        List<Block> others = new ArrayList<>();
        try {
            while (others.isEmpty() || others.getLast().id != first) { // the pool hands the id out again
                others.add(pool.allocate(BLOCK, false, false));
            }
            a.free(firstBlock.getLast(), 1000, BlockAllocator.Kind.VALUE); // the block is all free now
            assertEquals(1, a.recycledBlocks(), "the closed allocator counts its block all free");
            assertEquals(0, a.readyBytes(), "but never offers the block another allocator has under that id");
        } finally {
            others.forEach(pool::release);
        }
    }

    /** Allocates slices of 1,000 bytes until {@code blocks} blocks are held. @return their references */
    private static List<Long> fillBlocks(BlockAllocator a, int blocks) {
        List<Long> refs = new ArrayList<>();
        while (a.reservedBytes() < blocks * BLOCK) {
            refs.add(a.allocate(1000, BlockAllocator.Kind.VALUE));
        }
        return refs;
    }

    /** {@link #fillBlocks}, each slice stamped {@code stamp}. */
    private static List<Long> fillStamped(BlockAllocator a, int blocks, long stamp) {
        List<Long> refs = fillBlocks(a, blocks);
        for (long ref : refs) {
            stamp(a, ref, 1000, stamp);
        }
        return refs;
    }

    /**
     * Allocates slices of 1,000 bytes, each stamped and checked, until the guard was told of a
     * second reuse: past the current block, into the one waiting.
     */
    private static void allocateUntilToldTwice(BlockAllocator a, List<Integer> told) {
        while (told.size() < 2) {
            long ref = a.allocate(1000, BlockAllocator.Kind.VALUE);
            stamp(a, ref, 1000, 78);
            assertStamped(a, ref, 1000, 78);
        }
    }

    /** Frees the slices of {@code refs} (1,000 bytes each) that lie in the block of the first one. */
    private static void freeFirstBlock(BlockAllocator a, List<Long> refs) {
        int first = Refs.blockId(refs.getFirst());
        for (long ref : refs) {
            if (Refs.blockId(ref) == first) {
                a.free(ref, 1000, BlockAllocator.Kind.VALUE);
            }
        }
    }

    /**
     * The headroom rule of passes that relocate live slices ({@link BlockAllocator#roomToRelocate}):
     * never without whole-block reuse; within the capacity and {@link BlockAllocator#RELOCATION_HEADROOM}
     * times the bytes in use plus two blocks, to the byte; and always for what recycled blocks
     * waiting for a region cover.
     */
    @Test
    void roomToRelocateBoundsTheBlocksHeldAndCountsRecycledOnes() {
        BlockAllocator plain = new BlockAllocator(new BlockPool(), BLOCK, 1L << 30);
        try {
            plain.allocate(1000, BlockAllocator.Kind.VALUE);
            assertTrue(!plain.roomToRelocate(1), "relocation without whole-block reuse");
        } finally {
            plain.close();
        }
        BlockAllocator a = reusing(id -> { });
        try {
            fillBlocks(a, 4);
            long limit = (long) (BlockAllocator.RELOCATION_HEADROOM * a.usedBytes()) + 2 * BLOCK - a.reservedBytes();
            assertTrue(limit > 0);
            assertTrue(a.roomToRelocate(limit), "within the bound");
            assertTrue(!a.roomToRelocate(limit + 1), "past the bound");
        } finally {
            a.close();
        }
        BlockAllocator full = new BlockAllocator(new BlockPool(), BLOCK, 4 * BLOCK);
        full.reuseWholeBlocks(id -> { });
        try {
            List<Long> refs = fillBlocks(full, 4);
            assertTrue(!full.roomToRelocate(1), "past the capacity");
            freeFirstBlock(full, refs);
            assertEquals(1, full.recycledBlocks());
            assertTrue(full.roomToRelocate(BLOCK), "a recycled block waits");
            assertTrue(!full.roomToRelocate(BLOCK + 1), "past the recycled block and the capacity");
        } finally {
            full.close();
        }
    }

    /**
     * Surplus recycled blocks give their pages back ({@link BlockAllocator#discardSurplusBlocks}):
     * the guard is told first, the block then reads as zeros, it is still the next region's before
     * a new block is mapped, and the guard is told again then. Without native access nothing is
     * discarded and the block waits as before.
     */
    @Test
    void surplusRecycledBlocksGiveTheirPagesBackAndAreStillReused() {
        List<Integer> told = new ArrayList<>();
        BlockAllocator a = reusing(told::add);
        try {
            List<Long> refs = fillStamped(a, 3, 77);
            int first = Refs.blockId(refs.getFirst());
            long firstRef = refs.getFirst();
            freeFirstBlock(a, refs);
            assertEquals(1, a.recycledBlocks());
            assertEquals(0, a.discardSurplusBlocks(BLOCK), "one block waits: no surplus over one block");
            int discarded = a.discardSurplusBlocks(0);
            if (!NativeMemory.available()) {
                assertEquals(0, discarded);
                assertEquals(0, a.discardedBytes());
                return;
            }
            assertEquals(1, discarded);
            assertEquals(List.of(first), told, "the guard is told before the pages go");
            assertEquals(BLOCK, a.discardedBytes());
            assertEquals(0L, a.segment(firstRef).get(LONG, Refs.offset(firstRef)), "the discarded block reads as zeros");
            assertEquals(0, a.discardSurplusBlocks(0), "a discarded block is not discarded again");
            long reserved = a.reservedBytes();
            allocateUntilToldTwice(a, told); // past the current block, into the discarded one
            assertEquals(List.of(first, first), told);
            assertEquals(reserved, a.reservedBytes(), "a new block was mapped while a discarded one waited");
            assertEquals(0, a.discardedBytes());
        } finally {
            a.close();
        }
    }

    /**
     * A block in which nothing is in use but slices nobody may free yet (keys that broken-off
     * scans protect) gives back every page those slices do not touch
     * ({@link BlockAllocator#discardAllBut}): only if they are all that is in use there, after the
     * guard; the pinned slices keep their bytes; the block hands out none of its free slices
     * meanwhile, and is recycled as usual once the pinned ones are freed. Not where the capacity
     * could not replace the free bytes so locked up.
     */
    @Test
    void aBlockHoldingOnlyPinnedSlicesGivesBackThePagesAroundThem() {
        List<Integer> told = new ArrayList<>();
        BlockAllocator a = reusing(told::add);
        try {
            List<Long> refs = fillStamped(a, 3, 77);
            int first = Refs.blockId(refs.getFirst());
            List<Long> inFirst = refs.stream().filter(r -> Refs.blockId(r) == first).toList();
            long pinnedA = inFirst.get(5);
            long pinnedB = inFirst.get(40);
            for (long ref : inFirst) {
                if (ref != pinnedA && ref != pinnedB) {
                    a.free(ref, 1000, BlockAllocator.Kind.VALUE);
                }
            }
            assertFalse(a.madeEarlyRetirementTables(), "no early-retirement tables before the first retirement (64 KiB a map)");
            assertEquals(0, a.discardAllBut(new long[] {pinnedA}, ref -> 1000), "another slice is in use");
            assertEquals(List.of(), told);
            long given = a.discardAllBut(new long[] {pinnedB, pinnedA}, ref -> 1000);
            if (!NativeMemory.available()) {
                assertEquals(0, given);
                assertEquals(0, a.discardedBytes());
                assertFalse(a.madeEarlyRetirementTables(), "nothing is retired early without native access");
                return;
            }
            assertTrue(a.madeEarlyRetirementTables());
            assertEquals(List.of(first), told, "the guard is told before the pages go");
            // two slices of 1,000 bytes touch at most four of the block's sixteen pages
            assertTrue(given >= BLOCK - 4 * 4096 && given % 4096 == 0, given + " bytes given back");
            assertEquals(given, a.discardedBytes());
            assertStamped(a, pinnedA, 1000, 77);
            assertStamped(a, pinnedB, 1000, 77);
            long firstFreed = inFirst.getFirst();
            assertEquals(0L, a.segment(firstFreed).get(LONG, Refs.offset(firstFreed)), "a freed slice's page reads as zeros");
            assertEquals(0, a.discardAllBut(new long[] {pinnedA, pinnedB}, ref -> 1000), "retired once");
            long reserved = a.reservedBytes();
            while (a.reservedBytes() == reserved) { // the block's free slices are not handed out
                long ref = a.allocate(1000, BlockAllocator.Kind.VALUE);
                assertNotEquals(first, Refs.blockId(ref), "a slice of the retired block was handed out");
            }
            assertEquals(0, a.recycledBlocks());
            a.free(pinnedA, 1000, BlockAllocator.Kind.VALUE);
            a.free(pinnedB, 1000, BlockAllocator.Kind.VALUE);
            assertEquals(1, a.recycledBlocks(), "recycled once the pinned slices went");
            assertEquals(0, a.discardedBytes());
            allocateUntilToldTwice(a, told); // past the current block, into the recycled one
            assertEquals(List.of(first, first), told);
        } finally {
            a.close();
        }
        // a capacity with no room for fresh blocks: the free slices stay available instead
        BlockAllocator full = new BlockAllocator(new BlockPool(), BLOCK, 3 * BLOCK);
        full.reuseWholeBlocks(id -> { });
        try {
            List<Long> refs = fillBlocks(full, 3);
            int first = Refs.blockId(refs.getFirst());
            long pinned = refs.get(5);
            for (long ref : refs) {
                if (Refs.blockId(ref) == first && ref != pinned) {
                    full.free(ref, 1000, BlockAllocator.Kind.VALUE);
                }
            }
            assertEquals(0, full.discardAllBut(new long[] {pinned}, ref -> 1000));
            assertEquals(first, Refs.blockId(full.allocate(1000, BlockAllocator.Kind.VALUE)), "the free slices are handed out");
        } finally {
            full.close();
        }
    }

    /**
     * A slice freed after its allocator closed (a reclaimer or the map's placer thread finishing
     * its batch as the map closes) may complete a block's free count: nothing is recycled, and
     * nothing is thrown, as the block went back to the pool with the others.
     */
    @Test
    void slicesFreedAfterCloseRecycleNothing() {
        BlockAllocator a = reusing(id -> { });
        List<Long> refs = fillBlocks(a, 2);
        a.close();
        freeFirstBlock(a, refs);
        assertEquals(0, a.reservedBytes());
    }
}
