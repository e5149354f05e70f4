package dev.oakmap.internal.reclaim;

import dev.oakmap.internal.memory.WarmBlocksOff;
import org.junit.jupiter.api.extension.ExtendWith;
import dev.oakmap.MemoryScheme;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.BlockPool;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Linearizability of the value slice managers' protocol while deleted memory is reused inside
 * the scenario: the guarantee Nova exists for. Two published 8-byte slices (cells) hold counters
 * that threads read optimistically ({@code readBegin}/{@code readEnd}), increment under the write
 * lock and delete; a third operation allocates a slice of the same size, fills it with a value
 * no cell holds, reads it back and discards it. Nova runs with a batch of 1, so every deletion
 * starts a reclamation round and a deleted cell's memory can be handed to that allocation within
 * the same scenario (lock-based slices free at once). The specification: a deleted cell is gone
 * for ever, so every read or increment through its old reference reports it gone, never the
 * bytes of the slice that reused its memory, and exactly one of several deletes wins.
 *
 * <p>Checked to fail when Nova skips a read's validation (reads then return the reusing slice's
 * bytes). Model checking explores thread switches inside the header protocol; stress mode runs
 * real threads. Lincheck's scenario generator is seeded, so a failure replays.
 */
@ExtendWith(WarmBlocksOff.class)
@Param(name = "cell", gen = IntGen.class, conf = "0:1")
public class SliceReuseLincheckTest {

    /** The value of every slice the churn operation fills; no cell ever holds it. */
    public static final long FOREIGN = 1_000_000L;
    private static final AtomicReference<BlockAllocator> LAST = new AtomicReference<>();
    private static volatile MemoryScheme scheme = MemoryScheme.NOVA;

    private final BlockAllocator allocator = open();
    private final SliceManager slices = scheme == MemoryScheme.NOVA
            ? new OptimisticSlices(allocator, BlockAllocator.Kind.VALUE, new Nova(allocator, BlockAllocator.Kind.VALUE, 1))
            : new LockBasedSlices(allocator, BlockAllocator.Kind.VALUE);
    private final long[] cells = {filled(10), filled(20)};

    /** A new allocator; closes the one of the previous invocation (block ids are process-wide). */
    private static BlockAllocator open() {
        BlockAllocator a = new BlockAllocator(BlockPool.shared(), 4096, 64 * 1024);
        BlockAllocator previous = LAST.getAndSet(a);
        if (previous != null) {
            previous.close();
        }
        return a;
    }

    /** @return a new slice holding {@code value}, written before any other thread can reach it */
    private long filled(long value) {
        long ref = slices.allocate(Long.BYTES);
        slices.segment(ref).set(ValueLayout.JAVA_LONG_UNALIGNED, slices.dataOffset(ref), value);
        return ref;
    }

    /** @return the cell's counter, read optimistically and validated, or -1 if the cell is gone */
    @Operation
    public long read(@Param(name = "cell") int cell) {
        return readCounter(slices, cells[cell]);
    }

    /** @return the counter in slice {@code ref}, read optimistically and validated, or -1 if it is gone */
    static long readCounter(SliceManager slices, long ref) {
        while (true) {
            long token = slices.readBegin(ref);
            if (token == SliceManager.GONE) {
                return -1;
            }
            MemorySegment segment = slices.segment(ref);
            long v = segment.get(ValueLayout.JAVA_LONG_UNALIGNED, slices.dataOffset(ref));
            if (slices.readEnd(ref, token)) {
                return v;
            }
        }
    }

    /** @return the cell's counter after an increment under the write lock, or -1 if it is gone */
    @Operation
    public long increment(@Param(name = "cell") int cell) {
        return incrementCounter(slices, cells[cell]);
    }

    /** @return the counter in slice {@code ref} after an increment under its write lock, or -1 if it is gone */
    static long incrementCounter(SliceManager slices, long ref) {
        long locked = slices.lockWrite(ref);
        if (locked == SliceManager.GONE) {
            return -1;
        }
        MemorySegment segment = slices.segment(ref);
        long at = slices.dataOffset(ref);
        long v = segment.get(ValueLayout.JAVA_LONG_UNALIGNED, at) + 1;
        segment.set(ValueLayout.JAVA_LONG_UNALIGNED, at, v);
        slices.unlock(ref, locked);
        return v;
    }

    /** @return true if this call deleted the cell */
    @Operation
    public boolean delete(@Param(name = "cell") int cell) {
        return slices.delete(cells[cell]);
    }

    /**
     * Allocates a slice the size of a cell (a deleted cell's memory, when reclaimed), fills it with
     * {@link #FOREIGN}, reads it back and discards it.
     *
     * @return the value read back
     */
    @Operation
    public long churn() {
        long ref = filled(FOREIGN);
        long v = slices.segment(ref).get(ValueLayout.JAVA_LONG_UNALIGNED, slices.dataOffset(ref));
        slices.discard(ref);
        return v;
    }

    /**
     * The sequential specification: two cells holding 10 and 20, deleted for ever once deleted
     * (-1). Also the base of {@code SomarLincheckTest}'s, which runs the same cells through the
     * public SOMAR API.
     */
    public static class Spec {
        private final long[] values = {10, 20};
        protected final boolean[] deleted = new boolean[2];

        public long read(int cell) {
            return deleted[cell] ? -1 : values[cell];
        }

        public long increment(int cell) {
            return deleted[cell] ? -1 : ++values[cell];
        }

        public boolean delete(int cell) {
            boolean won = !deleted[cell];
            deleted[cell] = true;
            return won;
        }

        public long churn() {
            return FOREIGN;
        }
    }

    @AfterEach
    void closeLast() {
        BlockAllocator a = LAST.getAndSet(null);
        if (a != null) {
            a.close();
        }
        scheme = MemoryScheme.NOVA;
    }

    @ParameterizedTest(name = "memory={0}")
    @EnumSource(value = MemoryScheme.class, names = {"NOVA", "LOCK_BASED"})
    void modelChecking(MemoryScheme s) {
        scheme = s;
        new ModelCheckingOptions()
                .iterations(40)
                .invocationsPerIteration(200)
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .sequentialSpecification(Spec.class)
                .check(SliceReuseLincheckTest.class);
    }

    @ParameterizedTest(name = "memory={0}")
    @EnumSource(value = MemoryScheme.class, names = {"NOVA", "LOCK_BASED"})
    void stress(MemoryScheme s) {
        scheme = s;
        new StressOptions()
                .iterations(20)
                .invocationsPerIteration(500)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .sequentialSpecification(Spec.class)
                .check(SliceReuseLincheckTest.class);
    }
}
