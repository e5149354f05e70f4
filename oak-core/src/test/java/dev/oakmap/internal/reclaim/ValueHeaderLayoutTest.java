package dev.oakmap.internal.reclaim;

import dev.oakmap.MemoryScheme;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.BlockPool;
import dev.oakmap.internal.memory.Refs;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Value slices start on any 4-byte boundary, and their 12-byte header puts its 8-byte state word
 * where it is aligned: first at an 8-aligned start, after the length otherwise. Packed back to
 * back, slices of both alignments must keep their lengths and bytes through writes, length
 * changes, reads and deletions of their neighbours, under every scheme that gives values a header.
 */
class ValueHeaderLayoutTest {

    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void headersOfBothAlignmentsKeepToTheirSlices(MemoryScheme scheme) {
        BlockAllocator allocator = new BlockAllocator(BlockPool.shared(), 1 << 16, 1 << 20);
        try {
            SliceManager slices = SliceManager.create(scheme, allocator, BlockAllocator.Kind.VALUE);
            assertEquals(SliceManager.HEADER_BYTES, slices.headerBytes());
            SplittableRandom rnd = new SplittableRandom(scheme.ordinal());
            List<Long> refs = new ArrayList<>();
            List<Integer> lengths = new ArrayList<>();
            int[] starts = new int[2];
            for (int i = 0; i < 400; i++) {
                int length = 1 + rnd.nextInt(40); // 13-52 bytes a slice: starts of both alignments
                long ref = slices.allocate(length);
                assertEquals(0, Refs.offset(ref) % Refs.GRANULE);
                assertEquals((SliceManager.HEADER_BYTES + length + 3) & -4, slices.sliceBytes(length),
                        "padded to the 4-byte granule only: " + length + " bytes of data");
                starts[(int) (Refs.offset(ref) % 8) / 4]++;
                assertEquals(length, slices.length(ref));
                fill(slices, ref, length, (byte) i);
                refs.add(ref);
                lengths.add(length);
            }
            assertTrue(starts[0] > 50 && starts[1] > 50, "both alignments: " + starts[0] + " / " + starts[1]);

            // rewrite every third slice in place, changing its length within its slice size
            for (int i = 0; i < refs.size(); i += 3) {
                long ref = refs.get(i);
                long locked = slices.lockWrite(ref);
                assertNotEquals(SliceManager.GONE, locked);
                int shorter = Math.max(0, lengths.get(i) - 3);
                int sameSize = slices.sliceBytes(shorter) == slices.sliceBytes(lengths.get(i)) ? shorter : lengths.get(i);
                fill(slices, ref, sameSize, (byte) (i + 100));
                slices.unlock(ref, locked, sameSize);
                lengths.set(i, sameSize);
            }
            // delete every fourth
            for (int i = 1; i < refs.size(); i += 4) {
                long ref = refs.get(i);
                long locked = slices.lockWrite(ref);
                assertNotEquals(SliceManager.GONE, locked);
                slices.deleteLocked(ref, locked);
                assertFalse(slices.isLive(ref));
                assertEquals(SliceManager.GONE, slices.readBegin(ref));
            }
            for (int i = 0; i < refs.size(); i++) {
                if (i % 4 == 1) {
                    continue;
                }
                long ref = refs.get(i);
                long token = slices.readBegin(ref);
                assertNotEquals(SliceManager.GONE, token, "slice " + i);
                assertEquals((int) lengths.get(i), slices.length(ref), "slice " + i);
                byte expected = (byte) (i % 3 == 0 ? i + 100 : i);
                MemorySegment seg = slices.segment(ref);
                for (int b = 0; b < lengths.get(i); b++) {
                    assertEquals(expected, seg.get(ValueLayout.JAVA_BYTE, slices.dataOffset(ref) + b),
                            "slice " + i + " byte " + b);
                }
                assertTrue(slices.readEnd(ref, token), "slice " + i);
            }
        } finally {
            allocator.close();
        }
    }

    /**
     * A writer rewrites slices of both alignments in place, each time with one byte value over
     * the whole slice, while a reader reads them: every read that validates must have seen one
     * write whole, never a mix of two (nor header bytes taken for data).
     */
    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void validatedReadsOfBothAlignmentsAreNeverTorn(MemoryScheme scheme) throws Exception {
        BlockAllocator allocator = new BlockAllocator(BlockPool.shared(), 1 << 16, 1 << 20);
        try {
            SliceManager slices = SliceManager.create(scheme, allocator, BlockAllocator.Kind.VALUE);
            List<Long> refs = new ArrayList<>();
            int[] starts = new int[2];
            for (int i = 0; i < 16; i++) {
                long ref = slices.allocate(i % 2 == 0 ? 60 : 64); // 72 and 76 bytes: starts alternate
                starts[(int) (Refs.offset(ref) % 8) / 4]++;
                fill(slices, ref, slices.length(ref), (byte) 0);
                refs.add(ref);
            }
            assertTrue(starts[0] > 0 && starts[1] > 0, "both alignments: " + starts[0] + " / " + starts[1]);
            AtomicBoolean stop = new AtomicBoolean();
            AtomicReference<String> torn = new AtomicReference<>();
            Thread writer = Thread.ofPlatform().start(() -> {
                for (int round = 1; !stop.get(); round++) {
                    for (long ref : refs) {
                        long locked = slices.lockWrite(ref);
                        fill(slices, ref, slices.length(ref), (byte) round);
                        slices.unlock(ref, locked);
                    }
                }
            });
            long validated = 0;
            long deadline = System.nanoTime() + 300_000_000L;
            while (System.nanoTime() < deadline && torn.get() == null) {
                for (long ref : refs) {
                    long token = slices.readBegin(ref);
                    assertNotEquals(SliceManager.GONE, token);
                    MemorySegment seg = slices.segment(ref);
                    int length = slices.length(ref);
                    byte first = seg.get(ValueLayout.JAVA_BYTE, slices.dataOffset(ref));
                    boolean uniform = length == 60 || length == 64;
                    for (int b = 1; b < length && uniform && b < 64; b++) {
                        uniform = seg.get(ValueLayout.JAVA_BYTE, slices.dataOffset(ref) + b) == first;
                    }
                    if (slices.readEnd(ref, token)) {
                        validated++;
                        if (!uniform) {
                            torn.set("a validated read saw a torn slice at offset " + Refs.offset(ref));
                        }
                    }
                }
            }
            stop.set(true);
            writer.join();
            assertNull(torn.get());
            assertTrue(validated > 0, "no read validated");
        } finally {
            allocator.close();
        }
    }

    private static void fill(SliceManager slices, long ref, int length, byte b) {
        slices.segment(ref).asSlice(slices.dataOffset(ref), length).fill(b);
    }
}
