package dev.oakmap.bench.somar;

import dev.oakmap.DeletedMemoryAccessException;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakScopedWriteBuffer;
import dev.oakmap.somar.Somar;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Concurrent properties of every {@link Somar} implementation: no foreign or torn read ever
 * succeeds, memory stays bounded under churn where the scheme reclaims, and what a stalled thread
 * does to reclamation under each scheme. Seeded; each test runs for well under a second per scheme.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS) // a lost wake-up or livelock fails instead of hanging the build
class SomarConcurrencyTest {

    private static final long SEED = Long.getLong("somar.test.seed", 20_240_611L);
    private static final long MILLIS = Long.getLong("somar.test.millis", 600L);
    private static final int[] LENGTHS = {48, 64, 96};

    // ----------------------------------------------------------------- checksummed slices

    /** Slice layout: id (8) | nonce (8) | payload words | checksum (8). */
    static void fill(OakScopedWriteBuffer b, long id, long nonce) {
        int len = b.capacity();
        b.putLong(0, id);
        b.putLong(8, nonce);
        long sum = mix(id) ^ nonce;
        for (int i = 16; i + 8 < len; i += 8) {
            long w = mix(id * 31 + nonce + i);
            b.putLong(i, w);
            sum = mix(sum + w);
        }
        b.putLong(len - 8, sum);
    }

    /** @return the slice's id if its checksum holds, else -1 (never throws on odd bytes but for bounds) */
    static long check(OakScopedReadBuffer b) {
        int len = b.capacity();
        if (len < 24) {
            return -2;
        }
        long id = b.getLong(0);
        long sum = mix(id) ^ b.getLong(8);
        for (int i = 16; i + 8 < len; i += 8) {
            sum = mix(sum + b.getLong(i));
        }
        return sum == b.getLong(len - 8) ? id : -1;
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * Writers overwrite slices in place and replace them (allocate, fill privately, publish, delete
     * the old one); readers read current pointers, pointers they kept from earlier, and pointers
     * known to be deleted. Every successful read must carry a valid checksum and the id it was asked
     * for; every failure must be a {@link DeletedMemoryAccessException}; a read through a pointer
     * deleted before the read began must fail.
     */
    @ParameterizedTest
    @EnumSource(SomarKind.class)
    void noForeignOrTornReads(SomarKind kind) throws Exception {
        int ids = 256;
        long maxReplacements = 1_000_000; // bounds grow-only's growth (about 70 MB)
        try (Somar m = kind.create(1L << 30)) {
            AtomicLongArray slots = new AtomicLongArray(ids);
            for (int id = 0; id < ids; id++) {
                slots.set(id, newSlice(m, id, 0, LENGTHS[id % LENGTHS.length]));
            }
            int graveSize = 1024;
            AtomicLongArray grave = new AtomicLongArray(graveSize); // pointers already deleted
            AtomicLong graveTop = new AtomicLong();
            AtomicLong foreign = new AtomicLong();
            AtomicLong ok = new AtomicLong();
            AtomicLong staleOk = new AtomicLong();
            AtomicLong failed = new AtomicLong();
            AtomicLong deadReads = new AtomicLong();
            AtomicLong replaced = new AtomicLong();
            AtomicReference<Throwable> error = new AtomicReference<>();
            AtomicReference<String> firstForeign = new AtomicReference<>();
            long deadline = System.nanoTime() + MILLIS * 1_000_000;
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                SplittableRandom r = new SplittableRandom(SEED + w);
                threads.add(new Thread(() -> {
                    long nonce = 1;
                    while (System.nanoTime() < deadline) {
                        int id = r.nextInt(ids);
                        long n = nonce++;
                        if (r.nextBoolean() || replaced.get() >= maxReplacements) {
                            try {
                                m.write(slots.get(id), b -> {
                                    fill(b, id, n);
                                    return null;
                                });
                            } catch (DeletedMemoryAccessException replacedMeanwhile) {
                                // fine
                            }
                        } else {
                            long fresh = newSlice(m, id, n, LENGTHS[r.nextInt(LENGTHS.length)]);
                            long old = slots.getAndSet(id, fresh);
                            if (!m.delete(old)) {
                                throw new AssertionError("the only deleter of a slice failed to delete it");
                            }
                            grave.set((int) (graveTop.getAndIncrement() % graveSize), old);
                            replaced.incrementAndGet();
                        }
                    }
                }, "writer-" + w));
            }
            for (int rd = 0; rd < 2; rd++) {
                SplittableRandom r = new SplittableRandom(SEED + 100 + rd);
                threads.add(new Thread(() -> {
                    long[] keptPtr = new long[64];
                    int[] keptId = new int[64];
                    for (int i = 0; i < keptPtr.length; i++) {
                        keptId[i] = r.nextInt(ids);
                        keptPtr[i] = slots.get(keptId[i]);
                    }
                    while (System.nanoTime() < deadline) {
                        int choice = r.nextInt(3);
                        if (choice == 2) { // a pointer deleted before we start: must fail
                            long top = graveTop.get();
                            if (top == 0) {
                                continue;
                            }
                            long dead = grave.get((int) ((top - 1 - r.nextInt((int) Math.min(top, graveSize))) % graveSize));
                            if (dead == 0) {
                                continue;
                            }
                            try {
                                m.read(dead, SomarConcurrencyTest::check);
                                // a pointer overwritten in the ring by a newer one may not be deleted yet: recheck
                                if (isDead(m, dead)) {
                                    foreign.incrementAndGet();
                                    firstForeign.compareAndSet(null, kind + ": a read through a deleted pointer succeeded");
                                }
                            } catch (DeletedMemoryAccessException expected) {
                                deadReads.incrementAndGet();
                            }
                            continue;
                        }
                        int slot = r.nextInt(keptPtr.length);
                        int id;
                        long p;
                        boolean stale = choice == 1;
                        if (stale) {
                            id = keptId[slot];
                            p = keptPtr[slot];
                        } else {
                            id = r.nextInt(ids);
                            p = slots.get(id);
                        }
                        try {
                            long got = m.read(p, SomarConcurrencyTest::check);
                            if (got != id) {
                                foreign.incrementAndGet();
                                firstForeign.compareAndSet(null, kind + ": asked for id " + id + ", read " + got);
                            } else {
                                ok.incrementAndGet();
                                if (stale && p != slots.get(id)) {
                                    staleOk.incrementAndGet();
                                }
                            }
                        } catch (DeletedMemoryAccessException e) {
                            failed.incrementAndGet();
                            if (stale) { // refresh the kept pointer
                                keptId[slot] = r.nextInt(ids);
                                keptPtr[slot] = slots.get(keptId[slot]);
                            }
                        }
                        if (!stale && r.nextInt(8) == 0) {
                            keptId[slot] = id;
                            keptPtr[slot] = p;
                        }
                    }
                }, "reader-" + rd));
            }
            for (Thread t : threads) {
                t.setUncaughtExceptionHandler((th, e) -> error.compareAndSet(null, e));
                t.start();
            }
            for (Thread t : threads) {
                t.join();
            }
            if (error.get() != null) {
                throw new AssertionError(kind + ": a thread failed", error.get());
            }
            assertEquals(0, foreign.get(), firstForeign.get());
            assertTrue(ok.get() > 1000, kind + ": too few reads to mean anything: " + ok.get());
            assertTrue(replaced.get() > 1000, kind + ": too few replacements: " + replaced.get());
            assertTrue(failed.get() + deadReads.get() > 0, kind + ": no read ever met a deleted slice");
            // every id still reads back
            for (int id = 0; id < ids; id++) {
                assertEquals(id, (long) m.read(slots.get(id), SomarConcurrencyTest::check));
            }
        }
    }

    /** @return true if {@code p} is deleted now (its read fails) */
    private static boolean isDead(Somar m, long p) {
        try {
            m.read(p, b -> null);
            return false;
        } catch (DeletedMemoryAccessException e) {
            return true;
        }
    }

    private static long newSlice(Somar m, long id, long nonce, int length) {
        long p = m.allocate(length);
        m.writePrivate(p, b -> {
            fill(b, id, nonce);
            return null;
        });
        return p;
    }

    // ----------------------------------------------------------------- memory under churn

    /**
     * Two threads replace slices of a fixed live set (20x over) as fast as they can. Under the
     * reclaiming schemes the memory in use after the churn is within 25% of the live data plus a
     * fixed allowance for the slices waiting in retire lists (two batches per thread); under
     * grow-only it has grown by every replaced slice.
     *
     * <p>Nova and lock-based also stay within that bound at every moment (the peak is sampled every
     * 1024 replacements). EBR and HE do not have to: when the scheduler preempts a thread inside a
     * protected region (common on a loaded 2-core machine), EBR frees nothing until it runs again,
     * and HE nothing that was born before its era, which here is most of the live set (born at
     * era 1). Their peaks are printed, not asserted: they depend on scheduling, which is the point
     * of Nova's robustness property.
     */
    @ParameterizedTest
    @EnumSource(SomarKind.class)
    void memoryBoundedUnderChurn(SomarKind kind) throws Exception {
        int live = 20_000;
        int length = 100;
        try (Somar m = kind.create(512L << 20)) {
            AtomicLongArray slots = new AtomicLongArray(live);
            for (int i = 0; i < live; i++) {
                slots.set(i, newSlice(m, i, 0, length));
            }
            long liveBytes = m.memoryUsed();
            long slice = liveBytes / live;
            long replacements = 400_000;
            AtomicLong done = new AtomicLong();
            AtomicLong peak = new AtomicLong();
            Thread[] ts = new Thread[2];
            for (int t = 0; t < ts.length; t++) {
                SplittableRandom r = new SplittableRandom(SEED + 7 * t);
                ts[t] = new Thread(() -> {
                    for (long n = 0; n < replacements / ts.length; n++) {
                        int i = r.nextInt(live);
                        long old = slots.getAndSet(i, newSlice(m, i, n, length));
                        m.delete(old);
                        if ((n & 1023) == 0) {
                            peak.accumulateAndGet(m.memoryUsed(), Math::max);
                        }
                    }
                    done.addAndGet(replacements / ts.length);
                });
                ts[t].start();
            }
            for (Thread t : ts) {
                t.join();
            }
            long end = m.memoryUsed();
            long allowance = 2L * ts.length * GuardedSomar.DEFAULT_BATCH * slice;
            long bound = liveBytes * 5 / 4 + allowance;
            System.out.printf("memoryBoundedUnderChurn %s: live %,d B, peak %,d B (%.2fx), end %,d B%n",
                    kind, liveBytes, peak.get(), (double) peak.get() / liveBytes, end);
            if (kind.reclaims) {
                assertTrue(end <= bound, String.format(
                        "%s: %,d B in use after the churn, live data %,d B, allowance %,d B", kind, end, liveBytes, allowance));
                if (kind == SomarKind.NOVA || kind == SomarKind.LOCK_BASED) {
                    assertTrue(peak.get() <= bound, String.format(
                            "%s: %,d B in use at peak, live data %,d B, allowance %,d B", kind, peak.get(), liveBytes, allowance));
                }
            } else {
                assertTrue(m.memoryUsed() >= liveBytes + done.get() * slice * 9 / 10, String.format(
                        "grow-only keeps every replaced slice: %,d B in use, live %,d B", m.memoryUsed(), liveBytes));
            }
        }
    }

    // ----------------------------------------------------------------- a stalled thread

    /**
     * A thread pauses inside a {@code write} function, holding its protection (Nova: its announced
     * slice; EBR: its announced epoch; HE: its published era). Meanwhile another thread deletes many
     * slices, all allocated after the pause began.
     * <ul>
     * <li>Nova keeps reclaiming: a stalled writer announces only the slice it writes, so every other
     *     deleted slice is freed at the next round (the thesis's robustness property).
     * <li>Hazard Eras keeps reclaiming: the stalled era lies before the birth of every slice
     *     allocated since, so their intervals do not contain it.
     * <li>EBR does not: the stalled thread's epoch stays announced, the global epoch can advance at
     *     most once past it, and no slice retired since can be freed until the thread leaves its
     *     region; memory in use grows with every deletion. After the thread resumes, the next
     *     rounds free everything.
     * </ul>
     */
    @ParameterizedTest
    @EnumSource(value = SomarKind.class, names = {"NOVA", "HE", "EBR", "LOCK_BASED"})
    void stalledWriter(SomarKind kind) throws Exception {
        try (Somar m = kind.create(256L << 20)) {
            long stalled = newSlice(m, 1, 0, 64);
            CountDownLatch inside = new CountDownLatch(1);
            CountDownLatch resume = new CountDownLatch(1);
            Thread writer = new Thread(() -> m.write(stalled, b -> {
                inside.countDown();
                try {
                    resume.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                fill(b, 1, 1);
                return null;
            }), "stalled-writer");
            writer.start();
            assertTrue(inside.await(10, TimeUnit.SECONDS));
            try {
                long before = m.memoryUsed();
                int n = 64 * GuardedSomar.DEFAULT_BATCH;
                long slice = 0;
                for (int i = 0; i < n; i++) {
                    long p = newSlice(m, i, 0, 64);
                    if (slice == 0) {
                        slice = m.memoryUsed() - before;
                    }
                    assertTrue(m.delete(p));
                }
                long grown = m.memoryUsed() - before;
                long bound = 2L * GuardedSomar.DEFAULT_BATCH * slice;
                if (kind == SomarKind.EBR) {
                    assertTrue(grown >= (long) n * slice * 9 / 10, String.format(
                            "EBR cannot reclaim past a stalled thread: expected about %,d B held, found %,d B",
                            (long) n * slice, grown));
                } else {
                    assertTrue(grown <= bound, String.format(
                            "%s must keep reclaiming around a stalled writer: %,d B held after deleting %,d B",
                            kind, grown, (long) n * slice));
                }
                resume.countDown();
                writer.join();
                assertEquals(1L, (long) m.read(stalled, SomarConcurrencyTest::check), "the stalled write completed");
                // once the thread has left its region, EBR catches up
                for (int i = 0; i < 2 * GuardedSomar.DEFAULT_BATCH; i++) {
                    m.delete(newSlice(m, i, 0, 64));
                }
                SomarContractTest.reclaim(m);
                long after = m.memoryUsed() - before;
                assertTrue(after <= bound, String.format("%s after the stall: %,d B held", kind, after));
            } finally {
                resume.countDown();
                writer.join();
            }
        }
    }

    /** HE's bound is about eras, not slices: a slice alive when the thread stalled is held back. */
    @Test
    void hazardErasHoldBackOnlySlicesAliveAtTheStalledEra() throws Exception {
        try (HazardErasSomar m = new HazardErasSomar(64L << 20, 1)) {
            long old = newSlice(m, 7, 0, 64); // born before the stall
            long stalled = newSlice(m, 1, 0, 64);
            CountDownLatch inside = new CountDownLatch(1);
            CountDownLatch resume = new CountDownLatch(1);
            Thread writer = new Thread(() -> m.write(stalled, b -> {
                inside.countDown();
                try {
                    resume.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return null;
            }));
            writer.start();
            assertTrue(inside.await(10, TimeUnit.SECONDS));
            assertTrue(m.delete(old));
            long young = newSlice(m, 8, 0, 64);
            assertTrue(m.delete(young));
            m.reclaimNow();
            assertEquals(1, m.pendingSlices(), "only the slice alive at the stalled era is held back");
            resume.countDown();
            writer.join();
            m.reclaimNow();
            assertEquals(0, m.pendingSlices());
        }
    }
}
