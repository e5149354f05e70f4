package dev.oakmap.internal.buffer;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@link Bytes}: exact copies at every length and offset through each of its three ways (the
 * JDK's short copy, the word loop, the JDK's stub beyond {@link Bytes#LOOP_MAX}), and failures
 * that write nothing, as the JDK's copy does.
 */
class BytesTest {

    @Test
    void copiesExactlyTheRangeAskedForInBothDirections() {
        Random rnd = new Random(7);
        try (Arena arena = Arena.ofConfined()) {
            int size = Bytes.LOOP_MAX + 200;
            MemorySegment seg = arena.allocate(size);
            for (int len = 0; len <= Bytes.LOOP_MAX + 100; len += len < 300 ? 1 : 13) {
                for (int at : new int[] {0, 1, 3, 7, 64, size - 1 - len, size - len}) {
                    if (at < 0 || at + len > size) {
                        continue;
                    }
                    byte[] data = new byte[size];
                    rnd.nextBytes(data);
                    MemorySegment.copy(data, 0, seg, ValueLayout.JAVA_BYTE, 0, size);
                    byte[] dst = new byte[len + 10];
                    Arrays.fill(dst, (byte) 0x5A);
                    Bytes.copyOut(seg, at, dst, 5, len);
                    byte[] expected = new byte[len + 10];
                    Arrays.fill(expected, (byte) 0x5A);
                    System.arraycopy(data, at, expected, 5, len);
                    assertArrayEquals(expected, dst, "copyOut len " + len + " at " + at);

                    byte[] src = new byte[len + 3];
                    rnd.nextBytes(src);
                    Bytes.copyIn(src, 3, seg, at, len);
                    byte[] after = seg.toArray(ValueLayout.JAVA_BYTE);
                    byte[] want = data.clone();
                    System.arraycopy(src, 3, want, at, len);
                    assertArrayEquals(want, after, "copyIn len " + len + " at " + at);
                }
            }
        }
    }

    /** Lengths that take the word loop, the short copy and the stub, each one byte out of range. */
    private static final int[] LENGTHS = {8, 65, 100, Bytes.LOOP_MAX, Bytes.LOOP_MAX + 1};

    @Test
    void outOfRangeCopiesOfEveryWayThrowAndWriteNothing() {
        for (int len : LENGTHS) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment seg = arena.allocate(len + 16);
                byte[] dst = new byte[len];
                assertThrows(IndexOutOfBoundsException.class, () -> Bytes.copyOut(seg, 17, dst, 0, len), "len " + len);
                assertThrows(IndexOutOfBoundsException.class, () -> Bytes.copyOut(seg, 0, dst, 1, len), "len " + len);
                assertThrows(IndexOutOfBoundsException.class, () -> Bytes.copyOut(seg, -1, dst, 0, len), "len " + len);
                assertArrayEquals(new byte[len], dst);
                byte[] src = new byte[len + 1];
                Arrays.fill(src, (byte) 1);
                assertThrows(IndexOutOfBoundsException.class, () -> Bytes.copyIn(src, 0, seg, 17, len), "len " + len);
                assertThrows(IndexOutOfBoundsException.class, () -> Bytes.copyIn(src, 2, seg, 0, len), "len " + len);
                assertArrayEquals(new byte[len + 16], seg.toArray(ValueLayout.JAVA_BYTE));
            }
        }
    }

    /** A closed segment and a read-only one fail as the JDK's own copy does, before any byte moves. */
    @Test
    void closedAndReadOnlySegmentsFailAsTheJdkCopyDoes() {
        for (int len : LENGTHS) {
            Arena arena = Arena.ofConfined();
            MemorySegment seg = arena.allocate(len);
            arena.close();
            byte[] dst = new byte[len];
            assertThrows(IllegalStateException.class, () -> Bytes.copyOut(seg, 0, dst, 0, len), "len " + len);
            assertArrayEquals(new byte[len], dst);
            assertThrows(IllegalStateException.class, () -> Bytes.copyIn(new byte[len], 0, seg, 0, len), "len " + len);

            try (Arena open = Arena.ofConfined()) {
                MemorySegment readOnly = open.allocate(len).asReadOnly();
                Class<? extends Throwable> jdk = assertThrows(RuntimeException.class,
                        () -> MemorySegment.copy(MemorySegment.ofArray(new byte[len]), 0, readOnly, 0, len)).getClass();
                byte[] ones = new byte[len];
                Arrays.fill(ones, (byte) 1);
                assertThrows(jdk, () -> Bytes.copyIn(ones, 0, readOnly, 0, len), "len " + len);
                assertArrayEquals(new byte[len], readOnly.toArray(ValueLayout.JAVA_BYTE));
            }
        }
    }

    /** Heap segments on either side (a slice buffer over an array) take the JDK's copy, overlap included. */
    @Test
    void heapSegmentsCopyLikeTheJdk() {
        for (int len : LENGTHS) {
            byte[] backing = new byte[len + 8];
            for (int i = 0; i < backing.length; i++) {
                backing[i] = (byte) i;
            }
            byte[] want = backing.clone();
            System.arraycopy(backing, 0, want, 3, len);
            Bytes.copyOut(MemorySegment.ofArray(backing), 0, backing, 3, len); // overlapping: a move
            assertArrayEquals(want, backing, "len " + len);
        }
    }

    @Test
    void outOfRangeCopiesThrowAndWriteNothing() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(16);
            byte[] dst = new byte[8];
            assertThrows(IndexOutOfBoundsException.class, () -> Bytes.copyOut(seg, 12, dst, 0, 8));
            assertThrows(IndexOutOfBoundsException.class, () -> Bytes.copyOut(seg, 0, dst, 4, 8));
            assertArrayEquals(new byte[8], dst);
            byte[] src = {1, 2, 3, 4, 5, 6, 7, 8};
            assertThrows(IndexOutOfBoundsException.class, () -> Bytes.copyIn(src, 0, seg, 10, 8));
            assertThrows(IndexOutOfBoundsException.class, () -> Bytes.copyIn(src, 2, seg, 0, 8));
            assertArrayEquals(new byte[16], seg.toArray(ValueLayout.JAVA_BYTE));
        }
    }
}
