package dev.oakmap.internal.buffer;

import java.lang.foreign.MemorySegment;

/**
 * Bulk copies between segments and byte arrays.
 *
 * <p>Everything goes through the segment-to-segment
 * {@link MemorySegment#copy(MemorySegment, long, MemorySegment, long, long)} over a heap segment
 * wrapping the array (a short-lived wrapper). In JDK 25 that method copies ranges under 64 bytes
 * with a few Java loads and stores, and longer ones through the runtime's copy stub. The stub is
 * the fast way to move a kilobyte, but out of the caches a call to it costs far more than the
 * copy: a scan that copies each key while its look-ahead has the next pairs' lines on the way
 * paid for the stub at every step. So a short off-heap range (at most {@link #SHORT_COPY} bytes:
 * keys, small values) is copied in pieces of {@link #PIECE} bytes, each under the JDK's limit.
 * Measured on 1M pairs of 100-byte keys and 1 KB values (a driver timing scans of 1,000 pairs
 * from random keys, two alternated runs of each build): plain zero-copy iterators, whose key
 * views each copy their key, went from 198-228 to 137-143 ns a pair; legacy-API scans stayed at
 * 348-387; with every pair in the caches (JMH {@code ScanBench}, 4,000 pairs) they lost about
 * 10% (52 against 61 ns, 118 against 131). For the same reason short copies never used the
 * array forms of {@code MemorySegment.copy}, which always call the stub (legacy-API scans over 1M
 * pairs of 8-byte keys and values went from 129-135 to 102-104 ns per pair without them). Copies
 * between heap arrays keep one call: the pieces would only split a copy that has no stub to avoid.
 * A range out of bounds throws before any byte is written: the whole range is checked before the
 * first piece.
 */
public final class Bytes {
    private Bytes() {}

    /** The longest off-heap range copied in pieces. */
    static final int SHORT_COPY = 256;
    /** The size of a piece: under the 64 bytes that JDK 25 copies without its stub. */
    static final int PIECE = 56;

    /** Copies {@code length} bytes of {@code src} from {@code at} into {@code dst} from {@code offset}. */
    public static void copyOut(MemorySegment src, long at, byte[] dst, int offset, int length) {
        copy(src, at, MemorySegment.ofArray(dst), offset, length, src.isNative());
    }

    /** Copies {@code length} bytes of {@code src} from {@code offset} into {@code dst} from {@code at}. */
    public static void copyIn(byte[] src, int offset, MemorySegment dst, long at, int length) {
        copy(MemorySegment.ofArray(src), offset, dst, at, length, dst.isNative());
    }

    private static void copy(MemorySegment src, long srcAt, MemorySegment dst, long dstAt, int length, boolean offHeap) {
        if (length <= PIECE || length > SHORT_COPY || !offHeap) {
            MemorySegment.copy(src, srcAt, dst, dstAt, length);
            return;
        }
        checkRange(src, srcAt, length);
        checkRange(dst, dstAt, length);
        for (int i = 0; i < length; i += PIECE) {
            MemorySegment.copy(src, srcAt + i, dst, dstAt + i, Math.min(PIECE, length - i));
        }
    }

    private static void checkRange(MemorySegment s, long at, int length) {
        if (at < 0 || at > s.byteSize() - length) {
            throw new IndexOutOfBoundsException("range [" + at + ", " + at + " + " + length + ") out of a segment of "
                    + s.byteSize() + " bytes");
        }
    }
}
