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
 * serialization, and like every scoped buffer it throws {@link IllegalStateException} once the
 * serializer it was handed to has returned (the comparator then reads the bytes through the
 * segment {@link #serialize} returns).
 */
final class HeapWriteBuffer implements OakScopedWriteBuffer {

    private final MemorySegment segment;
    /** False once the serializer has returned; plain: the buffer is confined to one thread. */
    private boolean open = true;

    /** @param size the exact size of the buffer, in bytes */
    private HeapWriteBuffer(int size) {
        this.segment = MemorySegment.ofArray(new byte[size]);
    }

    /**
     * Serializes {@code object} into a new heap array of exactly {@code calculateSize(object)}
     * bytes.
     *
     * @return a segment over the array
     */
    static <T> MemorySegment serialize(dev.oakmap.OakSerializer<T> serializer, T object) {
        int size = serializer.calculateSize(object);
        if (size < 0) {
            throw new IllegalArgumentException("serializer returned a negative size: " + size);
        }
        HeapWriteBuffer buffer = new HeapWriteBuffer(size);
        try {
            serializer.serialize(object, buffer);
        } finally {
            buffer.open = false;
        }
        return buffer.segment;
    }

    /** @return the array's segment, while the serializer runs */
    private MemorySegment open() {
        if (!open) {
            throw new IllegalStateException("scoped buffer used outside of its scope");
        }
        return segment;
    }

    @Override public int capacity() { return (int) open().byteSize(); }
    @Override public byte get(int index) { return open().get(ValueLayout.JAVA_BYTE, index); }
    @Override public char getChar(int index) { return open().get(Layouts.CHAR, index); }
    @Override public short getShort(int index) { return open().get(Layouts.SHORT, index); }
    @Override public int getInt(int index) { return open().get(Layouts.INT, index); }
    @Override public long getLong(int index) { return open().get(Layouts.LONG, index); }
    @Override public float getFloat(int index) { return open().get(Layouts.FLOAT, index); }
    @Override public double getDouble(int index) { return open().get(Layouts.DOUBLE, index); }

    @Override
    public void getBytes(int index, byte[] dst, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, dst.length);
        Bytes.copyOut(open(), index, dst, offset, length);
    }

    @Override public MemorySegment segment() { return open().asReadOnly(); }
    @Override public MemorySegment writableSegment() { return open(); }

    @Override
    public OakScopedWriteBuffer put(int index, byte value) {
        open().set(ValueLayout.JAVA_BYTE, index, value);
        return this;
    }

    @Override
    public OakScopedWriteBuffer putChar(int index, char value) {
        open().set(Layouts.CHAR, index, value);
        return this;
    }

    @Override
    public OakScopedWriteBuffer putShort(int index, short value) {
        open().set(Layouts.SHORT, index, value);
        return this;
    }

    @Override
    public OakScopedWriteBuffer putInt(int index, int value) {
        open().set(Layouts.INT, index, value);
        return this;
    }

    @Override
    public OakScopedWriteBuffer putLong(int index, long value) {
        open().set(Layouts.LONG, index, value);
        return this;
    }

    @Override
    public OakScopedWriteBuffer putFloat(int index, float value) {
        open().set(Layouts.FLOAT, index, value);
        return this;
    }

    @Override
    public OakScopedWriteBuffer putDouble(int index, double value) {
        open().set(Layouts.DOUBLE, index, value);
        return this;
    }

    @Override
    public OakScopedWriteBuffer putBytes(int index, byte[] src, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, src.length);
        Bytes.copyIn(src, offset, open(), index, length);
        return this;
    }
}
