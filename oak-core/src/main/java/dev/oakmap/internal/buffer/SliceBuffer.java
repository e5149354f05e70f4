package dev.oakmap.internal.buffer;

import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakScopedWriteBuffer;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Objects;
import java.util.function.Function;

/**
 * The scoped buffer handed to serializers, comparators and compute callbacks: a window of
 * {@code length} bytes at {@code base} inside a block segment.
 *
 * <p>Every access is checked twice: against the window here (so a user can never read or write a
 * neighbour's bytes), and by the segment itself (so even a bug in this class is an exception, not
 * a crash). A buffer is {@linkplain #close() closed} when its scope ends; later use throws
 * {@link IllegalStateException}. Instances are confined to one thread.
 *
 * <h2>Undo journal</h2>
 * In-place computes are all or nothing: a computer that throws leaves the value as it found it.
 * While {@linkplain #journalWrites() journaling}, each write first saves the bytes it is about to
 * overwrite, and {@link #rollBack} puts them back, newest first. A write of 1, 2, 4 or 8 bytes
 * saves its old bytes in two journal slots (position and size; old bits); a write of another
 * width, or a {@linkplain #writableSegment(int, int) writable segment} over part of the window
 * (through which anything in that part may be written, at any time in the scope), saves a copy of
 * its range. A writable segment over the whole window, or a journal about to hold more than twice
 * the window, takes one copy of the whole window instead, after which nothing more is journaled.
 * Restoring newest first is right even where ranges overlap: each byte ends up as the oldest
 * entry covering it saw it, and no write reached it before that entry was taken. So undo costs
 * at most about three times the window, and the common update of a field or two costs a read of
 * what it overwrites.
 */
public final class SliceBuffer implements OakScopedWriteBuffer {
    private MemorySegment segment;
    private long base;
    private int length;
    private boolean writable;
    private boolean open;
    /** Whether writes are journaled ({@link #journalWrites}). */
    private boolean journaling;
    /**
     * Two slots per entry, oldest first: {@code position << 4 | size}, then the old bits; size 0
     * marks a range, whose second slot indexes {@link #ranges}.
     */
    private long[] journal;
    private int journalSlots;
    /**
     * The oldest entry, when it is a small write, kept in fields: the common update of a field or
     * two then allocates no journal array.
     */
    private boolean hasFirst;
    private long firstMeta;
    private long firstOld;
    /** Copies of the ranges journaled whole, in order. */
    private byte[][] ranges;
    private int rangeCount;
    /** Bytes the journal holds (16 an entry, plus the ranges' copies), to bound it. */
    private long journalBytes;
    /** A copy of the whole window, taken by the first write that is not journaled alone. */
    private byte[] snapshot;
    /** The thread's spare holder {@link #snapshot} was taken from, to give it back; null if allocated. */
    private byte[][] spareHolder;

    /**
     * Per thread, one spare array for snapshots of windows up to {@link #SPARE_MAX} bytes, so that
     * code that updates a large value through its writable segment on every call (sketches in a
     * rollup, say) does not allocate a copy each time. Taken out of its holder while in use, so a
     * compute nested in another (on another map) never shares it.
     */
    private static final ThreadLocal<byte[][]> SPARE = ThreadLocal.withInitial(() -> new byte[1][]);
    private static final int SPARE_MAX = 64 << 10;

    /** Creates a closed buffer; {@link #open} positions it. */
    public SliceBuffer() {}

    /** Creates a buffer open on the given window. */
    public SliceBuffer(MemorySegment segment, long base, int length, boolean writable) {
        open(segment, base, length, writable);
    }

    /**
     * Runs {@code fn} on a read-only buffer over the window {@code [base, base + length)} of
     * {@code segment}, whose scope ends when {@code fn} returns or throws: the {@code transform}
     * of views over bytes that cannot change under them (keys).
     */
    public static <T> T applyReadOnly(MemorySegment segment, long base, int length,
                                      Function<? super OakScopedReadBuffer, T> fn) {
        SliceBuffer scoped = new SliceBuffer(segment, base, length, false);
        try {
            return fn.apply(scoped);
        } finally {
            scoped.close();
        }
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
        journaling = false;
        clearJournal();
    }

    /** Journals this scope's writes from now on, so that {@link #rollBack} can undo them. */
    public void journalWrites() {
        journaling = true;
        clearJournal();
    }

    private void clearJournal() {
        hasFirst = false;
        journalSlots = 0;
        journalBytes = 0;
        if (rangeCount > 0) {
            Arrays.fill(ranges, 0, rangeCount, null);
            rangeCount = 0;
        }
        dropSnapshot();
    }

    /**
     * Undoes every write journaled in this scope (see "Undo journal"), so the window holds what it
     * held when journaling began. Called with the write lock held, before other threads may look.
     * A failure to restore (the map closed meanwhile) is added to {@code cause} as suppressed.
     */
    public void rollBack(Throwable cause) {
        try {
            if (snapshot != null) {
                Bytes.copyIn(snapshot, 0, segment, base, length);
            }
            for (int i = journalSlots - 2; i >= 0; i -= 2) {
                restore(journal[i] >>> 4, (int) (journal[i] & 0xF), journal[i + 1]);
            }
            if (hasFirst) {
                restore(firstMeta >>> 4, (int) (firstMeta & 0xF), firstOld);
            }
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
        clearJournal();
    }

    /** Saves what a write of {@code size} bytes at segment position {@code at} will overwrite. */
    private void save(long at, int size) {
        boolean small = size == 8 || size == 4 || size == 2 || size == 1;
        if (small && !hasFirst && journalSlots == 0 && snapshot == null) { // the first write of the scope
            firstOld = readSmall(at, size);
            firstMeta = at << 4 | size;
            hasFirst = true;
            journalBytes = 16;
            return;
        }
        saveMore(at, size, small);
    }

    /** {@link #save}, past the first small write. */
    private void saveMore(long at, int size, boolean small) {
        if (snapshot != null || size == 0) {
            return;
        }
        long cost = small ? 16 : 16L + size;
        if ((size == length && !small) || journalBytes + cost > Math.max(128, 2L * length)) {
            takeSnapshot();
            return;
        }
        journalBytes += cost;
        if (journal == null || journalSlots == journal.length) {
            journal = journal == null ? new long[8] : Arrays.copyOf(journal, 2 * journal.length);
        }
        long old = small ? readSmall(at, size) : saveRange(at, size);
        journal[journalSlots] = at << 4 | (small ? size : 0);
        journal[journalSlots + 1] = old;
        journalSlots += 2;
    }

    private long readSmall(long at, int size) {
        return switch (size) {
            case 1 -> segment.get(ValueLayout.JAVA_BYTE, at);
            case 2 -> segment.get(Layouts.SHORT, at);
            case 4 -> segment.get(Layouts.INT, at);
            default -> segment.get(Layouts.LONG, at);
        };
    }

    /** @return the bytes this scope's journal holds now, copies included (for tests) */
    long journaledBytes() {
        return journalBytes + (snapshot != null ? length : 0);
    }

    /** Copies a range about to be written. @return its index in {@link #ranges} */
    private int saveRange(long at, int size) {
        byte[] copy = new byte[size];
        Bytes.copyOut(segment, at, copy, 0, size);
        if (ranges == null || rangeCount == ranges.length) {
            ranges = ranges == null ? new byte[4][] : Arrays.copyOf(ranges, 2 * ranges.length);
        }
        ranges[rangeCount] = copy;
        return rangeCount++;
    }

    private void takeSnapshot() {
        byte[] copy;
        if (length <= SPARE_MAX) {
            byte[][] holder = SPARE.get();
            copy = holder[0];
            if (copy != null && copy.length >= length) {
                holder[0] = null;
            } else {
                copy = new byte[Math.max(length, 256)];
            }
            spareHolder = holder;
        } else {
            copy = new byte[length];
        }
        Bytes.copyOut(segment, base, copy, 0, length);
        snapshot = copy;
    }

    /** Forgets the snapshot, giving a small one back to its thread's holder for the next. */
    private void dropSnapshot() {
        byte[][] holder = spareHolder;
        if (holder != null) {
            if (holder[0] == null || holder[0].length < snapshot.length) {
                holder[0] = snapshot;
            }
            spareHolder = null;
        }
        snapshot = null;
    }

    private void restore(long at, int size, long old) {
        switch (size) {
            case 0 -> {
                byte[] copy = ranges[(int) old];
                Bytes.copyIn(copy, 0, segment, at, copy.length);
            }
            case 1 -> segment.set(ValueLayout.JAVA_BYTE, at, (byte) old);
            case 2 -> segment.set(Layouts.SHORT, at, (short) old);
            case 4 -> segment.set(Layouts.INT, at, (int) old);
            default -> segment.set(Layouts.LONG, at, old);
        }
    }

    private void requireOpen() {
        if (!open) {
            throw new IllegalStateException("scoped buffer used outside of its scope");
        }
    }

    private long at(int index, int size) {
        requireOpen();
        return inWindow(index, size);
    }

    /** @return the segment offset of {@code [index, index + size)}, checked to lie in the window */
    private long inWindow(int index, int size) {
        Objects.checkFromIndexSize(index, size, length);
        return base + index;
    }

    private long wat(int index, int size) {
        requireOpen(); // out of scope before read-only: the first is what a kept buffer should report
        if (!writable) {
            throw new UnsupportedOperationException("read-only buffer");
        }
        long at = inWindow(index, size);
        if (journaling) {
            save(at, size);
        }
        return at;
    }

    @Override
    public int capacity() {
        requireOpen();
        return length;
    }
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
        return segment.asSlice(wat(0, length), length); // journaled whole: anything may be written through it
    }

    @Override
    public MemorySegment writableSegment(int index, int length) {
        return segment.asSlice(wat(index, length), length); // journaled as a range
    }

    /** @return the segment of the window's block (internal fast paths) */
    public MemorySegment rawSegment() { return segment; }

    /** @return the window's offset in {@link #rawSegment()} */
    public long rawBase() { return base; }
}
