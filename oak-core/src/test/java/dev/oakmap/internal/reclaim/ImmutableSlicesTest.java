package dev.oakmap.internal.reclaim;

import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.BlockPool;
import dev.oakmap.internal.memory.Refs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Nova key slices ({@link ImmutableSlices}): an 8-byte header, a state word and the length, reads
 * validated against deletion and reuse, deletion by CAS, and no writes.
 */
class ImmutableSlicesTest {

    private BlockAllocator allocator;
    private Nova nova;
    private ImmutableSlices slices;

    @BeforeEach
    void setUp() {
        allocator = new BlockAllocator(BlockPool.shared(), 1 << 16, 1 << 20);
        nova = new Nova(allocator, BlockAllocator.Kind.KEY, 1_000_000);
        slices = new ImmutableSlices(allocator, BlockAllocator.Kind.KEY, nova);
    }

    @AfterEach
    void tearDown() {
        allocator.close();
    }

    private long allocateFilled(int length, byte fill) {
        long ref = slices.allocate(length);
        MemorySegment seg = slices.segment(ref);
        for (int i = 0; i < length; i++) {
            seg.set(ValueLayout.JAVA_BYTE, slices.dataOffset(ref) + i, fill);
        }
        return ref;
    }

    @Test
    void theHeaderIsAWordAndTheLength() {
        assertEquals(8, slices.headerBytes());
        assertEquals(108, slices.sliceBytes(100), "a 100-byte key: 8 + 100, where a 12-byte header and 8-byte granule made 112");
        assertEquals(24, slices.sliceBytes(16));
        assertEquals(8, slices.sliceBytes(0));
        assertEquals(12, slices.sliceBytes(1));
        boolean sawUnaligned = false;
        for (int length : new int[] {0, 1, 7, 8, 100, 4093, 1 << 15, 4, 20}) {
            long ref = slices.allocate(length);
            sawUnaligned |= Refs.offset(ref) % 8 != 0;
            assertEquals(length, slices.length(ref));
            assertEquals(Refs.offset(ref) + 8, slices.dataOffset(ref));
            assertEquals(0, Refs.offset(ref) % 4, "slices start 4-aligned");
            long token = slices.readBegin(ref);
            assertNotEquals(SliceManager.GONE, token);
            assertEquals(token, slices.liveToken(ref));
            assertTrue(slices.readEnd(ref, token));
        }
        assertTrue(sawUnaligned, "some slices start 4 bytes off an 8-byte boundary");
        assertThrows(IllegalArgumentException.class, () -> slices.allocate(-1));
    }

    @Test
    void deletionEndsReadsAndReuseNeverRevivesAnOldReference() {
        long old = allocateFilled(40, (byte) 1);
        long token = slices.readBegin(old);
        assertTrue(slices.isLive(old));

        assertTrue(slices.delete(old));
        assertFalse(slices.delete(old), "a second deletion finds it not live");
        assertFalse(slices.isLive(old));
        assertEquals(SliceManager.GONE, slices.readBegin(old));
        assertFalse(slices.readEnd(old, token), "a read that spans the deletion fails");

        nova.reclaimNow(); // nobody announces keys: the slice goes back to the allocator
        long reused = allocateFilled(40, (byte) 2);
        assertEquals(Refs.withAux(old, 0), Refs.withAux(reused, 0), "the same slice, reused");
        assertNotEquals(Refs.aux(old), Refs.aux(reused), "with a new version");
        assertEquals(SliceManager.GONE, slices.readBegin(old), "the old reference stays dead");
        assertFalse(slices.readEnd(old, token));
        assertTrue(slices.isLive(reused));
        assertEquals(40, slices.length(reused));
    }

    @Test
    void keysAreNeverWritten() {
        long ref = allocateFilled(10, (byte) 3);
        assertThrows(UnsupportedOperationException.class, () -> slices.lockWrite(ref));
        assertThrows(UnsupportedOperationException.class, () -> slices.unlock(ref, 0));
        assertThrows(UnsupportedOperationException.class, () -> slices.deleteLocked(ref, 0));
        assertTrue(slices.isLive(ref), "a refused write changes nothing");
    }

    @Test
    void discardedSlicesAreReusedAtOnce() {
        long used = allocator.usedBytes();
        long ref = slices.allocate(30);
        assertEquals(used + 40, allocator.usedBytes());
        slices.discard(ref);
        assertEquals(used, allocator.usedBytes());
        assertFalse(slices.isLive(ref));
    }

    /**
     * Readers race a thread that deletes, reclaims and reallocates the same slices with other
     * contents: every read that validates must have seen one slice's bytes, whole.
     */
    @Test
    void validatedReadsNeverMixTwoOwners() throws InterruptedException {
        int length = 56;
        int slots = 8;
        AtomicLong[] current = new AtomicLong[slots];
        for (int i = 0; i < slots; i++) {
            current[i] = new AtomicLong(allocateFilled(length, (byte) 0));
        }
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong validated = new AtomicLong();
        AtomicLong torn = new AtomicLong();
        CountDownLatch started = new CountDownLatch(1);
        Thread reader = new Thread(() -> {
            started.countDown();
            int i = 0;
            while (!stop.get()) {
                long ref = current[i++ % slots].get();
                long t = slices.readBegin(ref);
                if (t == SliceManager.GONE) {
                    continue;
                }
                MemorySegment seg = slices.segment(ref);
                int len = slices.length(seg, ref);
                byte first = seg.get(ValueLayout.JAVA_BYTE, slices.dataOffset(ref));
                boolean same = len == length;
                for (int b = 1; b < length && same; b++) {
                    same = seg.get(ValueLayout.JAVA_BYTE, slices.dataOffset(ref) + b) == first;
                }
                if (slices.readEnd(seg, ref, t)) {
                    validated.incrementAndGet();
                    if (!same) {
                        torn.incrementAndGet();
                    }
                }
            }
        });
        reader.start();
        started.await();
        for (int round = 1; round <= 20_000; round++) {
            int i = round % slots;
            long old = current[i].get();
            assertTrue(slices.delete(old));
            if (round % slots == 0) {
                nova.reclaimNow();
            }
            long fresh = slices.allocate(length);
            MemorySegment seg = slices.segment(fresh);
            for (int b = 0; b < length; b++) { // written byte by byte: a racing read could see a mix
                seg.set(ValueLayout.JAVA_BYTE, slices.dataOffset(fresh) + b, (byte) round);
            }
            current[i].set(fresh);
        }
        stop.set(true);
        reader.join();
        assertEquals(0, torn.get(), "validated reads that saw two owners' bytes");
        assertTrue(validated.get() > 0, "the reader validated some reads");
    }
}
