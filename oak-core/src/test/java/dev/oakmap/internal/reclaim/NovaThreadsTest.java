package dev.oakmap.internal.reclaim;

import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.BlockPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Nova with threads that live for one task: a program that gives each request a virtual thread
 * of its own deletes a slice or two per thread. Their deletions must still be reclaimed (the
 * release lists are not per thread), and the participants of ended threads must be reused, not
 * accumulate (with per-thread lists, every ended thread's slices stayed listed for good, and
 * registering the next thread copied an array of all of them).
 */
class NovaThreadsTest {
    private static final int SLICE = 64;
    private static final int BATCH = 32;

    private BlockAllocator allocator;
    private OptimisticSlices slices;
    private Nova nova;

    @BeforeEach
    void setUp() {
        allocator = new BlockAllocator(BlockPool.shared(), 1 << 20, 64L << 20);
        nova = new Nova(allocator, BlockAllocator.Kind.VALUE, BATCH);
        slices = new OptimisticSlices(allocator, BlockAllocator.Kind.VALUE, nova);
    }

    @AfterEach
    void tearDown() {
        allocator.close();
    }

    /** Allocates a slice, writes it under its lock, then deletes it: what a put-then-remove does. */
    private void writeAndDelete() {
        long ref = slices.allocate(SLICE);
        long locked = slices.lockWrite(ref);
        slices.deleteLocked(ref, locked);
    }

    /**
     * A pool of as many threads as there are lists gets a list per thread, whatever their ids (with
     * homes hashed from thread ids, two threads shared a list one time in four), and the lists
     * still all take part in rounds: everything deleted is reclaimed.
     */
    @Test
    void threadsGetHomeListsOfTheirOwn() throws Exception {
        int lists = nova.releaseLists();
        java.util.Set<Integer> homes = new java.util.HashSet<>();
        for (int round = 0; round < 3; round++) { // three pools, one after another
            homes.clear();
            List<Thread> pool = new ArrayList<>();
            java.util.Map<Thread, Integer> seen = new java.util.concurrent.ConcurrentHashMap<>();
            for (int t = 0; t < lists; t++) {
                pool.add(Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < BATCH; i++) {
                        writeAndDelete();
                    }
                    seen.put(Thread.currentThread(), nova.homeList());
                }));
            }
            for (Thread t : pool) {
                t.join();
            }
            homes.addAll(seen.values());
            assertEquals(lists, homes.size(), "home lists of " + lists + " threads: " + seen.values());
        }
        nova.reclaimNow();
        assertEquals(0, nova.pendingSlices());
        assertEquals(0, allocator.usedBytes());
    }

    @Test
    void slicesDeletedByVirtualThreadsOfOneTaskEachAreReclaimed() throws Exception {
        int tasks = 20_000;
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < tasks; i++) {
                executor.submit(this::writeAndDelete);
            }
        }
        assertTrue(nova.rounds() >= tasks / BATCH / 8, "rounds ran: " + nova.rounds());
        assertTrue(nova.pendingSlices() < 16L * BATCH, "slices left listed: " + nova.pendingSlices());
        long used = allocator.usedBytes();
        assertTrue(used < 16L * BATCH * slices.sliceBytes(SLICE),
                "bytes in use after " + tasks + " slices were deleted: " + used);
        nova.reclaimNow();
        assertEquals(0, nova.pendingSlices());
        assertEquals(0, allocator.usedBytes());
        assertTrue(nova.participants() <= 8, "participants (the writes in progress at once): " + nova.participants());
    }

    @Test
    void participantsOfEndedThreadsAreReused() throws Exception {
        for (int i = 0; i < 300; i++) {
            Thread t = new Thread(this::writeAndDelete);
            t.start();
            t.join();
        }
        assertEquals(1, nova.participants(), "one write at a time: one participant, whatever the threads");
        nova.reclaimNow();
        assertEquals(0, allocator.usedBytes());
    }

    @Test
    void writesInProgressEachHaveTheirOwnParticipant() throws Exception {
        int threads = 8;
        CountDownLatch allWriting = new CountDownLatch(threads);
        CountDownLatch done = new CountDownLatch(1);
        List<Thread> started = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[] refs = new long[threads];
        for (int i = 0; i < threads; i++) {
            refs[i] = slices.allocate(SLICE);
        }
        for (int i = 0; i < threads; i++) {
            int me = i;
            Thread t = Thread.ofVirtual().unstarted(() -> {
                try {
                    long locked = slices.lockWrite(refs[me]); // announces refs[me] until unlock
                    allWriting.countDown();
                    done.await();
                    slices.unlock(refs[me], locked);
                } catch (Throwable e) {
                    failure.set(e);
                }
            });
            started.add(t);
            t.start();
        }
        assertTrue(allWriting.await(30, TimeUnit.SECONDS));
        assertEquals(threads, nova.participants(), "one participant per write in progress");
        // every announced slice survives a round, even deleted: each writer's announcement is its own
        for (int i = 0; i < threads; i++) {
            nova.retire(refs[i], slices.sliceBytes(SLICE));
        }
        nova.reclaimNow();
        assertEquals(threads, nova.pendingSlices(), "announced slices are held back");
        done.countDown();
        for (Thread t : started) {
            t.join(30_000);
        }
        assertNull(failure.get());
        nova.reclaimNow();
        assertEquals(0, nova.pendingSlices());
    }

    @Test
    void nestedWritesOnOneThreadWithdrawInEitherOrder() {
        long a = slices.allocate(SLICE);
        long b = slices.allocate(SLICE);
        for (boolean innerFirst : new boolean[] {true, false}) {
            nova.announce(a);
            nova.announce(b); // a nested write: the thread's last participant is taken
            assertEquals(2, nova.participants());
            nova.retire(a, slices.sliceBytes(SLICE));
            nova.retire(b, slices.sliceBytes(SLICE));
            nova.reclaimNow();
            assertEquals(2, nova.pendingSlices(), "both announced slices are held back");
            nova.withdraw(innerFirst ? b : a);
            nova.reclaimNow();
            assertEquals(1, nova.pendingSlices(), "the slice still announced is held back");
            nova.withdraw(innerFirst ? a : b);
            nova.reclaimNow();
            assertEquals(0, nova.pendingSlices());
            a = slices.allocate(SLICE);
            b = slices.allocate(SLICE);
        }
        assertEquals(2, nova.participants(), "freed participants are taken again");
    }

    @Test
    void withdrawingWhatNobodyAnnouncesIsABug() {
        long a = slices.allocate(SLICE);
        assertThrows(IllegalStateException.class, () -> nova.withdraw(a));
    }
}
