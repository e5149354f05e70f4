package dev.oakmap.somar;

import dev.oakmap.internal.memory.WarmBlocksOff;
import org.junit.jupiter.api.extension.ExtendWith;
import dev.oakmap.DeletedMemoryAccessException;
import dev.oakmap.MemoryScheme;
import dev.oakmap.internal.reclaim.SliceReuseLincheckTest;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.concurrent.atomic.AtomicReference;

/**
 * Linearizability of the public {@link Somar} operations on published slices: two 16-byte
 * slices (cells) hold a counter in both longs, which threads read, increment under the write
 * lock, measure and delete; a churn operation allocates a slice of the same size privately,
 * fills it with a value no cell holds, reads it back and gives it back (under LOCK_BASED a
 * deleted cell's memory is reused by it at once). The specification: a deleted cell is gone for
 * ever (DeletedMemoryAccessException, reported as -1), a read never sees a torn or foreign
 * counter, and exactly one of several deletes of a cell returns true.
 *
 * <p>Stress mode only: model checking through the whole manager took 20 s for four iterations
 * here; {@code SliceReuseLincheckTest} model-checks the slice protocol underneath.
 */
@ExtendWith(WarmBlocksOff.class)
@Param(name = "cell", gen = IntGen.class, conf = "0:1")
public class SomarLincheckTest {

    static final long FOREIGN = SliceReuseLincheckTest.FOREIGN; // what the specification's churn returns
    private static final AtomicReference<Somar> LAST = new AtomicReference<>();
    private static volatile MemoryScheme scheme = MemoryScheme.NOVA;

    private final Somar memory = open();
    private final long[] cells = {filled(10), filled(20)};

    /** A new manager; closes the one of the previous invocation. */
    private static Somar open() {
        Somar m = Somar.create(scheme, 64 * 1024);
        Somar previous = LAST.getAndSet(m);
        if (previous != null) {
            previous.close();
        }
        return m;
    }

    private long filled(long value) {
        long p = memory.allocate(16);
        memory.writePrivate(p, b -> b.putLong(0, value).putLong(8, value));
        return p;
    }

    /** @return the counter, or -2 if its two longs differ (torn), or -1 if the cell is gone */
    @Operation
    public long read(@Param(name = "cell") int cell) {
        try {
            return memory.read(cells[cell], b -> b.getLong(0) == b.getLong(8) ? b.getLong(0) : -2L);
        } catch (DeletedMemoryAccessException e) {
            return -1;
        }
    }

    @Operation
    public long increment(@Param(name = "cell") int cell) {
        try {
            return memory.write(cells[cell], b -> {
                long v = b.getLong(0) + 1;
                b.putLong(0, v);
                b.putLong(8, v);
                return v;
            });
        } catch (DeletedMemoryAccessException e) {
            return -1;
        }
    }

    @Operation
    public int length(@Param(name = "cell") int cell) {
        try {
            return memory.length(cells[cell]);
        } catch (DeletedMemoryAccessException e) {
            return -1;
        }
    }

    @Operation
    public boolean delete(@Param(name = "cell") int cell) {
        return memory.delete(cells[cell]);
    }

    @Operation
    public long churn() {
        long p = filled(FOREIGN);
        long v = memory.writePrivate(p, b -> b.getLong(0) == b.getLong(8) ? b.getLong(0) : -2L);
        memory.deletePrivate(p);
        return v;
    }

    /** {@link SliceReuseLincheckTest.Spec}'s cells, and their length (16 bytes, -1 once deleted). */
    public static class Spec extends SliceReuseLincheckTest.Spec {
        public int length(int cell) {
            return deleted[cell] ? -1 : 16;
        }
    }

    @AfterEach
    void closeLast() {
        Somar m = LAST.getAndSet(null);
        if (m != null) {
            m.close();
        }
        scheme = MemoryScheme.NOVA;
    }

    @ParameterizedTest(name = "memory={0}")
    @EnumSource(MemoryScheme.class)
    void stress(MemoryScheme s) {
        scheme = s;
        new StressOptions()
                .iterations(10)
                .invocationsPerIteration(500)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .sequentialSpecification(Spec.class)
                .check(SomarLincheckTest.class);
    }
}
