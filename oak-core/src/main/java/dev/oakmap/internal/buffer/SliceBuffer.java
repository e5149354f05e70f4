package dev.oakmap.internal.buffer;

import dev.oakmap.OakScopedWriteBuffer;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;

/**
 * The scoped buffer handed to serializers, comparators and compute callbacks: a window of
 * {@code length} bytes at {@code base} inside a block segment.
 *
 * <p>Every access is checked twice: against the window here (so a user can never read or write a
 * neighbour's bytes), and by the segment itself (so even a bug in this class is an exception, not
 * a crash). A buffer is {@linkplain #close() closed} when its scope ends; later use throws
 * {@link IllegalStateException}. Instances are confined to one thread.
 */
public final class SliceBuffer implements OakScopedWriteBuffer {
    private MemorySegment segment;
    private long base;
    private int length;
    private boolean writable;
    private boolean open;

    /** Creates a closed buffer; {@link #open} positions it. */
    public SliceBuffer() {}

    /** Creates a buffer open on the given window. */
    public SliceBuffer(MemorySegment segment, long base, int length, boolean writable) {
        open(segment, base, length, writable);
    }

    /** Positions this buffer on a window and opens its scope. @return this */
    public SliceBuffer open(MemorySegment segment, long base, int length, boolean writable) {
        if (this.segment != segment) { // consecutive windows are mostly in one block: skip the store's GC barrier
            this.segment = segment;
        }
        this.base = base;
        this.length = length;
        this.writable = writable;
        this.open = true;
        return this;
    }

    /** Ends the scope: later accesses throw. */
    public void close() {
        open = false;
    }

    private long at(int index, int size) {
        if (!open) {
            throw new IllegalStateException("scoped buffer used outside of its scope");
        }
        Objects.checkFromIndexSize(index, size, length);
        return base + index;
    }

    private long wat(int index, int size) {
        if (!writable) {
            throw new UnsupportedOperationException("read-only buffer");
        }
        return at(index, size);
    }

    @Override public int capacity() { return length; }
    @Override public byte get(int index) { return segment.get(ValueLayout.JAVA_BYTE, at(index, 1)); }
    @Override public char getChar(int index) { return segment.get(Layouts.CHAR, at(index, 2)); }
    @Override public short getShort(int index) { return segment.get(Layouts.SHORT, at(index, 2)); }
    @Override public int getInt(int index) { return segment.get(Layouts.INT, at(index, 4)); }
    @Override public long getLong(int index) { return segment.get(Layouts.LONG, at(index, 8)); }
    @Override public float getFloat(int index) { return segment.get(Layouts.FLOAT, at(index, 4)); }
    @Override public double getDouble(int index) { return segment.get(Layouts.DOUBLE, at(index, 8)); }

    @Override
    public void getBytes(int index, byte[] dst, int offset, int len) {
        Objects.checkFromIndexSize(offset, len, dst.length);
        Bytes.copyOut(segment, at(index, len), dst, offset, len);
    }

    @Override
    public MemorySegment segment() {
        at(0, 0);
        return segment.asSlice(base, length).asReadOnly();
    }

    @Override public OakScopedWriteBuffer put(int index, byte v) { segment.set(ValueLayout.JAVA_BYTE, wat(index, 1), v); return this; }
    @Override public OakScopedWriteBuffer putChar(int index, char v) { segment.set(Layouts.CHAR, wat(index, 2), v); return this; }
    @Override public OakScopedWriteBuffer putShort(int index, short v) { segment.set(Layouts.SHORT, wat(index, 2), v); return this; }
    @Override public OakScopedWriteBuffer putInt(int index, int v) { segment.set(Layouts.INT, wat(index, 4), v); return this; }
    @Override public OakScopedWriteBuffer putLong(int index, long v) { segment.set(Layouts.LONG, wat(index, 8), v); return this; }
    @Override public OakScopedWriteBuffer putFloat(int index, float v) { segment.set(Layouts.FLOAT, wat(index, 4), v); return this; }
    @Override public OakScopedWriteBuffer putDouble(int index, double v) { segment.set(Layouts.DOUBLE, wat(index, 8), v); return this; }

    @Override
    public OakScopedWriteBuffer putBytes(int index, byte[] src, int offset, int len) {
        Objects.checkFromIndexSize(offset, len, src.length);
        Bytes.copyIn(src, offset, segment, wat(index, len), len);
        return this;
    }

    @Override
    public MemorySegment writableSegment() {
        wat(0, 0);
        return segment.asSlice(base, length);
    }

    /** @return the segment of the window's block (internal fast paths) */
    public MemorySegment rawSegment() { return segment; }

    /** @return the window's offset in {@link #rawSegment()} */
    public long rawBase() { return base; }
}
