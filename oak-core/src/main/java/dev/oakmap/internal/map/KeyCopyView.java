package dev.oakmap.internal.map;

import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.internal.buffer.SliceBuffer;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Objects;
import java.util.function.Function;

/**
 * An unscoped view of a key over a private on-heap copy of its bytes: what a non-stream scan
 * hands out for each key ({@link Cursor#keyView}). A key never changes, so the copy reads exactly
 * what the slice would, and it stays readable after the mapping is removed and its slice reused.
 *
 * <p>It reads the array directly, big-endian like every Oak buffer ({@code Layouts}), with the
 * same bounds checks and exceptions as {@link SliceBuffer}; a view per pair is then two objects
 * (this and the array) rather than a {@link ScanKeyView}, its window object and a heap segment:
 * 140 bytes a pair of 100-byte keys less to allocate on every step of a plain zero-copy iterator.
 * Like the other views, it refuses to read once its map is closed.
 */
final class KeyCopyView implements OakUnscopedBuffer {
    private static final VarHandle CHAR = MethodHandles.byteArrayViewVarHandle(char[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle FLOAT = MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle DOUBLE = MethodHandles.byteArrayViewVarHandle(double[].class, ByteOrder.BIG_ENDIAN);

    private final InternalOakMap<?, ?> map;
    /** The key's bytes, exactly: its length is the view's capacity. Never written after construction. */
    private final byte[] bytes;

    KeyCopyView(InternalOakMap<?, ?> map, byte[] bytes) {
        this.map = map;
        this.bytes = bytes;
    }

    /** @return {@code index}, after checking that the map is open and {@code [index, index + size)} is in the key */
    private int at(int index, int size) {
        map.checkOpen();
        return Objects.checkFromIndexSize(index, size, bytes.length);
    }

    @Override public int capacity() { map.checkOpen(); return bytes.length; }
    @Override public byte get(int index) { return bytes[at(index, 1)]; }
    @Override public char getChar(int index) { return (char) CHAR.get(bytes, at(index, 2)); }
    @Override public short getShort(int index) { return (short) SHORT.get(bytes, at(index, 2)); }
    @Override public int getInt(int index) { return (int) INT.get(bytes, at(index, 4)); }
    @Override public long getLong(int index) { return (long) LONG.get(bytes, at(index, 8)); }
    @Override public float getFloat(int index) { return (float) FLOAT.get(bytes, at(index, 4)); }
    @Override public double getDouble(int index) { return (double) DOUBLE.get(bytes, at(index, 8)); }

    @Override
    public void getBytes(int index, byte[] dst, int offset, int length) {
        int from = at(index, length); // a closed map is reported first, as by the other views
        Objects.checkFromIndexSize(offset, length, dst.length);
        System.arraycopy(bytes, from, dst, offset, length);
    }

    @Override
    public <T> T transform(Function<OakScopedReadBuffer, T> transformer) {
        Objects.requireNonNull(transformer, "transformer");
        map.checkOpen();
        return SliceBuffer.applyReadOnly(MemorySegment.ofArray(bytes), 0, bytes.length, transformer);
    }

    @Override
    public String toString() {
        return "OakUnscopedBuffer[key]";
    }
}
