package dev.oakmap.internal.memory;

import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.RepetitionInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class BlockPoolTest {

    static long rssBytes() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new IllegalStateException("no VmRSS");
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void releasedBlocksGoBackToTheOperatingSystem() throws IOException {
        assertTrue(NativeMemory.available(), "tests run with native access: blocks should be mmapped");
        BlockPool pool = new BlockPool();
        long size = 128L << 20;
        long rss0 = rssBytes();
        Block b = pool.allocate(size, false, true);
        assertEquals(size, pool.reservedBytes());
        for (long off = 0; off < size; off += 4096) {
            b.segment.set(ValueLayout.JAVA_LONG, off, off); // touch every page
        }
        long rss1 = rssBytes();
        assertTrue(rss1 - rss0 > size * 9 / 10, "pages were committed: " + (rss1 - rss0));
        pool.release(b);
        long rss2 = rssBytes();
        assertEquals(0, pool.reservedBytes());
        assertTrue(rss1 - rss2 > size * 9 / 10, "pages were returned: " + (rss1 - rss2));
        assertThrows(IllegalStateException.class, () -> b.segment.get(ValueLayout.JAVA_LONG, 0),
                "a released block is never read (no crash: an exception)");
    }

    /**
     * The shared pool maps blocks into the block region (tests run with native access on Linux):
     * a touch by region position reads the block's bytes; after the block is released its own
     * segment fails with an exception, its pages go back to the OS, and touches of it, or of any
     * position a reference can name, read without failing (zeros once discarded).
     */
    @Test
    @EnabledOnOs(OS.LINUX)
    void sharedPoolBlocksLieInTheRegionAndStayTouchableAfterRelease() throws IOException {
        assertTrue(NativeMemory.regionAvailable(), "tests run with native access: the block region is reserved");
        BlockPool pool = BlockPool.shared();
        assertTrue(pool.slotted(), "the shared pool uses the region");
        assertFalse(new BlockPool().slotted(), "no other pool does: ids are unique only within a pool");
        long size = 64L << 20;
        long[] limits = pool.warmLimits();
        pool.setWarmLimits(0, 0); // released blocks go back to the OS at once
        try {
            releasedSlotsGoBackAndStayTouchable(pool, size);
        } finally {
            pool.setWarmLimits(limits[0], limits[1]);
        }
    }

    private static void releasedSlotsGoBackAndStayTouchable(BlockPool pool, long size) throws IOException {
        Block b = pool.allocate(size, false, false);
        long ref = Refs.encode(b.id, 4096, 0);
        long position = BlockAllocator.regionPosition(ref);
        b.segment.set(ValueLayout.JAVA_BYTE, 4096, (byte) 42);
        b.segment.set(ValueLayout.JAVA_BYTE, 4096 + 200, (byte) 7);
        assertEquals(42, BlockAllocator.touchRegion(position), "a touch reads the slice's byte");
        assertEquals(7, BlockAllocator.touchRegion(position + 200), "and the bytes after it");
        assertEquals(0, position & 63, "a slice's line position is its offset's: slots are line-aligned");
        for (long off = 0; off < size; off += 4096) {
            b.segment.set(ValueLayout.JAVA_LONG, off, off + 1); // commit every page
        }
        long rss1 = rssBytes();
        pool.release(b);
        long rss2 = rssBytes();
        assertTrue(rss1 - rss2 > size * 9 / 10, "a released slot's pages were returned: " + (rss1 - rss2));
        assertThrows(IllegalStateException.class, () -> b.segment.get(ValueLayout.JAVA_LONG, 0),
                "a released block is never read through its segment");
        assertEquals(0, BlockAllocator.touchRegion(position), "a discarded slot reads as zeros, no fault");
        long last = Refs.encode(Refs.MAX_BLOCK_ID, Refs.MAX_BLOCK_SIZE - Refs.GRANULE, 0);
        assertEquals(0, BlockAllocator.touchRegion(BlockAllocator.regionPosition(last) + 4096),
                "the farthest position a reference names, plus a touch's reach, is inside the region");
        Block again = pool.allocate(size, false, false);
        try {
            assertEquals(0L, again.segment.get(ValueLayout.JAVA_LONG, 0), "a reused slot starts zeroed");
            assertEquals(0L, again.segment.get(ValueLayout.JAVA_LONG, size - 8));
        } finally {
            pool.release(again);
        }
    }

    /**
     * The shared pool keeps a released block's pages committed ("Warm blocks" in
     * {@link BlockPool}): the next block of that size or smaller is made over them, zeroed, and
     * commits nothing new; a smaller one gives the rest of the slot back. Warm blocks beyond the
     * byte limit, or older than the time limit, go back to the OS.
     */
    @Test
    @EnabledOnOs(OS.LINUX)
    void releasedBlocksStayWarmForTheNextBlockForAWhile() throws InterruptedException {
        BlockPool pool = BlockPool.shared();
        long[] limits = pool.warmLimits();
        long size = 64L << 20;
        pool.setWarmLimits(size, 60_000);
        pool.zeroInBackground(false);
        pool.trimWarm();
        // What a slot holds is read through the region, which never faults: pages given back to
        // the OS read as zeros there, pages kept committed still hold what was written (the
        // keeper, which would zero them, is told not to).
        try {
            Block b = pool.allocate(size, false, false);
            fillPages(b, 1);
            pool.release(b);
            assertEquals(size, pool.warmBytes(), "the block is kept warm");
            assertTrue(slotHolds(b.id, 0, size, 1), "its pages stay committed");
            assertThrows(IllegalStateException.class, () -> b.segment.get(ValueLayout.JAVA_LONG, 0),
                    "the released block is never read through its segment");

            Block half = pool.allocate(size / 2, false, false);
            assertEquals(b.id, half.id, "a smaller block is made over the warm one");
            assertEquals(0, pool.warmBytes());
            for (long off = 0; off < size / 2; off += 4096) {
                assertEquals(0L, half.segment.get(ValueLayout.JAVA_LONG, off), "zeroed at " + off);
            }
            assertEquals(0L, half.segment.get(ValueLayout.JAVA_LONG, size / 2 - 8));
            assertTrue(slotHolds(b.id, size / 2, size, 0), "the rest of the slot went back to the OS");
            assertThrows(IndexOutOfBoundsException.class, () -> half.segment.get(ValueLayout.JAVA_LONG, size / 2));

            fillPages(half, 2);
            Block other = pool.allocate(size, false, false);
            fillPages(other, 3);
            pool.release(half);
            pool.release(other);
            assertEquals(size, pool.warmBytes(), "beyond the byte limit, the oldest warm block went back");
            assertTrue(slotHolds(half.id, 0, size / 2, 0), "its pages with it");
            Block again = pool.allocate(size, false, false);
            assertEquals(other.id, again.id, "the one kept is the newest");
            fillPages(again, 4);
            pool.release(again);

            pool.setWarmLimits(size, 50); // warm blocks already kept take the new time limit too
            long deadline = System.nanoTime() + 10_000_000_000L;
            // the keeper takes an expired block off the warm list, then gives its pages back
            // outside the pool's lock: wait for both
            while ((pool.warmBytes() > 0 || !slotHolds(again.id, 0, size, 0)) && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(0, pool.warmBytes(), "a warm block goes back once its time is up");
            assertTrue(slotHolds(again.id, 0, size, 0), "its pages with it");
        } finally {
            pool.zeroInBackground(true);
            pool.setWarmLimits(limits[0], limits[1]);
            pool.trimWarm();
        }
    }

    /**
     * The keeper zeroes warm blocks in the background, so that the map that takes one need not;
     * a block taken before that is zeroed by its taker (the test above).
     */
    @Test
    @EnabledOnOs(OS.LINUX)
    void theKeeperZeroesWarmBlocksAhead() throws InterruptedException {
        BlockPool pool = BlockPool.shared();
        long[] limits = pool.warmLimits();
        long size = 16L << 20;
        pool.setWarmLimits(4 * size, 60_000);
        pool.trimWarm();
        try {
            Block b = pool.allocate(size, false, false);
            fillPages(b, 5);
            pool.release(b);
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (pool.warmZeroedBytes() < size && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(size, pool.warmZeroedBytes(), "the keeper zeroed the warm block");
            assertTrue(slotHolds(b.id, 0, size, 0), "its pages read as zeros");
            assertEquals(size, pool.warmBytes(), "and it is still kept");
            Block again = pool.allocate(size, false, false);
            try {
                assertEquals(b.id, again.id);
                assertEquals(0L, again.segment.get(ValueLayout.JAVA_LONG, 4096));
            } finally {
                pool.release(again);
            }
        } finally {
            pool.setWarmLimits(limits[0], limits[1]);
            pool.trimWarm();
        }
    }

    /**
     * Warm blocks keep their ids, but never at the cost of a block: when every id is taken, the
     * oldest warm block gives its id up (its pages discarded, so the new block starts zeroed).
     */
    @Test
    @EnabledOnOs(OS.LINUX)
    void warmBlocksGiveTheirIdsUpWhenIdsRunOut() {
        BlockPool pool = BlockPool.shared();
        long[] limits = pool.warmLimits();
        pool.setWarmLimits(1L << 30, 60_000);
        pool.zeroInBackground(false); // the warm blocks' contents show whether their taker zeroed them
        pool.trimWarm();
        long small = 64 << 10;
        List<Block> held = new ArrayList<>();
        try {
            while (true) {
                try {
                    held.add(pool.allocate(small, false, false));
                } catch (OutOfMemoryError e) {
                    break; // every id is taken
                }
            }
            Block a = held.remove(held.size() - 1);
            Block c = held.remove(held.size() - 1);
            a.segment.set(ValueLayout.JAVA_LONG, 8, 77);
            c.segment.set(ValueLayout.JAVA_LONG, 8, 78);
            pool.release(a);
            pool.release(c);
            assertEquals(2 * small, pool.warmBytes());
            Block big = pool.allocate(2 * small, false, false); // too large for either warm block
            held.add(big);
            assertEquals(a.id, big.id, "the oldest warm block gave its id up");
            assertEquals(0L, big.segment.get(ValueLayout.JAVA_LONG, 8), "and its block starts zeroed");
            assertEquals(small, pool.warmBytes());
            Block last = pool.allocate(small, false, false);
            held.add(last);
            assertEquals(c.id, last.id, "the other is reused warm");
            assertEquals(0L, last.segment.get(ValueLayout.JAVA_LONG, 8));
            assertThrows(OutOfMemoryError.class, () -> pool.allocate(small, false, false));
        } finally {
            held.forEach(pool::release);
            pool.zeroInBackground(true);
            pool.setWarmLimits(limits[0], limits[1]);
            pool.trimWarm();
        }
    }

    /**
     * Warm blocks under concurrency: threads allocate blocks of mixed sizes, fill them, hold a few
     * and release them, while the keeper zeroes, expires and evicts warm blocks (small byte limit,
     * a few milliseconds of lingering) and one thread now and then gives every warm block back.
     * Every new block must read zero from end to end whatever path made it (a fresh slot, a warm
     * block the keeper zeroed, one its taker zeroed, one given up for its id), no two live blocks
     * may share an id, and a block must still hold what its owner wrote when released, which a
     * keeper zeroing or discarding pages under a live block, or two blocks made over one slot,
     * would break. Seeded per thread and repetition; the interleavings vary from run to run (a
     * keeper that zeroes a block a taker may take at the same time failed 2 of 4 single runs).
     */
    @RepeatedTest(3)
    @EnabledOnOs(OS.LINUX)
    void warmBlocksSurviveConcurrentAllocationReleaseAndTheKeeper(RepetitionInfo repetition) throws Exception {
        BlockPool pool = BlockPool.shared();
        assumeTrue(pool.slotted(), "warm blocks need the block region");
        long[] limits = pool.warmLimits();
        pool.setWarmLimits(12L << 20, 5);
        pool.trimWarm();
        long[] sizes = {16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20};
        int threads = 3, rounds = 600, held = 3;
        Set<Integer> liveIds = ConcurrentHashMap.newKeySet();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        List<Thread> workers = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                int worker = t;
                workers.add(Thread.ofPlatform().start(() -> {
                    Random random = new Random(20261127L + 31L * repetition.getCurrentRepetition() + worker);
                    ArrayDeque<Block> mine = new ArrayDeque<>();
                    ArrayDeque<Byte> marks = new ArrayDeque<>();
                    try (Arena arena = Arena.ofConfined()) {
                        MemorySegment zeros = arena.allocate(4 << 20);
                        MemorySegment expected = arena.allocate(4 << 20);
                        for (int r = 0; r < rounds && failures.isEmpty(); r++) {
                            Block b = pool.allocate(sizes[random.nextInt(sizes.length)], false, false);
                            if (!liveIds.add(b.id)) {
                                failures.add(new AssertionError("id " + b.id + " handed out twice"));
                            }
                            long bad = MemorySegment.mismatch(b.segment, 0, b.size(), zeros, 0, b.size());
                            if (bad >= 0) {
                                failures.add(new AssertionError("a new block of " + b.size() + " bytes reads "
                                        + b.segment.get(ValueLayout.JAVA_BYTE, bad) + " at " + bad));
                            }
                            byte mark = (byte) (1 + worker * 60 + r % 60);
                            b.segment.fill(mark);
                            mine.addLast(b);
                            marks.addLast(mark);
                            if (mine.size() > held || random.nextInt(4) == 0) {
                                releaseChecked(pool, mine.removeFirst(), marks.removeFirst(), expected, liveIds, failures);
                            }
                            if (worker == 0 && r % 97 == 96) {
                                pool.trimWarm();
                            }
                        }
                        while (!mine.isEmpty()) {
                            releaseChecked(pool, mine.removeFirst(), marks.removeFirst(), expected, liveIds, failures);
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            for (Thread w : workers) {
                w.join(TimeUnit.MINUTES.toMillis(2));
                assertFalse(w.isAlive(), "a worker hangs");
            }
            if (!failures.isEmpty()) {
                AssertionError e = new AssertionError(failures.size() + " failures, first: " + failures.peek());
                failures.forEach(e::addSuppressed);
                throw e;
            }
        } finally {
            pool.setWarmLimits(limits[0], limits[1]);
            pool.trimWarm();
        }
    }

    /** Checks {@code b} still holds {@code mark} in every byte, then releases it. */
    private static void releaseChecked(BlockPool pool, Block b, byte mark, MemorySegment expected,
            Set<Integer> liveIds, ConcurrentLinkedQueue<Throwable> failures) {
        expected.fill(mark);
        long bad = MemorySegment.mismatch(b.segment, 0, b.size(), expected, 0, b.size());
        if (bad >= 0) {
            failures.add(new AssertionError("block " + b.id + " of " + b.size() + " bytes lost what its owner wrote at "
                    + bad + ": " + b.segment.get(ValueLayout.JAVA_BYTE, bad) + " for " + mark));
        }
        liveIds.remove(b.id); // before the release: from then on the id may come back
        pool.release(b);
    }

    /** Writes {@code mark} plus the offset at the start of every page of {@code b}. */
    private static void fillPages(Block b, long mark) {
        for (long off = 0; off < b.size(); off += 4096) {
            b.segment.set(ValueLayout.JAVA_LONG, off, mark == 0 ? 0 : mark + off);
        }
    }

    /**
     * @return true if every page from {@code from} to {@code to} of slot {@code id} starts with
     *     what {@link #fillPages} wrote with {@code mark} (0: zeros), read through the region
     */
    private static boolean slotHolds(int id, long from, long to, long mark) {
        for (long off = from; off < to; off += 4096) {
            long position = BlockAllocator.regionPosition(Refs.encode(id, off, 0));
            long expected = mark == 0 ? 0 : mark + off;
            for (int i = 0; i < 8; i++) {
                if (BlockAllocator.touchRegion(position + i) != (byte) (expected >>> (8 * i))) {
                    return false;
                }
            }
        }
        return true;
    }

    /** A populated block is committed when mapped; a lazy one only as its pages are touched. */
    @Test
    @EnabledOnOs(OS.LINUX)
    void populatedBlocksAreCommittedWhenMapped() throws IOException {
        assertTrue(NativeMemory.available(), "tests run with native access: blocks should be mmapped");
        BlockPool pool = new BlockPool();
        long size = 128L << 20;
        long rss0 = rssBytes();
        Block lazy = pool.allocate(size, false, true);
        long rss1 = rssBytes();
        assertTrue(rss1 - rss0 < size / 4, "a lazy block commits nothing up front: " + (rss1 - rss0));
        Block eager = pool.allocate(size, true, true);
        long rss2 = rssBytes();
        assertTrue(rss2 - rss1 > size * 9 / 10, "a populated block is committed: " + (rss2 - rss1));
        assertEquals(0L, eager.segment.get(ValueLayout.JAVA_LONG, size - 8), "and reads as zero");
        assertEquals(0L, lazy.segment.get(ValueLayout.JAVA_LONG, size - 8));
        pool.release(eager);
        pool.release(lazy);
        long rss3 = rssBytes();
        assertTrue(rss2 - rss3 > size * 9 / 10, "pages were returned: " + (rss2 - rss3));
    }

    /**
     * Where the kernel offers transparent huge pages on advice, a block populated as huge pages
     * gets them (the advice has to precede the faulting: it once came after {@code MAP_POPULATE}
     * and took no effect), and one populated as small pages does not.
     */
    @Test
    @EnabledOnOs(OS.LINUX)
    void populatedBlocksGetThePageSizeTheyAskFor() throws IOException {
        Path thp = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
        assumeTrue(Files.exists(thp) && !Files.readString(thp).contains("[never]"), "no transparent huge pages here");
        BlockPool pool = new BlockPool();
        long size = 64L << 20;
        Block huge = pool.allocate(size, true, true);
        Block small = pool.allocate(size, true, false);
        try {
            long h = anonHugeBytes(huge.segment.address());
            assertTrue(h >= size / 2, "most of a block populated as huge pages is in huge pages: " + h);
            long s = anonHugeBytes(small.segment.address());
            assertTrue(s < size / 4, "a block populated as small pages is not: " + s);
        } finally {
            pool.release(huge);
            pool.release(small);
        }
    }

    /** The {@code AnonHugePages} of the mapping that starts at {@code address}, from /proc/self/smaps. */
    private static long anonHugeBytes(long address) throws IOException {
        String start = Long.toHexString(address) + "-";
        boolean inMapping = false;
        for (String line : Files.readAllLines(Path.of("/proc/self/smaps"))) {
            if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
                inMapping = line.startsWith(start);
            } else if (inMapping && line.startsWith("AnonHugePages:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new IllegalStateException("no mapping starts at " + start);
    }

    @Test
    void blockAccessIsBoundsChecked() {
        BlockPool pool = new BlockPool();
        Block b = pool.allocate(1 << 16, true, true);
        try {
            assertThrows(IndexOutOfBoundsException.class, () -> b.segment.get(ValueLayout.JAVA_LONG, 1 << 16));
            assertEquals(0L, b.segment.get(ValueLayout.JAVA_LONG, 8), "fresh memory reads as zero");
        } finally {
            pool.release(b);
        }
    }

    /**
     * A growing allocator maps its next block ahead, in the background, within its capacity; the
     * writer takes that block when it needs one, and close releases it, even while it is mapped.
     */
    @Test
    void growingAllocatorMapsItsNextBlockAheadWithinCapacity() throws InterruptedException {
        BlockPool pool = new BlockPool();
        long block = BlockAllocator.MAP_AHEAD_MIN_BLOCK;
        BlockAllocator small = new BlockAllocator(pool, block / 2, 8 * block);
        small.allocate(block / 2, BlockAllocator.Kind.VALUE);
        small.allocate(block / 2, BlockAllocator.Kind.VALUE);
        assertEquals(block, small.reservedBytes(), "blocks below the threshold are never mapped ahead");
        small.close();
        BlockAllocator a = new BlockAllocator(pool, block, 4 * block);
        try {
            a.allocate(block, BlockAllocator.Kind.VALUE);
            assertEquals(block, a.reservedBytes(), "one block: not growing yet, nothing mapped ahead");
            a.allocate(block, BlockAllocator.Kind.VALUE);
            assertEquals(3 * block, a.reservedBytes(), "the second block starts the mapping of a spare");
            awaitPoolReserved(pool, 3 * block);
            long third = a.allocate(block, BlockAllocator.Kind.VALUE);
            assertEquals(0, Refs.offset(third), "the spare became the third block");
            a.allocate(block, BlockAllocator.Kind.VALUE);
            assertEquals(4 * block, a.reservedBytes(), "no spare beyond the capacity");
            assertThrows(dev.oakmap.OakOutOfMemoryException.class, () -> a.allocate(8, BlockAllocator.Kind.VALUE));
        } finally {
            a.close();
        }
        assertEquals(0, pool.reservedBytes());
        for (int round = 0; round < 20; round++) { // close while the spare is being mapped
            BlockAllocator b = new BlockAllocator(pool, block, 16 * block);
            b.allocate(block, BlockAllocator.Kind.KEY);
            b.allocate(block, BlockAllocator.Kind.KEY);
            b.close();
            assertEquals(0, pool.reservedBytes(), "round " + round + ": close released the spare too");
        }
    }

    /**
     * A writer that needs a block while the spare is still being mapped, with room for another
     * block, maps one itself instead of waiting, and later spares are mapped as small pages; a
     * spare that then waits, ready, longer than a huge one took to map turns them huge again.
     */
    @Test
    void writerThatOutrunsTheSpareMapsItsOwnBlockAndSparesTurnSmall() throws InterruptedException {
        BlockPool pool = new BlockPool();
        long block = 2 * BlockAllocator.MAP_AHEAD_MIN_BLOCK;
        int outran = 0;
        for (int round = 0; round < 20 && outran < 3; round++) {
            BlockAllocator a = new BlockAllocator(pool, block, 16 * block);
            try {
                a.allocate(block, BlockAllocator.Kind.VALUE);
                a.allocate(block, BlockAllocator.Kind.VALUE); // starts mapping a spare, as huge pages
                assertTrue(a.sparesHuge());
                long mappedBefore = a.blocksMappedByWriters();
                a.allocate(block, BlockAllocator.Kind.VALUE); // most rounds: while the spare is in flight
                // three blocks and a spare either way: the writer's own and the one in flight, or
                // the spare it took and the next one
                assertEquals(4 * block, a.reservedBytes(), "round " + round);
                if (a.blocksMappedByWriters() > mappedBefore) { // it did not wait for the spare
                    outran++;
                    assertFalse(a.sparesHuge(), "round " + round + ": after a writer outran the spare, spares are small");
                    a.awaitSpareMapped();
                    Thread.sleep(50); // far longer than a 2 MiB huge spare takes to map
                    long fourth = a.allocate(block, BlockAllocator.Kind.VALUE);
                    assertEquals(0, Refs.offset(fourth), "the spare became the fourth block");
                    assertTrue(a.sparesHuge(), "round " + round + ": a spare that waited turns spares huge again");
                } else {
                    assertTrue(a.sparesHuge(), "round " + round + ": the writer took the ready spare, spares stay huge");
                }
            } finally {
                a.close();
            }
            assertEquals(0, pool.reservedBytes(), "round " + round + ": close released every block and the spare");
        }
        assertTrue(outran > 0, "in 20 rounds, the writer never found the spare in flight");
    }

    /**
     * With every block wanted in huge pages ({@code -Doak.hugePages=always}), a writer never maps
     * a block of its own while a spare is in flight: it waits, takes the spare, and spares stay
     * huge.
     */
    @Test
    void writersWaitForTheSpareWhenEveryBlockIsWantedHuge() {
        BlockPool pool = new BlockPool();
        long block = 2 * BlockAllocator.MAP_AHEAD_MIN_BLOCK;
        for (int round = 0; round < 10; round++) {
            BlockAllocator a = new BlockAllocator(pool, block, 16 * block);
            a.mapEveryBlockHuge();
            try {
                a.allocate(block, BlockAllocator.Kind.VALUE);
                a.allocate(block, BlockAllocator.Kind.VALUE); // starts mapping a spare
                long mappedBefore = a.blocksMappedByWriters();
                for (int b = 3; b <= 6; b++) {
                    long ref = a.allocate(block, BlockAllocator.Kind.VALUE); // at once: the spare is mostly in flight
                    assertEquals(0, Refs.offset(ref), "round " + round + ": block " + b + " starts a block");
                    assertEquals(mappedBefore, a.blocksMappedByWriters(), "round " + round + ": block " + b
                            + " is the spare, not one the writer mapped");
                    assertTrue(a.sparesHuge(), "round " + round + ": spares stay huge");
                }
                assertEquals(7 * block, a.reservedBytes(), "round " + round + ": six blocks and the next spare");
            } finally {
                a.close();
            }
            assertEquals(0, pool.reservedBytes(), "round " + round + ": close released every block and the spare");
        }
    }

    /**
     * A writer that needs a block while the spare is still being mapped waits for it: with the
     * capacity taken by the in-flight spare, mapping a block of its own would fail.
     */
    @Test
    void writerWaitsForTheSpareBeingMapped() {
        BlockPool pool = new BlockPool();
        long block = BlockAllocator.MAP_AHEAD_MIN_BLOCK;
        for (int round = 0; round < 20; round++) {
            BlockAllocator a = new BlockAllocator(pool, block, 3 * block);
            try {
                a.allocate(block, BlockAllocator.Kind.VALUE);
                a.allocate(block, BlockAllocator.Kind.VALUE); // starts mapping the third block as a spare
                long third = a.allocate(block, BlockAllocator.Kind.VALUE); // most rounds: while it is in flight
                assertEquals(0, Refs.offset(third), "round " + round + ": the third slice got the spare");
                assertEquals(3 * block, a.reservedBytes());
                assertThrows(dev.oakmap.OakOutOfMemoryException.class, () -> a.allocate(8, BlockAllocator.Kind.VALUE));
            } finally {
                a.close();
            }
            assertEquals(0, pool.reservedBytes());
        }
    }

    private static void awaitPoolReserved(BlockPool pool, long bytes) throws InterruptedException {
        for (int i = 0; i < 2000 && pool.reservedBytes() != bytes; i++) {
            Thread.sleep(5);
        }
        assertEquals(bytes, pool.reservedBytes(), "the spare was mapped in the background");
    }

    @Test
    void allocatorThrowsAtCapacityAndReusesFreedSpace() {
        BlockPool pool = new BlockPool();
        BlockAllocator a = new BlockAllocator(pool, 4096, 8192);
        try {
            long first = a.allocate(4000, BlockAllocator.Kind.VALUE);
            a.allocate(4000, BlockAllocator.Kind.VALUE);
            var e = assertThrows(dev.oakmap.OakOutOfMemoryException.class, () -> a.allocate(4000, BlockAllocator.Kind.VALUE));
            assertEquals(8192, e.capacity());
            a.free(first, 4000, BlockAllocator.Kind.VALUE);
            assertEquals(first, a.allocate(4000, BlockAllocator.Kind.VALUE), "exact-size reuse");
            a.free(first, 4000, BlockAllocator.Kind.VALUE);
            long key = a.allocate(100, BlockAllocator.Kind.KEY); // salvaged from the freed value slice
            assertEquals(Refs.blockId(first), Refs.blockId(key));
            // the header's first 12 bytes (where every scheme keeps its state word) stay a
            // tombstone, and the region starts at the next 8-byte boundary
            assertEquals(Refs.offset(first) + 16, Refs.offset(key), "the value's state word stays a tombstone");
            assertTrue(a.fewFreeSlices(), "the salvaged slice still counted as free");
        } finally {
            a.close();
        }
        assertEquals(0, pool.reservedBytes());
    }

    /**
     * Blocks start at {@link BlockAllocator#FIRST_BLOCK} and double up to the block size, so a map
     * of a few pairs holds a few pages; a block mapped larger for an oversized slice counts as the
     * last size.
     */
    @Test
    void blockSizesDoubleFromSmallToTheBlockSize() {
        BlockPool pool = new BlockPool();
        long first = BlockAllocator.FIRST_BLOCK;
        BlockAllocator a = new BlockAllocator(pool, 8 * first, 1L << 30); // below the map-ahead size: no spares
        try {
            List<Long> sizes = new ArrayList<>();
            long reserved = 0;
            while (sizes.size() < 6) {
                a.allocate(1000, BlockAllocator.Kind.VALUE);
                if (a.reservedBytes() != reserved) {
                    sizes.add(a.reservedBytes() - reserved);
                    reserved = a.reservedBytes();
                }
            }
            assertEquals(List.of(first, 2 * first, 4 * first, 8 * first, 8 * first, 8 * first), sizes);
        } finally {
            a.close();
        }
        BlockAllocator b = new BlockAllocator(pool, 8 * first, 1L << 30);
        try {
            b.allocate(3 * first, BlockAllocator.Kind.VALUE); // an oversized first slice: a block of its size
            assertEquals(3 * first, b.reservedBytes());
            b.allocate(1000, BlockAllocator.Kind.VALUE);
            assertEquals(3 * first + 6 * first, b.reservedBytes(), "the next block doubles the oversized one");
        } finally {
            b.close();
        }
        assertEquals(0, pool.reservedBytes());
    }

    /**
     * What is left of a region when a request does not fit goes to the free lists: at capacity,
     * a later request that fits only there is served from it (before, the rest was lost).
     */
    @Test
    void theRestOfAReplacedRegionIsReused() {
        BlockPool pool = new BlockPool();
        BlockAllocator a = new BlockAllocator(pool, 4096, 8192);
        try {
            long first = a.allocate(4000, BlockAllocator.Kind.VALUE);
            long second = a.allocate(4000, BlockAllocator.Kind.VALUE);
            a.free(first, 4000, BlockAllocator.Kind.VALUE);
            long small = a.allocate(1000, BlockAllocator.Kind.VALUE); // carved from the first slice
            assertEquals(Refs.blockId(first), Refs.blockId(small));
            a.free(second, 4000, BlockAllocator.Kind.VALUE);
            long large = a.allocate(3500, BlockAllocator.Kind.VALUE); // does not fit the rest: carved from the second
            assertEquals(Refs.blockId(second), Refs.blockId(large));
            long rest = a.allocate(2900, BlockAllocator.Kind.VALUE); // fits only in the rest of the first slice
            assertEquals(Refs.blockId(first), Refs.blockId(rest));
            assertTrue(Refs.offset(rest) >= Refs.offset(small) + 1000, "after the slice carved before it");
        } finally {
            a.close();
        }
    }

    /**
     * A block's rest of 1,556 bytes is not a slot size (above 1 KiB slots step by 32 bytes, from
     * zero and from a value header): it goes back to the free lists as slots of 1,548 and 8
     * bytes, which ordinary allocations of those slot sizes reuse, well below capacity (no salvage
     * involved).
     */
    @Test
    void aBlocksRestIsReusedAsSlotSizedPieces() {
        BlockPool pool = new BlockPool();
        BlockAllocator a = new BlockAllocator(pool, 4096, 1L << 20);
        try {
            long first = a.allocate(1000, BlockAllocator.Kind.VALUE);
            a.allocate(1000, BlockAllocator.Kind.VALUE);
            a.allocate(540, BlockAllocator.Kind.VALUE); // 2,540 bytes carved, 1,556 left
            long next = a.allocate(2500, BlockAllocator.Kind.VALUE); // does not fit: a new block
            assertNotEquals(Refs.blockId(first), Refs.blockId(next));
            assertEquals(1548, BlockAllocator.slotBytes(1540));
            long big = a.allocate(1540, BlockAllocator.Kind.VALUE);
            assertEquals(Refs.blockId(first), Refs.blockId(big), "the rest's first piece");
            assertEquals(Refs.offset(first) + 2540, Refs.offset(big));
            long small = a.allocate(8, BlockAllocator.Kind.VALUE);
            assertEquals(Refs.blockId(first), Refs.blockId(small), "the rest's last piece");
            assertEquals(Refs.offset(big) + 1548, Refs.offset(small));
            long fresh = a.allocate(1540, BlockAllocator.Kind.VALUE); // nothing left to reuse
            assertEquals(Refs.blockId(next), Refs.blockId(fresh));
        } finally {
            a.close();
        }
    }

    /**
     * Memory freed by sizes no longer asked for serves smaller ones: once the free lists hold more
     * than a quarter of the bytes in use and none holds the size asked for, the smallest larger
     * free slice of the kind is split. The request takes its front (so the slice's start, where
     * stale references find its header, stays a slice start), and the rest is a free slice of its own.
     */
    @Test
    void aLargerFreeSliceIsSplitOnceFreeMemoryIsStranded() {
        BlockPool pool = new BlockPool();
        BlockAllocator a = new BlockAllocator(pool, 1 << 16, 1L << 20);
        try {
            a.allocate(4096, BlockAllocator.Kind.VALUE); // stays in use
            long x = a.allocate(4096, BlockAllocator.Kind.VALUE);
            long y = a.allocate(2048, BlockAllocator.Kind.VALUE);
            a.free(x, 4096, BlockAllocator.Kind.VALUE);
            a.free(y, 2048, BlockAllocator.Kind.VALUE); // 6,144 bytes free, 4,096 in use
            long reserved = a.reservedBytes();
            long front = a.allocate(1536, BlockAllocator.Kind.VALUE);
            assertEquals(y, front, "the smallest larger free slice's front");
            long rest = a.allocate(512, BlockAllocator.Kind.VALUE);
            assertEquals(Refs.blockId(y), Refs.blockId(rest));
            assertEquals(Refs.offset(y) + 1536, Refs.offset(rest), "the rest, reused at its exact size");
            long second = a.allocate(1536, BlockAllocator.Kind.VALUE); // 4,096 free, 6,144 in use
            assertEquals(x, second, "the next larger slice's front");
            long secondRest = a.allocate(2560, BlockAllocator.Kind.VALUE);
            assertEquals(Refs.offset(x) + 1536, Refs.offset(secondRest));
            assertEquals(2, a.splitCount());
            assertEquals(reserved, a.reservedBytes(), "no new memory");
            assertEquals(4096 + 1536 + 512 + 1536 + 2560, a.usedBytes());
        } finally {
            a.close();
        }
    }

    /**
     * A map that churns keeps a little of its memory on the free lists all the time (Nova frees in
     * batches); its larger slices are not cut up for a size that is momentarily missing. Nor is a
     * slice ever split for another kind.
     */
    @Test
    void freeSlicesAreNotSplitWhileFewBytesAreFreeNorForAnotherKind() {
        BlockPool pool = new BlockPool();
        BlockAllocator a = new BlockAllocator(pool, 1 << 16, 1L << 20);
        try {
            for (int i = 0; i < 4; i++) {
                a.allocate(4096, BlockAllocator.Kind.VALUE);
            }
            long x = a.allocate(2048, BlockAllocator.Kind.VALUE);
            a.free(x, 2048, BlockAllocator.Kind.VALUE); // 2,048 free, 16,384 in use
            assertNotEquals(x, a.allocate(1536, BlockAllocator.Kind.VALUE));
            assertEquals(x, a.allocate(2048, BlockAllocator.Kind.VALUE), "the free slice is reused whole, as before");
            long k = a.allocate(6144, BlockAllocator.Kind.KEY);
            a.free(k, 6144, BlockAllocator.Kind.KEY); // 6,144 key bytes free, 19,968 in use
            long v = a.allocate(1024, BlockAllocator.Kind.VALUE);
            assertNotEquals(Refs.offset(k), Refs.offset(v), "a free key slice is not split for a value");
            assertEquals(0, a.splitCount());
            assertEquals(k, a.allocate(1536, BlockAllocator.Kind.KEY), "a key's request splits it");
            assertEquals(1, a.splitCount());
        } finally {
            a.close();
        }
    }

    /** Asserts that no two of the slices {@code {ref, size, ...}} that threads hold share a byte. */
    static void assertNoneOverlap(List<List<long[]>> live) {
        List<long[]> all = new ArrayList<>();
        live.forEach(all::addAll);
        all.sort((x, y) -> Long.compare(Refs.withAux(x[0], 0), Refs.withAux(y[0], 0)));
        for (int i = 1; i < all.size(); i++) {
            long[] prev = all.get(i - 1);
            long[] next = all.get(i);
            if (Refs.blockId(prev[0]) == Refs.blockId(next[0])) {
                assertTrue(Refs.offset(prev[0]) + BlockAllocator.slotBytes(prev[1]) <= Refs.offset(next[0]),
                        "live slices overlap at block " + Refs.blockId(next[0]) + ", offset " + Refs.offset(next[0]));
            }
        }
    }

    /** A free slice more than {@link BlockAllocator#SPLIT_REACH} times the size asked for stays whole. */
    @Test
    void aFreeSliceIsNotSplitForASizeFarBelowIt() {
        BlockPool pool = new BlockPool();
        BlockAllocator a = new BlockAllocator(pool, 1 << 16, 1L << 20);
        try {
            long x = a.allocate(8192, BlockAllocator.Kind.VALUE);
            a.free(x, 8192, BlockAllocator.Kind.VALUE); // everything is free
            assertNotEquals(x, a.allocate(1024, BlockAllocator.Kind.VALUE));
            assertEquals(0, a.splitCount());
            assertEquals(x, a.allocate(2048, BlockAllocator.Kind.VALUE), "within four times its size");
            assertEquals(1, a.splitCount());
        } finally {
            a.close();
        }
    }

    /**
     * Threads allocating keys and values of shrinking sizes and freeing most of them split free
     * slices all the time, racing with each other's pops and pushes of the same lists; no two live
     * slices may overlap.
     */
    @Test
    void concurrentSplitsNeverShareBytes() throws Exception {
        BlockPool pool = new BlockPool();
        BlockAllocator a = new BlockAllocator(pool, 1 << 16, 1L << 30);
        int threads = 4;
        List<List<long[]>> live = new ArrayList<>();
        Thread[] ts = new Thread[threads];
        try {
            for (int t = 0; t < threads; t++) {
                List<long[]> mine = new ArrayList<>();
                live.add(mine);
                long seed = 31 + t;
                ts[t] = new Thread(() -> {
                    java.util.SplittableRandom rnd = new java.util.SplittableRandom(seed);
                    BlockAllocator.Kind[] kinds = BlockAllocator.Kind.values();
                    for (int i = 0; i < 100_000; i++) {
                        long size = 8 + 4L * rnd.nextInt(Math.max(1, 1000 - i / 100)); // 4 KB down to 8 B
                        int kind = rnd.nextInt(2);
                        mine.add(new long[] {a.allocate(size, kinds[kind]), size, kind});
                        if (rnd.nextInt(10) < 6) { // after the add: never empty
                            long[] gone = mine.remove(rnd.nextInt(mine.size()));
                            a.free(gone[0], gone[1], kinds[(int) gone[2]]);
                        }
                    }
                });
                ts[t].start();
            }
            for (Thread t : ts) {
                t.join();
            }
            assertTrue(a.splitCount() > 1000, "only " + a.splitCount() + " splits");
            assertNoneOverlap(live);
        } finally {
            a.close();
        }
    }

    /**
     * A second series of size classes counts from the value header, so a value of a power-of-two
     * size (or any multiple of its class's step) takes no padding: 1,024-byte values took
     * 1,056-byte slices, 20 bytes a pair, when the classes counted from zero only. Round sizes
     * asked for as such are still classes.
     */
    @Test
    void valuesOfPowerOfTwoSizesTakeNoPadding() {
        assertEquals(dev.oakmap.internal.reclaim.SliceManager.HEADER_BYTES, BlockAllocator.CLASS_ORIGIN);
        for (long payload = 512; payload <= (1 << 24); payload *= 2) {
            long slice = BlockAllocator.CLASS_ORIGIN + payload;
            assertEquals(slice, BlockAllocator.slotBytes(slice), payload + "-byte value");
            assertEquals(slice + payload / 2, BlockAllocator.slotBytes(slice + payload / 2), "1.5 x " + payload);
            assertEquals(payload, BlockAllocator.slotBytes(payload), payload + " bytes asked for");
        }
    }

    @Test
    void theLargestSlotWithinABudgetIsASlotSize() {
        for (long bytes = BlockAllocator.MIN_SLOT; bytes < 1 << 20; bytes += 4) {
            long slot = BlockAllocator.largestSlotWithin(bytes);
            assertTrue(slot <= bytes && slot > bytes - bytes / 32 - 4, bytes + " -> " + slot);
            assertEquals(slot, BlockAllocator.slotBytes(slot), bytes + " -> " + slot);
        }
    }

    /**
     * Threads carving small slices from tiny blocks, and freeing half of them, switch regions all
     * the time; the rest of each replaced region goes to the free lists while other threads may
     * still be bumping in it. No two live slices may overlap (a rest recycled while a thread could
     * still carve from it would be handed out twice).
     */
    @Test
    void concurrentCarversNeverShareBytesWithRecycledRests() throws Exception {
        BlockPool pool = new BlockPool();
        BlockAllocator a = new BlockAllocator(pool, 4096, 1L << 30);
        int threads = 4;
        List<List<long[]>> live = new ArrayList<>();
        Thread[] ts = new Thread[threads];
        try {
            for (int t = 0; t < threads; t++) {
                List<long[]> mine = new ArrayList<>();
                live.add(mine);
                long seed = t;
                ts[t] = new Thread(() -> {
                    java.util.SplittableRandom rnd = new java.util.SplittableRandom(seed);
                    for (int i = 0; i < 100_000; i++) {
                        long size = 8 + 4L * rnd.nextInt(60);
                        mine.add(new long[] {a.allocate(size, BlockAllocator.Kind.VALUE), size});
                        if (rnd.nextBoolean()) {
                            long[] gone = mine.remove(rnd.nextInt(mine.size()));
                            a.free(gone[0], gone[1], BlockAllocator.Kind.VALUE);
                        }
                    }
                });
                ts[t].start();
            }
            for (Thread t : ts) {
                t.join();
            }
            assertNoneOverlap(live);
        } finally {
            a.close();
        }
    }

    @Test
    void slotsAboveTheExactSizesRoundUpToSizeClasses() {
        assertEquals(8, BlockAllocator.slotBytes(1));
        assertEquals(1012, BlockAllocator.slotBytes(1010));
        assertEquals(1024, BlockAllocator.slotBytes(1024));
        assertEquals(1036, BlockAllocator.slotBytes(1036), "exact up to 1 KiB beyond a value header");
        assertEquals(1056, BlockAllocator.slotBytes(1037), "32 classes per doubling: steps of 32 B above 1 KiB");
        assertEquals(1068, BlockAllocator.slotBytes(1060), "and the same plus a value header");
        assertEquals(60_416, BlockAllocator.slotBytes(60_000), "steps of 1 KiB above 32 KiB");
        assertEquals(60_428, BlockAllocator.slotBytes(60_420));
        assertEquals(Refs.MAX_BLOCK_SIZE, BlockAllocator.slotBytes(Refs.MAX_BLOCK_SIZE - 12), "the largest slice fits a block");
        for (long size = 1; size < (1 << 20); size += 37) {
            long slot = BlockAllocator.slotBytes(size);
            assertTrue(slot >= size && slot % Refs.GRANULE == 0, size + " -> " + slot);
            assertTrue(slot - size < Math.max(8, size / 32), size + " -> " + slot + " wastes too much");
        }
    }

    @Test
    void reclaimersRunWhenTheCapacityIsExhausted() {
        BlockPool pool = new BlockPool();
        BlockAllocator a = new BlockAllocator(pool, 4096, 8192);
        try {
            long held = a.allocate(4000, BlockAllocator.Kind.VALUE);
            a.allocate(4000, BlockAllocator.Kind.VALUE);
            int[] runs = new int[1];
            a.reclaimAtCapacity(() -> {
                if (runs[0]++ == 0) {
                    a.free(held, 4000, BlockAllocator.Kind.VALUE); // a slice a reclaimer was holding back
                }
            });
            assertEquals(held, a.allocate(4000, BlockAllocator.Kind.VALUE), "the reclaimed slice, reused");
            assertEquals(1, runs[0]);
            assertThrows(dev.oakmap.OakOutOfMemoryException.class, () -> a.allocate(4000, BlockAllocator.Kind.VALUE));
            assertEquals(2, runs[0], "a reclaimer that frees nothing leaves the failure as it was");
        } finally {
            a.close();
        }
    }

    /**
     * Blocks are mapped outside the pool's lock, so threads map in parallel: ids of live blocks
     * must still be distinct, each id must resolve to its own block, and released ids come back.
     */
    @Test
    void threadsMappingAtOnceGetDistinctIds() throws InterruptedException {
        BlockPool pool = new BlockPool();
        int threads = 4, rounds = 300;
        java.util.concurrent.ConcurrentHashMap<Integer, Block> live = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                try {
                    for (int i = 0; i < rounds; i++) {
                        Block b = pool.allocate(4096, i % 2 == 0, false);
                        if (live.putIfAbsent(b.id, b) != null) {
                            throw new AssertionError("id " + b.id + " handed out twice");
                        }
                        if (pool.block(b.id) != b) {
                            throw new AssertionError("id " + b.id + " resolves to another block");
                        }
                        b.segment.set(ValueLayout.JAVA_LONG, 0, b.id);
                        live.remove(b.id, b);
                        pool.release(b);
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
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertEquals(0, pool.reservedBytes());
        assertTrue(live.isEmpty());
    }
}
