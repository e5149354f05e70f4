package dev.oakmap.internal.map;

import dev.oakmap.DeletedMemoryAccessException;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.internal.buffer.Bytes;
import dev.oakmap.internal.buffer.Layouts;
import dev.oakmap.internal.buffer.SliceBuffer;
import dev.oakmap.internal.chunk.Chunk;
import dev.oakmap.internal.memory.Refs;
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
 * <p><b>Following moves.</b> A value view also knows the chunk and entry its reference was read
 * from. The rebalancer may move a live value into key order (see {@code Rebalancer},
 * "Placement"); the old reference is then gone, but the replaced chunk records where the value
 * went ({@link Chunk#movedValue}). A read that finds its reference gone asks that record first and,
 * if the value moved rather than being removed or replaced, takes its new place and reads again
 * ({@link #follow}), through any number of moves. Each read works on one snapshot of the
 * reference, and moving on is synchronized, so a view shared by threads stays consistent.
 *
 * <p>Mutable only through {@link #position} (used by stream scans to reuse one object) and by
 * following moves.
 */
final class SliceView implements OakUnscopedBuffer {
    private final InternalOakMap<?, ?> map;
    private final SliceManager values;
    private final String what;
    private long ref;
    /** Where {@link #ref} was read from, to follow a move; null for keys, or if unknown. */
    private Chunk chunk;
    private int entry;
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

    /**
     * @param token a read token of {@code ref} from {@link SliceManager#liveToken}, or NO_TOKEN
     * @param chunk the chunk {@code ref} was read from, or null
     * @param entry its entry there
     */
    void position(long ref, long token, Chunk chunk, int entry) {
        this.ref = ref;
        this.token = token;
        if (this.chunk != chunk) { // a scan's consecutive values mostly share a chunk: skip the store's GC barrier
            this.chunk = chunk;
        }
        this.entry = entry;
    }

    /**
     * Begins a read of {@code r}, a snapshot of {@link #ref}.
     *
     * @return a token, or {@link SliceManager#GONE} if the value moved since (read {@link #ref} again)
     * @throws DeletedMemoryAccessException if the value was removed or replaced
     */
    private long begin(long r) {
        map.checkOpen();
        long h = token;
        if (h != SliceManager.NO_TOKEN) {
            return h;
        }
        h = values.readBegin(r);
        if (h == SliceManager.GONE && !follow(r)) {
            throw deleted();
        }
        return h;
    }

    /**
     * Called when reference {@code r} was found gone: if the rebalancer moved that value, moves
     * this view to the value's new place (unless another thread already did).
     *
     * @return true if the reader should read {@link #ref} again, false if the value was removed
     */
    private synchronized boolean follow(long r) {
        if (ref != r) {
            return true; // followed by another reader meanwhile
        }
        // walk the records of the rebalances since: the value may have stayed in place in some
        for (Chunk c = chunk, next; c != null; c = next) {
            int e = entry;
            long to = c.movedValue(e, r);
            if (to == Refs.NULL) {
                return false; // removed or replaced, never moved since
            }
            next = c.movedChunk(e);
            entry = c.movedEntry(e);
            chunk = next;
            if (to != r) {
                token = SliceManager.NO_TOKEN;
                ref = to;
                return true;
            }
        }
        return false;
    }

    /** Ends a read of {@code r} begun with {@code h}: true if it validated; otherwise the token is dropped. */
    private boolean end(MemorySegment s, long r, long h) {
        if (values.readEnd(s, r, h)) {
            return true;
        }
        token = SliceManager.NO_TOKEN;
        return false;
    }

    /**
     * @return the offset of {@code [index, index + size)} of value {@code r} in the segment, or
     *     -1 if out of the value's bounds (the length read is part of the optimistic read)
     */
    private long at(MemorySegment s, long r, int index, int size) {
        int len = values.length(s, r);
        if (index < 0 || size > len || index > len - size) {
            return -1;
        }
        long at = values.dataOffset(r) + index;
        // a stale reference into a block reused whole may read payload as its length: the access
        // must then fail validation, not the segment's bounds check
        return at + size <= s.byteSize() ? at : -1;
    }

    /** Called when a bound check failed: throws if the check was made on consistent data. */
    private void outOfBounds(MemorySegment s, long r, long h, int index, int size) {
        if (end(s, r, h)) {
            throw new IndexOutOfBoundsException("index " + index + " size " + size + " out of a " + what + " of "
                    + capacity() + " bytes");
        }
    }

    @Override
    public int capacity() {
        try {
            while (true) {
                long r = ref;
                long h = begin(r);
                if (h == SliceManager.GONE) continue;
                MemorySegment s = values.segment(r);
                int len = values.length(s, r);
                if (end(s, r, h)) return len;
            }
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override
    public byte get(int index) {
        return (byte) readBits(index, 1);
    }

    @Override
    public char getChar(int index) {
        return (char) readBits(index, 2);
    }

    @Override
    public short getShort(int index) {
        return (short) readBits(index, 2);
    }

    @Override
    public int getInt(int index) {
        return (int) readBits(index, 4);
    }

    @Override
    public long getLong(int index) {
        return readBits(index, 8);
    }

    /**
     * One validated read of the {@code width}-byte field at {@code index} (1, 2, 4 or 8 bytes,
     * big-endian as {@link Layouts}), sign-extended into a {@code long}: the typed getters narrow
     * it. They pass a constant width, so once this is inlined into them the switch folds away.
     */
    private long readBits(int index, int width) {
        try {
            while (true) {
                long r = ref;
                long h = begin(r);
                if (h == SliceManager.GONE) continue;
                MemorySegment s = values.segment(r);
                long at = at(s, r, index, width);
                if (at < 0) { outOfBounds(s, r, h, index, width); continue; }
                long v = switch (width) {
                    case 1 -> s.get(ValueLayout.JAVA_BYTE, at);
                    case 2 -> s.get(Layouts.SHORT, at);
                    case 4 -> s.get(Layouts.INT, at);
                    default -> s.get(Layouts.LONG, at);
                };
                if (end(s, r, h)) return v;
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
            while (true) {
                long r = ref;
                long h = begin(r);
                if (h == SliceManager.GONE) continue;
                MemorySegment s = values.segment(r);
                long at = at(s, r, index, length);
                if (at < 0) { outOfBounds(s, r, h, index, length); continue; }
                Bytes.copyOut(s, at, dst, offset, length);
                if (end(s, r, h)) return;
            }
        } catch (IllegalStateException e) {
            throw map.closedOr(e);
        }
    }

    @Override
    public <T> T transform(Function<OakScopedReadBuffer, T> transformer) {
        Objects.requireNonNull(transformer, "transformer");
        while (true) {
            map.checkOpen(); // as every getter does (begin): a closed map fails before its memory is touched
            long r = ref;
            T result;
            try {
                result = map.readWith(values, r, transformer);
            } catch (IllegalStateException e) {
                throw map.closedOr(e);
            }
            if (result != InternalOakMap.gone()) {
                return result;
            }
            if (!follow(r)) {
                throw deleted();
            }
        }
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
