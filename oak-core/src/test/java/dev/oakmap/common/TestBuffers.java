package dev.oakmap.common;

import dev.oakmap.OakScopedWriteBuffer;
import dev.oakmap.OakSerializer;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * Test-only buffers over heap memory, so serializers and comparators can be tested without a map.
 * Deliberately independent of the main code's own heap buffer.
 */
final class TestBuffers {

    private TestBuffers() {
    }

    /** A scoped write buffer over {@code MemorySegment.ofArray(new byte[size])}. */
    static Buffer allocate(int size) {
        return new Buffer(MemorySegment.ofArray(new byte[size]));
    }

    /**
     * A buffer holding exactly the bytes given, placed at an odd offset inside a larger array so
     * that comparators cannot rely on the slice starting at the array's start.
     */
    static Buffer of(byte[] bytes) {
        byte[] big = new byte[bytes.length + 7];
        big[0] = (byte) 0xAA;
        big[big.length - 1] = (byte) 0x55;
        System.arraycopy(bytes, 0, big, 3, bytes.length);
        return new Buffer(MemorySegment.ofArray(big).asSlice(3, bytes.length));
    }

    /**
     * Serializes {@code object} into a buffer of exactly {@code calculateSize(object)} bytes, then
     * checks the serializer wrote within bounds (guaranteed by the segment) and returns the buffer.
     */
    static <T> Buffer serialize(OakSerializer<T> serializer, T object) {
        Buffer b = allocate(serializer.calculateSize(object));
        serializer.serialize(object, b);
        return of(b.toArray()); // re-home the bytes into a slice with neighbours
    }

    static final class Buffer implements OakScopedWriteBuffer {
        private static final ValueLayout.OfChar CHAR = ValueLayout.JAVA_CHAR_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
        private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
        private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
        private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
        private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
        private static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

        private final MemorySegment seg;

        Buffer(MemorySegment seg) {
            this.seg = seg;
        }

        byte[] toArray() {
            return seg.toArray(ValueLayout.JAVA_BYTE);
        }

        @Override public int capacity() { return (int) seg.byteSize(); }
        @Override public byte get(int index) { return seg.get(ValueLayout.JAVA_BYTE, index); }
        @Override public char getChar(int index) { return seg.get(CHAR, index); }
        @Override public short getShort(int index) { return seg.get(SHORT, index); }
        @Override public int getInt(int index) { return seg.get(INT, index); }
        @Override public long getLong(int index) { return seg.get(LONG, index); }
        @Override public float getFloat(int index) { return seg.get(FLOAT, index); }
        @Override public double getDouble(int index) { return seg.get(DOUBLE, index); }

        @Override
        public void getBytes(int index, byte[] dst, int offset, int length) {
            Objects.checkFromIndexSize(offset, length, dst.length);
            MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, index, dst, offset, length);
        }

        @Override public MemorySegment segment() { return seg.asReadOnly(); }
        @Override public MemorySegment writableSegment() { return seg; }
        @Override public OakScopedWriteBuffer put(int index, byte v) { seg.set(ValueLayout.JAVA_BYTE, index, v); return this; }
        @Override public OakScopedWriteBuffer putChar(int index, char v) { seg.set(CHAR, index, v); return this; }
        @Override public OakScopedWriteBuffer putShort(int index, short v) { seg.set(SHORT, index, v); return this; }
        @Override public OakScopedWriteBuffer putInt(int index, int v) { seg.set(INT, index, v); return this; }
        @Override public OakScopedWriteBuffer putLong(int index, long v) { seg.set(LONG, index, v); return this; }
        @Override public OakScopedWriteBuffer putFloat(int index, float v) { seg.set(FLOAT, index, v); return this; }
        @Override public OakScopedWriteBuffer putDouble(int index, double v) { seg.set(DOUBLE, index, v); return this; }

        @Override
        public OakScopedWriteBuffer putBytes(int index, byte[] src, int offset, int length) {
            Objects.checkFromIndexSize(offset, length, src.length);
            MemorySegment.copy(src, offset, seg, ValueLayout.JAVA_BYTE, index, length);
            return this;
        }
    }
}
