package dev.oakmap.common;

import dev.oakmap.OakScopedWriteBuffer;
import dev.oakmap.internal.buffer.Bytes;
import dev.oakmap.internal.buffer.Layouts;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;

/**
 * A scoped write buffer over a fresh heap array, used to serialize a key object when a comparator
 * must compare it byte-wise with a serialized key. Not thread-safe; each instance lives for one
 * comparison.
 */
final class HeapWriteBuffer implements OakScopedWriteBuffer {

    private final MemorySegment segment;

    /** @param size the exact size of the buffer, in bytes */
    HeapWriteBuffer(int size) {
        this.segment = MemorySegment.ofArray(new byte[size]);
    }

    /**
     * Serializes {@code object} into a new heap buffer of exactly {@code calculateSize(object)}
     * bytes.
     */
    static <T> HeapWriteBuffer serialize(dev.oakmap.OakSerializer<T> serializer, T object) {
        int size = serializer.calculateSize(object);
        if (size < 0) {
            throw new IllegalArgumentException("serializer returned a negative size: " + size);
        }
        HeapWriteBuffer buffer = new HeapWriteBuffer(size);
        serializer.serialize(object, buffer);
        return buffer;
    }

    @Override public int capacity() { return (int) segment.byteSize(); }
    @Override public byte get(int index) { return segment.get(ValueLayout.JAVA_BYTE, index); }
    @Override public char getChar(int index) { return segment.get(Layouts.CHAR, index); }
    @Override public short getShort(int index) { return segment.get(Layouts.SHORT, index); }
    @Override public int getInt(int index) { return segment.get(Layouts.INT, index); }
    @Override public long getLong(int index) { return segment.get(Layouts.LONG, index); }
    @Override public float getFloat(int index) { return segment.get(Layouts.FLOAT, index); }
    @Override public double getDouble(int index) { return segment.get(Layouts.DOUBLE, index); }

    @Override
    public void getBytes(int index, byte[] dst, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, dst.length);
        Bytes.copyOut(segment, index, dst, offset, length);
    }

    @Override public MemorySegment segment() { return segment.asReadOnly(); }
    @Override public MemorySegment writableSegment() { return segment; }

    @Override public OakScopedWriteBuffer put(int index, byte value) { segment.set(ValueLayout.JAVA_BYTE, index, value); return this; }
    @Override public OakScopedWriteBuffer putChar(int index, char value) { segment.set(Layouts.CHAR, index, value); return this; }
    @Override public OakScopedWriteBuffer putShort(int index, short value) { segment.set(Layouts.SHORT, index, value); return this; }
    @Override public OakScopedWriteBuffer putInt(int index, int value) { segment.set(Layouts.INT, index, value); return this; }
    @Override public OakScopedWriteBuffer putLong(int index, long value) { segment.set(Layouts.LONG, index, value); return this; }
    @Override public OakScopedWriteBuffer putFloat(int index, float value) { segment.set(Layouts.FLOAT, index, value); return this; }
    @Override public OakScopedWriteBuffer putDouble(int index, double value) { segment.set(Layouts.DOUBLE, index, value); return this; }

    @Override
    public OakScopedWriteBuffer putBytes(int index, byte[] src, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, src.length);
        Bytes.copyIn(src, offset, segment, index, length);
        return this;
    }
}
