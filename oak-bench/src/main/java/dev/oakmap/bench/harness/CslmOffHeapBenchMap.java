package dev.oakmap.bench.harness;

import dev.oakmap.DeletedMemoryAccessException;
import dev.oakmap.MemoryScheme;
import dev.oakmap.OakMap;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.somar.Somar;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Comparator;
import java.util.Iterator;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

/**
 * The Oak papers' <em>CSLM-OffHeap</em>: a {@link ConcurrentSkipListMap} over small on-heap cells,
 * each referencing an off-heap key slice and an off-heap value slice allocated from a
 * {@link Somar} under {@link MemoryScheme#NOVA} (Oak's memory manager, offered to other data
 * structures). It isolates what moving the data off-heap does from Oak's own algorithms: the index
 * is the JDK skiplist, only the bytes live off-heap.
 *
 * <h2>Layout</h2>
 * The skiplist maps each {@link Cell} to itself. A cell holds two safe pointers: its key slice
 * (final) and its value slice (replaced by nothing but removal, which sets it to {@link #REMOVED}).
 * Lookups pass the harness's {@code byte[]} key as the probe; the comparator compares a probe with a
 * cell by reading the cell's key off-heap, and two cells (an insertion) by reading both keys
 * off-heap, one after the other (SOMAR calls do not nest: the first key is copied into a per-thread
 * scratch array). That extra indirection on every comparison is the price the papers measured.
 *
 * <h2>Operations</h2>
 * <ul>
 * <li>put-if-absent: allocate and privately write the key and value slices, then
 *     {@code putIfAbsent(cell, cell)}; a lost race gives the private slices back.
 * <li>put and update: write the value slice in place, under its write lock, after checking inside
 *     the write that the cell still holds it (so a write never lands in a removed value).
 * <li>remove: CAS the cell's value pointer to {@link #REMOVED} (the linearization point), remove the
 *     cell from the skiplist, then delete the value and key slices.
 * <li>get: read the value slice (the first 8 bytes, or a copy of all of it).
 * </ul>
 * A key slice is deleted only after its cell has left the skiplist, but a thread already walking
 * past the cell may still compare with it: the comparator then throws
 * {@link DeletedMemoryAccessException} out of the skiplist, which leaves the skiplist consistent
 * (its own size counter may drift, so this class keeps its own), and the operation retries. The
 * same happens to a value read that loses to a removal.
 */
public final class CslmOffHeapBenchMap implements BenchMap {

    /** The value pointer of a removed cell. No safe pointer is 0. */
    private static final long REMOVED = 0L;
    /** Off-heap capacity when the harness gives none. */
    private static final long DEFAULT_CAPACITY = 16L << 30;

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle VALUE;

    static {
        try {
            VALUE = MethodHandles.lookup().findVarHandle(Cell.class, "value", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** A mapping: the skiplist's key and value at once. */
    static final class Cell {
        final long key;
        volatile long value;
        /** Set by the inserting thread once the cell is in the skiplist (its slices are then no longer private). */
        boolean published;

        Cell(long key, long value) {
            this.key = key;
            this.value = value;
        }
    }

    /**
     * A thread's comparison state, so that comparisons allocate nothing: the key that
     * {@link #apply} compares slices with, and a copy of one key for cell-to-cell comparisons.
     */
    private static final class Comparing implements Function<OakScopedReadBuffer, Integer> {
        byte[] key;
        int keyLength;
        byte[] copy = new byte[128];
        int copyLength;
        /** Copies a key slice into {@link #copy} (SOMAR reads may run more than once: idempotent). */
        final Function<OakScopedReadBuffer, Comparing> toCopy = b -> {
            int len = b.capacity();
            if (copy.length < len) {
                copy = new byte[Math.max(len, 2 * copy.length)];
            }
            b.getBytes(0, copy, 0, len);
            copyLength = len;
            return this;
        };

        @Override
        public Integer apply(OakScopedReadBuffer b) {
            return compareSlice(b, key, keyLength);
        }
    }

    private final Somar memory;
    private final ThreadLocal<Comparing> comparing = ThreadLocal.withInitial(Comparing::new);
    private final LongAdder count = new LongAdder();
    private ConcurrentSkipListMap<Object, Cell> map;
    private NavigableMap<Object, Cell> descending;

    /**
     * Public (unlike the other adapters) so that the SOMAR tests in {@code dev.oakmap.bench.somar}
     * can check it.
     *
     * @param capacity off-heap capacity in bytes (0: 16 GiB)
     */
    public CslmOffHeapBenchMap(long capacity) {
        this.memory = Somar.create(MemoryScheme.NOVA, capacity > 0 ? capacity : DEFAULT_CAPACITY);
        Comparator<Object> cmp = this::compare;
        this.map = new ConcurrentSkipListMap<>(cmp);
        this.descending = map.descendingMap();
    }

    /** @return the version string of the reports */
    public static String version() {
        String v = OakMap.class.getPackage().getImplementationVersion();
        return "JDK " + System.getProperty("java.runtime.version") + " skiplist over oak-core "
                + (v != null ? v : "0.1.0-SNAPSHOT (this tree)") + " Somar (NOVA)";
    }

    // ------------------------------------------------------------------ comparisons

    /**
     * Orders probes ({@code byte[]}) and cells (off-heap keys) as unsigned bytes. May throw
     * {@link DeletedMemoryAccessException} if a cell's key was deleted meanwhile.
     */
    private int compare(Object a, Object b) {
        if (a instanceof byte[] pa && b instanceof byte[] pb) {
            return java.util.Arrays.compareUnsigned(pa, pb);
        }
        Comparing t = comparing.get();
        if (a instanceof byte[] pa) {
            t.key = pa;
            t.keyLength = pa.length;
            return -memory.read(((Cell) b).key, t);
        }
        Cell ca = (Cell) a;
        if (b instanceof byte[] pb) {
            t.key = pb;
            t.keyLength = pb.length;
            return memory.read(ca.key, t);
        }
        memory.read(ca.key, t.toCopy); // first key: copied out
        t.key = t.copy;
        t.keyLength = t.copyLength;
        return -memory.read(((Cell) b).key, t); // second key: compared in place
    }

    private static Integer compareSlice(OakScopedReadBuffer b, byte[] key, int keyLength) {
        int len = b.capacity();
        int n = Math.min(len, keyLength);
        int i = 0;
        for (; i + 8 <= n; i += 8) {
            long x = b.getLong(i);
            long y = (long) LONGS.get(key, i);
            if (x != y) {
                return Long.compareUnsigned(x, y);
            }
        }
        for (; i < n; i++) {
            int c = Byte.compareUnsigned(b.get(i), key[i]);
            if (c != 0) {
                return Integer.signum(c);
            }
        }
        return Integer.compare(len, keyLength);
    }

    // ------------------------------------------------------------------ operations

    private long newSlice(byte[] bytes) {
        long p = memory.allocate(bytes.length);
        memory.writePrivate(p, b -> b.putBytes(0, bytes, 0, bytes.length));
        return p;
    }

    /**
     * Removes a cell whose value is REMOVED from the skiplist (helping its remover), tolerating
     * comparisons with deleted keys. The skiplist compares {@code c} itself with its nodes, so if
     * {@code c}'s own key is deleted every attempt would fail; but a key is deleted only after its
     * remover's {@code map.remove(c, c)} returned, so {@code c} is out of the skiplist by then.
     * Other cells' deleted keys are met only in races: the skiplist skips nodes it knows removed.
     */
    private void unlink(Cell c) {
        while (true) {
            try {
                map.remove(c, c);
                return;
            } catch (DeletedMemoryAccessException comparedWithADeletedKey) {
                try {
                    memory.read(c.key, b -> null);
                } catch (DeletedMemoryAccessException ownKeyDeleted) {
                    return; // its remover has taken it out already
                }
                // another cell's key: try again
            }
        }
    }

    /** @return the live cell of {@code key}, helping removed cells out, or null */
    private Cell lookup(byte[] key) {
        while (true) {
            try {
                Cell c = map.get(key);
                if (c != null && c.value == REMOVED) {
                    unlink(c);
                    continue;
                }
                return c;
            } catch (DeletedMemoryAccessException comparedWithADeletedKey) {
                // retry
            }
        }
    }

    private boolean insertIfAbsent(byte[] key, byte[] value) {
        Cell fresh = null;
        boolean maybeInserted = false; // a putIfAbsent of `fresh` threw: it may or may not have inserted it
        try {
            while (true) {
                Cell c = lookup(key);
                if (maybeInserted) {
                    // The lookup comes first: had `fresh` been inserted and not found by it, its
                    // value was REMOVED by then (a removal CASes the value before unlinking).
                    if (c == fresh || fresh.value == REMOVED) {
                        return inserted(fresh); // it was inserted (and maybe removed since, by its remover)
                    }
                    maybeInserted = false; // never inserted: still private
                }
                if (c != null) {
                    return false;
                }
                if (fresh == null) {
                    long k = newSlice(key);
                    long v;
                    try {
                        v = newSlice(value);
                    } catch (RuntimeException | Error e) {
                        memory.deletePrivate(k);
                        throw e;
                    }
                    fresh = new Cell(k, v);
                }
                try {
                    Cell prev = map.putIfAbsent(fresh, fresh);
                    if (prev == null || prev == fresh) {
                        return inserted(fresh);
                    }
                    if (prev.value == REMOVED) {
                        unlink(prev);
                        continue;
                    }
                    return false;
                } catch (DeletedMemoryAccessException comparedWithADeletedKey) {
                    maybeInserted = true; // the lookup above tells
                }
            }
        } finally {
            if (fresh != null && !fresh.published) {
                memory.deletePrivate(fresh.key); // never reachable by another thread
                memory.deletePrivate(fresh.value);
            }
        }
    }

    private boolean inserted(Cell c) {
        c.published = true;
        count.increment();
        return true;
    }

    /**
     * Writes the value of a present key in place with {@code writer}, or inserts the template.
     *
     * @return 1
     */
    private long writeOrInsert(byte[] key, byte[] template, WriteFn writer) {
        while (true) {
            Cell c = lookup(key);
            if (c == null) {
                if (insertIfAbsent(key, template)) {
                    return 1;
                }
                continue;
            }
            long v = c.value;
            if (v == REMOVED) {
                continue;
            }
            try {
                Boolean done = memory.write(v, b -> {
                    if (c.value != v) {
                        return null; // removed before we got the lock: do not write
                    }
                    writer.apply(b);
                    return Boolean.TRUE;
                });
                if (done != null) {
                    return 1;
                }
            } catch (DeletedMemoryAccessException removedMeanwhile) {
                // look again
            }
        }
    }

    /** An in-place modification of a value slice. */
    private interface WriteFn {
        void apply(dev.oakmap.OakScopedWriteBuffer b);
    }

    private long remove(byte[] key) {
        while (true) {
            Cell c = lookup(key);
            if (c == null) {
                return 0;
            }
            long v = c.value;
            if (v != REMOVED && VALUE.compareAndSet(c, v, REMOVED)) { // the linearization point
                unlink(c);
                count.decrement();
                memory.delete(v);
                memory.delete(c.key); // after the cell left the skiplist
                return 1;
            }
        }
    }

    @Override
    public Session newSession(byte[] valueTemplate) {
        return new Session() {
            private final long[] first8 = new long[1];
            private final Function<OakScopedReadBuffer, long[]> readFirst8 = b -> {
                first8[0] = b.getLong(0);
                return first8;
            };
            private final Function<OakScopedReadBuffer, byte[]> copy = b -> {
                byte[] a = new byte[b.capacity()];
                b.getBytes(0, a, 0, a.length);
                return a;
            };
            private final WriteFn overwrite = b -> b.putBytes(0, valueTemplate, 0, valueTemplate.length);
            private final WriteFn increment = b -> b.putLong(0, b.getLong(0) + 1);

            @Override
            public boolean putIfAbsent(byte[] key) {
                return insertIfAbsent(key, valueTemplate);
            }

            @Override
            public long put(byte[] key) {
                return writeOrInsert(key, valueTemplate, overwrite);
            }

            @Override
            public long update(byte[] key) {
                return writeOrInsert(key, valueTemplate, increment);
            }

            @Override
            public long get(byte[] key) {
                long[] r = readValue(key, readFirst8);
                return r == null ? 0 : r[0];
            }

            @Override
            public long getCopy(byte[] key) {
                byte[] v = readValue(key, copy);
                return v == null ? 0 : v.length;
            }

            private <R> R readValue(byte[] key, Function<OakScopedReadBuffer, R> reader) {
                while (true) {
                    Cell c = lookup(key);
                    if (c == null) {
                        return null;
                    }
                    long v = c.value;
                    if (v == REMOVED) {
                        continue;
                    }
                    try {
                        return memory.read(v, reader);
                    } catch (DeletedMemoryAccessException removedMeanwhile) {
                        // look again
                    }
                }
            }

            @Override
            public long remove(byte[] key) {
                return CslmOffHeapBenchMap.this.remove(key);
            }

            @Override
            public long scan(byte[] from, int length, boolean desc, boolean stream) {
                NavigableMap<Object, Cell> view = desc ? descending : map;
                long sum = 0;
                int n = 0;
                // A deleted key met while positioning or stepping (only when removals run
                // concurrently, which no scan workload does) restarts the pass; n keeps counting.
                while (true) {
                    try {
                        for (Iterator<Cell> it = view.tailMap(from, true).values().iterator(); it.hasNext(); ) {
                            sum += firstBytes(it.next());
                            if (++n == length) {
                                return sum;
                            }
                        }
                        for (Iterator<Cell> it = view.values().iterator(); it.hasNext(); ) {
                            sum += firstBytes(it.next());
                            if (++n == length) {
                                return sum;
                            }
                        }
                        return sum;
                    } catch (DeletedMemoryAccessException removedDuringTheScan) {
                        // restart
                    }
                }
            }

            private long firstBytes(Cell c) {
                long v = c.value;
                if (v == REMOVED) {
                    return 0;
                }
                try {
                    byte k = memory.read(c.key, b -> b.get(0));
                    byte x = memory.read(v, b -> b.get(0));
                    return k + x;
                } catch (DeletedMemoryAccessException removedDuringTheScan) {
                    return 0;
                }
            }
        };
    }

    @Override
    public long size() {
        return count.sum();
    }

    @Override
    public long offHeapUsed() {
        return memory.memoryUsed();
    }

    @Override
    public long offHeapReserved() {
        return memory.memoryReserved();
    }

    @Override
    public void close() {
        map = null; // drop the cells at once (clear() would allocate on a full heap)
        descending = null;
        memory.close();
    }
}
