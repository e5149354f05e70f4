package dev.oakmap.internal.memory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The process-wide source of off-heap {@link Block}s, shared by all maps.
 *
 * <p>A map takes blocks as it grows and hands them back when it is closed; closing a map gives its
 * memory back to the operating system (the original implementation kept blocks forever), at once
 * or, for the shared pool, after a short while (below). Block ids are recycled: the id table is a
 * fixed array indexed by id, so resolving a reference to its block is one array load.
 *
 * <p><b>Warm blocks</b> (the shared pool only, whose blocks lie in slots of the block region, see
 * {@link NativeMemory}). The pages of a block released by {@code close()} (not those of a map
 * dropped unclosed, see {@code BlockAllocator#close}) stay committed in its slot, up to
 * {@code -Doak.warmBlocks} bytes in all (default 1g; 0 turns this off) and for at most
 * {@code -Doak.warmBlocksMillis} (default 2,000 ms: long enough for a map built right after
 * another is closed, short enough that a closed map's memory is soon back with the OS), and the
 * next block asked for of that size, or smaller, is made over them, zeroed, instead of being
 * mapped afresh. A daemon thread started with the pool, the keeper, zeroes warm blocks in the
 * background, newest first; a map that takes one before that zeroes it itself. Why: getting fresh
 * pages from the kernel is the main cost of ingesting large values (values of 10 KB: most of the
 * time went to faulting pages in), and a process that closes a map and builds the next one (an
 * incremental index per segment, a benchmark's warm-up) would pay it again for every map, where a
 * heap-based map reuses heap the JVM keeps committed. Zeroing committed pages costs a fraction of
 * faulting them in: an ad-hoc driver that ingests 50,000 pairs of 100 B keys and 10 KB values into
 * one new map after another, closing each, on one core, took 240-400 ms a map from the third map
 * on, against 470-600 ms with {@code -Doak.warmBlocks=0} (300,000 pairs of 1 KB values: 410-430
 * against 435-660 ms). A warm block keeps its id, so it is in no one's way: the released block's
 * arena is closed (stale readers of it fail as for any released block), and the new block is a
 * new segment over the slot. The keeper gives each warm block back once it has lingered its time;
 * a release beyond the byte limit gives back the oldest at once.
 *
 * <p>Thread-safe. Reservation accounting ({@link #reservedBytes()}) is a single atomic counter;
 * the warm blocks and the ids are guarded by the pool's monitor.
 */
public final class BlockPool {

    private static final BlockPool SHARED = new BlockPool(NativeMemory.regionAvailable(),
            bytesProperty("oak.warmBlocks", 1L << 30), Long.getLong("oak.warmBlocksMillis", 2_000));

    /** @return the pool shared by every map of this process */
    public static BlockPool shared() {
        return SHARED;
    }

    private final AtomicReferenceArray<Block> blocks = new AtomicReferenceArray<>(Refs.MAX_BLOCK_ID + 1);
    /** Ids handed out and not yet given back; guarded by this. */
    private final boolean[] taken = new boolean[Refs.MAX_BLOCK_ID + 1];
    private final AtomicLong reserved = new AtomicLong();
    private int nextIdHint = 1; // guarded by this
    /**
     * Whether blocks go into their ids' slots of the block region ({@link NativeMemory}). Only
     * one pool may: slots are indexed by id, and ids are unique only within a pool.
     */
    private final boolean slotted;

    /** A released block whose pages stay committed in its slot, its id still taken. */
    private static final class Warm {
        final int id;
        final long size;
        /** When it was released ({@link System#nanoTime}). */
        final long since;
        /** Its pages are all zero (the keeper zeroed them). Guarded by the pool. */
        boolean zeroed;
        /** The keeper is zeroing it now: nobody takes it or gives it back meanwhile. Guarded by the pool. */
        boolean zeroing;

        Warm(int id, long size, long since) {
            this.id = id;
            this.size = size;
            this.since = since;
        }
    }

    /** Warm blocks, oldest first; guarded by this. */
    private final ArrayDeque<Warm> warm = new ArrayDeque<>();
    private long warmBytes; // guarded by this
    /**
     * The thread that zeroes warm blocks and gives them back in time, or null where blocks are not
     * kept warm. One per pool, started with it and waiting while there is nothing to do, so that
     * no map operation (a {@code close()}) starts a thread in the user's code.
     */
    private final Thread keeper;
    /** At most this many bytes of warm blocks; 0 where blocks are not kept warm. Guarded by this. */
    private long warmLimit;
    /** How long a warm block is kept. Guarded by this. */
    private long warmNanos;
    /** Whether the keeper zeroes warm blocks (tests turn it off to see what a slot holds). Guarded by this. */
    private boolean zeroesInBackground = true;

    /** A pool whose blocks are mapped one by one (for tests: only the shared pool uses the region). */
    BlockPool() {
        this(false, 0, 0);
    }

    private BlockPool(boolean slotted, long warmLimit, long warmMillis) {
        this.slotted = slotted;
        this.keeper = slotted ? startKeeper() : null;
        setWarmLimits(warmLimit, warmMillis);
    }

    /**
     * Sets how many bytes of released blocks are kept warm and for how long (a limit of 0 keeps
     * none), for the warm blocks already kept too: the oldest beyond the new limit are given back
     * now, the others once they have lingered the new time since their release. Pools whose blocks
     * are not in the region keep none whatever this says.
     */
    void setWarmLimits(long bytes, long millis) {
        synchronized (this) {
            warmLimit = keeper != null && millis > 0 ? Math.max(0, bytes) : 0;
            warmNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(0, millis));
            notifyAll(); // the keeper waits for the new time
        }
        keepWarm(null);
    }

    /** For tests: whether the keeper zeroes warm blocks in the background (if not, takers do). */
    synchronized void zeroInBackground(boolean on) {
        zeroesInBackground = on;
        notifyAll(); // the keeper looks again
    }

    /** @return bytes of warm blocks whose pages the keeper has zeroed */
    synchronized long warmZeroedBytes() {
        long n = 0;
        for (Warm w : warm) {
            n += w.zeroed ? w.size : 0;
        }
        return n;
    }

    /** @return the limits {@link #setWarmLimits} takes: bytes and milliseconds */
    synchronized long[] warmLimits() {
        return new long[] {warmLimit, TimeUnit.NANOSECONDS.toMillis(warmNanos)};
    }

    /**
     * @return system property {@code name} in bytes ({@code 512m}, {@code 1g}, {@code 65536}), or
     *     {@code dflt} if it is unset or unreadable
     */
    private static long bytesProperty(String name, long dflt) {
        String v = System.getProperty(name);
        if (v == null || v.isBlank()) {
            return dflt;
        }
        v = v.trim().toLowerCase(Locale.ROOT);
        int shift = switch (v.charAt(v.length() - 1)) {
            case 'k' -> 10;
            case 'm' -> 20;
            case 'g' -> 30;
            default -> 0;
        };
        try {
            return Long.parseLong(shift == 0 ? v : v.substring(0, v.length() - 1)) << shift;
        } catch (NumberFormatException e) {
            return dflt; // as Long.getLong does with a value it cannot read
        }
    }

    /**
     * @return true if this pool's blocks lie in the block region, so that
     *     {@link NativeMemory#touchRegion} may read them
     */
    boolean slotted() {
        return slotted;
    }

    /**
     * Maps a new block. Only the choice of an id holds the pool's lock: mapping and faulting in
     * the pages can take a hundred milliseconds on a lazily backed host, and a map's background
     * thread maps its spare block while that map's writers (or other maps) may need one too.
     *
     * @param size bytes, at most {@link Refs#MAX_BLOCK_SIZE}
     * @param populate fault the pages in now rather than on first use
     * @param huge use huge pages rather than small ones (see {@link Block})
     * @throws OutOfMemoryError if the OS refuses the memory or all block ids are taken
     */
    public Block allocate(long size, boolean populate, boolean huge) {
        if (size <= 0 || size > Refs.MAX_BLOCK_SIZE) {
            throw new IllegalArgumentException("block size out of range: " + size);
        }
        Block block = takeWarm(size);
        if (block == null) {
            int id = takeId();
            try {
                block = new Block(id, size, populate, huge, slotted);
            } catch (RuntimeException | Error e) {
                giveBackId(id);
                throw e;
            }
        }
        blocks.set(block.id, block); // volatile: the block is visible to block(id) before its id is used
        reserved.addAndGet(size);
        return block;
    }

    /** Waits for a dropped map's ids at most this many times, each twice as long as the one before, from 1 ms. */
    private static final int ID_WAITS = 10;

    /**
     * Takes an id. When every id is taken, some may belong to maps dropped without
     * {@code close()}, which give their blocks back only once the collector finds them unreachable
     * (their cleaners, see {@code BlockAllocator#closeWhenUnreachable}): a test suite that builds a
     * map per test, or Lincheck, which builds one per invocation, runs out of ids after a few
     * thousand maps before any collection. So, as the JDK does when direct buffers run short, this
     * asks for a collection and then waits for ids to come back, about a second in all, before
     * giving up.
     *
     * @return a free id, taken
     * @throws OutOfMemoryError if none came back
     */
    private int takeId() {
        int id = tryTakeId();
        if (id != NO_ID) {
            return id;
        }
        System.gc();
        boolean interrupted = false;
        try {
            for (int wait = 0; wait < ID_WAITS; wait++) {
                try {
                    Thread.sleep(1L << wait);
                } catch (InterruptedException e) {
                    interrupted = true; // keep waiting: the caller is mid-allocation; the flag is set again below
                }
                id = tryTakeId();
                if (id != NO_ID) {
                    return id;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        throw new OutOfMemoryError(
                "all " + Refs.MAX_BLOCK_ID + " off-heap block ids are in use (close maps no longer used)");
    }

    private static final int NO_ID = 0;

    /**
     * @return a free id, or the id of the oldest warm block, given back first; taken; or
     *     {@link #NO_ID} if there is neither
     */
    private synchronized int tryTakeId() {
        for (int n = 0; n < Refs.MAX_BLOCK_ID; n++) {
            int id = nextIdHint;
            nextIdHint = id == Refs.MAX_BLOCK_ID ? 1 : id + 1;
            if (!taken[id]) {
                taken[id] = true;
                return id;
            }
        }
        Warm w;
        while ((w = removeOldestIdle()) == null && !warm.isEmpty()) {
            awaitZeroing();
        }
        if (w != null) { // warm blocks never stand in the way of a block ids are short for
            NativeMemory.discardSlot(w.id, 0, w.size); // the id's next block starts zeroed
            return w.id;
        }
        return NO_ID;
    }

    private synchronized void giveBackId(int id) {
        taken[id] = false;
    }

    /**
     * Ends {@code block}'s life: its segment fails from now on. Its pages are given back to the
     * OS and its id made available again, or it is kept warm (see the class comment).
     */
    public void release(Block block) {
        release(block, true);
    }

    /**
     * As {@link #release(Block)}; with {@code warmAllowed} false the block's pages go back to the
     * OS at once, whatever the warm limits say (a map dropped unclosed, see
     * {@code BlockAllocator#close}).
     */
    public void release(Block block, boolean warmAllowed) {
        if (blocks.compareAndSet(block.id, block, null)) {
            reserved.addAndGet(-block.size());
            if (warmAllowed && block.inSlot() && mayKeepWarm(block.size())) {
                block.freeKeepingPages();
                keepWarm(new Warm(block.id, block.size(), System.nanoTime()));
            } else {
                block.free();
                giveBackId(block.id); // only now: the id's next block comes after this one is gone
            }
        }
    }

    private synchronized boolean mayKeepWarm(long size) {
        return size <= warmLimit;
    }

    /**
     * Adds {@code w} (unless null) to the warm blocks, giving back the oldest beyond the limit, and
     * wakes the keeper to zero it.
     */
    private void keepWarm(Warm w) {
        List<Warm> over = new ArrayList<>();
        synchronized (this) {
            if (w != null) {
                warm.addLast(w);
                warmBytes += w.size;
            }
            Warm o;
            while (warmBytes > warmLimit && (o = removeOldestIdle()) != null) {
                over.add(o); // one being zeroed stays over the limit until the keeper's next look
            }
            notifyAll(); // the keeper looks again
        }
        over.forEach(this::giveBack);
    }

    /**
     * @return a zeroed block of {@code size} bytes over a warm block's pages (the newest of that
     *     size, zeroed ones first, else the smallest larger one), or null if none fits. Zeroes the
     *     pages here if the keeper has not yet.
     */
    private Block takeWarm(long size) {
        Warm w;
        synchronized (this) {
            while (true) {
                if (warm.isEmpty()) {
                    return null;
                }
                w = bestFit(size, false);
                if (w != null) {
                    break;
                }
                if (bestFit(size, true) == null) {
                    return null;
                }
                awaitZeroing(); // the only fit is being zeroed: a few milliseconds
            }
            warm.remove(w);
            warmBytes -= w.size;
        }
        try {
            return Block.overWarmSlot(w.id, size, w.size, w.zeroed);
        } catch (RuntimeException | Error e) {
            giveBack(w);
            throw e;
        }
    }

    /**
     * @param zeroingToo whether a block the keeper is zeroing may be the answer
     * @return the newest warm block of exactly {@code size} bytes (zeroed before not), else the
     *     smallest larger one, or null. Call holding the lock.
     */
    private Warm bestFit(long size, boolean zeroingToo) {
        Warm exact = null, larger = null;
        for (var it = warm.descendingIterator(); it.hasNext(); ) {
            Warm c = it.next();
            if (c.zeroing && !zeroingToo) {
                continue;
            }
            if (c.size == size) {
                if (exact == null || (c.zeroed && !exact.zeroed)) {
                    exact = c;
                }
            } else if (c.size > size && (larger == null || c.size < larger.size)) {
                larger = c;
            }
        }
        return exact != null ? exact : larger;
    }

    /** Waits until the keeper ends a zeroing. Call holding the lock. */
    private void awaitZeroing() {
        boolean interrupted = false;
        try {
            wait();
        } catch (InterruptedException e) {
            interrupted = true; // the zeroing ends soon; keep the interrupt for the caller
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** @return the oldest warm block not being zeroed, removed, or null. Call holding the lock. */
    private Warm removeOldestIdle() {
        for (var it = warm.iterator(); it.hasNext(); ) {
            Warm w = it.next();
            if (!w.zeroing) {
                it.remove();
                warmBytes -= w.size;
                return w;
            }
        }
        return null;
    }

    /** Gives a warm block's pages back to the OS and its id to the pool. */
    private void giveBack(Warm w) {
        NativeMemory.discardSlot(w.id, 0, w.size);
        giveBackId(w.id);
    }

    /** @return the keeper (see {@link #keep}), started; null if no thread could be had (then nothing is kept warm) */
    private Thread startKeeper() {
        try {
            return Thread.ofPlatform().daemon().name("oak-warm-blocks").start(this::keep);
        } catch (Throwable t) {
            return null;
        }
    }

    /**
     * The keeper's loop: gives back each warm block when its time is up, and zeroes the others,
     * newest first, so that the map that takes one need not (zeroing 64 MiB takes milliseconds, on
     * a core the taker is likely not using); otherwise waits on the pool's monitor, which a release
     * and new limits notify.
     */
    private void keep() {
        while (true) {
            List<Warm> expired = new ArrayList<>();
            Warm dirty;
            synchronized (this) {
                while (true) {
                    long wait = expire(expired);
                    dirty = expired.isEmpty() ? newestDirty() : null;
                    if (!expired.isEmpty() || dirty != null) {
                        break;
                    }
                    try {
                        if (wait == 0) {
                            wait();
                        } else {
                            TimeUnit.NANOSECONDS.timedWait(this, wait);
                        }
                    } catch (InterruptedException e) {
                        return; // nobody interrupts the keeper but to end it
                    }
                }
                if (dirty != null) {
                    dirty.zeroing = true;
                }
            }
            expired.forEach(this::giveBack);
            if (dirty != null) {
                zero(dirty);
            }
        }
    }

    /**
     * Moves the warm blocks whose time is up into {@code expired}. Call holding the lock, from the
     * keeper (so that none is being zeroed).
     *
     * @return nanoseconds until the next one's time is up, or 0 if none is left
     */
    private long expire(List<Warm> expired) {
        long now = System.nanoTime();
        for (var it = warm.iterator(); it.hasNext(); ) { // oldest first: stop at the first in time
            Warm w = it.next();
            if (now - w.since < warmNanos) {
                return warmNanos - (now - w.since);
            }
            it.remove();
            warmBytes -= w.size;
            expired.add(w);
        }
        return 0;
    }

    /** @return the newest warm block not zeroed, or null (or if the keeper is told not to zero). Call holding the lock. */
    private Warm newestDirty() {
        for (var it = warm.descendingIterator(); zeroesInBackground && it.hasNext(); ) {
            Warm w = it.next();
            if (!w.zeroed) {
                return w;
            }
        }
        return null;
    }

    /** Zeroes a warm block's pages, which the keeper marked as being zeroed, then marks them zeroed. */
    private void zero(Warm w) {
        boolean done = false;
        try {
            NativeMemory.zeroSlot(w.id, w.size);
            done = true;
        } finally {
            synchronized (this) { // the monitor orders the zeros before any taker's use of the pages
                w.zeroing = false;
                w.zeroed = done; // if not, the taker zeroes them
                notifyAll();
            }
        }
    }

    /** Gives every warm block back now (for tests, and for measuring a pool without them). */
    public void trimWarm() {
        List<Warm> all = new ArrayList<>();
        synchronized (this) {
            while (!warm.isEmpty()) {
                Warm w = removeOldestIdle();
                if (w == null) {
                    awaitZeroing();
                } else {
                    all.add(w);
                }
            }
        }
        all.forEach(this::giveBack);
    }

    /** @return bytes of released blocks kept committed for reuse (see the class comment) */
    public synchronized long warmBytes() {
        return warmBytes;
    }

    /** @return the block with this id; it must be live */
    public Block block(int id) {
        return blocks.get(id);
    }

    /** @return bytes currently mapped by this pool for all maps */
    public long reservedBytes() {
        return reserved.get();
    }
}
