package dev.oakmap.internal.reclaim;

import dev.oakmap.DeletedMemoryAccessException;
import dev.oakmap.MemoryScheme;
import dev.oakmap.OakClosedException;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakScopedWriteBuffer;
import dev.oakmap.internal.buffer.SliceBuffer;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.BlockPool;
import dev.oakmap.internal.memory.Refs;
import dev.oakmap.internal.wait.HeldLocks;
import dev.oakmap.somar.Somar;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.util.Objects;
import java.util.function.Function;

/**
 * The public {@link Somar} over a {@link SliceManager} of its own: each method is one step of the
 * manager's protocol with a scoped buffer around the user's function.
 */
public final class SomarSlices implements Somar {
    private static final long BLOCK_SIZE = 8L << 20;
    private static final String CLOSED = "this SOMAR memory manager has been closed";

    private final BlockAllocator allocator;
    private final SliceManager slices;
    private volatile boolean closed;
    /** Closes the allocator on {@link #close()}, or once this manager is unreachable unclosed. */
    private final Cleaner.Cleanable release;

    public SomarSlices(MemoryScheme scheme, long capacityBytes) {
        Objects.requireNonNull(scheme, "scheme");
        this.allocator = new BlockAllocator(BlockPool.shared(), Math.min(BLOCK_SIZE, Math.max(4096, capacityBytes)), capacityBytes);
        this.slices = SliceManager.create(scheme, allocator, BlockAllocator.Kind.VALUE);
        if (slices.reclaims()) {
            // memory freed by slices of one size serves any size once a whole block is free; a
            // read through a stale pointer may then meet payload where its header was, which the
            // layout era fails (and read's function runs on such bytes only to be judged after)
            slices.reuseWholeBlocks();
        }
        this.release = allocator.closeWhenUnreachable(this);
    }

    @Override
    public long allocate(int length) {
        checkOpen();
        if (length < 0 || length > slices.maxLength()) {
            throw new IllegalArgumentException("length " + length + " outside [0, " + slices.maxLength() + "]");
        }
        try {
            return slices.allocate(length);
        } catch (IllegalStateException e) { // closed meanwhile: a block's arena, or the allocator
            throw closedOr(e);
        }
    }

    @Override
    public <R> R read(long pointer, Function<? super OakScopedReadBuffer, ? extends R> reader) {
        Objects.requireNonNull(reader, "reader");
        checkOpen();
        checkPointer(pointer);
        SliceBuffer b = new SliceBuffer();
        try {
            while (true) {
                long t = slices.readBegin(pointer);
                if (t == SliceManager.GONE) {
                    throw deleted();
                }
                R r = null;
                Throwable failure = null;
                b.open(slices.segment(pointer), slices.dataOffset(pointer), slices.length(pointer), false);
                // a write of the same slice from reader must fail at once, not wait for the read
                // lock (lock-based) or spoil every retry of the read (optimistic): see HeldLocks
                HeldLocks held = HeldLocks.hold(pointer);
                try {
                    r = reader.apply(b);
                } catch (Throwable e) {
                    failure = e; // judged after validation
                } finally {
                    held.release();
                    b.close();
                }
                if (slices.readEnd(pointer, t)) {
                    if (failure != null) {
                        throw SliceManager.rethrow(failure);
                    }
                    return r;
                }
            }
        } catch (IllegalStateException e) {
            throw closedOr(e);
        }
    }

    @Override
    public <R> R write(long pointer, Function<? super OakScopedWriteBuffer, ? extends R> writer) {
        Objects.requireNonNull(writer, "writer");
        checkOpen();
        checkPointer(pointer);
        try {
            long h = slices.lockWrite(pointer);
            if (h == SliceManager.GONE) {
                throw deleted();
            }
            SliceBuffer b = new SliceBuffer(slices.segment(pointer), slices.dataOffset(pointer), slices.length(pointer), true);
            HeldLocks held = HeldLocks.hold(pointer); // a nested access of the slice fails instead of waiting for itself
            try {
                return writer.apply(b);
            } finally {
                held.release();
                b.close();
                slices.unlock(pointer, h);
            }
        } catch (IllegalStateException e) {
            throw closedOr(e);
        }
    }

    @Override
    public boolean delete(long pointer) {
        checkOpen();
        checkPointer(pointer);
        try {
            return slices.delete(pointer);
        } catch (IllegalStateException e) {
            throw closedOr(e);
        }
    }

    @Override
    public <R> R writePrivate(long pointer, Function<? super OakScopedWriteBuffer, ? extends R> writer) {
        Objects.requireNonNull(writer, "writer");
        checkOpen();
        checkPrivate(pointer);
        try {
            SliceBuffer b = new SliceBuffer(slices.segment(pointer), slices.dataOffset(pointer), slices.length(pointer), true);
            try {
                return writer.apply(b);
            } finally {
                b.close();
            }
        } catch (IllegalStateException e) {
            throw closedOr(e);
        }
    }

    @Override
    public void deletePrivate(long pointer) {
        checkOpen();
        checkPrivate(pointer);
        try {
            slices.discard(pointer);
        } catch (IllegalStateException e) {
            throw closedOr(e);
        }
    }

    @Override
    public int length(long pointer) {
        return read(pointer, OakScopedReadBuffer::capacity);
    }

    /** For tests: the allocator, which does not keep this manager reachable. */
    public BlockAllocator allocator() {
        return allocator;
    }

    @Override public long memoryUsed() { return allocator.usedBytes(); }

    @Override public long memoryReserved() { return allocator.reservedBytes(); }

    @Override
    public synchronized void close() {
        closed = true;
        release.clean(); // closes the allocator
    }

    private void checkOpen() {
        if (closed) {
            throw new OakClosedException(CLOSED, null);
        }
    }

    /**
     * Rejects a pointer that this manager cannot have handed out: one whose block is not one of
     * its own (another manager's pointer, or a made-up number), or whose header would lie past the
     * end of its block. Such a pointer would otherwise fail on a missing segment, or worse.
     */
    private void checkPointer(long pointer) {
        MemorySegment segment = allocator.segment(pointer);
        if (segment == null || Refs.offset(pointer) + slices.headerBytes() > segment.byteSize()) {
            throw new IllegalArgumentException("not a pointer of this SOMAR memory manager: 0x" + Long.toHexString(pointer));
        }
    }

    /**
     * {@link #checkPointer}, and rejects a private slice already given back (or deleted): given
     * back again it would be on the free lists twice, and two later allocations would share it.
     */
    private void checkPrivate(long pointer) {
        checkPointer(pointer);
        boolean live;
        try {
            live = slices.isLive(pointer);
        } catch (IllegalStateException e) {
            throw closedOr(e);
        }
        if (!live) {
            throw deleted();
        }
    }

    private RuntimeException closedOr(IllegalStateException e) {
        return closed || allocator.isClosed() ? new OakClosedException(CLOSED, e) : e;
    }

    private static DeletedMemoryAccessException deleted() {
        return new DeletedMemoryAccessException("the slice was deleted");
    }
}
