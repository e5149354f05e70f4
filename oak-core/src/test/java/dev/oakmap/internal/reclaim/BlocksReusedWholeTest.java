package dev.oakmap.internal.reclaim;

import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.BlockPool;
import dev.oakmap.internal.memory.Refs;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Nova values in blocks reused whole ({@link OptimisticSlices#reuseWholeBlocks}): a reference into
 * a block's old layout is gone for every header operation (reads, writes, moves), even where the new layout's payload
 * imitates its live state word exactly, and a block is not carved again while a writer announces
 * a slice of it.
 */
class BlocksReusedWholeTest {

    private static final int BLOCK = 4096; // every block is 4 KiB
    private static final int DATA = 100;

    /** A block full of Nova values ({@code old}), then the start of the next one. */
    private record Emptied(BlockAllocator allocator, Nova nova, OptimisticSlices slices, List<Long> old, int block) {}

    private static Emptied fullBlock() {
        BlockAllocator a = new BlockAllocator(BlockPool.shared(), BLOCK, 1 << 20);
        Nova nova = new Nova(a, BlockAllocator.Kind.VALUE, 1);
        OptimisticSlices slices = new OptimisticSlices(a, BlockAllocator.Kind.VALUE, nova);
        slices.reuseWholeBlocks();
        List<Long> old = new ArrayList<>();
        long ref = slices.allocate(DATA);
        int block = Refs.blockId(ref);
        while (Refs.blockId(ref) == block) {
            old.add(ref);
            ref = slices.allocate(DATA); // the last one opens the next block: the first one's rest is listed
        }
        return new Emptied(a, nova, slices, old, block);
    }

    /** Deletes every value of the full block and reclaims them: the block is then recycled. */
    private static void empty(Emptied e) {
        for (long r : e.old()) {
            e.slices().deleteLocked(r, e.slices().lockWrite(r));
        }
        e.nova().reclaimNow();
        assertEquals(1, e.allocator().recycledBlocks(), "the emptied block was not recycled");
    }

    @Test
    void staleReferencesAreGoneEvenWherePayloadImitatesTheirHeaders() {
        Emptied e = fullBlock();
        try {
            long inFlight = e.old().get(1);
            OptimisticSlices slices = e.slices();
            long token = slices.readBegin(inFlight); // a read that spans the deletion and the reuse
            assertTrue(token != SliceManager.GONE);
            empty(e);
            // the next region is the emptied block: one slice over all of it (this one cannot fit in the current block)
            long whole = slices.allocate(BLOCK - SliceManager.HEADER_BYTES);
            assertEquals(e.block(), Refs.blockId(whole));
            assertEquals(0, Refs.offset(whole));
            MemorySegment seg = slices.segment(whole);
            // write, where each old header was, the live state word its reference expects (the
            // first old slice's header is the new slice's own)
            List<Long> imitated = e.old().subList(1, e.old().size());
            for (long r : imitated) {
                seg.set(ValueLayout.JAVA_LONG, SliceManager.stateOffset(r), (long) Refs.aux(r) << 36);
                seg.set(ValueLayout.JAVA_INT, SliceManager.lengthOffset(r), DATA);
            }
            for (long r : imitated) {
                assertEquals(SliceManager.GONE, slices.liveToken(r), "an old reference reads payload as its header");
                assertEquals(SliceManager.GONE, slices.readBegin(r));
                assertEquals(SliceManager.GONE, slices.lockWrite(r), "a writer would lock another slice's payload");
                assertEquals(SliceManager.GONE, slices.beginMove(r), "the rebalancer would mark another slice's payload");
                assertFalse(slices.isLive(r));
            }
            assertFalse(slices.readEnd(seg, inFlight, token), "a read begun before the reuse validated");
            for (long r : imitated) { // nothing was written into the new slice
                assertEquals((long) Refs.aux(r) << 36, seg.get(ValueLayout.JAVA_LONG, SliceManager.stateOffset(r)));
            }
            long fresh = slices.lockWrite(whole); // the new slice itself is live and writable
            assertTrue(fresh != SliceManager.GONE);
            slices.unlock(whole, fresh);
        } finally {
            e.allocator().close();
        }
    }

    @Test
    void aBlockIsNotCarvedWhileAWriterAnnouncesASliceOfIt() throws Exception {
        Emptied e = fullBlock();
        try {
            empty(e);
            long stale = e.old().get(3);
            CompletableFuture<Void> announced = new CompletableFuture<>();
            CompletableFuture<Void> release = new CompletableFuture<>();
            Thread writer = Thread.ofPlatform().start(() -> {
                e.nova().announce(stale); // a writer between its announcement and its check of the header
                announced.complete(null);
                release.join();
                e.nova().withdraw(stale);
            });
            announced.get(10, TimeUnit.SECONDS);
            CompletableFuture<Long> carve = CompletableFuture.supplyAsync(
                    () -> e.slices().allocate(BLOCK - SliceManager.HEADER_BYTES), Thread::startVirtualThread);
            assertThrows(TimeoutException.class, () -> carve.get(300, TimeUnit.MILLISECONDS),
                    "the block was carved while a writer announced a slice of it");
            release.complete(null);
            long whole = carve.get(10, TimeUnit.SECONDS);
            assertEquals(e.block(), Refs.blockId(whole));
            writer.join();
        } finally {
            e.allocator().close();
        }
    }
}
