package dev.oakmap.internal.map;

import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.internal.buffer.SliceBuffer;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.function.Function;

/**
 * An unscoped view of a key, handed out by scans, that reads bytes which cannot change or be
 * reused under it: either an on-heap copy of the key, or the key's own slice while the scan's
 * hazard pointer protects it ({@link KeyHazards}), or a slice of keys that are never reused. So,
 * unlike a {@link SliceView}, it reads without the validated protocol: one bounds-checked access.
 *
 * <p>A key is immutable, so a copy reads exactly what the slice would, and it stays readable
 * after the mapping is removed and its slice reused. A stream scan repositions one instance on
 * each key ({@link #position}), on the slice if it reads keys in place, and on a copy of the last
 * key when it ends (its protection ends with it); a non-stream scan gives each entry a
 * {@link KeyCopyView} of its own instead.
 */
final class ScanKeyView implements OakUnscopedBuffer {
    private final InternalOakMap<?, ?> map;
    private final SliceBuffer bytes = new SliceBuffer();
    /** Kept reachable with the view: the hazards protecting the slice it reads, if any. */
    @SuppressWarnings({"unused", "FieldCanBeLocal"})
    private Object keepAlive;
    /**
     * See {@link #reach()}. Written by the user's reads, read by the cursor, on the scan's thread;
     * a plain field, as it is only a hint: a value another thread left stale costs speed, never
     * correctness.
     */
    private int reach;

    /**
     * @param keepAlive an object to keep reachable as long as this view (the scan's hazards), or null
     */
    ScanKeyView(InternalOakMap<?, ?> map, Object keepAlive) {
        this.map = map;
        this.keepAlive = keepAlive;
    }

    /** Keeps {@code hazards} reachable with this view from now on (a scan that began copying keys). */
    void keepAlive(Object hazards) {
        this.keepAlive = hazards;
    }

    /** Positions the view on {@code length} key bytes at {@code offset} of {@code segment}. */
    void position(MemorySegment segment, long offset, int length) {
        bytes.open(segment, offset, length, false);
    }

    /**
     * @return how far into its keys the user has read through this view, over all the keys it was
     *     positioned on: one past the furthest byte asked for (a {@link #transform} counts as the
     *     whole key). The cursor touches a key's lines ahead of a user who reads past its first
     *     line ({@code Cursor#touchKeyIfInOrder}).
     */
    int reach() {
        return reach;
    }

    private SliceBuffer open() {
        map.checkOpen();
        return bytes;
    }

    /** {@link #open()}, noting a read up to byte {@code end} (exclusive; an overflowed sum is not noted). */
    private SliceBuffer open(int end) {
        if (end > reach) {
            reach = end;
        }
        return open();
    }

    @Override public int capacity() { return open().capacity(); }
    @Override public byte get(int index) { try { return open(index + 1).get(index); } catch (IllegalStateException e) { throw map.closedOr(e); } }
    @Override public char getChar(int index) { try { return open(index + 2).getChar(index); } catch (IllegalStateException e) { throw map.closedOr(e); } }
    @Override public short getShort(int index) { try { return open(index + 2).getShort(index); } catch (IllegalStateException e) { throw map.closedOr(e); } }
    @Override public int getInt(int index) { try { return open(index + 4).getInt(index); } catch (IllegalStateException e) { throw map.closedOr(e); } }
    @Override public long getLong(int index) { try { return open(index + 8).getLong(index); } catch (IllegalStateException e) { throw map.closedOr(e); } }
    @Override public float getFloat(int index) { try { return open(index + 4).getFloat(index); } catch (IllegalStateException e) { throw map.closedOr(e); } }
    @Override public double getDouble(int index) { try { return open(index + 8).getDouble(index); } catch (IllegalStateException e) { throw map.closedOr(e); } }

    @Override
    public void getBytes(int index, byte[] dst, int offset, int length) {
        try {
            open(index + length).getBytes(index, dst, offset, length);
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override
    public <T> T transform(Function<OakScopedReadBuffer, T> transformer) {
        Objects.requireNonNull(transformer, "transformer");
        SliceBuffer window = open(Integer.MAX_VALUE); // the transformer may read it all
        return SliceBuffer.applyReadOnly(window.rawSegment(), window.rawBase(), window.capacity(), transformer);
    }

    @Override
    public String toString() {
        return "OakUnscopedBuffer[key]";
    }
}
