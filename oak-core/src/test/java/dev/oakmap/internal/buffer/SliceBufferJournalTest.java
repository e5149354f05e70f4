package dev.oakmap.internal.buffer;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@link SliceBuffer}'s undo journal: a rollback restores the window exactly, whatever mix of
 * small writes, wide writes and writable-segment writes preceded it, and never disturbs the
 * bytes around the window; nested scopes never share a snapshot array.
 */
class SliceBufferJournalTest {

    private static final int BLOCK = 4096;

    @Test
    void rollBackRestoresTheWindowAfterRandomWrites() {
        Random rnd = new Random(11);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(BLOCK);
            for (int round = 0; round < 2000; round++) {
                randomize(seg, rnd);
                byte[] before = seg.toArray(ValueLayout.JAVA_BYTE);
                int length = 1 + rnd.nextInt(300);
                long base = rnd.nextInt(BLOCK - length + 1);
                SliceBuffer b = new SliceBuffer(seg, base, length, true);
                b.journalWrites();
                int writes = rnd.nextInt(80);
                for (int w = 0; w < writes; w++) {
                    writeSomething(b, rnd);
                }
                b.rollBack(new RuntimeException("the computer's failure"));
                b.close();
                assertArrayEquals(before, seg.toArray(ValueLayout.JAVA_BYTE), "round " + round);
            }
        }
    }

    @Test
    void nestedScopesKeepTheirOwnSnapshots() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(BLOCK);
            randomize(seg, new Random(3));
            SliceBuffer first = new SliceBuffer(seg, 0, 1000, true);
            first.journalWrites();
            first.writableSegment();
            first.close(); // leaves its array as the thread's spare
            byte[] before = seg.toArray(ValueLayout.JAVA_BYTE);
            SliceBuffer outer = new SliceBuffer(seg, 0, 1000, true);
            outer.journalWrites();
            outer.writableSegment().fill((byte) 1); // takes the thread's spare array, if any
            SliceBuffer inner = new SliceBuffer(seg, 2000, 1000, true);
            inner.journalWrites();
            inner.writableSegment().fill((byte) 2);
            inner.close(); // succeeded: keeps its writes, gives its array back
            SliceBuffer third = new SliceBuffer(seg, 3000, 1000, true);
            third.journalWrites();
            third.writableSegment().fill((byte) 3); // may reuse inner's array, never outer's
            third.rollBack(new RuntimeException());
            third.close();
            outer.putLong(8, -1L);
            outer.rollBack(new RuntimeException());
            outer.close();
            byte[] expected = before.clone();
            Arrays.fill(expected, 2000, 3000, (byte) 2);
            assertArrayEquals(expected, seg.toArray(ValueLayout.JAVA_BYTE));
        }
    }

    @Test
    void journalCostFollowsWhatIsWrittenNotTheValueSize() {
        try (Arena arena = Arena.ofConfined()) {
            int big = 1 << 20;
            MemorySegment seg = arena.allocate(big);
            randomize(seg, new Random(5));
            byte[] before = seg.toArray(ValueLayout.JAVA_BYTE);
            SliceBuffer b = new SliceBuffer(seg, 0, big, true);
            b.journalWrites();
            b.putLong(12_345, 1L);
            b.writableSegment(500_000, 64).fill((byte) 9);
            b.putBytes(900_000, new byte[100], 0, 100);
            assertEquals(16 + (16 + 64) + (16 + 100), b.journaledBytes(), "three entries, no copy of the value");
            b.writableSegment().fill((byte) 1);
            assertEquals(212 + big, b.journaledBytes(), "a segment over all of it copies all of it");
            b.putLong(0, 2L);
            assertEquals(212 + big, b.journaledBytes(), "and nothing more is journaled");
            b.rollBack(new RuntimeException());
            b.close();
            assertArrayEquals(before, seg.toArray(ValueLayout.JAVA_BYTE));
            assertThrows(IndexOutOfBoundsException.class, () -> new SliceBuffer(seg, 0, 16, true).writableSegment(8, 9));
        }
    }

    private static void randomize(MemorySegment seg, Random rnd) {
        byte[] data = new byte[(int) seg.byteSize()];
        rnd.nextBytes(data);
        MemorySegment.copy(data, 0, seg, ValueLayout.JAVA_BYTE, 0, data.length);
    }

    /** One write of a random kind at a random place that fits (or an out-of-bounds attempt). */
    private static void writeSomething(SliceBuffer b, Random rnd) {
        int cap = b.capacity();
        int kind = rnd.nextInt(11);
        int width = switch (kind) {
            case 0 -> 1;
            case 1, 2 -> 2;
            case 3, 4 -> 4;
            case 5, 6, 7 -> 8;
            default -> 1 + rnd.nextInt(Math.min(cap, 40));
        };
        if (width > cap) {
            return;
        }
        int at = rnd.nextInt(cap - width + 1);
        switch (kind) {
            case 0 -> b.put(at, (byte) rnd.nextInt());
            case 1 -> b.putShort(at, (short) rnd.nextInt());
            case 2 -> b.putChar(at, (char) rnd.nextInt());
            case 3 -> b.putInt(at, rnd.nextInt());
            case 4 -> b.putFloat(at, rnd.nextFloat());
            case 5 -> b.putLong(at, rnd.nextLong());
            case 6 -> b.putDouble(at, rnd.nextDouble());
            case 7 -> {
                try {
                    b.putLong(cap - 4, 1L); // out of bounds: must write nothing
                } catch (IndexOutOfBoundsException expected) {
                    // and is journaled as nothing
                }
            }
            case 8 -> b.writableSegment().asSlice(at, width).fill((byte) rnd.nextInt());
            case 9 -> b.writableSegment(at, width).fill((byte) rnd.nextInt());
            default -> {
                byte[] src = new byte[width];
                rnd.nextBytes(src);
                b.putBytes(at, src, 0, width);
            }
        }
    }
}
