package dev.oakmap.internal.memory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
        Block b = pool.allocate(size, false, false);
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

    /** A populated block is committed when mapped; a lazy one only as its pages are touched. */
    @Test
    @EnabledOnOs(OS.LINUX)
    void populatedBlocksAreCommittedWhenMapped() throws IOException {
        assertTrue(NativeMemory.available(), "tests run with native access: blocks should be mmapped");
        BlockPool pool = new BlockPool();
        long size = 128L << 20;
        long rss0 = rssBytes();
        Block lazy = pool.allocate(size, false, false);
        long rss1 = rssBytes();
        assertTrue(rss1 - rss0 < size / 4, "a lazy block commits nothing up front: " + (rss1 - rss0));
        Block eager = pool.allocate(size, true, false);
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
     * A block mapped as huge pages gets them when populated (the advice has to precede the
     * faulting: it once came after {@code MAP_POPULATE} and took no effect); one mapped as small
     * pages is collapsed into huge ones on request. Skipped where the kernel has no transparent
     * huge pages; the collapse, where it does not collapse on request (before Linux 6.1).
     */
    @Test
    @EnabledOnOs(OS.LINUX)
    void blocksGetHugePagesWhenMappedSoOrWhenCollapsed() throws IOException {
        assumeTrue(hugePagesOffered(), "no transparent huge pages here");
        BlockPool pool = new BlockPool();
        long size = 32L << 20;
        Block huge = pool.allocate(size, true, true);
        try {
            assertTrue(anonHugeBytes(huge.segment.address()) >= size / 2, "a populated huge block is mostly huge pages");
        } finally {
            pool.release(huge);
        }
        Block b = pool.allocate(size, true, false);
        try {
            assertTrue(anonHugeBytes(b.segment.address()) < size / 4, "populated as small pages");
            b.segment.set(ValueLayout.JAVA_LONG, size - 8, 42L);
            b.collapseToHugePages();
            long collapsed = anonHugeBytes(b.segment.address());
            assumeTrue(collapsed > 0, "this kernel does not collapse on request");
            assertTrue(collapsed >= size / 2, "most of a collapsed block is in huge pages: " + collapsed);
            assertEquals(42L, b.segment.get(ValueLayout.JAVA_LONG, size - 8), "contents survive the collapse");
        } finally {
            pool.release(b);
        }
    }

    /**
     * A growing allocator ends up with every full block in huge pages: the blocks its writers
     * mapped as small pages are collapsed in the background. Closing it waits for a collapse in
     * progress.
     */
    @Test
    @EnabledOnOs(OS.LINUX)
    void fullBlocksEndUpInHugePages() throws IOException {
        assumeTrue(hugePagesOffered(), "no transparent huge pages here");
        BlockPool pool = new BlockPool();
        Block probe = pool.allocate(4L << 20, true, false);
        try {
            probe.collapseToHugePages();
            assumeTrue(anonHugeBytes(probe.segment.address()) > 0, "this kernel does not collapse on request");
        } finally {
            pool.release(probe);
        }
        long size = 8L << 20;
        BlockAllocator a = new BlockAllocator(pool, size, 16 * size);
        try {
            long[] firsts = new long[4];
            for (int i = 0; i < firsts.length; i++) {
                firsts[i] = a.allocate(size, BlockAllocator.Kind.VALUE); // a block each
                for (long off = 0; off < size; off += 4096) { // written, as a map's blocks are
                    a.segment(firsts[i]).set(ValueLayout.JAVA_LONG, Refs.offset(firsts[i]) + off, off);
                }
            }
            a.awaitBackgroundWork();
            for (int i = 0; i < firsts.length - 1; i++) {
                // a small-paged block keeps its own mapping (its advice differs from a huge neighbour's)
                long huge = anonHugeBytes(a.segment(firsts[i]).address());
                assertTrue(huge >= size / 2, "full block " + i + " is mostly huge pages: " + huge);
            }
        } finally {
            a.close();
        }
        assertEquals(0, pool.reservedBytes());
        for (int round = 0; round < 10; round++) { // close while a collapse is in progress
            BlockAllocator b = new BlockAllocator(pool, size, 16 * size);
            b.allocate(size, BlockAllocator.Kind.KEY);
            b.allocate(size, BlockAllocator.Kind.KEY);
            b.allocate(size, BlockAllocator.Kind.KEY);
            b.close();
            assertEquals(0, pool.reservedBytes(), "round " + round);
        }
    }

    private static boolean hugePagesOffered() throws IOException {
        Path thp = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
        return Files.exists(thp) && !Files.readString(thp).contains("[never]");
    }

    /**
     * The {@code AnonHugePages} of the mapping (the kernel's VMA) that contains {@code address},
     * from /proc/self/smaps. Adjacent blocks mapped alike may share one.
     */
    private static long anonHugeBytes(long address) throws IOException {
        return anonHugeBytesByMapping(address).values().stream().mapToLong(Long::longValue).sum();
    }

    /** The {@code AnonHugePages} of the mappings that contain the given addresses, by mapping start. */
    private static java.util.Map<Long, Long> anonHugeBytesByMapping(long... addresses) throws IOException {
        java.util.Map<Long, Long> found = new java.util.TreeMap<>();
        Long inMapping = null;
        for (String line : Files.readAllLines(Path.of("/proc/self/smaps"))) {
            if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
                String[] range = line.substring(0, line.indexOf(' ')).split("-");
                long lo = Long.parseUnsignedLong(range[0], 16);
                long hi = Long.parseUnsignedLong(range[1], 16);
                inMapping = null;
                for (long a : addresses) {
                    if (a >= lo && a < hi) {
                        inMapping = lo;
                    }
                }
            } else if (inMapping != null && line.startsWith("AnonHugePages:")) {
                found.put(inMapping, Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024);
            }
        }
        if (found.isEmpty()) {
            throw new IllegalStateException("no mapping holds " + java.util.Arrays.toString(addresses));
        }
        return found;
    }

    @Test
    void blockAccessIsBoundsChecked() {
        BlockPool pool = new BlockPool();
        Block b = pool.allocate(1 << 16, true, false);
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
            assertEquals(Refs.offset(first) + 8, Refs.offset(key), "the value's state word stays a tombstone");
        } finally {
            a.close();
        }
        assertEquals(0, pool.reservedBytes());
    }
}
