package dev.oakmap.internal.map;

import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.internal.buffer.SliceBuffer;
import dev.oakmap.internal.memory.Refs;

import java.util.Objects;
import java.util.function.Function;

/**
 * A zero-copy view of a serialized key. Keys are immutable and their slices are not reused while
 * the map is open, so reads go straight to the bytes; each checks that the map is still open.
 * Mutable only through {@link #position} (used by stream scans to reuse one object).
 */
final class KeyView implements OakUnscopedBuffer {
    private final InternalOakMap<?, ?> map;
    private final SliceBuffer window = new SliceBuffer();
    private long ref;

    KeyView(InternalOakMap<?, ?> map, long keyRef) {
        this.map = map;
        position(keyRef);
    }

    void position(long keyRef) {
        this.ref = keyRef;
        window.open(map.keySegment(keyRef), Refs.offset(keyRef), Refs.aux(keyRef), false);
    }

    private SliceBuffer w() {
        map.checkOpen();
        return window;
    }

    @Override public int capacity() { return Refs.aux(ref); }
    @Override public byte get(int index) {
        try {
            return w().get(index);
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override public char getChar(int index) {
        try {
            return w().getChar(index);
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override public short getShort(int index) {
        try {
            return w().getShort(index);
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override public int getInt(int index) {
        try {
            return w().getInt(index);
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override public long getLong(int index) {
        try {
            return w().getLong(index);
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override public float getFloat(int index) {
        try {
            return w().getFloat(index);
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override public double getDouble(int index) {
        try {
            return w().getDouble(index);
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override public void getBytes(int index, byte[] dst, int offset, int length) {
        try {
            w().getBytes(index, dst, offset, length);
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override
    public <T> T transform(Function<OakScopedReadBuffer, T> transformer) {
        Objects.requireNonNull(transformer, "transformer");
        map.checkOpen();
        try {
            return ValueView.applyScoped(transformer, map.keySegment(ref), Refs.offset(ref), Refs.aux(ref));
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override
    public String toString() {
        return "OakUnscopedBuffer[key, " + capacity() + " bytes]";
    }
}
