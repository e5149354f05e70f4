package dev.oakmap.internal.reclaim;

import dev.oakmap.internal.memory.BlockAllocator;

/**
 * {@link BlockReuseLincheckTest}'s scenarios over lock-based slices, whose readers and writers CAS
 * the header: a stale reference must neither read the churn's bytes nor CAS its imitation header.
 * Checked to fail when the era is not checked and when lockers do not announce before their CAS.
 */
public class LockBasedBlockReuseLincheckTest extends BlockReuseLincheckTest {
    @Override
    SliceManager slices(BlockAllocator a) {
        return new LockBasedSlices(a, BlockAllocator.Kind.VALUE);
    }
}
