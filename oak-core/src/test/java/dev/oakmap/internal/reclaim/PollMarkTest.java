package dev.oakmap.internal.reclaim;

import dev.oakmap.MemoryScheme;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.BlockPool;
import dev.oakmap.internal.wait.HeldLocks;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The poll mark of value slices ({@link SliceManager#lockForPoll},
 * {@link SliceManager#isLiveAwaitingPoll}), under every scheme whose values can be polled: who
 * waits for a mark, who does not, and that a poll meeting another poll's mark gives up instead of
 * waiting (two polls from opposite ends would otherwise wait for each other for ever).
 */
class PollMarkTest {

    private static void withValues(MemoryScheme scheme, SliceTest test) throws Exception {
        BlockAllocator allocator = new BlockAllocator(BlockPool.shared(), 1 << 16, 1 << 20);
        try {
            test.run(SliceManager.create(scheme, allocator, BlockAllocator.Kind.VALUE));
        } finally {
            allocator.close();
        }
    }

    interface SliceTest {
        void run(SliceManager slices) throws Exception;
    }

    /** Runs {@code check} on another thread; @return its future */
    private static <T> CompletableFuture<T> elsewhere(java.util.concurrent.Callable<T> check) {
        CompletableFuture<T> f = new CompletableFuture<>();
        Thread.ofPlatform().daemon().start(() -> {
            try {
                f.complete(check.call());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        return f;
    }

    private static void assertStillWaiting(CompletableFuture<?> f) throws Exception {
        assertThrows(TimeoutException.class, () -> f.get(200, TimeUnit.MILLISECONDS), "answered without waiting");
    }

    @ParameterizedTest
    @EnumSource(value = MemoryScheme.class, names = {"NOVA", "GROW_ONLY", "LOCK_BASED"})
    void othersWaitForAMarkAndSeeWhatThePollLeft(MemoryScheme scheme) throws Exception {
        withValues(scheme, slices -> {
            long kept = slices.allocate(8);
            long removed = slices.allocate(8);
            for (long ref : new long[] {kept, removed}) {
                long locked = slices.lockForPoll(ref);
                assertNotEquals(SliceManager.GONE, locked);
                assertTrue(slices.isLive(ref), "scans and the rebalancer do not wait");
                HeldLocks held = HeldLocks.holdForPoll(ref);
                try {
                    assertTrue(slices.isLiveAwaitingPoll(ref), "the poll's own check does not wait");
                } finally {
                    held.releasePoll();
                }
                CompletableFuture<Boolean> other = elsewhere(() -> slices.isLiveAwaitingPoll(ref));
                assertStillWaiting(other);
                if (ref == kept) {
                    slices.unlock(ref, locked); // the poll's check failed: the mark goes with the lock
                    assertTrue(other.get(30, TimeUnit.SECONDS));
                } else {
                    slices.deleteLocked(ref, locked);
                    assertFalse(other.get(30, TimeUnit.SECONDS));
                }
            }
            long locked = slices.lockWrite(kept); // an ordinary writer's lock is not a mark
            assertTrue(elsewhere(() -> slices.isLiveAwaitingPoll(kept)).get(30, TimeUnit.SECONDS));
            slices.unlock(kept, locked);
        });
    }

    @ParameterizedTest
    @EnumSource(value = MemoryScheme.class, names = {"NOVA", "GROW_ONLY", "LOCK_BASED"})
    void aPollThatMeetsAnotherPollsMarkGivesUp(MemoryScheme scheme) throws Exception {
        withValues(scheme, slices -> {
            long mine = slices.allocate(8);
            long theirs = slices.allocate(8);
            long theirLock = slices.lockForPoll(theirs);
            CompletableFuture<Object> poll = elsewhere(() -> {
                long myLock = slices.lockForPoll(mine);
                HeldLocks held = HeldLocks.holdForPoll(mine);
                try {
                    return slices.isLiveAwaitingPoll(theirs);
                } finally {
                    held.releasePoll();
                    slices.unlock(mine, myLock);
                }
            });
            try {
                ExecutionException e = assertThrows(ExecutionException.class, () -> poll.get(30, TimeUnit.SECONDS));
                assertInstanceOf(HeldLocks.PollConflict.class, e.getCause());
            } finally {
                slices.unlock(theirs, theirLock);
            }
            assertEquals(true, elsewhere(() -> slices.isLiveAwaitingPoll(mine)).get(30, TimeUnit.SECONDS),
                    "the poll that gave up released its mark");
        });
    }
}
