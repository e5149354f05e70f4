package dev.oakmap;

import java.util.AbstractCollection;
import java.util.Iterator;
import java.util.Objects;
import java.util.Spliterator;
import java.util.function.Predicate;

/**
 * The values of an {@link OakMap} or of one of its views, in the view's key order. Supports
 * removal (through the iterator), not addition; iterators are weakly consistent.
 */
final class ValuesView<K, V> extends AbstractCollection<V> {

    private final OakMap<K, V> m;

    ValuesView(OakMap<K, V> m) {
        this.m = m;
    }

    @Override
    public Iterator<V> iterator() {
        return m.valueIterator();
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
        return m.containsValue(o);
    }

    /**
     * Removes the mappings whose value passes {@code filter}, each only if it still holds the value
     * tested (see {@link OakMap#removeMappingsIf}), as {@code ConcurrentSkipListMap}'s values do.
     */
    @Override
    public boolean removeIf(Predicate<? super V> filter) {
        Objects.requireNonNull(filter, "filter");
        return m.removeMappingsIf((k, v) -> filter.test(v));
    }

    @Override
    public void clear() {
        m.clear();
    }

    @Override
    public Spliterator<V> spliterator() {
        return new OakMap.ViewSpliterator<>(m, OakMap::valueIterator, 0, null, true);
    }
}
