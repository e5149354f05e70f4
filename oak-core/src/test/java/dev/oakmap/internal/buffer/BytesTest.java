package dev.oakmap.internal.buffer;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** {@link Bytes}: exact copies at every length and offset around the short-copy path, and bounds. */
class BytesTest {

    @Test
    void copiesExactlyTheRangeAskedForInBothDirections() {
        Random rnd = new Random(7);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(512);
            for (int len = 0; len <= 200; len++) {
                for (int at : new int[] {0, 1, 3, 7, 64, 511 - len}) {
                    if (at < 0 || at + len > 512) {
                        continue;
                    }
                    byte[] data = new byte[512];
                    rnd.nextBytes(data);
                    MemorySegment.copy(data, 0, seg, ValueLayout.JAVA_BYTE, 0, 512);
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
