package dev.oakmap.internal.map;

import dev.oakmap.DeletedMemoryAccessException;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.internal.buffer.Bytes;
import dev.oakmap.internal.buffer.Layouts;
import dev.oakmap.internal.buffer.SliceBuffer;
import dev.oakmap.internal.reclaim.SliceManager;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;
import java.util.function.Function;

/**
 * A zero-copy view of one key or value slice, identified by its reference. Every access is one
 * read of the slice's protocol (see {@link SliceManager}): begin, read, validate, so it never
 * returns bytes of another owner. Once the reference is no longer live (the mapping was removed,
 * its memory perhaps reused), every read throws {@link DeletedMemoryAccessException}.
 *
 * <p>Mutable only through {@link #position} (used by stream scans to reuse one object).
 */
final class SliceView implements OakUnscopedBuffer {
    private final InternalOakMap<?, ?> map;
    private final SliceManager values;
    private final String what;
    private long ref;
    /**
     * A read token of {@link #ref} that still validated at the last read, to start the next read
     * with instead of {@link SliceManager#readBegin}; {@link SliceManager#NO_TOKEN} if none. Given
     * by a scan's liveness check ({@link SliceManager#liveToken}), dropped at the first read that
     * fails validation.
     */
    private long token = SliceManager.NO_TOKEN;

    /**
     * @param slices the manager of the slice (the map's keys or values)
     * @param what "key" or "value", for messages
     */
    SliceView(InternalOakMap<?, ?> map, SliceManager slices, long ref, String what) {
        this.map = map;
        this.values = slices;
        this.what = what;
        this.ref = ref;
    }

    void position(long ref) {
        position(ref, SliceManager.NO_TOKEN);
    }

    /** @param token a read token of {@code ref} from {@link SliceManager#liveToken}, or NO_TOKEN */
    void position(long ref, long token) {
        this.ref = ref;
        this.token = token;
    }

    private long begin() {
        map.checkOpen();
        long h = token;
        if (h != SliceManager.NO_TOKEN) {
            return h;
        }
        h = values.readBegin(ref);
        if (h == SliceManager.GONE) {
            throw deleted();
        }
        return h;
    }

    /** Ends a read begun with {@code h}: true if it validated; otherwise the token is dropped. */
    private boolean end(MemorySegment s, long h) {
        if (values.readEnd(s, ref, h)) {
            return true;
        }
        token = SliceManager.NO_TOKEN;
        return false;
    }

    /**
     * @return the offset of {@code [index, index + size)} in the segment, or -1 if out of the
     *     value's bounds (the length read is part of the optimistic read)
     */
    private long at(MemorySegment s, int index, int size) {
        int len = values.length(s, ref);
        if (index < 0 || size > len || index > len - size) {
            return -1;
        }
        return values.dataOffset(ref) + index;
    }

    /** Called when a bound check failed: throws if the check was made on consistent data. */
    private void outOfBounds(MemorySegment s, long h, int index, int size) {
        if (end(s, h)) {
            throw new IndexOutOfBoundsException("index " + index + " size " + size + " out of a " + what + " of "
                    + capacity() + " bytes");
        }
    }

    @Override
    public int capacity() {
        try {
            MemorySegment s = values.segment(ref);
            while (true) {
                long h = begin();
                int len = values.length(s, ref);
                if (end(s, h)) return len;
            }
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override
    public byte get(int index) {
        try {
            MemorySegment s = values.segment(ref);
            while (true) {
                long h = begin();
                long at = at(s, index, 1);
                if (at < 0) { outOfBounds(s, h, index, 1); continue; }
                byte v = s.get(ValueLayout.JAVA_BYTE, at);
                if (end(s, h)) return v;
            }
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override
    public char getChar(int index) {
        try {
            MemorySegment s = values.segment(ref);
            while (true) {
                long h = begin();
                long at = at(s, index, 2);
                if (at < 0) { outOfBounds(s, h, index, 2); continue; }
                char v = s.get(Layouts.CHAR, at);
                if (end(s, h)) return v;
            }
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override
    public short getShort(int index) {
        try {
            MemorySegment s = values.segment(ref);
            while (true) {
                long h = begin();
                long at = at(s, index, 2);
                if (at < 0) { outOfBounds(s, h, index, 2); continue; }
                short v = s.get(Layouts.SHORT, at);
                if (end(s, h)) return v;
            }
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override
    public int getInt(int index) {
        try {
            MemorySegment s = values.segment(ref);
            while (true) {
                long h = begin();
                long at = at(s, index, 4);
                if (at < 0) { outOfBounds(s, h, index, 4); continue; }
                int v = s.get(Layouts.INT, at);
                if (end(s, h)) return v;
            }
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override
    public long getLong(int index) {
        try {
            MemorySegment s = values.segment(ref);
            while (true) {
                long h = begin();
                long at = at(s, index, 8);
                if (at < 0) { outOfBounds(s, h, index, 8); continue; }
                long v = s.get(Layouts.LONG, at);
                if (end(s, h)) return v;
            }
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override
    public float getFloat(int index) {
        return Float.intBitsToFloat(getInt(index));
    }

    @Override
    public double getDouble(int index) {
        return Double.longBitsToDouble(getLong(index));
    }

    @Override
    public void getBytes(int index, byte[] dst, int offset, int length) {
        try {
            Objects.checkFromIndexSize(offset, length, dst.length);
            MemorySegment s = values.segment(ref);
            while (true) {
                long h = begin();
                long at = at(s, index, length);
                if (at < 0) { outOfBounds(s, h, index, length); continue; }
                Bytes.copyOut(s, at, dst, offset, length);
                if (end(s, h)) return;
            }
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override
    public <T> T transform(Function<OakScopedReadBuffer, T> transformer) {
        Objects.requireNonNull(transformer, "transformer");
        T result;
        try {
            result = map.readWith(values, ref, transformer);
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
        if (result == InternalOakMap.gone()) {
            throw deleted();
        }
        return result;
    }

    /** @return the exception for a read of a removed mapping, naming what this view shows */
    private DeletedMemoryAccessException deleted() {
        return new DeletedMemoryAccessException("the " + what + " viewed by this buffer was removed from the map");
    }

    @Override
    public String toString() {
        return "OakUnscopedBuffer[" + what + "]";
    }
}
