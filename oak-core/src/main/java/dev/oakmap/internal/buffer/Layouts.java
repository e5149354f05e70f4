package dev.oakmap.internal.buffer;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The layouts user data is read and written with: big-endian (like {@link java.nio.ByteBuffer}),
 * unaligned, since user fields sit at arbitrary offsets. Never used for atomic access: headers use
 * the aligned layouts of the value managers.
 */
public final class Layouts {
    private Layouts() {}

    public static final ValueLayout.OfChar CHAR = ValueLayout.JAVA_CHAR_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    public static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    public static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    public static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    public static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    public static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private static final VarHandle ARRAY_WORDS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());

    /**
     * Copies {@code length} bytes from {@code src} at {@code offset} to the start of {@code dst},
     * a word at a time. For the short copies of the scan path (a key per step) this ran faster
     * than {@code MemorySegment.copy} into a heap array in our scan probe; bounds are checked by
     * the segment and the array as usual.
     */
    public static void copyShort(MemorySegment src, long offset, byte[] dst, int length) {
        int i = 0;
        for (; i + Long.BYTES <= length; i += Long.BYTES) {
            ARRAY_WORDS.set(dst, i, src.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + i));
        }
        for (; i < length; i++) {
            dst[i] = src.get(ValueLayout.JAVA_BYTE, offset + i);
        }
    }
}
