package dev.oakmap.internal.reclaim;

import dev.oakmap.internal.memory.WarmBlocksOff;
import org.junit.jupiter.api.extension.ExtendWith;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.BlockPool;
import dev.oakmap.internal.memory.Refs;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Linearizability of Nova values while whole blocks are reused within the scenario
 * ({@link SliceManager#reuseWholeBlocks}), the case the layout era exists for; lock-based slices
 * are checked the same way by {@link LockBasedBlockReuseLincheckTest}. Each of two
 * cells (8-byte counters) fills the rest of a 4 KiB block after a freed 16-byte slice, so that
 * deleting a cell empties its block: with a reclamation batch of 1 the deletion's round frees it
 * (lock-based slices are freed at once) and the allocator recycles the block. The churn operation then allocates a slice over a whole
 * block, the recycled one when there is one, and writes where each cell's header was the live
 * state word the cell's reference expects, its length, and {@link #FOREIGN} where its counter
 * was: payload that passes every check but the layout era's. The specification is that of
 * {@link SliceReuseLincheckTest}: a deleted cell is gone for ever; reads and increments through
 * its reference never see the churn's bytes, and never write into them.
 *
 * <p>Checked to fail, in both modes, when no operation checks the era (reads then return the
 * churn's bytes); for lock-based slices, also when lockers do not announce before their CAS. A read that began before the reuse and is judged by {@code readEnd} alone is
 * a narrower window that these runs do not reliably reach; {@code BlocksReusedWholeTest} pins it.
 */
@ExtendWith(WarmBlocksOff.class)
@Param(name = "cell", gen = IntGen.class, conf = "0:1")
public class BlockReuseLincheckTest {

    static final long FOREIGN = 1_000_000L;
    private static final int BLOCK = 4096;
    /** The freed slice before each cell: cells start 16 bytes into their block. */
    private static final int PAD_DATA = 4;
    private static final AtomicReference<BlockAllocator> LAST = new AtomicReference<>();

    private final BlockAllocator allocator = open();
    private final SliceManager slices = reusing(allocator);
    private final long[] cells = {cell(10), cell(20)};

    private static BlockAllocator open() {
        BlockAllocator a = new BlockAllocator(BlockPool.shared(), BLOCK, 16 * BLOCK);
        BlockAllocator previous = LAST.getAndSet(a);
        if (previous != null) {
            previous.close();
        }
        return a;
    }

    private SliceManager reusing(BlockAllocator a) {
        SliceManager s = slices(a);
        s.reuseWholeBlocks();
        return s;
    }

    /** @return the slices under test, over {@code a} (called from the constructor) */
    SliceManager slices(BlockAllocator a) {
        return new OptimisticSlices(a, BlockAllocator.Kind.VALUE, new Nova(a, BlockAllocator.Kind.VALUE, 1));
    }


    /** A cell of the rest of a fresh block, after a 16-byte slice that is freed at once. */
    private long cell(long value) {
        long pad = slices.allocate(PAD_DATA);
        long ref = slices.allocate(BLOCK - (int) slices.sliceBytes(PAD_DATA) - SliceManager.HEADER_BYTES);
        slices.discard(pad);
        slices.segment(ref).set(ValueLayout.JAVA_LONG_UNALIGNED, slices.dataOffset(ref), value);
        return ref;
    }

    @Operation
    public long read(@Param(name = "cell") int cell) {
        return SliceReuseLincheckTest.readCounter(slices, cells[cell]);
    }

    @Operation
    public long increment(@Param(name = "cell") int cell) {
        return SliceReuseLincheckTest.incrementCounter(slices, cells[cell]);
    }

    /**
     * Deletes the cell (true if this call did), then reuses a whole block at once ({@link #churn}):
     * the cell's, when the deletion emptied it. One operation, so that every scenario with a
     * deletion also reuses memory.
     */
    @Operation
    public boolean deleteAndReuse(@Param(name = "cell") int cell) {
        boolean won = slices.delete(cells[cell]);
        if (churn() != FOREIGN) {
            throw new AssertionError("a reused slice lost its own bytes");
        }
        return won;
    }

    /**
     * Allocates a slice over a whole block, writes the cells' headers and {@link #FOREIGN} where
     * their counters would be, and {@link #FOREIGN} in its last word, which it reads back; then
     * discards it.
     */
    private long churn() {
        long ref = slices.allocate(BLOCK - SliceManager.HEADER_BYTES);
        MemorySegment segment = slices.segment(ref);
        long last = slices.dataOffset(ref) + BLOCK - SliceManager.HEADER_BYTES - Long.BYTES; // clear of the cells' places
        segment.set(ValueLayout.JAVA_LONG_UNALIGNED, last, FOREIGN);
        for (long cell : cells) { // every cell lies at the same place in its block
            segment.set(ValueLayout.JAVA_LONG, SliceManager.stateOffset(cell), (long) Refs.aux(cell) << 36);
            segment.set(ValueLayout.JAVA_INT, SliceManager.lengthOffset(cell), Long.BYTES);
            segment.set(ValueLayout.JAVA_LONG_UNALIGNED, slices.dataOffset(cell), FOREIGN);
        }
        long v = segment.get(ValueLayout.JAVA_LONG_UNALIGNED, last);
        slices.discard(ref);
        return v;
    }

    /** The sequential specification: {@link SliceReuseLincheckTest}'s, the reuse adding nothing visible. */
    public static class Spec extends SliceReuseLincheckTest.Spec {
        public boolean deleteAndReuse(int cell) {
            return delete(cell);
        }
    }

    @AfterEach
    void closeLast() {
        BlockAllocator a = LAST.getAndSet(null);
        if (a != null) {
            a.close();
        }
    }

    @Test
    void modelChecking() {
        new ModelCheckingOptions()
                .iterations(12)
                .invocationsPerIteration(100)
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .sequentialSpecification(Spec.class)
                .check(getClass());
    }

    @Test
    void stress() {
        new StressOptions()
                .iterations(6)
                .invocationsPerIteration(200)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .sequentialSpecification(Spec.class)
                .check(getClass());
    }
}
