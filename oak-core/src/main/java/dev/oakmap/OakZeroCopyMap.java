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
 * <p>Null keys and values are rejected with {@link NullPointerException}; keys outside the
 * range of a sub-map with {@link IllegalArgumentException}.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
public interface OakZeroCopyMap<K, V> {

    /**
     * @return a view of the value mapped to {@code key}, or {@code null} if there is none. The
     *     view follows in-place updates and throws {@link DeletedMemoryAccessException} once the
     *     mapping is removed.
     */
    OakUnscopedBuffer get(K key);

    /** Maps {@code key} to {@code value}, overwriting the previous value in place if it fits. */
    void put(K key, V value);

    /** Maps {@code key} to {@code value} if it has no mapping. @return true if inserted */
    boolean putIfAbsent(K key, V value);

    /** Removes the mapping of {@code key}. @return true if a mapping was removed */
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
     * @return true if the key was present and the computer ran
     */
    boolean computeIfPresent(K key, Consumer<OakScopedWriteBuffer> computer);

    /**
     * Inserts {@code value} if {@code key} is absent, otherwise runs {@code computer} in place on
     * the present value, as {@link #computeIfPresent} does; the two cases are decided atomically.
     *
     * @return true if {@code value} was inserted, false if the computer ran
     */
    boolean putIfAbsentComputeIfPresent(K key, V value, Consumer<OakScopedWriteBuffer> computer);

    /** @return the keys, as views, in this map's order; each element is a new view object */
    Set<OakUnscopedBuffer> keySet();

    /** @return the values, as views, in key order; each element is a new view object */
    Collection<OakUnscopedBuffer> values();

    /** @return the mappings, as pairs of views, in key order */
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
     */
    Set<OakUnscopedBuffer> keyStreamSet();

    /** Stream variant of {@link #values()}: one reused view object per iterator. */
    Collection<OakUnscopedBuffer> valueStreamSet();

    /** Stream variant of {@link #entrySet()}: one reused entry and pair of views per iterator. */
    Set<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> entryStreamSet();
}
