package dev.oakmap.internal.map;

import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.internal.buffer.SliceBuffer;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.function.Function;

/**
 * An unscoped view of a key that reads an on-heap copy of its bytes rather than the key's slice.
 *
 * <p>Used by scans when keys are reclaimed: a key is immutable, so a copy reads exactly what the
 * slice would, and it stays readable after the mapping is removed and its key slice reused, where
 * a {@link SliceView} would throw. A scan over keys therefore never fails because another thread
 * removed an entry it had already returned. The copy is the one the {@link Cursor} takes anyway
 * when it arrives at a key, so this costs no extra read of off-heap memory.
 *
 * <p>A stream scan repositions one instance on each key ({@link #position}); a non-stream scan
 * gives each entry its own instance over its own array.
 */
final class KeyCopyView implements OakUnscopedBuffer {
    private final InternalOakMap<?, ?> map;
    private final SliceBuffer bytes = new SliceBuffer();

    KeyCopyView(InternalOakMap<?, ?> map, MemorySegment copy, int length) {
        this.map = map;
        position(copy, length);
    }

    void position(MemorySegment copy, int length) {
        bytes.open(copy, 0, length, false);
    }

    private SliceBuffer open() {
        map.checkOpen();
        return bytes;
    }

    @Override public int capacity() { return open().capacity(); }
    @Override public byte get(int index) { return open().get(index); }
    @Override public char getChar(int index) { return open().getChar(index); }
    @Override public short getShort(int index) { return open().getShort(index); }
    @Override public int getInt(int index) { return open().getInt(index); }
    @Override public long getLong(int index) { return open().getLong(index); }
    @Override public float getFloat(int index) { return open().getFloat(index); }
    @Override public double getDouble(int index) { return open().getDouble(index); }

    @Override
    public void getBytes(int index, byte[] dst, int offset, int length) {
        open().getBytes(index, dst, offset, length);
    }

    @Override
    public <T> T transform(Function<OakScopedReadBuffer, T> transformer) {
        Objects.requireNonNull(transformer, "transformer");
        SliceBuffer scoped = new SliceBuffer(open().rawSegment(), 0, bytes.capacity(), false);
        try {
            return transformer.apply(scoped);
        } finally {
            scoped.close();
        }
    }

    @Override
    public String toString() {
        return "OakUnscopedBuffer[key]";
    }
}
