package dev.oakmap.internal.buffer;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;

/**
 * Bulk copies between segments and byte arrays, the one place where keys and values cross
 * between off-heap slices and the heap (the key copies of scans and key views, the legacy API's
 * serialized keys and values, the buffers' {@code getBytes} and {@code putBytes}).
 *
 * <p><b>Three ways, by length.</b> Up to 64 bytes, the JDK's segment-to-segment
 * {@link MemorySegment#copy(MemorySegment, long, MemorySegment, long, long)} over a heap segment
 * wrapping the array: in JDK 25 it copies such ranges with a few Java loads and stores (its array
 * forms call the runtime's copy stub at every length; legacy-API scans over 1M pairs of 8-byte
 * keys and values went from 129-135 to 102-104 ns a pair with the segment form). From 65 bytes to
 * {@link #LOOP_MAX} (256), between a native segment and an array, a loop of 8-byte words. Beyond that,
 * or with a heap segment on the other side (where source and destination may overlap), the JDK's
 * copy, which then calls its stub.
 *
 * <p><b>Why the loop, and why only to 256 bytes.</b> Alone, with its data cached, the stub is the
 * faster copy ({@code CopyBench}: 100 bytes in 10.7 ns against the loop's 14.6, 1 KB in 16
 * against 24). But where the copy's lines are misses in flight, as in a scan whose look-ahead has
 * just touched them, the stub cost about 40-50 ns more a copy than the loop: a plain zero-copy
 * iterator over 1M pairs of 100-byte keys and 1 KB values, whose key views each copy their key,
 * took 182-211 ns a pair with the stub and 138-166 with the loop, ascending and descending, and
 * 178 against 127 over 400K pairs fed in key order ({@code ScanBench.oakZcIterator*},
 * {@code -Doak.copyLoopMax=0} against the loop, alternated). The look-ahead touches keys up to
 * 256 bytes ({@code Cursor.KEY_TOUCH_LIMIT}); longer copies (whole values, for the legacy API)
 * read lines nobody touched, gained nothing from the loop at 1M pairs, and lost in cached maps:
 * legacy-API scans of 4,000 pairs took 187-198 ns a pair with the loop up to 1 KB, against 136-168
 * with the stub and 130 with the loop up to 256 bytes. Hence {@link #LOOP_MAX}. Why the stub
 * waits is not known here (no hardware counters on this machine).
 *
 * <p>The loop checks both ranges first, so a copy that fails (out of bounds, or a closed
 * segment's {@link IllegalStateException}, or a read-only one's) fails before it writes anything,
 * as the JDK's copy does. Words are read and written in the native byte order on both sides, so
 * the bytes land in their order; the last word overlaps the one before it instead of a byte
 * loop for the tail. The array side goes through a heap segment over it, which the compiler
 * removes, rather than an array-view {@code VarHandle}: Lincheck's model checker, which users run
 * over code that calls the map, rejects array-view handles ("Unsupported VarHandle type"), and
 * the two compile to the same loads and stores. No way is atomic: callers that read a slice
 * another thread may write validate the read afterwards, as they always did.
 */
public final class Bytes {
    private Bytes() {}

    /** The longest range copied by the word loop; longer ones go to the JDK's copy (its stub). */
    static final int LOOP_MAX = Integer.getInteger("oak.copyLoopMax", 256);

    /** The longest range the JDK's segment copy copies with Java code rather than its stub. */
    private static final int JDK_LOOP_MAX = 64;
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED;

    /** Copies {@code length} bytes of {@code src} from {@code at} into {@code dst} from {@code offset}. */
    public static void copyOut(MemorySegment src, long at, byte[] dst, int offset, int length) {
        if (length <= JDK_LOOP_MAX || length > LOOP_MAX || !src.isNative()) {
            MemorySegment.copy(src, at, MemorySegment.ofArray(dst), offset, length);
            return;
        }
        Objects.checkFromIndexSize(at, length, src.byteSize());
        Objects.checkFromIndexSize(offset, length, dst.length);
        MemorySegment out = MemorySegment.ofArray(dst); // not an array-view VarHandle: see the class comment
        int last = length - Long.BYTES;
        for (int i = 0; i < last; i += Long.BYTES) {
            out.set(WORD, offset + i, src.get(WORD, at + i));
        }
        out.set(WORD, offset + last, src.get(WORD, at + last)); // the tail, overlapping the word before
    }

    /** Copies {@code length} bytes of {@code src} from {@code offset} into {@code dst} from {@code at}. */
    public static void copyIn(byte[] src, int offset, MemorySegment dst, long at, int length) {
        if (length <= JDK_LOOP_MAX || length > LOOP_MAX || !dst.isNative()) {
            MemorySegment.copy(MemorySegment.ofArray(src), offset, dst, at, length);
            return;
        }
        Objects.checkFromIndexSize(offset, length, src.length);
        Objects.checkFromIndexSize(at, length, dst.byteSize());
        MemorySegment in = MemorySegment.ofArray(src); // not an array-view VarHandle: see the class comment
        int last = length - Long.BYTES;
        for (int i = 0; i < last; i += Long.BYTES) {
            dst.set(WORD, at + i, in.get(WORD, offset + i));
        }
        dst.set(WORD, at + last, in.get(WORD, offset + last)); // the tail, overlapping the word before
    }
}
