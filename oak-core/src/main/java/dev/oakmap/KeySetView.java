package dev.oakmap;

import java.util.AbstractSet;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Objects;
import java.util.Set;
import java.util.Spliterator;

/**
 * The key set of an {@link OakMap} or of one of its views: a {@link NavigableSet} backed by the
 * map, like {@code ConcurrentSkipListMap}'s key set. Supports removal, not addition; iterators are
 * weakly consistent.
 */
final class KeySetView<K, V> extends AbstractSet<K> implements NavigableSet<K> {

    private final OakMap<K, V> m;

    KeySetView(OakMap<K, V> m) {
        this.m = m;
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
        return m.containsKey(o);
    }

    @Override
    @SuppressWarnings("unchecked")
    public boolean remove(Object o) {
        return m.removeKey((K) o); // the value is not read: nothing to deserialize
    }

    @Override
    public void clear() {
        m.clear();
    }

    @Override
    public K lower(K e) {
        return m.lowerKey(e);
    }

    @Override
    public K floor(K e) {
        return m.floorKey(e);
    }

    @Override
    public K ceiling(K e) {
        return m.ceilingKey(e);
    }

    @Override
    public K higher(K e) {
        return m.higherKey(e);
    }

    @Override
    public Comparator<? super K> comparator() {
        return m.comparator();
    }

    @Override
    public K first() {
        return m.firstKey();
    }

    @Override
    public K last() {
        return m.lastKey();
    }

    @Override
    public K pollFirst() {
        Map.Entry<K, V> e = m.pollFirstEntry();
        return e == null ? null : e.getKey();
    }

    @Override
    public K pollLast() {
        Map.Entry<K, V> e = m.pollLastEntry();
        return e == null ? null : e.getKey();
    }

    @Override
    public Iterator<K> iterator() {
        return m.keyIterator();
    }

    @Override
    public Iterator<K> descendingIterator() {
        return m.descendingMap().keyIterator();
    }

    @Override
    public NavigableSet<K> descendingSet() {
        return m.descendingMap().keySet();
    }

    @Override
    public NavigableSet<K> subSet(K fromElement, boolean fromInclusive, K toElement, boolean toInclusive) {
        return new KeySetView<>(m.subMap(fromElement, fromInclusive, toElement, toInclusive));
    }

    @Override
    public NavigableSet<K> headSet(K toElement, boolean inclusive) {
        return new KeySetView<>(m.headMap(toElement, inclusive));
    }

    @Override
    public NavigableSet<K> tailSet(K fromElement, boolean inclusive) {
        return new KeySetView<>(m.tailMap(fromElement, inclusive));
    }

    @Override
    public NavigableSet<K> subSet(K fromElement, K toElement) {
        return subSet(fromElement, true, toElement, false);
    }

    @Override
    public NavigableSet<K> headSet(K toElement) {
        return headSet(toElement, false);
    }

    @Override
    public NavigableSet<K> tailSet(K fromElement) {
        return tailSet(fromElement, true);
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
    public boolean removeAll(Collection<?> c) {
        Objects.requireNonNull(c);
        m.ensureOpen(); // an empty c would otherwise not reach the map
        boolean modified = false;
        for (Object e : c) {
            if (remove(e)) {
                modified = true;
            }
        }
        return modified;
    }

    @Override
    public Spliterator<K> spliterator() {
        return new OakMap.ViewSpliterator<>(m, OakMap::keyIterator,
                Spliterator.DISTINCT | Spliterator.SORTED, m.comparator(), true);
    }
}
