package dev.oakmap.internal.buffer;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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

    /**
     * @return the first 8 of the {@code length} bytes of {@code s} from {@code offset}, big-endian,
     *     zero-padded when there are fewer: the key prefix of a byte-wise ordered key
     */
    public static long leadingLong(MemorySegment s, long offset, long length) {
        if (length >= Long.BYTES) {
            return s.get(LONG, offset);
        }
        long p = 0;
        for (int i = 0; i < length; i++) {
            p |= (long) Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, offset + i)) << (56 - 8 * i);
        }
        return p;
    }
}
