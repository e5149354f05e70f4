package dev.oakmap.internal.map;

import dev.oakmap.MemoryScheme;
import dev.oakmap.OakClosedException;
import dev.oakmap.OakComparator;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakScopedWriteBuffer;
import dev.oakmap.OakSerializer;
import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.internal.buffer.Codec;
import dev.oakmap.internal.buffer.SliceBuffer;
import dev.oakmap.internal.chunk.Chunk;
import dev.oakmap.internal.chunk.KeyOps;
import dev.oakmap.internal.chunk.StaleKeyException;
import dev.oakmap.internal.index.ChunkIndex;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.BlockPool;
import dev.oakmap.internal.memory.Refs;
import dev.oakmap.internal.reclaim.SliceManager;
import dev.oakmap.internal.wait.HeldLocks;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongPredicate;

/**
 * The map algorithm: Oak's get, doPut, doIfPresent and scans over chunks (see the Oak paper,
 * §4, Algorithms 1-3), on top of the chunk list ({@link Chunk}), the index ({@link ChunkIndex}),
 * the rebalancer ({@link Rebalancer}) and the value slices ({@link SliceManager}).
 *
 * <h2>Presence</h2>
 * A key is present iff some linked entry holds it and that entry's value reference is live (its
 * header has the reference's version and no DELETED bit). An entry whose value was removed keeps
 * its stale reference until an insertion replaces it (CAS from the stale reference) or a
 * rebalance drops it, so removal needs no CAS on the chunk at all.
 *
 * <h2>Linearization points</h2>
 * <ul>
 * <li>insertion of an absent key: the successful CAS of the entry's value reference, made while
 *     the chunk is published (so never into a frozen chunk);
 * <li>update of a present key (put, compute, merge, replace, in-place zero-copy compute): the
 *     release store that unlocks the value header (or, when the value moves to a bigger slice,
 *     the CAS that swaps the reference, which happens under the old slice's lock);
 * <li>removal: the release store that sets DELETED in the header;
 * <li>a read that finds a value: the validation of its optimistic read; a read that finds
 *     nothing: the moment it observed absence, given the rule below;
 * <li>navigation (the least or greatest mapping of a range): the start of the second of two
 *     walks that found the same facts ({@link Navigator}).
 * </ul>
 *
 * <h2>Reading from a chunk that is being replaced</h2>
 * Reads never wait for rebalances: they read whatever chunk the index gave them, frozen or not.
 * If they find a value reference that is no longer live, the value was either removed or moved
 * to another slice; {@link #goneForGood} tells the two apart: the key is really absent if the
 * chunk is not released and the entry still holds the same reference (a move inside a current
 * chunk changes the entry first; a move in a replacement chunk happens only after this chunk was
 * released). Otherwise the operation starts over.
 *
 * <h2>Failures</h2>
 * User code (serializers, comparators, functions) may throw at any point; every path releases
 * what it holds (value locks, publications, fresh slices) and leaves the map as it was, except a
 * zero-copy compute that throws after writing part of its value, which keeps the part written.
 */
public final class InternalOakMap<K, V> {

    private static final Object GONE_RESULT = new Object();

    /**
     * Whether maps built from now on let the rebalancer move pairs into key order (see
     * {@link Rebalancer}, "Placement"); read once per map. Off by default while it is measured.
     */
    public static final String PLACE_PAIRS_PROPERTY = "oak.placePairs";
    /**
     * {@code -Doak.reuseBlocks=false} keeps the allocator from reusing blocks whose slices are all
     * free as fresh memory (see {@link SliceManager#reuseWholeBlocks}); on by default wherever keys
     * or values are freed (every scheme but grow-only), so that memory freed by values of one size
     * serves values of another.
     */
    public static final String REUSE_BLOCKS_PROPERTY = "oak.reuseBlocks";
    /**
     * Whether maps built from now on lay out anew, in key order, the chunks that scans find
     * scattered (see {@link Rebalancer}, "Placement on request"); read once per map. Takes effect
     * only where blocks are reused whole.
     */
    public static final String PLACE_ON_SCANS_PROPERTY = "oak.placeOnScans";

    private static final int OK = 0, FROZEN = 1, CONFLICT = 2;
    private static final int COPIED = 0, MOVED = 1, RETRY = 2, DONE = 3;

    private final KeyOps<K> keys;
    /** Keys that stream scans read in place, kept from deletion (see {@link KeyHazards}). */
    private final KeyHazards keyHazards = new KeyHazards();
    private final OakSerializer<V> valueSerializer;
    private final Function<OakScopedReadBuffer, V> deserializer;
    private final BlockAllocator allocator;
    /** Lays out anew the chunks scans find scattered; null unless the map places on scans. */
    private final Placer placer;
    private final SliceManager values;
    /** Whether a value reference is live: for {@link Chunk#skipDeadPrefix}, one object per map. */
    private final LongPredicate liveValues;
    private final ChunkIndex index;
    private final Rebalancer rebalancer;
    private final LongAdder size = new LongAdder();
    private volatile boolean closed;
    /**
     * Closes the allocator on {@link #close()}, or once this map is unreachable unclosed: every
     * view, iterator, cursor and zero-copy buffer holds this object, so none can outlive the
     * memory it reads (see {@link BlockAllocator}, "Owners dropped without closing").
     */
    private final Cleaner.Cleanable release;
    /**
     * Whether scans look ahead ({@link #scansLookAhead}). A hint, written after rebalances and
     * read by new cursors with no ordering: a stale value costs speed, never correctness.
     */
    private boolean scansLookAhead = Cursor.LOOK_AHEAD_FROM <= 0;
    /** Off-heap bytes in use from which scans look ahead: {@link Cursor#LOOK_AHEAD_FROM}, or a test's. */
    private long lookAheadFrom = Cursor.LOOK_AHEAD_FROM;

    public InternalOakMap(OakSerializer<K> keySerializer, OakSerializer<V> valueSerializer,
                          OakComparator<K> comparator, long memoryCapacity, long blockSize,
                          int chunkCapacity, double rebalanceRatio, MemoryScheme keyScheme, MemoryScheme valueScheme) {
        this(keySerializer, valueSerializer, comparator, memoryCapacity, blockSize, chunkCapacity, rebalanceRatio,
                keyScheme, valueScheme, Boolean.getBoolean(PLACE_PAIRS_PROPERTY));
    }

    /** As below, placing chunks on scans' request as {@link #PLACE_ON_SCANS_PROPERTY} says. */
    public InternalOakMap(OakSerializer<K> keySerializer, OakSerializer<V> valueSerializer,
                          OakComparator<K> comparator, long memoryCapacity, long blockSize,
                          int chunkCapacity, double rebalanceRatio, MemoryScheme keyScheme, MemoryScheme valueScheme,
                          boolean placePairs) {
        this(keySerializer, valueSerializer, comparator, memoryCapacity, blockSize, chunkCapacity, rebalanceRatio,
                keyScheme, valueScheme, placePairs, Boolean.getBoolean(PLACE_ON_SCANS_PROPERTY));
    }

    /**
     * @param placePairs let rebalances move pairs into key order (see {@link Rebalancer},
     *     "Placement"); takes effect only where both slice managers allow moves (Nova keys and values)
     * @param placeOnScans let scans ask for the chunks they find scattered to be laid out anew
     *     ({@link Rebalancer}, "Placement on request"); takes effect only where pairs can move and
     *     blocks are reused whole
     */
    public InternalOakMap(OakSerializer<K> keySerializer, OakSerializer<V> valueSerializer,
                          OakComparator<K> comparator, long memoryCapacity, long blockSize,
                          int chunkCapacity, double rebalanceRatio, MemoryScheme keyScheme, MemoryScheme valueScheme,
                          boolean placePairs, boolean placeOnScans) {
        this.allocator = new BlockAllocator(BlockPool.shared(), blockSize, memoryCapacity);
        this.keys = new KeyOps<>(keySerializer, comparator,
                SliceManager.create(keyScheme, allocator, BlockAllocator.Kind.KEY));
        this.valueSerializer = valueSerializer;
        this.deserializer = b -> Codec.deserialize(valueSerializer, b);
        this.values = SliceManager.create(valueScheme, allocator, BlockAllocator.Kind.VALUE);
        if ((values.reclaims() || keys.slices().reclaims()) && !"false".equals(System.getProperty(REUSE_BLOCKS_PROPERTY))) {
            SliceManager.reuseWholeBlocks(allocator, keys.slices(), values);
        }
        this.liveValues = values::isLive;
        this.index = new ChunkIndex(Chunk.empty(Rebalancer.slotsFor(0, chunkCapacity, rebalanceRatio)));
        this.rebalancer = new Rebalancer(index, keys, values, keyHazards, chunkCapacity, rebalanceRatio,
                placePairs, placeOnScans && allocator.reusesWholeBlocks(), () -> closed);
        this.placer = rebalancer.placesOnRequest()
                ? new Placer(this::placeNow, this::discardSurplusBlocks, () -> closed) : null;
        this.release = allocator.closeWhenUnreachable(this);
    }

    @SuppressWarnings("unchecked")
    static <T> T gone() {
        return (T) GONE_RESULT;
    }

    // ================================================================ queries

    /** @return a deserialized copy of the value of {@code key}, or null */
    public V get(K key) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        long kp = keys.prefix(key);
        try {
            while (true) {
                Chunk c = locate(key, kp);
                int ei = lookUp(c, key, kp);
                if (ei < 0) {
                    continue;
                }
                if (ei == Chunk.NONE) {
                    return null;
                }
                long ref = c.valueRef(ei);
                if (ref == Refs.NULL) {
                    return null;
                }
                V v = readValueWith(ref, deserializer);
                if (v != GONE_RESULT) {
                    return v;
                }
                if (goneForGood(c, ei, ref)) {
                    return null;
                }
            }
        } catch (IllegalStateException e) {
            throw closedOr(e);
        }
    }

    public boolean containsKey(K key) {
        return liveValue(key, false) != null;
    }

    /** Zero-copy get: a view of the value, or null. */
    public OakUnscopedBuffer getValueView(K key) {
        return (OakUnscopedBuffer) liveValue(key, true);
    }

    /** What {@link #liveValue} returns for a live mapping when no view is wanted. */
    private static final Object PRESENT = new Object();

    /**
     * @param wantView whether to return a view of the value found (created only then, so that a
     *     miss allocates nothing); it knows the chunk and entry it was found in, to follow a move
     * @return null if {@code key} has no live mapping; else the view, or {@link #PRESENT}
     */
    private Object liveValue(K key, boolean wantView) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        long kp = keys.prefix(key);
        try {
            while (true) {
                Chunk c = locate(key, kp);
                int ei = lookUp(c, key, kp);
                if (ei < 0) {
                    continue;
                }
                if (ei == Chunk.NONE) {
                    return null;
                }
                long ref = c.valueRef(ei);
                if (ref == Refs.NULL) {
                    return null;
                }
                if (values.isLiveAwaitingPoll(ref)) {
                    if (!wantView) {
                        return PRESENT;
                    }
                    SliceView view = new SliceView(this, values, ref, "value");
                    view.position(ref, SliceManager.NO_TOKEN, c, ei);
                    return view;
                }
                if (goneForGood(c, ei, ref)) {
                    return null;
                }
            }
        } catch (IllegalStateException e) {
            throw closedOr(e);
        }
    }

    // ================================================================ insertions

    /** Maps key to value. @return the previous value (deserialized) if returnOld and there was one, else null */
    public V put(K key, V value, boolean returnOld) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        long kp = keys.prefix(key);
        Objects.requireNonNull(value, "value");
        long fresh = Refs.NULL;
        try {
            fresh = prepareValue(value);
            while (true) {
                Chunk c = locate(key, kp);
                int ei = entryFor(c, key, kp);
                if (ei < 0) {
                    continue;
                }
                long ref = c.valueRef(ei);
                if (ref != Refs.NULL) {
                    long h = values.lockWrite(ref);
                    if (h != SliceManager.GONE) {
                        V old = null;
                        if (returnOld) {
                            try {
                                old = deserializeLocked(ref);
                            } catch (Throwable e) { // also an undeclared checked exception from user code
                                values.unlock(ref, h);
                                throw e;
                            }
                        }
                        int r = replaceLocked(c, ei, ref, h, fresh);
                        if (r == RETRY) {
                            continue;
                        }
                        if (r == MOVED) {
                            fresh = Refs.NULL;
                        }
                        return old;
                    }
                    if (!goneForGood(c, ei, ref)) {
                        continue;
                    }
                }
                if (install(c, ei, ref, fresh) == OK) {
                    fresh = Refs.NULL;
                    inserted(c);
                    return null;
                }
            }
        } catch (IllegalStateException e) {
            throw closedOr(e);
        } finally {
            discardIfSet(fresh);
        }
    }

    /** @return the current value (deserialized) if present (and nothing is inserted), else null after inserting */
    public V putIfAbsent(K key, V value) {
        Object r = doPutIfAbsent(key, value, true);
        return r == GONE_RESULT ? null : castValue(r);
    }

    /** Zero-copy putIfAbsent. @return true if inserted */
    public boolean putIfAbsentZc(K key, V value) {
        return doPutIfAbsent(key, value, false) == GONE_RESULT;
    }

    /** @return GONE_RESULT if inserted, else the present value (deserialized if wanted) */
    private Object doPutIfAbsent(K key, V value, boolean wantValue) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        long kp = keys.prefix(key);
        Objects.requireNonNull(value, "value");
        long fresh = Refs.NULL;
        try {
            while (true) {
                Chunk c = locate(key, kp);
                int ei = lookUp(c, key, kp);
                if (ei == Chunk.NONE) {
                    if (fresh == Refs.NULL) {
                        fresh = prepareValue(value); // before the key is linked: see linkEntry
                    }
                    ei = linkEntry(c, key, kp);
                }
                if (ei < 0) {
                    continue;
                }
                long ref = c.valueRef(ei);
                if (ref != Refs.NULL) {
                    if (wantValue) {
                        V cur = readValueWith(ref, deserializer);
                        if (cur != GONE_RESULT) {
                            return cur;
                        }
                    } else if (values.isLiveAwaitingPoll(ref)) {
                        return Boolean.FALSE;
                    }
                    if (!goneForGood(c, ei, ref)) {
                        continue;
                    }
                }
                if (fresh == Refs.NULL) {
                    fresh = prepareValue(value);
                }
                if (install(c, ei, ref, fresh) == OK) {
                    fresh = Refs.NULL;
                    inserted(c);
                    return GONE_RESULT;
                }
            }
        } catch (IllegalStateException e) {
            throw closedOr(e);
        } finally {
            discardIfSet(fresh);
        }
    }

    /** @return true if value was inserted, false if computer ran on the present value */
    public boolean putIfAbsentComputeIfPresent(K key, V value, Consumer<OakScopedWriteBuffer> computer) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        long kp = keys.prefix(key);
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(computer, "computer");
        long fresh = Refs.NULL;
        try {
            while (true) {
                Chunk c = locate(key, kp);
                int ei = lookUp(c, key, kp);
                if (ei == Chunk.NONE) {
                    if (fresh == Refs.NULL) {
                        fresh = prepareValue(value); // before the key is linked: see linkEntry
                    }
                    ei = linkEntry(c, key, kp);
                }
                if (ei < 0) {
                    continue;
                }
                long ref = c.valueRef(ei);
                if (ref != Refs.NULL) {
                    if (computeInPlace(ref, computer)) {
                        return false;
                    }
                    if (!goneForGood(c, ei, ref)) {
                        continue;
                    }
                }
                if (fresh == Refs.NULL) {
                    fresh = prepareValue(value);
                }
                if (install(c, ei, ref, fresh) == OK) {
                    fresh = Refs.NULL;
                    inserted(c);
                    return true;
                }
            }
        } catch (IllegalStateException e) {
            throw closedOr(e);
        } finally {
            discardIfSet(fresh);
        }
    }

    /** @return true if the key was present and computer ran on its value in place */
    public boolean computeIfPresentZc(K key, Consumer<OakScopedWriteBuffer> computer) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        long kp = keys.prefix(key);
        Objects.requireNonNull(computer, "computer");
        try {
            while (true) {
                Chunk c = locate(key, kp);
                int ei = lookUp(c, key, kp);
                if (ei < 0) {
                    continue;
                }
                if (ei == Chunk.NONE) {
                    return false;
                }
                long ref = c.valueRef(ei);
                if (ref == Refs.NULL) {
                    return false;
                }
                if (computeInPlace(ref, computer)) {
                    return true;
                }
                if (goneForGood(c, ei, ref)) {
                    return false;
                }
            }
        } catch (IllegalStateException e) {
            throw closedOr(e);
        }
    }

    /** Runs {@code computer} on the value under its write lock. @return false if not live */
    private boolean computeInPlace(long ref, Consumer<OakScopedWriteBuffer> computer) {
        long h = values.lockWrite(ref);
        if (h == SliceManager.GONE) {
            return false;
        }
        MemorySegment seg = values.segment(ref);
        SliceBuffer b = new SliceBuffer(seg, values.dataOffset(ref), values.length(seg, ref), true);
        b.journalWrites(); // all or nothing: a computer that throws leaves the value as it was
        HeldLocks held = HeldLocks.hold(ref);
        try {
            computer.accept(b);
        } catch (Throwable t) {
            b.rollBack(t); // under the write lock: no reader or writer saw the partial update
            throw t;
        } finally {
            held.release();
            b.close();
            values.unlock(ref, h);
        }
        return true;
    }

    // ================================================================ removals

    /** Removes key. @return the removed value (deserialized), or null if absent */
    public V remove(K key) {
        Object r = doRemove(key, null, true);
        return r == GONE_RESULT ? null : castValue(r);
    }

    /** Removes key without deserializing. @return true if a mapping was removed */
    public boolean delete(K key) {
        return doRemove(key, null, false) != GONE_RESULT;
    }

    /** Removes key if its current value equals expected (V.equals on a deserialized copy). */
    public boolean remove(K key, Object expected) {
        Objects.requireNonNull(expected, "value");
        return doRemove(key, expected, false) != GONE_RESULT;
    }

    /**
     * Removes key if its value still has the bytes that {@code seen}, a copy deserialized from
     * it, serializes to: for {@code removeIf} over a map's views, whose filter judged that copy.
     * Not {@code seen.equals}: a copy of a {@code byte[]} value equals nothing but itself, so no
     * mapping would ever be removed. A mapping updated since to other bytes stays.
     */
    public boolean removeIfUnchanged(K key, V seen) {
        return doRemove(key, sameBytes(seen), false) != GONE_RESULT;
    }

    /** @return the bytes that {@code seen} serializes to, as an expected value */
    private SameBytes sameBytes(V seen) {
        int len = Codec.sizeOf(valueSerializer, seen, values.maxLength());
        byte[] bytes = new byte[len];
        Codec.write(valueSerializer, seen, MemorySegment.ofArray(bytes), 0, len);
        return new SameBytes(bytes);
    }

    /** An expected value given as its serialized bytes (see {@link #removeIfUnchanged}). */
    private record SameBytes(byte[] bytes) {
        /** @return whether value {@code ref}, locked by the caller, holds exactly these bytes */
        boolean heldBy(SliceManager values, long ref) {
            MemorySegment seg = values.segment(ref);
            long off = values.dataOffset(ref);
            int n = values.length(seg, ref);
            return n == bytes.length && MemorySegment.mismatch(seg, off, off + n, MemorySegment.ofArray(bytes), 0, n) < 0;
        }
    }

    private Object doRemove(K key, Object expected, boolean wantOld) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        long kp = keys.prefix(key);
        try {
            while (true) {
                Chunk c = locate(key, kp);
                int ei = lookUp(c, key, kp);
                if (ei < 0) {
                    continue;
                }
                if (ei == Chunk.NONE) {
                    return GONE_RESULT;
                }
                long ref = c.valueRef(ei);
                if (ref == Refs.NULL) {
                    return GONE_RESULT;
                }
                long h = values.lockWrite(ref);
                if (h == SliceManager.GONE) {
                    if (goneForGood(c, ei, ref)) {
                        return GONE_RESULT;
                    }
                    continue;
                }
                Object old = Boolean.TRUE;
                if (expected instanceof SameBytes same) {
                    if (!same.heldBy(values, ref)) {
                        values.unlock(ref, h);
                        return GONE_RESULT;
                    }
                } else if (expected != null || wantOld) {
                    try {
                        V cur = deserializeLocked(ref);
                        if (expected != null && !expected.equals(cur)) {
                            values.unlock(ref, h);
                            return GONE_RESULT;
                        }
                        old = cur;
                    } catch (Throwable e) { // also an undeclared checked exception from user code
                        values.unlock(ref, h);
                        throw e;
                    }
                }
                values.deleteLocked(ref, h);
                removed(c);
                return old;
            }
        } catch (IllegalStateException e) {
            throw closedOr(e);
        }
    }

    // ================================================================ legacy atomic updates

    /** Replaces the value of a present key. @return the old value, or null if absent (nothing done) */
    public V replace(K key, V value) {
        Objects.requireNonNull(value, "value");
        return update(key, (k, old) -> value, null, false, true, null);
    }

    /** Replaces the value if it currently equals oldValue. */
    public boolean replace(K key, V oldValue, V newValue) {
        Objects.requireNonNull(oldValue, "oldValue");
        Objects.requireNonNull(newValue, "newValue");
        boolean[] replaced = new boolean[1];
        update(key, (k, cur) -> {
            replaced[0] = oldValue.equals(cur);
            return replaced[0] ? newValue : unchanged();
        }, null, false, false, null);
        return replaced[0];
    }

    /**
     * Replaces the value of {@code key} by {@code value} if it still has the bytes that
     * {@code seen}, a copy deserialized from it, serializes to: for {@code replaceAll}, whose
     * function computed {@code value} from that copy. Not {@code seen.equals}, as in
     * {@link #removeIfUnchanged}: a copy of a {@code byte[]} value equals nothing but itself, so
     * replaceAll would call its function again for ever. A value updated since to other bytes
     * stays, and the caller reads it again.
     *
     * @return whether the value was replaced
     */
    public boolean replaceIfUnchanged(K key, V seen, V value) {
        Objects.requireNonNull(value, "value");
        SameBytes same = sameBytes(seen);
        boolean[] replaced = new boolean[1];
        update(key, (k, cur) -> {
            replaced[0] = true;
            return value;
        }, null, false, false, same);
        return replaced[0];
    }

    /** Returned by an internal update function to leave the value as it is (no write). */
    private static final Object UNCHANGED = new Object();

    @SuppressWarnings("unchecked")
    private static <V> V unchanged() {
        return (V) UNCHANGED;
    }

    /** Atomic compute, as ConcurrentMap.compute. */
    public V compute(K key, BiFunction<? super K, ? super V, ? extends V> fn) {
        Objects.requireNonNull(fn, "remappingFunction");
        return update(key, fn, fn, true, false, null);
    }

    /** Atomic computeIfAbsent. */
    public V computeIfAbsent(K key, Function<? super K, ? extends V> fn) {
        Objects.requireNonNull(fn, "mappingFunction");
        checkOpen();
        Objects.requireNonNull(key, "key");
        while (true) {
            V cur = get(key);
            if (cur != null) {
                return cur;
            }
            V v = fn.apply(key);
            if (v == null) {
                return null;
            }
            Object r = doPutIfAbsent(key, v, true);
            if (r == GONE_RESULT) {
                return v;
            }
            return castValue(r);
        }
    }

    /** Atomic computeIfPresent (legacy BiFunction form). */
    public V computeIfPresent(K key, BiFunction<? super K, ? super V, ? extends V> fn) {
        Objects.requireNonNull(fn, "remappingFunction");
        return update(key, fn, null, false, false, null);
    }

    /** Atomic merge. */
    public V merge(K key, V value, BiFunction<? super V, ? super V, ? extends V> fn) {
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(fn, "remappingFunction");
        return update(key, (k, old) -> fn.apply(old, value), (k, none) -> value, true, false, null);
    }

    /**
     * The engine of the legacy atomic updates. If the key is present, applies {@code ifPresent}
     * to its value under the value's write lock (null result: remove). If absent and
     * {@code ifAbsent} is given (with {@code createEntry}), inserts its result (unless null),
     * linking the key only once that result is serialized ({@link #linkEntry}).
     *
     * @param unlessChanged if not null, a present value is updated only if it holds these bytes
     *     (and is not deserialized: {@code ifPresent} gets null); else nothing is done
     * @return the new value (or, with {@code returnOld}, the previous value); null if none
     */
    private V update(K key, BiFunction<? super K, ? super V, ? extends V> ifPresent,
                     BiFunction<? super K, ? super V, ? extends V> ifAbsent, boolean createEntry, boolean returnOld,
                     SameBytes unlessChanged) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        long kp = keys.prefix(key);
        // the value to insert while the key is absent: ifAbsent's result for (key, null), the
        // same on every attempt, so it is computed (and serialized) once
        V absentValue = null;
        long fresh = Refs.NULL;
        try {
            while (true) {
                Chunk c = locate(key, kp);
                int ei = lookUp(c, key, kp);
                if (ei < 0) {
                    continue;
                }
                long ref = ei == Chunk.NONE ? Refs.NULL : c.valueRef(ei);
                if (ref != Refs.NULL) {
                    long h = values.lockWrite(ref);
                    if (h != SliceManager.GONE) {
                        if (unlessChanged != null && !unlessChanged.heldBy(values, ref)) {
                            values.unlock(ref, h);
                            return null;
                        }
                        V old;
                        V nv;
                        HeldLocks held = HeldLocks.hold(ref);
                        try {
                            old = unlessChanged != null ? null : deserializeValue(ref);
                            nv = ifPresent.apply(key, old);
                        } catch (Throwable e) { // also an undeclared checked exception from user code
                            values.unlock(ref, h);
                            throw e;
                        } finally {
                            held.release();
                        }
                        // Only an internal marker skips the write: a user function may mutate the
                        // (freshly deserialized) old value and return that same object.
                        if (nv == UNCHANGED) {
                            values.unlock(ref, h);
                            return old;
                        }
                        if (applyLocked(c, ei, ref, h, nv) == RETRY) {
                            continue;
                        }
                        return returnOld ? old : nv;
                    }
                    if (!goneForGood(c, ei, ref)) {
                        continue;
                    }
                }
                if (ifAbsent == null || !createEntry) {
                    return null;
                }
                if (fresh == Refs.NULL) {
                    V nv = ifAbsent.apply(key, null);
                    if (nv == null) {
                        return null;
                    }
                    fresh = prepareValue(nv);
                    absentValue = nv;
                }
                if (ei == Chunk.NONE) {
                    ei = linkEntry(c, key, kp); // only now: see linkEntry
                    if (ei < 0 || c.valueRef(ei) != Refs.NULL) {
                        continue; // not linked, or the key has a value (or had one): look again
                    }
                }
                if (install(c, ei, ref, fresh) == OK) {
                    fresh = Refs.NULL;
                    inserted(c);
                    return absentValue;
                }
            }
        } catch (IllegalStateException e) {
            throw closedOr(e);
        } finally {
            discardIfSet(fresh);
        }
    }

    /** Stores {@code nv} (or removes, if null) into a value the caller holds locked; unlocks it. */
    private int applyLocked(Chunk c, int ei, long ref, long h, V nv) {
        if (nv == null) {
            values.deleteLocked(ref, h);
            removed(c);
            return DONE;
        }
        long fresh;
        try {
            fresh = prepareValue(nv);
        } catch (Throwable e) { // also an undeclared checked exception from user code
            values.unlock(ref, h);
            throw e;
        }
        int r = replaceLocked(c, ei, ref, h, fresh);
        if (r != MOVED) {
            values.discard(fresh);
        }
        return r == RETRY ? RETRY : DONE;
    }

    /**
     * Replaces the contents of locked value {@code ref} by those of the fresh slice: copies in
     * place when the sizes allow, otherwise swaps the entry to the fresh slice and deletes the old
     * one. Always unlocks {@code ref}.
     *
     * @return {@link #COPIED} (fresh still owned by the caller), {@link #MOVED} (fresh now in the
     *     map) or {@link #RETRY} (the chunk was frozen; nothing changed)
     */
    private int replaceLocked(Chunk c, int ei, long ref, long h, long fresh) {
        int oldLen = values.length(ref);
        int newLen = values.length(fresh);
        if (values.sliceBytes(oldLen) == values.sliceBytes(newLen)) {
            MemorySegment.copy(values.segment(fresh), values.dataOffset(fresh),
                    values.segment(ref), values.dataOffset(ref), newLen);
            values.unlock(ref, h, newLen);
            return COPIED;
        }
        int r = install(c, ei, ref, fresh);
        if (r == OK) {
            values.deleteLocked(ref, h);
            return MOVED;
        }
        values.unlock(ref, h);
        return RETRY; // install waited for the frozen chunk's rebalance
    }

    // ================================================================ shared steps

    /** @return the chunk currently holding {@code key}'s range (waits out a finishing rebalance) */
    Chunk locate(K key) {
        return locate(key, keys.prefix(key));
    }

    private Chunk locate(K key, long kp) {
        while (true) {
            try {
                Chunk c = index.find(key, kp, keys);
                if (!c.isReleased()) {
                    return c;
                }
            } catch (StaleKeyException e) {
                // a minimum key of an outdated index snapshot was reclaimed: the index moved on
            }
            rebalancer.awaitRebalance();
        }
    }

    /**
     * @return the entry of {@code key} in {@code c}, {@link Chunk#NONE}, or -1 if a key compared
     *     against was reclaimed (so {@code c} was replaced: the caller starts over)
     */
    private int lookUp(Chunk c, K key, long kp) {
        try {
            return c.lookUp(key, kp, keys);
        } catch (StaleKeyException e) {
            return -1;
        }
    }

    /**
     * @return the linked entry for {@code key} in {@code c}, creating and linking one if needed,
     *     or -1 if the chunk is full or frozen (after helping or waiting for its rebalance)
     */
    private int entryFor(Chunk c, K key, long kp) {
        int ei = lookUp(c, key, kp);
        if (ei != Chunk.NONE) {
            return ei;
        }
        return linkEntry(c, key, kp);
    }

    /**
     * Links a new entry for {@code key}, which a look-up in {@code c} did not find (or returns the
     * entry another thread linked for it meanwhile). Insertions call it only once they hold the
     * value to install: a linked key stays until a rebalance drops it, and under
     * {@link MemoryScheme#GROW_ONLY} keys its memory is never given back, so a key linked for an
     * insertion that then inserts nothing (a compute whose function returns null or throws, a
     * value whose serializer fails or that does not fit in the capacity) would hold memory for
     * good.
     *
     * @return the entry, or -1 if the chunk is full or frozen (after helping or waiting for its
     *     rebalance) or was replaced
     */
    private int linkEntry(Chunk c, K key, long kp) {
        int ei = c.allocateEntry();
        if (ei == Chunk.NONE) {
            if (c.isFrozen()) {
                rebalancer.awaitRelease(c);
            } else {
                rebalance(c);
            }
            return -1;
        }
        long keyRef = keys.write(key, kp);
        int linked;
        try {
            linked = c.link(ei, keyRef, key, kp, keys);
        } catch (StaleKeyException e) {
            keys.discard(keyRef); // never linked, so never seen
            return -1; // c was replaced while we searched it
        } catch (Throwable e) { // also an undeclared checked exception from user code
            keys.discard(keyRef);
            throw e;
        }
        if (linked != ei) {
            keys.discard(keyRef);
        }
        return linked;
    }

    /** CASes a value reference of a published chunk. @return OK, FROZEN or CONFLICT */
    private int install(Chunk c, int ei, long expected, long fresh) {
        if (!c.publish()) {
            rebalancer.awaitRelease(c);
            return FROZEN;
        }
        try {
            c.beforeInstall(ei); // published, and before the value is visible: see Chunk, "Dead prefix"
            return c.casValue(ei, expected, fresh) ? OK : CONFLICT;
        } finally {
            c.unpublish();
        }
    }

    /**
     * Called when {@code ref}, read from entry {@code ei} of {@code c}, is not live.
     *
     * @return true if the key is truly absent, false if the caller must start over
     */
    boolean goneForGood(Chunk c, int ei, long ref) {
        return !c.isReleased() && c.valueRef(ei) == ref;
    }

    private void inserted(Chunk c) {
        size.increment();
        if (c.needsReorganization() && !c.isFrozen()) {
            reorganize(c);
        }
    }

    /**
     * Removes the mapping a cursor is on, through the value reference it found (no look-up): under
     * the value's write lock, as {@link #delete} does, if that reference is still live.
     *
     * @return false if the value moved or its chunk was replaced meanwhile: the caller removes the
     *     key by look-up; true if it was removed here, or had been removed already
     */
    boolean deleteAt(Chunk c, int ei, long ref) {
        try {
            long h = values.lockWrite(ref);
            if (h != SliceManager.GONE) {
                values.deleteLocked(ref, h);
                removed(c);
                return true;
            }
            return goneForGood(c, ei, ref);
        } catch (IllegalStateException e) {
            throw closedOr(e);
        }
    }

    /** Compacts {@code c} now unless it is being (or was) replaced: for a cursor that met many dead entries. */
    void compact(Chunk c) {
        if (!c.isFrozen() && !c.isReleased()) {
            reorganize(c);
        }
    }

    /**
     * Asks for chunk {@code c}, whose pairs a scan found scattered, to be laid out anew in key
     * order, by the map's {@link Placer} thread ({@link #placeNow}); returns at once. Does nothing
     * unless the map places on scans.
     */
    void placeScattered(Chunk c) {
        if (placer != null && !c.isFrozen() && !c.isReleased()) {
            placer.request(c);
        }
    }

    /**
     * For tests: waits until the chunks scans asked for so far are laid out (or refused).
     *
     * @return false if that took more than ten seconds
     */
    public boolean awaitPlacement() throws InterruptedException {
        return placer == null || placer.awaitIdle(10_000_000_000L);
    }

    /**
     * Lays chunk {@code c} out anew, every live pair moved into key order (the {@link Placer}'s
     * work, after any rebalance that runs now): unless {@code c} was replaced meanwhile, or the
     * memory this takes (estimated from the map's mean slice bytes per mapping) would leave too
     * little headroom ({@link BlockAllocator#roomToRelocate}).
     */
    private void placeNow(Chunk c) {
        if (closed || c.isFrozen() || c.isReleased()) {
            return;
        }
        long mappings = size.sum();
        if (mappings <= 0) {
            return;
        }
        long bytes = allocator.usedBytes() / mappings * c.allocatedCount();
        if (allocator.roomToRelocate(bytes) && rebalancer.placeOnRequest(c)) {
            decideLookAhead();
            values.reclaimNow(); // the moved values' originals: else the last batch keeps every old block from emptying
        }
    }

    /**
     * Gives back to the OS the pages of the blocks that placement emptied, beyond what the map
     * keeps for its next regions and placements (two blocks, or an eighth of its data if more):
     * a pass over a map laid out at random leaves about as many empty blocks as the map had.
     * Deletes first the keys that scans no longer protect, which would keep those blocks from
     * emptying. Cheap when there are none. Scans in maps that place call it at each chunk they
     * enter, and the placer once its queue is empty.
     */
    void discardSurplusBlocks() {
        rebalancer.retryDeferredKeys();
        allocator.discardSurplusBlocks(Math.max(2 * allocator.blockSize(), allocator.usedBytes() / 8));
    }

    /** @return whether scans may ask for the chunks they find scattered to be laid out anew */
    boolean placesOnScans() {
        return placer != null;
    }

    /** Counts a removal from chunk {@code c}, and compacts it if it is by now mostly removed entries. */
    void removed(Chunk c) {
        size.decrement();
        c.countRemoval();
        if (c.needsCompaction() && !c.isFrozen()) {
            reorganize(c);
        }
    }

    /**
     * Rebalances {@code c} as housekeeping, after the operation that calls this took effect (an
     * insertion filled the chunk, removals emptied it, a scan met its dead entries). If user code
     * fails inside (a key prefix or a key deserializer that throws), the rebalance gives the chunk
     * back unchanged, and the failure is not the operation's: it returns normally, as an operation
     * that took effect must. The next operation that cannot proceed without this rebalance (an
     * insertion into the full chunk, see {@link #linkEntry}) fails with it instead, before it
     * takes effect. So does a close meanwhile: the next operation finds the map closed. Errors
     * propagate.
     */
    private void reorganize(Chunk c) {
        try {
            rebalance(c);
        } catch (RuntimeException e) {
            // the chunk is as it was: see above
        }
    }

    /**
     * Rebalances {@code c}, then decides again whether scans look ahead: the map's size changes
     * little between two rebalances, so this is where the decision is refreshed.
     */
    private void rebalance(Chunk c) {
        rebalancer.rebalance(c);
        decideLookAhead();
    }

    private void decideLookAhead() {
        scansLookAhead = allocator.usedBytes() >= lookAheadFrom;
    }

    /** For tests: scans look ahead from {@code bytes} of off-heap data on, decided now and after each rebalance. */
    public void lookAheadFrom(long bytes) {
        lookAheadFrom = bytes;
        decideLookAhead();
    }

    /**
     * @return whether new scans should touch the slices of entries ahead of them: only when the
     *     map's off-heap data outgrows the caches (see {@link Cursor#LOOK_AHEAD_FROM})
     */
    boolean scansLookAhead() {
        return scansLookAhead;
    }

    private long prepareValue(V value) {
        int len = Codec.sizeOf(valueSerializer, value, values.maxLength());
        long ref = values.allocate(len);
        try {
            Codec.write(valueSerializer, value, values.segment(ref), values.dataOffset(ref), len);
        } catch (Throwable e) { // also an undeclared checked exception from user code
            values.discard(ref);
            throw e;
        }
        return ref;
    }

    private void discardIfSet(long fresh) {
        if (fresh != Refs.NULL && !closed) {
            values.discard(fresh);
        }
    }

    /**
     * Deserializes value {@code ref}. The caller holds the value's lock, or reads inside a read it
     * began with {@link SliceManager#readBegin} and judges with {@link SliceManager#readEnd} (an
     * exception from here may then come from bytes torn by a writer).
     */
    V deserializeValue(long ref) {
        MemorySegment seg = values.segment(ref);
        return Codec.read(valueSerializer, seg, values.dataOffset(ref), values.length(seg, ref));
    }

    /**
     * Deserializes value {@code ref}, which the caller holds locked for writing, as a user
     * function under that lock: a deserializer that reads or writes its own key (through this
     * map) would wait for the lock its own thread holds, so that fails at once instead (see
     * {@link HeldLocks}), as it does from the function of a compute.
     */
    private V deserializeLocked(long ref) {
        HeldLocks held = HeldLocks.hold(ref);
        try {
            return deserializeValue(ref);
        } finally {
            held.release();
        }
    }

    /**
     * Optimistically applies {@code f} to the value {@code ref}, retrying if a writer interfered.
     *
     * @return f's result, or {@link #gone()} if the reference is not live
     */
    <T> T readValueWith(long ref, Function<OakScopedReadBuffer, T> f) {
        return readWith(values, ref, f);
    }

    /** Like {@link #readValueWith}, for a slice of either kind. */
    <T> T readWith(SliceManager values, long ref, Function<OakScopedReadBuffer, T> f) {
        MemorySegment seg = values.segment(ref);
        long base = values.dataOffset(ref);
        SliceBuffer b = new SliceBuffer();
        while (true) {
            long h = values.readBegin(ref);
            if (h == SliceManager.GONE) {
                return gone();
            }
            T r = null;
            Throwable failure = null;
            b.open(seg, base, values.length(seg, ref), false); // validated with the bytes
            // A write of this value from f must fail at once, under every scheme: a lock-based
            // read holds a read lock that the write would wait for forever, and an optimistic one
            // would be spoiled by the write and run f again, writing again, at every retry.
            HeldLocks held = HeldLocks.hold(ref);
            try {
                r = f.apply(b);
            } catch (Throwable e) {
                failure = e; // may come from bytes torn by a writer (even an Error): judged after validation
            } finally {
                held.release();
                b.close();
            }
            if (values.readEnd(seg, ref, h)) {
                if (failure != null) {
                    throw SliceManager.rethrow(failure);
                }
                return r;
            }
        }
    }

    /**
     * The least (or, {@code descending}, greatest) mapping of a key range, linearizably (see
     * {@link Navigator}). Null bounds are open ends.
     *
     * @return the mapping, with a null value unless {@code withValue}; null if the range is empty
     */
    public SimpleImmutableEntry<K, V> navigate(K lo, boolean loInclusive, K hi, boolean hiInclusive,
                                               boolean descending, boolean withValue) {
        return new Navigator<>(this, lo, loInclusive, hi, hiInclusive).find(descending, withValue);
    }

    /**
     * Removes the least (or, {@code descending}, greatest) mapping of a key range, linearizably
     * (see {@link Navigator}, "Polls"). Null bounds are open ends.
     *
     * @return the mapping removed, or null if the range is empty
     */
    public SimpleImmutableEntry<K, V> poll(K lo, boolean loInclusive, K hi, boolean hiInclusive, boolean descending) {
        return new Navigator<>(this, lo, loInclusive, hi, hiInclusive).poll(descending);
    }

    /** @return a deserialized copy of value {@code ref}, or {@link #gone()} */
    V readValue(long ref) {
        return readValueWith(ref, deserializer);
    }

    @SuppressWarnings("unchecked")
    private V castValue(Object o) {
        return (V) o;
    }

    /** @return {@code e}, or an {@link OakClosedException} if it was caused by the map being closed */
    RuntimeException closedOr(IllegalStateException e) {
        if ((closed || allocator.isClosed()) && !(e instanceof OakClosedException)) {
            return new OakClosedException(e);
        }
        return e;
    }

    // ================================================================ scans and plumbing

    /**
     * A cursor over the live mappings in a range, ascending or descending.
     *
     * @param lo lower bound or null for none; hi upper bound or null for none (bounds are in key
     *     order, whatever the direction)
     */
    public Cursor<K, V> cursor(K lo, boolean loInclusive, K hi, boolean hiInclusive, boolean descending) {
        checkOpen();
        return new Cursor<>(this, lo, loInclusive, hi, hiInclusive, descending);
    }

    /**
     * @param lo lower bound or null for none; hi upper bound or null for none (in key order)
     * @return a key strictly between the bounds where a chunk starts, about in the middle of the
     *     range's chunks (a place to split a parallel scan), or null if the range lies within one
     *     chunk or that key could not be read (its chunk being replaced meanwhile)
     */
    public K splitKey(K lo, K hi) {
        checkOpen();
        try {
            Chunk c = index.middleBetween(lo, lo == null ? 0 : keys.prefix(lo), hi, hi == null ? 0 : keys.prefix(hi),
                    keys);
            return c == null ? null : keys.read(c.minKey, c);
        } catch (StaleKeyException e) {
            return null; // a chunk was being replaced: a split is only ever a hint
        }
    }

    /** @return the number of live mappings (exact when quiescent) */
    public long size() {
        checkOpen();
        return Math.max(0, size.sum());
    }

    /** Compares two key objects with the map's comparator. */
    public int compareKeys(K a, K b) {
        return keys.compareKeys(a, b);
    }

    public OakComparator<K> comparator() {
        return keys.comparator();
    }

    /** Frees all off-heap memory; every later call throws OakClosedException. Idempotent. */
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        release.clean(); // closes the allocator
        index.clear(Chunk.empty(1)); // release the on-heap metadata too
    }

    public boolean isClosed() {
        return closed;
    }

    /** @throws OakClosedException if closed */
    void checkOpen() {
        if (closed) {
            throw new OakClosedException();
        }
    }

    /** For tests: the allocator, which does not keep this map reachable (its blocks held, its closing). */
    public BlockAllocator allocator() {
        return allocator;
    }

    /** @return off-heap bytes reserved (blocks held) */
    public long offHeapReservedBytes() {
        return allocator.reservedBytes();
    }

    /**
     * @return off-heap bytes of held blocks whose pages were given back to the OS: empty ones
     *     ({@link #discardSurplusBlocks}) and ones only deferred keys pin ({@link BlockAllocator#discardAllBut})
     */
    public long offHeapDiscardedBytes() {
        return allocator.discardedBytes();
    }

    /** @return off-heap bytes in use by live keys and values (and not yet reused garbage) */
    public long offHeapUsedBytes() {
        return allocator.usedBytes();
    }

    /** @return the configured capacity */
    public long memoryCapacity() {
        return allocator.capacity();
    }

    KeyOps<K> keys() { return keys; }

    KeyHazards keyHazards() { return keyHazards; }

    SliceManager values() { return values; }

    /** @return the liveness test of value references (see {@link #liveValues}) */
    LongPredicate liveValues() { return liveValues; }

    /** @return the chunk index (for tests and diagnostics) */
    public ChunkIndex index() { return index; }

    Rebalancer rebalancer() { return rebalancer; }


    /** @return the number of chunks (for tests and diagnostics) */
    public int chunkCount() { return index.size(); }

    /** @return pairs that rebalances moved into key order so far (diagnostics; see {@link Rebalancer}, "Placement") */
    public long pairsMoved() { return rebalancer.pairsMoved(); }

    /** @return the entry slots of all chunks, taken or free (for tests and diagnostics) */
    public long slotCount() {
        long slots = 0;
        for (Chunk c : index.snapshot()) {
            slots += c.capacity();
        }
        return slots;
    }
}
