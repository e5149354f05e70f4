package dev.oakmap.internal.reclaim;

import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.BlockPool;
import dev.oakmap.internal.memory.Refs;
import dev.oakmap.MemoryScheme;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Nova and lock-based slices in blocks reused whole ({@link SliceManager#reuseWholeBlocks}): a
 * reference into a block's old layout is gone for every header operation (reads, writes, moves,
 * locks), even where the new layout's payload imitates its live state word exactly, and a block
 * is not carved again while a writer (Nova) or a locker (lock-based) announces a slice of it.
 */
class BlocksReusedWholeTest {

    private static final int BLOCK = 4096; // every block is 4 KiB
    private static final int DATA = 100;

    /**
     * A block full of slices ({@code old}), then the start of the next one; {@code announcements}
     * are those the scheme's writers or lockers make before they CAS a header.
     */
    private record Emptied(BlockAllocator allocator, Nova nova, SliceManager slices, Announcements announcements,
                           List<Long> old, int block) {}

    /** Slices of {@code scheme} in 4 KiB blocks reused whole (Nova with a reclamation batch of 1). */
    private static SliceManager reusing(MemoryScheme scheme) {
        BlockAllocator a = new BlockAllocator(BlockPool.shared(), BLOCK, 1 << 20);
        SliceManager slices = scheme == MemoryScheme.NOVA
                ? new OptimisticSlices(a, BlockAllocator.Kind.VALUE, new Nova(a, BlockAllocator.Kind.VALUE, 1))
                : new LockBasedSlices(a, BlockAllocator.Kind.VALUE);
        slices.reuseWholeBlocks();
        return slices;
    }

    private static Emptied fullBlock(MemoryScheme scheme) {
        SliceManager slices = reusing(scheme);
        BlockAllocator a = slices.allocator;
        Nova nova = slices instanceof OptimisticSlices o ? o.nova() : null;
        Announcements announcements = nova != null ? nova.announcements() : ((LockBasedSlices) slices).announcements();
        List<Long> old = new ArrayList<>();
        long ref = slices.allocate(DATA);
        int block = Refs.blockId(ref);
        while (Refs.blockId(ref) == block) {
            old.add(ref);
            ref = slices.allocate(DATA); // the last one opens the next block: the first one's rest is listed
        }
        return new Emptied(a, nova, slices, announcements, old, block);
    }

    /** Deletes every slice of the full block and reclaims them: the block is then recycled. */
    private static void empty(Emptied e) {
        for (long r : e.old()) {
            e.slices().deleteLocked(r, e.slices().lockWrite(r));
        }
        e.slices().reclaimNow(); // Nova's batch; lock-based slices were freed at once
        assertEquals(1, e.allocator().recycledBlocks(), "the emptied block was not recycled");
    }

    @ParameterizedTest
    @EnumSource(value = MemoryScheme.class, names = {"NOVA", "LOCK_BASED"})
    void staleReferencesAreGoneEvenWherePayloadImitatesTheirHeaders(MemoryScheme scheme) {
        Emptied e = fullBlock(scheme);
        try {
            boolean optimistic = scheme == MemoryScheme.NOVA;
            long inFlight = e.old().get(1);
            SliceManager slices = e.slices();
            // an optimistic read that spans the deletion and the reuse (a lock-based one would
            // hold its slice, and so the block, until it ends)
            long token = optimistic ? slices.readBegin(inFlight) : SliceManager.GONE;
            assertTrue(!optimistic || token != SliceManager.GONE);
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
                assertEquals(SliceManager.GONE, slices.readBegin(r), "a reader would lock or read another slice's payload");
                assertEquals(SliceManager.GONE, slices.lockWrite(r), "a writer would lock another slice's payload");
                if (optimistic) {
                    assertEquals(SliceManager.GONE, slices.beginMove(r), "the rebalancer would mark another slice's payload");
                }
                assertFalse(slices.isLive(r));
                assertFalse(slices.isLiveAwaitingPoll(r));
                assertEquals(SliceManager.GONE, slices.lockForPoll(r), "a poll would lock another slice's payload");
            }
            if (optimistic) {
                assertFalse(slices.readEnd(seg, inFlight, token), "a read begun before the reuse validated");
            }
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

    @ParameterizedTest
    @EnumSource(value = MemoryScheme.class, names = {"NOVA", "LOCK_BASED"})
    void aBlockIsNotCarvedWhileAWriterAnnouncesASliceOfIt(MemoryScheme scheme) throws Exception {
        Emptied e = fullBlock(scheme);
        try {
            empty(e);
            long stale = e.old().get(3);
            CompletableFuture<Void> announced = new CompletableFuture<>();
            CompletableFuture<Void> release = new CompletableFuture<>();
            Thread writer = Thread.ofPlatform().start(() -> {
                e.announcements().announce(stale); // a writer between its announcement and its check of the header
                announced.complete(null);
                release.join();
                e.announcements().withdraw(stale);
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

    /**
     * Lockers (lock-based readers and writers; Nova writers) racing blocks being emptied,
     * recycled and filled with payload that imitates their slices' live headers: no locker ever
     * holds a lock once every slice of its round was deleted (a slice cannot be deleted while
     * locked, so such a lock would be a CAS on the new owner's payload). The window this covers,
     * between a locker's check of the layout era and its CAS, is reached when the locker is
     * descheduled there (eight lockers on the test's cores, over the slices of a block).
     */
    @ParameterizedTest
    @EnumSource(value = MemoryScheme.class, names = {"NOVA", "LOCK_BASED"})
    void lockersNeverTakeALockInAReusedBlock(MemoryScheme scheme) throws Exception {
        SliceManager slices = reusing(scheme);
        BlockAllocator a = slices.allocator;
        AtomicReference<long[]> current = new AtomicReference<>(new long[0]);
        AtomicInteger deletedRound = new AtomicInteger(-1);
        AtomicReference<String> failure = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        boolean optimistic = scheme == MemoryScheme.NOVA;
        List<Thread> lockers = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            long seed = t;
            lockers.add(Thread.ofPlatform().start(() -> {
                SplittableRandom rnd = new SplittableRandom(seed);
                while (!stop.get() && failure.get() == null) {
                    long[] refs = current.get();
                    if (refs.length == 0) {
                        continue;
                    }
                    int round = (int) refs[0];
                    long r = refs[1 + rnd.nextInt(refs.length - 1)];
                    boolean read = !optimistic && rnd.nextBoolean();
                    long locked = read ? slices.readBegin(r) : slices.lockWrite(r);
                    if (locked == SliceManager.GONE) {
                        continue;
                    }
                    // a slice cannot be deleted while locked: if all of the round's are, this lock is on payload
                    if (deletedRound.get() == round) {
                        failure.compareAndSet(null, "round " + round + ": a " + (read ? "reader" : "writer")
                                + " holds the lock of a slice that was deleted");
                    }
                    if (read) {
                        slices.readEnd(r, locked);
                    } else {
                        slices.unlock(r, locked);
                    }
                }
            }));
        }
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            for (int round = 0; System.nanoTime() < deadline && failure.get() == null; round++) {
                List<Long> old = new ArrayList<>();
                long ref = slices.allocate(DATA);
                int block = Refs.blockId(ref);
                while (Refs.blockId(ref) == block) {
                    old.add(ref);
                    ref = slices.allocate(DATA);
                }
                long[] published = new long[old.size() + 1];
                published[0] = round;
                for (int i = 0; i < old.size(); i++) {
                    published[i + 1] = old.get(i);
                }
                current.set(published);
                Thread.onSpinWait();
                for (long r : old) {
                    slices.deleteLocked(r, slices.lockWrite(r));
                }
                slices.deleteLocked(ref, slices.lockWrite(ref)); // the next block's first slice: that block empties too
                deletedRound.set(round);
                slices.reclaimNow();
                // carve the emptied blocks afresh, imitating every old header with its live word
                for (int k = 0; k < 2; k++) {
                    long whole = slices.allocate(BLOCK - SliceManager.HEADER_BYTES);
                    MemorySegment seg = slices.segment(whole);
                    if (Refs.blockId(whole) == block) {
                        for (long r : old.subList(1, old.size())) {
                            seg.set(ValueLayout.JAVA_LONG, SliceManager.stateOffset(r), (long) Refs.aux(r) << 36);
                            seg.set(ValueLayout.JAVA_INT, SliceManager.lengthOffset(r), DATA);
                        }
                    }
                    LockSupport.parkNanos(1_000_000); // long enough for a locker descheduled in the window to come back
                    slices.discard(whole);
                }
            }
        } finally {
            stop.set(true);
            for (Thread t : lockers) {
                t.join();
            }
            a.close();
        }
        assertEquals(null, failure.get());
        assertTrue(a.recycledBlocks() > 10, "blocks recycled: " + a.recycledBlocks());
    }
}
