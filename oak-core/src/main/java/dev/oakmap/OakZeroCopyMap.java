package dev.oakmap;

import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The zero-copy interface of an {@link OakMap} (obtained with {@link OakMap#zc()}): reads return
 * views of the off-heap bytes instead of deserialized copies, and updates run user code in place,
 * atomically, on the off-heap value.
 *
 * <p>A view obtained from a sub-map or descending map covers the same key range, in the same
 * order, as that map. All methods are thread-safe and linearizable, except the bulk views, whose
 * iterators are weakly consistent: every mapping present throughout an iteration is returned
 * exactly once and in order, and no mapping that was absent throughout is returned.
 *
 * <p>Null keys, values and functions are rejected with {@link NullPointerException}. A sub-map
 * rejects insertions of keys outside its range with {@link IllegalArgumentException}, and treats
 * such keys as absent for queries and removals. Once the map is closed, every method that reads or
 * updates it throws {@link OakClosedException}.
 *
 * <p>The bulk views ({@link #keySet()} and the others) support iteration, {@code size},
 * {@code isEmpty} and {@link java.util.Iterator#remove()}, which removes the mapping of the
 * element last returned; their other mutators throw {@link UnsupportedOperationException}.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
public interface OakZeroCopyMap<K, V> {

    /**
     * Returns a zero-copy view of the value mapped to {@code key}.
     *
     * @param key the key to look up
     * @return a view of the value mapped to {@code key}, or {@code null} if there is none. The
     *     view follows in-place updates and throws {@link DeletedMemoryAccessException} once the
     *     mapping is removed.
     * @throws NullPointerException if {@code key} is null
     * @throws OakClosedException if the map was closed
     */
    OakUnscopedBuffer get(K key);

    /**
     * Maps {@code key} to {@code value}. The previous value, if any, is overwritten in place when
     * the new serialized value takes a slice of the same size; otherwise it is replaced by a new
     * slice, and views of the previous value throw {@link DeletedMemoryAccessException}.
     *
     * @param key the key
     * @param value the value to store
     * @throws NullPointerException if {@code key} or {@code value} is null
     * @throws IllegalArgumentException if {@code key} is outside the range of this sub-map
     * @throws OakSerializationException if the key or value serializer misbehaves
     * @throws OakOutOfMemoryException if the map's memory capacity is exhausted
     * @throws OakClosedException if the map was closed
     */
    void put(K key, V value);

    /**
     * Maps {@code key} to {@code value} if it has no mapping.
     *
     * @param key the key
     * @param value the value to store if {@code key} is absent
     * @return true if inserted, false if {@code key} already had a mapping
     * @throws NullPointerException if {@code key} or {@code value} is null
     * @throws IllegalArgumentException if {@code key} is outside the range of this sub-map
     * @throws OakSerializationException if the key or value serializer misbehaves
     * @throws OakOutOfMemoryException if the map's memory capacity is exhausted
     * @throws OakClosedException if the map was closed
     */
    boolean putIfAbsent(K key, V value);

    /**
     * Removes the mapping of {@code key}, if there is one.
     *
     * @param key the key
     * @return true if a mapping was removed
     * @throws NullPointerException if {@code key} is null
     * @throws OakClosedException if the map was closed
     */
    boolean remove(K key);

    /**
     * If {@code key} is mapped, runs {@code computer} on its value in place, atomically: no reader
     * sees a partial update, no other writer runs on the same value at the same time. All or
     * nothing: if the computer throws (an exception or an error, a write out of bounds included),
     * its writes are undone before any other thread can see the value, and the exception
     * propagates unchanged; the mapping stays present with its old bytes and the map stays usable.
     * The computer should not access this map: other keys work, but touching its own key would
     * wait for itself, so that throws {@link IllegalStateException} and the value is left as it
     * was.
     *
     * @param key the key
     * @param computer the update, given a writable view of exactly the value's bytes, valid only
     *     during the call
     * @return true if the key was present and the computer ran
     * @throws NullPointerException if {@code key} or {@code computer} is null
     * @throws OakClosedException if the map was closed
     */
    boolean computeIfPresent(K key, Consumer<OakScopedWriteBuffer> computer);

    /**
     * Inserts {@code value} if {@code key} is absent, otherwise runs {@code computer} in place on
     * the present value, as {@link #computeIfPresent} does; the two cases are decided atomically.
     *
     * @param key the key
     * @param value the value to insert if {@code key} is absent
     * @param computer the update to run on the present value, as for {@link #computeIfPresent}
     * @return true if {@code value} was inserted, false if the computer ran
     * @throws NullPointerException if {@code key}, {@code value} or {@code computer} is null
     * @throws IllegalArgumentException if {@code key} is outside the range of this sub-map
     * @throws OakSerializationException if the key or value serializer misbehaves
     * @throws OakOutOfMemoryException if the map's memory capacity is exhausted
     * @throws OakClosedException if the map was closed
     */
    boolean putIfAbsentComputeIfPresent(K key, V value, Consumer<OakScopedWriteBuffer> computer);

    /**
     * Returns the keys of this map as zero-copy views.
     *
     * @return the keys, as views, in this map's order; each element is a new view object
     */
    Set<OakUnscopedBuffer> keySet();

    /**
     * Returns the values of this map as zero-copy views.
     *
     * @return the values, as views, in key order; each element is a new view object
     */
    Collection<OakUnscopedBuffer> values();

    /**
     * Returns the mappings of this map as pairs of zero-copy views.
     *
     * @return the mappings, as pairs of views, in key order; the entries do not support
     *     {@code setValue}
     */
    Set<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> entrySet();

    /**
     * Like {@link #keySet()}, but each iterator returns the same view object, repositioned at every
     * step, so a scan allocates nothing per element. An element is valid until the next call to
     * {@code next()}; copy what you need to keep. A parallel stream splits the key range, and each
     * part reuses a view of its own: read an element in the operation that receives it.
     *
     * <p>The key view reads the key where it lies, without copying it; the map keeps that key's
     * memory while the iterator is on it, so the view stays readable until the next
     * {@code next()} even if the mapping is removed meanwhile.
     *
     * @return the keys, as one reused view per iterator, in this map's order
     */
    Set<OakUnscopedBuffer> keyStreamSet();

    /**
     * Stream variant of {@link #values()}: one reused view object per iterator.
     *
     * @return the values, as one reused view per iterator, in key order
     */
    Collection<OakUnscopedBuffer> valueStreamSet();

    /**
     * Stream variant of {@link #entrySet()}: one reused entry and pair of views per iterator.
     *
     * @return the mappings, as one reused entry per iterator, in key order
     */
    Set<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> entryStreamSet();
}
