package dev.oakmap.examples.druid;

import dev.oakmap.OakScopedWriteBuffer;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** A test double for the map's scoped buffers: big-endian access to a heap array. */
final class HeapBuffer implements OakScopedWriteBuffer {
    private static final ValueLayout.OfChar CHAR = ValueLayout.JAVA_CHAR_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private final MemorySegment s;

    HeapBuffer(int size) {
        this.s = MemorySegment.ofArray(new byte[size]);
    }

    static <T> HeapBuffer of(dev.oakmap.OakSerializer<T> serializer, T object) {
        HeapBuffer b = new HeapBuffer(serializer.calculateSize(object));
        serializer.serialize(object, b);
        return b;
    }

    @Override public int capacity() { return (int) s.byteSize(); }
    @Override public byte get(int i) { return s.get(ValueLayout.JAVA_BYTE, i); }
    @Override public char getChar(int i) { return s.get(CHAR, i); }
    @Override public short getShort(int i) { return s.get(SHORT, i); }
    @Override public int getInt(int i) { return s.get(INT, i); }
    @Override public long getLong(int i) { return s.get(LONG, i); }
    @Override public float getFloat(int i) { return s.get(FLOAT, i); }
    @Override public double getDouble(int i) { return s.get(DOUBLE, i); }
    @Override public void getBytes(int i, byte[] dst, int off, int len) {
        MemorySegment.copy(s, ValueLayout.JAVA_BYTE, i, dst, off, len);
    }
    @Override public MemorySegment segment() { return s.asReadOnly(); }
    @Override public OakScopedWriteBuffer put(int i, byte v) { s.set(ValueLayout.JAVA_BYTE, i, v); return this; }
    @Override public OakScopedWriteBuffer putChar(int i, char v) { s.set(CHAR, i, v); return this; }
    @Override public OakScopedWriteBuffer putShort(int i, short v) { s.set(SHORT, i, v); return this; }
    @Override public OakScopedWriteBuffer putInt(int i, int v) { s.set(INT, i, v); return this; }
    @Override public OakScopedWriteBuffer putLong(int i, long v) { s.set(LONG, i, v); return this; }
    @Override public OakScopedWriteBuffer putFloat(int i, float v) { s.set(FLOAT, i, v); return this; }
    @Override public OakScopedWriteBuffer putDouble(int i, double v) { s.set(DOUBLE, i, v); return this; }
    @Override public OakScopedWriteBuffer putBytes(int i, byte[] src, int off, int len) {
        MemorySegment.copy(src, off, s, ValueLayout.JAVA_BYTE, i, len);
        return this;
    }
    @Override public MemorySegment writableSegment() { return s; }
}
