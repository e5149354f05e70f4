package dev.oakmap;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.Spliterator;
import java.util.function.Predicate;

/**
 * The mappings of an {@link OakMap} or of one of its views, in the view's order. Supports removal,
 * not addition; iterators are weakly consistent and return entries whose {@code setValue} writes
 * through to the map.
 */
final class EntrySetView<K, V> extends AbstractSet<Map.Entry<K, V>> {

    private final OakMap<K, V> m;

    EntrySetView(OakMap<K, V> m) {
        this.m = m;
    }

    @Override
    public Iterator<Map.Entry<K, V>> iterator() {
        return m.entryIterator();
    }

    @Override
    public int size() {
        return m.size();
    }

    @Override
    public boolean isEmpty() {
        return m.isEmpty();
    }

    @Override
    public boolean contains(Object o) {
        if (!(o instanceof Map.Entry<?, ?> e)) {
            m.ensureOpen(); // no entry to look up, but a closed map still says so
            return false;
        }
        V v = m.get(e.getKey());
        return v != null && v.equals(e.getValue());
    }

    @Override
    public boolean remove(Object o) {
        if (!(o instanceof Map.Entry<?, ?> e)) {
            m.ensureOpen();
            return false;
        }
        return m.remove(e.getKey(), e.getValue());
    }

    /**
     * Removes the mappings that pass {@code filter}, each only if it still holds the value tested
     * (see {@link OakMap#removeMappingsIf}), as {@code ConcurrentSkipListMap}'s entry set does. The
     * filter sees immutable snapshots.
     */
    @Override
    public boolean removeIf(Predicate<? super Map.Entry<K, V>> filter) {
        Objects.requireNonNull(filter, "filter");
        return m.removeMappingsIf((k, v) -> filter.test(new AbstractMap.SimpleImmutableEntry<>(k, v)));
    }

    @Override
    public void clear() {
        m.clear();
    }

    @Override
    public boolean equals(Object o) {
        if (o == this) {
            return true;
        }
        if (!(o instanceof Set<?> s)) {
            return false;
        }
        try {
            return containsAll(s) && s.containsAll(this);
        } catch (ClassCastException | NullPointerException unused) {
            return false;
        }
    }

    @Override
    public int hashCode() {
        return super.hashCode();
    }

    @Override
    public Spliterator<Map.Entry<K, V>> spliterator() {
        // Sorted by key, in this view's order, as ConcurrentSkipListMap's entry spliterator is.
        return new OakMap.ViewSpliterator<>(m, OakMap::entryIterator, Spliterator.DISTINCT | Spliterator.SORTED,
                Map.Entry.comparingByKey(m.comparator()), true);
    }
}
