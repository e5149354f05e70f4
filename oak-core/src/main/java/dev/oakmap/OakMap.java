package dev.oakmap;

import dev.oakmap.internal.map.Cursor;
import dev.oakmap.internal.map.InternalOakMap;

import java.util.AbstractMap;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableSet;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A concurrent, ordered map whose keys and values live off-heap, in memory the map manages
 * itself. Built with an {@link OakMapBuilder}.
 *
 * <h2>A drop-in {@code ConcurrentSkipListMap}</h2>
 *
 * {@code OakMap} implements {@link ConcurrentNavigableMap} with the documented semantics of
 * {@link java.util.concurrent.ConcurrentSkipListMap}: code that uses a skiplist can switch with
 * one line. Sub-maps ({@link #subMap}, {@link #headMap}, {@link #tailMap}), the
 * {@linkplain #descendingMap() descending map} and the key, value and entry collections are
 * views backed by the same off-heap data; changes through any of them are visible through all.
 * An instance of this class is either the map itself or one of its range and direction views;
 * every view is itself an {@code OakMap}, so {@link #zc()}, {@link #close()} and the memory
 * accessors work on views too.
 *
 * <h2>Costs of the object API, and the zero-copy API</h2>
 *
 * Keys and values are stored serialized. Every method of this (the "legacy") interface that takes
 * an object serializes it, and every method that returns a key or value returns a fresh copy,
 * deserialized from off-heap memory: {@code get}, the navigation methods, iterators and
 * {@code entrySet()} all pay a deserialization per returned object. Objects returned are snapshots;
 * mutating them has no effect on the map. For large values or long scans, use {@link #zc()}, which
 * returns views of the off-heap bytes instead of copies, updates values in place, and offers scans
 * that allocate nothing per element.
 *
 * <h2>Atomicity</h2>
 *
 * All operations on a given key ({@code get}, {@code put}, {@code remove}, the {@code compute}
 * family, {@code replace}, ...) are linearizable, and so are the navigation queries
 * ({@code firstKey}, {@code lastKey}, {@code first/lastEntry}, {@code lower/floor/ceiling/higher}
 * and their {@code Entry} forms, on the map and on its views), and {@code isEmpty}: the answer,
 * and the value returned with it, are those of one instant during the call. They search twice
 * and compare, starting over when a concurrent update changed what the answer rests on, so under
 * heavy updates of the keys near the answer they may take a few attempts. {@code pollFirstEntry}
 * and {@code pollLastEntry} are linearizable too, unlike {@code ConcurrentSkipListMap}'s: the
 * mapping returned was the first (last) of the view at the instant it was removed, even when a
 * lesser key is inserted concurrently. (They hold the mapping's value while they check, so
 * {@code containsKey} and navigation queries that meet it wait for the poll to finish.) Unlike
 * {@code ConcurrentSkipListMap},
 * {@link #compute}, {@link #computeIfAbsent}, {@link #computeIfPresent} and {@link #merge} are
 * performed atomically: the function runs while the value's lock is held, so no other update of
 * the same key interleaves with it. The function may nevertheless be invoked more than once
 * (and its earlier results discarded) if the call races with a concurrent insertion or removal of
 * the same key; it should be free of side effects, and it should not access this map. Reading or
 * writing other keys works; touching its own key would wait for itself, so that throws
 * {@link IllegalStateException}, and the mapping is left unchanged (so does a zero-copy view's
 * {@code transform} whose function writes or removes its own key). If the
 * function throws, the exception propagates and the mapping is left unchanged.
 *
 * <h2>Iteration</h2>
 *
 * Iterators and spliterators of all views are <em>weakly consistent</em>: they never throw
 * {@link java.util.ConcurrentModificationException}, they return elements in the view's order,
 * every mapping present for the whole duration of an iteration is returned exactly once, and no
 * mapping absent for the whole duration is returned; mappings inserted or removed during the
 * iteration may or may not be returned. An iterator itself is for one thread at a time, as the
 * JDK's are: shared by threads without synchronization it may throw, or its {@code remove()} may
 * remove a mapping that it has not returned to the caller, but the map stays consistent. Bulk
 * operations ({@code putAll}, {@code equals},
 * {@code toArray}, {@code clear}, ...) are not atomic. {@link #size()} of the whole map is a
 * counter that is exact when no update is in progress; the size of a sub-map is obtained by
 * counting its mappings, which takes time linear in the size of the range.
 *
 * <h2>Nulls, ranges and types</h2>
 *
 * Null keys and values are not permitted: every method throws {@link NullPointerException} when
 * given one (or a null function), before touching the map; queries for a null value
 * ({@code remove(key, null)}) return false. A sub-map rejects insertions of keys outside its range
 * with {@link IllegalArgumentException}, and treats such keys as absent for queries and removals,
 * as {@code ConcurrentSkipListMap}'s sub-maps do. Keys of the wrong type make the comparator or
 * serializer throw {@link ClassCastException}, which propagates (when the map is empty, a lookup may
 * also simply return null).
 *
 * <h2>Memory and closing</h2>
 *
 * The off-heap memory is freed by {@link #close()} (from the map or any of its views). After that,
 * every operation on the map, its views, iterators and zero-copy buffers throws
 * {@link OakClosedException} (only the memory accessors {@link #memoryReserved()},
 * {@link #memoryUsed()} and {@link #memoryCapacity()} keep working). Closing while other threads
 * still use the map is safe in the sense that it never crashes the JVM: their operations fail with
 * {@link OakClosedException}. An insertion that would exceed the configured capacity throws
 * {@link OakOutOfMemoryException}.
 *
 * <p>All maps (and {@link dev.oakmap.somar.Somar} managers) of a process share 4,095 off-heap
 * blocks: a map holds one block once it holds a pair, and more as it grows (see
 * {@link OakMapBuilder#blockSize(long)}). When none is left, the insertion that needs one throws
 * {@link OutOfMemoryError}, as {@link java.nio.ByteBuffer#allocateDirect} does past its limit,
 * and leaves the map as it was; closing other maps makes room. A map keeps its blocks until it is
 * closed: memory freed by removals is reused by its later insertions, so {@link #memoryReserved()}
 * follows the map's largest size, not its current one. Closing gives the memory back to the
 * operating system, but not all of it at once: up to 1 GiB of the blocks of the maps closed last
 * in the process stay committed for up to 2 seconds, and maps built meanwhile take them, zeroed,
 * instead of faulting in fresh pages (where native access is enabled; {@code -Doak.warmBlocks}
 * sets the bytes, {@code 0} turns this off, and {@code -Doak.warmBlocksMillis} the time). A
 * daemon thread zeroes and gives back those blocks; a model checker that schedules every thread
 * of the code it checks (Lincheck's model-checking mode) cannot schedule that one, so run such
 * checks with {@code -Doak.warmBlocks=0}.
 *
 * <p>A map that is dropped without being closed gives its memory back too, as a direct
 * {@link java.nio.ByteBuffer} does: some time after the garbage collector finds the map
 * unreachable, together with every view, iterator, stream and zero-copy buffer of it (each of
 * those keeps the map reachable, so none of them ever reads freed memory). That time is up to the
 * collector, and off-heap memory does not prompt a collection, so a program that builds and drops
 * maps should close them.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
public final class OakMap<K, V> extends AbstractMap<K, V>
        implements ConcurrentNavigableMap<K, V>, AutoCloseable {

    /** The map core, shared by the map and all its views. */
    final InternalOakMap<K, V> internal;
    /** The key order (the builder's comparator). */
    final OakComparator<K> cmp;
    /** Lower bound in key order, or null for none. */
    final K lo;
    final boolean loInclusive;
    /** Upper bound in key order, or null for none. */
    final K hi;
    final boolean hiInclusive;
    /** True if this view iterates in descending key order. */
    final boolean descending;
    /** True if the bounds admit no key at all (e.g. {@code subMap(k, false, k, false)}). */
    private final boolean emptyRange;
    /** The comparator this view reports (reversed for a descending view). */
    private final Comparator<? super K> viewComparator;

    // Lazily created views; racy initialization is benign (views are stateless wrappers).
    private KeySetView<K, V> keySetView;
    private KeySetView<K, V> descendingKeySetView;
    private ValuesView<K, V> valuesView;
    private EntrySetView<K, V> entrySetView;
    private OakMap<K, V> descendingMapView;
    private ZeroCopyView<K, V> zcView;

    private OakMap(InternalOakMap<K, V> internal, OakComparator<K> cmp, K lo, boolean loInclusive, K hi,
                   boolean hiInclusive, boolean descending) {
        this.internal = internal;
        this.cmp = cmp;
        this.lo = lo;
        this.loInclusive = loInclusive;
        this.hi = hi;
        this.hiInclusive = hiInclusive;
        this.descending = descending;
        this.emptyRange = isEmptyRange(cmp, lo, loInclusive, hi, hiInclusive);
        this.viewComparator = descending ? Collections.reverseOrder(cmp) : cmp;
    }

    /** Creates the root map of a builder's configuration. */
    static <K, V> OakMap<K, V> create(OakMapBuilder<K, V> b) {
        InternalOakMap<K, V> internal = new InternalOakMap<>(b.keySerializer, b.valueSerializer, b.comparator,
                b.memoryCapacity, b.blockSize, b.chunkCapacity, b.rebalanceRatio, b.keyMemory, b.valueMemory,
                b.placePairs, b.placeOnScans);
        return new OakMap<>(internal, b.comparator, null, false, null, false, false);
    }

    // ------------------------------------------------------------------------------------------
    // Range helpers (all in key order, whatever the direction of the view)

    private static <K> boolean isEmptyRange(OakComparator<K> cmp, K from, boolean fromInclusive,
                                            K to, boolean toInclusive) {
        if (from == null || to == null) {
            return false;
        }
        int c = cmp.compareKeys(from, to);
        return c > 0 || (c == 0 && !(fromInclusive && toInclusive));
    }

    private boolean tooLow(K key) {
        if (lo == null) {
            return false;
        }
        int c = cmp.compareKeys(key, lo);
        return c < 0 || (c == 0 && !loInclusive);
    }

    private boolean tooHigh(K key) {
        if (hi == null) {
            return false;
        }
        int c = cmp.compareKeys(key, hi);
        return c > 0 || (c == 0 && !hiInclusive);
    }

    /** @return true if {@code key} lies within this view's bounds */
    boolean inRange(K key) {
        return !tooLow(key) && !tooHigh(key);
    }

    /** Throws IllegalArgumentException (or OakClosedException if closed) for an out-of-range key. */
    void checkInRange(K key) {
        if (!inRange(key)) {
            ensureOpen();
            throw new IllegalArgumentException("key out of range");
        }
    }

    /** Used on paths that answer without touching the core, so that a closed map still throws. */
    void ensureOpen() {
        if (internal.isClosed()) {
            throw new OakClosedException();
        }
    }

    /**
     * A cursor over the given key-order range, or null if the range is empty (after checking that
     * the map is open).
     */
    Cursor<K, V> cursor(K from, boolean fromInclusive, K to, boolean toInclusive, boolean desc) {
        if (isEmptyRange(cmp, from, fromInclusive, to, toInclusive)) {
            ensureOpen();
            return null;
        }
        return internal.cursor(from, fromInclusive, to, toInclusive, desc);
    }

    /** A cursor over this view's whole range in the given key order, or null if it is empty. */
    Cursor<K, V> cursor(boolean desc) {
        if (emptyRange) {
            ensureOpen();
            return null;
        }
        return internal.cursor(lo, loInclusive, hi, hiInclusive, desc);
    }

    /** A cursor over this view's range in the view's own order, or null if it is empty. */
    Cursor<K, V> viewCursor() {
        return cursor(descending);
    }

    /**
     * The mapping nearest to {@code key} in key order: if {@code above}, the least key greater than
     * (or equal to, if inclusive) {@code key}; otherwise the greatest key less than (or equal to).
     */
    private SimpleImmutableEntry<K, V> nearest(K key, boolean inclusive, boolean above, boolean withValue) {
        Objects.requireNonNull(key, "key");
        if (above) {
            K from = key;
            boolean fromInclusive = inclusive;
            if (tooLow(key)) {
                from = lo;
                fromInclusive = loInclusive;
            }
            return navigate(from, fromInclusive, hi, hiInclusive, false, withValue);
        } else {
            K to = key;
            boolean toInclusive = inclusive;
            if (tooHigh(key)) {
                to = hi;
                toInclusive = hiInclusive;
            }
            return navigate(lo, loInclusive, to, toInclusive, true, withValue);
        }
    }

    /** The lowest (highest if {@code highest}) mapping of the range in key order. */
    private SimpleImmutableEntry<K, V> extreme(boolean highest, boolean withValue) {
        return navigate(lo, loInclusive, hi, hiInclusive, highest, withValue);
    }

    /**
     * The lowest (highest if {@code highest}) mapping of a key-order range, linearizably; with
     * withValue false, the entry's value is null.
     */
    private SimpleImmutableEntry<K, V> navigate(K from, boolean fromInclusive, K to, boolean toInclusive,
                                                boolean highest, boolean withValue) {
        if (isEmptyRange(cmp, from, fromInclusive, to, toInclusive)) {
            ensureOpen();
            return null;
        }
        return internal.navigate(from, fromInclusive, to, toInclusive, highest, withValue);
    }

    private static <K> K keyOf(Map.Entry<K, ?> e) {
        return e == null ? null : e.getKey();
    }

    private static <K> K keyOrThrow(Map.Entry<K, ?> e) {
        if (e == null) {
            throw new NoSuchElementException();
        }
        return e.getKey();
    }

    // ------------------------------------------------------------------------------------------
    // Point operations

    /** {@inheritDoc} */
    @Override
    @SuppressWarnings("unchecked")
    public V get(Object key) {
        K k = (K) Objects.requireNonNull(key, "key");
        if (!inRange(k)) {
            ensureOpen();
            return null;
        }
        return internal.get(k);
    }

    /** {@inheritDoc} */
    @Override
    @SuppressWarnings("unchecked")
    public boolean containsKey(Object key) {
        K k = (K) Objects.requireNonNull(key, "key");
        if (!inRange(k)) {
            ensureOpen();
            return false;
        }
        return internal.containsKey(k);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Scans the view's mappings, deserializing each value: linear time.
     *
     * @throws NullPointerException if {@code value} is null
     */
    @Override
    public boolean containsValue(Object value) {
        Objects.requireNonNull(value, "value");
        Cursor<K, V> c = viewCursor();
        if (c == null) {
            return false;
        }
        while (c.advance()) {
            V v = c.value();
            if (v != null && value.equals(v)) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException if {@code key} is outside this view's range
     */
    @Override
    public V put(K key, V value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        checkInRange(key);
        return internal.put(key, value, true);
    }

    /**
     * Copies every mapping of {@code map} into this map, one {@link #put} at a time (not atomic as
     * a whole). Throws {@link OakClosedException} after {@link #close()} even when {@code map} is
     * empty.
     *
     * @throws IllegalArgumentException if a key is outside this view's range; the mappings before
     *     it were put
     */
    @Override
    public void putAll(Map<? extends K, ? extends V> map) {
        ensureOpen();
        super.putAll(map);
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException if {@code key} is outside this view's range
     */
    @Override
    public V putIfAbsent(K key, V value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        checkInRange(key);
        return internal.putIfAbsent(key, value);
    }

    /** {@inheritDoc} */
    @Override
    @SuppressWarnings("unchecked")
    public V remove(Object key) {
        K k = (K) Objects.requireNonNull(key, "key");
        if (!inRange(k)) {
            ensureOpen();
            return null;
        }
        return internal.remove(k);
    }

    /**
     * Removes {@code key}'s mapping without reading its value, for callers that need no old value
     * (the key sets' {@code remove}, the zero-copy {@code remove}): no deserialization, so a value
     * its deserializer cannot read is removed too.
     *
     * @return whether a mapping was removed
     */
    boolean removeKey(K key) {
        Objects.requireNonNull(key, "key");
        if (!inRange(key)) {
            ensureOpen();
            return false;
        }
        return internal.delete(key);
    }

    /**
     * {@inheritDoc}
     *
     * <p>The current value is compared with {@code value.equals} on a deserialized copy, atomically
     * with the removal.
     */
    @Override
    @SuppressWarnings("unchecked")
    public boolean remove(Object key, Object value) {
        K k = (K) Objects.requireNonNull(key, "key");
        if (value == null) {
            ensureOpen();
            return false;
        }
        if (!inRange(k)) {
            ensureOpen();
            return false;
        }
        return internal.remove(k, value);
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException if {@code key} is outside this view's range
     */
    @Override
    public V replace(K key, V value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        checkInRange(key);
        return internal.replace(key, value);
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException if {@code key} is outside this view's range
     */
    @Override
    public boolean replace(K key, V oldValue, V newValue) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(oldValue, "oldValue");
        Objects.requireNonNull(newValue, "newValue");
        checkInRange(key);
        return internal.replace(key, oldValue, newValue);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Atomic: see the class documentation for when {@code remappingFunction} may be invoked more
     * than once. It must not access this map.
     *
     * @throws IllegalArgumentException if {@code key} is outside this view's range and the
     *     function returns a value (as in {@code ConcurrentSkipListMap}'s sub-maps, an out-of-range
     *     key is absent: the function is called with a null value, and a null result is simply
     *     returned)
     */
    @Override
    public V compute(K key, BiFunction<? super K, ? super V, ? extends V> remappingFunction) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(remappingFunction, "remappingFunction");
        if (!inRange(key)) {
            ensureOpen();
            if (remappingFunction.apply(key, null) == null) {
                return null;
            }
            checkInRange(key);
        }
        return internal.compute(key, remappingFunction);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Atomic: see the class documentation for when {@code mappingFunction} may be invoked more
     * than once. It must not access this map.
     *
     * @throws IllegalArgumentException if {@code key} is outside this view's range and the
     *     function returns a value (as in {@code ConcurrentSkipListMap}'s sub-maps, an out-of-range
     *     key is absent: the function is called, and a null result is simply returned)
     */
    @Override
    public V computeIfAbsent(K key, Function<? super K, ? extends V> mappingFunction) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(mappingFunction, "mappingFunction");
        if (!inRange(key)) {
            ensureOpen();
            if (mappingFunction.apply(key) == null) {
                return null;
            }
            checkInRange(key);
        }
        return internal.computeIfAbsent(key, mappingFunction);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Atomic: see the class documentation. A key outside this view's range is treated as absent
     * (null is returned and the function is not called).
     */
    @Override
    public V computeIfPresent(K key, BiFunction<? super K, ? super V, ? extends V> remappingFunction) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(remappingFunction, "remappingFunction");
        if (!inRange(key)) {
            ensureOpen();
            return null;
        }
        return internal.computeIfPresent(key, remappingFunction);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Atomic: see the class documentation. The function must not access this map.
     *
     * @throws IllegalArgumentException if {@code key} is outside this view's range
     */
    @Override
    public V merge(K key, V value, BiFunction<? super V, ? super V, ? extends V> remappingFunction) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(remappingFunction, "remappingFunction");
        checkInRange(key);
        return internal.merge(key, value, remappingFunction);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Weakly consistent, in this view's order; mappings removed after they were reached are
     * skipped.
     */
    @Override
    public void forEach(BiConsumer<? super K, ? super V> action) {
        Objects.requireNonNull(action, "action");
        Cursor<K, V> c = viewCursor();
        if (c == null) {
            return;
        }
        while (c.advance()) {
            V v = c.value();
            if (v != null) {
                action.accept(c.key(), v);
            }
        }
    }

    /**
     * Removes the mappings of this view that pass {@code filter}: for {@code values().removeIf}
     * and {@code entrySet().removeIf}. Each mapping the filter accepts is removed only if its value
     * still has the bytes of the copy the filter judged, as {@code ConcurrentSkipListMap} removes
     * with {@code remove(key, value)}: a mapping updated between the test and the removal stays.
     * (The iterator's {@code remove}, which {@code Collection.removeIf} would use, removes by key
     * alone, and so would lose such an update; and {@code remove(key, copy)} compares with
     * {@code equals}, which a copy of a {@code byte[]} value never passes.) Weakly consistent, in
     * this view's order; not atomic as a whole.
     *
     * @return whether a mapping was removed
     */
    boolean removeMappingsIf(BiPredicate<? super K, ? super V> filter) {
        Objects.requireNonNull(filter, "filter");
        Cursor<K, V> c = viewCursor();
        if (c == null) {
            return false;
        }
        boolean removed = false;
        while (c.advance()) {
            V v = c.value();
            if (v == null) {
                continue; // removed since the cursor reached it
            }
            K k = c.key();
            if (filter.test(k, v) && internal.removeIfUnchanged(k, v)) {
                removed = true;
            }
        }
        return removed;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Each key is replaced with a compare-and-set loop: its value is replaced if it still has
     * the bytes of the copy the function was given (as {@code removeIf} of the views compares, so
     * that values without value equality, such as {@code byte[]}, are replaced too), so the
     * function may be called several times for a key that is concurrently updated. Not atomic as
     * a whole.
     *
     * @throws NullPointerException if the function is null or returns null
     */
    @Override
    public void replaceAll(BiFunction<? super K, ? super V, ? extends V> function) {
        Objects.requireNonNull(function, "function");
        Cursor<K, V> c = viewCursor();
        if (c == null) {
            return;
        }
        while (c.advance()) {
            V v = c.value();
            if (v == null) {
                continue;
            }
            K k = c.key();
            while (v != null) {
                V r = Objects.requireNonNull(function.apply(k, v), "replaceAll function returned null");
                if (internal.replaceIfUnchanged(k, v, r)) {
                    break;
                }
                v = internal.get(k);
            }
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>For the whole map this reads a counter that is exact when no update is in progress; for a
     * sub-map it counts the mappings of the range (linear time). Saturates at
     * {@link Integer#MAX_VALUE}.
     */
    @Override
    public int size() {
        if (lo == null && hi == null) {
            return (int) Math.min(internal.size(), Integer.MAX_VALUE);
        }
        Cursor<K, V> c = cursor(false);
        if (c == null) {
            return 0;
        }
        c.readKeysInPlace(false); // counting reads no key: protecting each costs less than copying it
        long n = 0;
        while (c.advance()) {
            n++;
        }
        return (int) Math.min(n, Integer.MAX_VALUE);
    }

    /** {@inheritDoc} Linearizable, like the navigation queries (see the class comment). */
    @Override
    public boolean isEmpty() {
        return extreme(false, false) == null;
    }

    /**
     * Removes every mapping of this view, one key at a time: not atomic; mappings inserted
     * concurrently may survive.
     */
    @Override
    public void clear() {
        Cursor<K, V> c = cursor(false);
        if (c == null) {
            return;
        }
        c.readKeysInPlace(false); // no key is read, unless a value moved and its key is looked up
        while (c.advance()) {
            c.removeCurrent();
        }
    }

    // ------------------------------------------------------------------------------------------
    // Navigation

    /**
     * {@inheritDoc}
     *
     * @return the comparator given to the builder, or its reverse for a descending view; never null
     */
    @Override
    public Comparator<? super K> comparator() {
        return viewComparator;
    }

    /** {@inheritDoc} */
    @Override
    public Map.Entry<K, V> lowerEntry(K key) {
        return nearest(key, false, descending, true);
    }

    /** {@inheritDoc} */
    @Override
    public K lowerKey(K key) {
        return keyOf(nearest(key, false, descending, false));
    }

    /** {@inheritDoc} */
    @Override
    public Map.Entry<K, V> floorEntry(K key) {
        return nearest(key, true, descending, true);
    }

    /** {@inheritDoc} */
    @Override
    public K floorKey(K key) {
        return keyOf(nearest(key, true, descending, false));
    }

    /** {@inheritDoc} */
    @Override
    public Map.Entry<K, V> ceilingEntry(K key) {
        return nearest(key, true, !descending, true);
    }

    /** {@inheritDoc} */
    @Override
    public K ceilingKey(K key) {
        return keyOf(nearest(key, true, !descending, false));
    }

    /** {@inheritDoc} */
    @Override
    public Map.Entry<K, V> higherEntry(K key) {
        return nearest(key, false, !descending, true);
    }

    /** {@inheritDoc} */
    @Override
    public K higherKey(K key) {
        return keyOf(nearest(key, false, !descending, false));
    }

    /** {@inheritDoc} */
    @Override
    public Map.Entry<K, V> firstEntry() {
        return extreme(descending, true);
    }

    /** {@inheritDoc} */
    @Override
    public Map.Entry<K, V> lastEntry() {
        return extreme(!descending, true);
    }

    /** {@inheritDoc} */
    @Override
    public K firstKey() {
        return keyOrThrow(extreme(descending, false));
    }

    /** {@inheritDoc} */
    @Override
    public K lastKey() {
        return keyOrThrow(extreme(!descending, false));
    }

    /**
     * {@inheritDoc}
     *
     * <p>The returned entry is the mapping actually removed by this call, with the value it
     * removed; linearizable: at the instant of the removal, its key was the first of the view
     * (see "Atomicity" above).
     */
    @Override
    public Map.Entry<K, V> pollFirstEntry() {
        return poll(descending);
    }

    /**
     * {@inheritDoc}
     *
     * <p>The returned entry is the mapping actually removed by this call, with the value it
     * removed; linearizable: at the instant of the removal, its key was the last of the view.
     */
    @Override
    public Map.Entry<K, V> pollLastEntry() {
        return poll(!descending);
    }

    private Map.Entry<K, V> poll(boolean highest) {
        if (isEmptyRange(cmp, lo, loInclusive, hi, hiInclusive)) {
            ensureOpen();
            return null;
        }
        return internal.poll(lo, loInclusive, hi, hiInclusive, highest);
    }

    // ------------------------------------------------------------------------------------------
    // Sub-maps and views

    private OakMap<K, V> newSubMap(K fromKey, boolean fromInclusive, K toKey, boolean toInclusive) {
        if (descending) { // the arguments are in view order: flip them to key order
            K tk = fromKey;
            fromKey = toKey;
            toKey = tk;
            boolean ti = fromInclusive;
            fromInclusive = toInclusive;
            toInclusive = ti;
        }
        if (lo != null) {
            if (fromKey == null) {
                fromKey = lo;
                fromInclusive = loInclusive;
            } else {
                int c = cmp.compareKeys(fromKey, lo);
                if (c < 0 || (c == 0 && !loInclusive && fromInclusive)) {
                    throw new IllegalArgumentException("key out of range");
                }
            }
        }
        if (hi != null) {
            if (toKey == null) {
                toKey = hi;
                toInclusive = hiInclusive;
            } else {
                int c = cmp.compareKeys(toKey, hi);
                if (c > 0 || (c == 0 && !hiInclusive && toInclusive)) {
                    throw new IllegalArgumentException("key out of range");
                }
            }
        }
        if (fromKey != null && toKey != null && cmp.compareKeys(fromKey, toKey) > 0) {
            throw new IllegalArgumentException("inconsistent range");
        }
        return new OakMap<>(internal, cmp, fromKey, fromInclusive, toKey, toInclusive, descending);
    }

    /**
     * {@inheritDoc}
     *
     * @return an {@code OakMap} view of the range, in this view's direction
     */
    @Override
    public OakMap<K, V> subMap(K fromKey, boolean fromInclusive, K toKey, boolean toInclusive) {
        Objects.requireNonNull(fromKey, "fromKey");
        Objects.requireNonNull(toKey, "toKey");
        return newSubMap(fromKey, fromInclusive, toKey, toInclusive);
    }

    /** {@inheritDoc} */
    @Override
    public OakMap<K, V> subMap(K fromKey, K toKey) {
        return subMap(fromKey, true, toKey, false);
    }

    /** {@inheritDoc} */
    @Override
    public OakMap<K, V> headMap(K toKey, boolean inclusive) {
        Objects.requireNonNull(toKey, "toKey");
        return newSubMap(null, false, toKey, inclusive);
    }

    /** {@inheritDoc} */
    @Override
    public OakMap<K, V> headMap(K toKey) {
        return headMap(toKey, false);
    }

    /** {@inheritDoc} */
    @Override
    public OakMap<K, V> tailMap(K fromKey, boolean inclusive) {
        Objects.requireNonNull(fromKey, "fromKey");
        return newSubMap(fromKey, inclusive, null, false);
    }

    /** {@inheritDoc} */
    @Override
    public OakMap<K, V> tailMap(K fromKey) {
        return tailMap(fromKey, true);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Descending scans are about as fast as ascending ones.
     */
    @Override
    public OakMap<K, V> descendingMap() {
        OakMap<K, V> d = descendingMapView;
        if (d == null) {
            d = new OakMap<>(internal, cmp, lo, loInclusive, hi, hiInclusive, !descending);
            descendingMapView = d;
        }
        return d;
    }

    /**
     * {@inheritDoc}
     *
     * <p>The set supports removal (directly and through its iterator) but not addition. Its
     * iterator is weakly consistent and deserializes each key.
     */
    @Override
    public NavigableSet<K> keySet() {
        KeySetView<K, V> ks = keySetView;
        if (ks == null) {
            ks = new KeySetView<>(this);
            keySetView = ks;
        }
        return ks;
    }

    /** Same as {@link #keySet()}. */
    @Override
    public NavigableSet<K> navigableKeySet() {
        return keySet();
    }

    /** {@inheritDoc} */
    @Override
    public NavigableSet<K> descendingKeySet() {
        KeySetView<K, V> ks = descendingKeySetView;
        if (ks == null) {
            ks = new KeySetView<>(descendingMap());
            descendingKeySetView = ks;
        }
        return ks;
    }

    /**
     * {@inheritDoc}
     *
     * <p>The collection supports removal (through its iterator and {@code remove}) but not
     * addition; its iterator is weakly consistent and deserializes each value.
     */
    @Override
    public Collection<V> values() {
        ValuesView<K, V> vs = valuesView;
        if (vs == null) {
            vs = new ValuesView<>(this);
            valuesView = vs;
        }
        return vs;
    }

    /**
     * {@inheritDoc}
     *
     * <p>The set supports removal but not addition. Its iterator is weakly consistent; the entries
     * it returns are snapshots whose {@code setValue} writes through to the map (with
     * {@link #put}) and returns the value it replaced.
     */
    @Override
    public Set<Map.Entry<K, V>> entrySet() {
        EntrySetView<K, V> es = entrySetView;
        if (es == null) {
            es = new EntrySetView<>(this);
            entrySetView = es;
        }
        return es;
    }

    /**
     * The zero-copy interface of this map or view: same range and direction, reads return views of
     * the off-heap bytes, updates run in place.
     *
     * @return the zero-copy view (the same object on every call)
     */
    public OakZeroCopyMap<K, V> zc() {
        return zcView();
    }

    /** {@link #zc()}, typed as the implementation. */
    ZeroCopyView<K, V> zcView() {
        ZeroCopyView<K, V> z = zcView;
        if (z == null) {
            z = new ZeroCopyView<>(this);
            zcView = z;
        }
        return z;
    }

    // ------------------------------------------------------------------------------------------
    // Lifecycle and memory

    /**
     * Closes the map (whichever view it is called on) and returns its off-heap memory. Every later
     * operation on the map, its views, iterators and zero-copy buffers throws
     * {@link OakClosedException}, except the memory accessors. Idempotent.
     */
    @Override
    public void close() {
        internal.close();
    }

    /**
     * Returns the off-heap memory this map has reserved.
     *
     * @return bytes of off-heap memory this map currently holds (the blocks it took from the pool),
     *     whether or not they are in use, including the one spare block a growing map maps ahead
     *     (within its capacity); the whole map's figure, even when called on a view. May be called
     *     after {@link #close()}, to check that the memory was returned.
     */
    public long memoryReserved() {
        return internal.offHeapReservedBytes();
    }

    /**
     * Returns the off-heap memory in use by this map's keys and values.
     *
     * @return bytes of off-heap memory used by keys and values (including removed ones whose
     *     memory is not yet reused); the whole map's figure, even when called on a view. May be
     *     called after {@link #close()}.
     */
    public long memoryUsed() {
        return internal.offHeapUsedBytes();
    }

    /**
     * Returns the off-heap capacity of this map. May be called after {@link #close()}.
     *
     * @return the most off-heap memory this map may hold, as configured in the builder
     */
    public long memoryCapacity() {
        return internal.memoryCapacity();
    }

    // ------------------------------------------------------------------------------------------
    // Iterators

    Iterator<K> keyIterator() {
        return new BaseIterator<>(false) {
            @Override
            K element(K k, V v) {
                return k;
            }
        };
    }

    Iterator<V> valueIterator() {
        return new BaseIterator<>(true) {
            @Override
            V element(K k, V v) {
                return v;
            }
        };
    }

    Iterator<Map.Entry<K, V>> entryIterator() {
        return new BaseIterator<>(true) {
            @Override
            Map.Entry<K, V> element(K k, V v) {
                return new WriteThroughEntry<>(OakMap.this, k, v);
            }
        };
    }

    /**
     * A weakly consistent iterator in this view's order. Like {@code ConcurrentSkipListMap}'s, it
     * looks one mapping ahead (so that {@code hasNext} is exact, and {@code next} returns the
     * mapping it found even if it was removed since) and keeps the last returned key for
     * {@code remove}. A look-ahead that throws (a deserializer failed, the map was closed) is not
     * taken for the end: {@code next} still returns its element and leaves the failure to the
     * next call, and the call after that looks ahead again, past the mapping that failed. So a
     * caller that catches a value's failure and goes on meets every other mapping, and a closed
     * map keeps saying so. (Before, the iteration ended silently there, and the element of the
     * {@code next} that looked ahead was lost.)
     */
    private abstract class BaseIterator<T> implements Iterator<T> {
        private final Cursor<K, V> cursor;
        private final boolean withValues;
        private K nextKey;
        private V nextValue;
        private K lastKey;
        /** Whether {@link #nextKey} holds the mapping looked ahead to; false at the end and after a failure. */
        private boolean lookedAhead;
        /** The failure of the look-ahead done by {@code next}, for the following call to throw. */
        private RuntimeException failed;

        BaseIterator(boolean withValues) {
            this.withValues = withValues;
            this.cursor = viewCursor();
            if (cursor != null) {
                // past its first keys, a scan deserializes each key from its protected slice: one copy, not two
                cursor.readKeysInPlace(true);
            }
            try {
                lookAhead();
            } catch (RuntimeException e) {
                failed = e; // for hasNext or next to throw, as any failed look-ahead
            }
        }

        /** Moves onto the next mapping; at the end, and if that throws, {@link #lookedAhead} is false. */
        private void lookAhead() {
            lookedAhead = false;
            nextKey = null;
            nextValue = null;
            if (cursor == null) {
                ensureOpen(); // an empty view: no cursor to say the map was closed
                return;
            }
            while (cursor.advance()) {
                if (withValues) {
                    V v = cursor.value();
                    if (v == null) {
                        continue; // removed since the cursor reached it
                    }
                    nextValue = v;
                }
                nextKey = cursor.key();
                lookedAhead = true;
                return;
            }
        }

        abstract T element(K k, V v);

        @Override
        public final boolean hasNext() {
            RuntimeException f = failed;
            if (f != null) {
                failed = null; // thrown once; the next call goes on past the mapping that failed
                throw f;
            }
            if (!lookedAhead) {
                lookAhead(); // at the end, the cursor says so again (or that the map was closed)
            }
            return lookedAhead;
        }

        @Override
        public final T next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            ensureOpen(); // closed since the look-ahead
            K k = nextKey;
            V v = nextValue;
            lastKey = k;
            try {
                lookAhead();
            } catch (RuntimeException e) {
                failed = e; // k was found: return it, and throw this from the next call
            }
            return element(k, v);
        }

        @Override
        public final void remove() {
            K k = lastKey;
            if (k == null) {
                throw new IllegalStateException("next() was not called, or remove() was already called");
            }
            lastKey = null;
            internal.delete(k);
        }
    }

    /**
     * An entry returned by the entry-set iterator; setValue writes through to the map.
     *
     * @param <K> the key type
     * @param <V> the value type
     */
    private static final class WriteThroughEntry<K, V> extends SimpleEntry<K, V> {
        private static final long serialVersionUID = 1L;
        private final transient OakMap<K, V> map;

        WriteThroughEntry(OakMap<K, V> map, K key, V value) {
            super(key, value);
            this.map = map;
        }

        @Override
        public V setValue(V value) {
            Objects.requireNonNull(value, "value");
            V old = map.put(getKey(), value);
            V snapshot = super.setValue(value);
            return old != null ? old : snapshot;
        }
    }

    /**
     * A key in this view's range where the map could be split for a parallel scan (see
     * {@link ViewSpliterator}), or null if there is none: the range lies within one chunk.
     */
    K splitKey() {
        return emptyRange ? null : internal.splitKey(lo, hi);
    }

    /**
     * The spliterator of every collection view: it creates its iterator (over a view of the map)
     * on first use and reports no size (the map is concurrent).
     *
     * <p><b>Splitting.</b> Before its iteration starts, a spliterator splits its view's key range
     * where a chunk starts, about in the middle of the range's chunks ({@link #splitKey}): the
     * part before that key, in the view's order, goes to the new spliterator, and this one keeps
     * the rest. Each part then scans its own range with its own cursor, so a parallel stream
     * scans chunks on several threads at once. Parts split no further once their range lies within
     * one chunk: handing out batches of elements from there would have one thread iterate what
     * it hands out. A view within one chunk from the start (a small map), or a spliterator that
     * has started, splits as {@link Spliterators.AbstractSpliterator} does, by handing out a batch
     * of the elements it iterates (reporting the same comparator), except over iterators that
     * reuse their elements (the zero-copy stream sets: a batch would hold one object many times),
     * which do not split then. Each part
     * is weakly consistent on its own range, so the whole keeps the guarantee of an iterator:
     * every mapping present throughout the traversal is returned once, in order within each part.
     *
     * @param <K> the map's key type
     * @param <V> the map's value type
     * @param <T> the element type
     */
    static final class ViewSpliterator<K, V, T> extends Spliterators.AbstractSpliterator<T> {
        private final Function<OakMap<K, V>, Iterator<T>> iteratorOf;
        private final Comparator<? super T> comparator;
        /** Whether it may split off batches of elements (not if its iterator reuses them). */
        private final boolean batches;
        /** Whether it split by range, or is a part of such a split: then it hands out no batches. */
        private boolean ranged;
        /** The view (the key range, in its order) this spliterator covers, until it starts. */
        private OakMap<K, V> range;
        private Iterator<T> it;

        /**
         * @param range the view whose elements to cover
         * @param iteratorOf the iterator of a view: {@code range} or a part of it
         * @param comparator what {@link #getComparator()} reports, if {@code characteristics} say SORTED
         * @param batches false for iterators that reuse their elements: then it splits by range only
         */
        ViewSpliterator(OakMap<K, V> range, Function<OakMap<K, V>, Iterator<T>> iteratorOf, int characteristics,
                        Comparator<? super T> comparator, boolean batches) {
            super(Long.MAX_VALUE, characteristics | Spliterator.CONCURRENT | Spliterator.NONNULL
                    | Spliterator.ORDERED);
            this.range = range;
            this.iteratorOf = iteratorOf;
            this.comparator = comparator;
            this.batches = batches;
        }

        private Iterator<T> it() {
            Iterator<T> i = it;
            if (i == null) {
                i = iteratorOf.apply(range);
                it = i;
            }
            return i;
        }

        @Override
        public boolean tryAdvance(Consumer<? super T> action) {
            Objects.requireNonNull(action);
            Iterator<T> i = it();
            if (!i.hasNext()) {
                return false;
            }
            action.accept(i.next());
            return true;
        }

        @Override
        public void forEachRemaining(Consumer<? super T> action) {
            Objects.requireNonNull(action);
            it().forEachRemaining(action);
        }

        @Override
        public Spliterator<T> trySplit() {
            if (it == null) {
                K at = range.splitKey();
                if (at != null) {
                    OakMap<K, V> before = range.headMap(at, false); // in the view's order
                    range = range.tailMap(at, true);
                    ranged = true;
                    ViewSpliterator<K, V, T> part = new ViewSpliterator<>(before, iteratorOf, characteristics(),
                            comparator, batches);
                    part.ranged = true;
                    return part;
                }
            }
            if (!batches || ranged) {
                return null;
            }
            Spliterator<T> batch = super.trySplit();
            // The batch (an array spliterator) reports SORTED with a null comparator, which says
            // "natural order": wrong for a descending view, and for entries, which have none.
            return batch == null || comparator == null ? batch : new SortedBatch<>(batch, comparator);
        }

        @Override
        public Comparator<? super T> getComparator() {
            if (hasCharacteristics(Spliterator.SORTED)) {
                return comparator;
            }
            throw new IllegalStateException();
        }
    }

    /**
     * A batch of elements split off a sorted {@link ViewSpliterator}, reporting the view's
     * comparator (as the spliterator it came from does) instead of natural order.
     *
     * @param <T> the element type
     */
    private static final class SortedBatch<T> implements Spliterator<T> {
        private final Spliterator<T> batch;
        private final Comparator<? super T> comparator;

        SortedBatch(Spliterator<T> batch, Comparator<? super T> comparator) {
            this.batch = batch;
            this.comparator = comparator;
        }

        @Override
        public boolean tryAdvance(Consumer<? super T> action) {
            return batch.tryAdvance(action);
        }

        @Override
        public void forEachRemaining(Consumer<? super T> action) {
            batch.forEachRemaining(action);
        }

        @Override
        public Spliterator<T> trySplit() {
            Spliterator<T> part = batch.trySplit();
            return part == null ? null : new SortedBatch<>(part, comparator);
        }

        @Override
        public long estimateSize() {
            return batch.estimateSize();
        }

        @Override
        public int characteristics() {
            return batch.characteristics();
        }

        @Override
        public Comparator<? super T> getComparator() {
            if (hasCharacteristics(Spliterator.SORTED)) {
                return comparator;
            }
            throw new IllegalStateException();
        }
    }
}
