package dev.oakmap.internal.map;

import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.internal.buffer.Layouts;
import dev.oakmap.internal.buffer.SliceBuffer;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.function.Function;

/**
 * An unscoped view of a key over a private on-heap copy of its bytes: what a non-stream scan
 * hands out for each key ({@link Cursor#keyView}). A key never changes, so the copy reads exactly
 * what the slice would, and it stays readable after the mapping is removed and its slice reused.
 *
 * <p>It reads the array (through a heap segment made per read, {@link #segment}), big-endian like
 * every Oak buffer ({@code Layouts}), with the same bounds checks and exceptions as
 * {@link SliceBuffer}; a view per pair is then two objects
 * (this and the array) rather than a {@link ScanKeyView}, its window object and a heap segment:
 * 140 bytes a pair of 100-byte keys less to allocate on every step of a plain zero-copy iterator.
 * Like the other views, it refuses to read once its map is closed.
 */
final class KeyCopyView implements OakUnscopedBuffer {
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

    /**
     * @return the key's bytes as a segment: read through it, not through an array-view
     *     {@code VarHandle} (which Lincheck's model checker cannot follow); the wrapper is not kept,
     *     so a view stays two objects, and the compiler removes it where the read is inlined
     */
    private MemorySegment segment() {
        return MemorySegment.ofArray(bytes);
    }

    @Override public int capacity() { map.checkOpen(); return bytes.length; }
    @Override public byte get(int index) { return bytes[at(index, 1)]; }
    @Override public char getChar(int index) { return segment().get(Layouts.CHAR, at(index, 2)); }
    @Override public short getShort(int index) { return segment().get(Layouts.SHORT, at(index, 2)); }
    @Override public int getInt(int index) { return segment().get(Layouts.INT, at(index, 4)); }
    @Override public long getLong(int index) { return segment().get(Layouts.LONG, at(index, 8)); }
    @Override public float getFloat(int index) { return segment().get(Layouts.FLOAT, at(index, 4)); }
    @Override public double getDouble(int index) { return segment().get(Layouts.DOUBLE, at(index, 8)); }

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
        return SliceBuffer.applyReadOnly(segment(), 0, bytes.length, transformer);
    }

    @Override
    public String toString() {
        return "OakUnscopedBuffer[key]";
    }
}
