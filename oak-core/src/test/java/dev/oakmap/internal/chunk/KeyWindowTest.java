package dev.oakmap.internal.chunk;

import dev.oakmap.common.ByteStringComparator;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The windowed prefix ({@code KeyOps.windowed}, see "Prefix windows") is a valid key prefix for
 * every head: over byte strings drawn so that they often share heads, are prefixes of one
 * another and straddle the head's bytes, it never decreases in the unsigned byte order; and for
 * keys that start with the head it is exactly the 8 bytes after it.
 */
class KeyWindowTest {

    @Test
    void theWindowedPrefixIsMonotoneForAnyHead() {
        SplittableRandom r = new SplittableRandom(2026_11_28);
        for (int round = 0; round < 300; round++) {
            byte[] alphabet = {0, 1, (byte) 0x7F, (byte) 0x80, (byte) 0xFF};
            List<byte[]> keys = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                byte[] k = new byte[r.nextInt(0, 14)];
                for (int j = 0; j < k.length; j++) {
                    k[j] = alphabet[r.nextInt(alphabet.length)];
                }
                keys.add(k);
            }
            keys.sort(Arrays::compareUnsigned);
            byte[] source = keys.get(r.nextInt(keys.size()));
            byte[] head = Arrays.copyOf(source, Math.max(1, Math.min(source.length, r.nextInt(1, 6))));
            long before = 0;
            for (byte[] k : keys) {
                long w = KeyOps.windowed(MemorySegment.ofArray(k), 0, k.length, head);
                assertTrue(Long.compareUnsigned(before, w) <= 0,
                        () -> "not monotone at " + Arrays.toString(k) + " after head " + Arrays.toString(head));
                before = w;
                if (k.length >= head.length && Arrays.equals(k, 0, head.length, head, 0, head.length)) {
                    byte[] rest = Arrays.copyOfRange(k, head.length, k.length);
                    assertEquals(ByteStringComparator.prefixOf(rest), w);
                }
            }
        }
    }

    @Test
    void keysOffTheHeadClampToTheEnds() {
        byte[] head = {5, 5, 5};
        assertEquals(0L, KeyOps.windowed(MemorySegment.ofArray(new byte[] {5, 4, 9, 9}), 0, 4, head));
        assertEquals(0L, KeyOps.windowed(MemorySegment.ofArray(new byte[] {5, 5}), 0, 2, head));
        assertEquals(-1L, KeyOps.windowed(MemorySegment.ofArray(new byte[] {5, 6}), 0, 2, head));
        assertEquals(0x0102_0000_0000_0000L, KeyOps.windowed(MemorySegment.ofArray(new byte[] {9, 5, 5, 5, 1, 2}), 1, 5, head));
    }
}
