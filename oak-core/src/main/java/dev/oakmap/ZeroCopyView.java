package dev.oakmap;

import dev.oakmap.internal.map.Cursor;

import java.util.AbstractCollection;
import java.util.AbstractMap;
import java.util.Collection;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.Spliterator;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The {@link OakZeroCopyMap} of an {@link OakMap} or of one of its views: same key range and
 * direction as that view.
 *
 * <p>The bulk collections ({@link #keySet()} and friends) support iteration, {@code size} and
 * {@code isEmpty}, and removal through {@link Iterator#remove()}, which removes the mapping of the
 * element last returned, also after a {@code hasNext()} has moved the iterator on (as
 * {@link Iterator} allows). Every other mutator of these collections throws
 * {@link UnsupportedOperationException}.
 */
final class ZeroCopyView<K, V> implements OakZeroCopyMap<K, V> {

    private final OakMap<K, V> m;

    ZeroCopyView(OakMap<K, V> m) {
        this.m = m;
    }

    @Override
    public OakUnscopedBuffer get(K key) {
        Objects.requireNonNull(key, "key");
        if (!m.inRange(key)) {
            m.ensureOpen();
            return null;
        }
        return m.internal.getValueView(key);
    }

    @Override
    public void put(K key, V value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        m.checkInRange(key);
        m.internal.put(key, value, false);
    }

    @Override
    public boolean putIfAbsent(K key, V value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        m.checkInRange(key);
        return m.internal.putIfAbsentZc(key, value);
    }

    @Override
    public boolean remove(K key) {
        return m.removeKey(key);
    }

    @Override
    public boolean computeIfPresent(K key, Consumer<OakScopedWriteBuffer> computer) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(computer, "computer");
        if (!m.inRange(key)) {
            m.ensureOpen();
            return false;
        }
        return m.internal.computeIfPresentZc(key, computer);
    }

    @Override
    public boolean putIfAbsentComputeIfPresent(K key, V value, Consumer<OakScopedWriteBuffer> computer) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(computer, "computer");
        m.checkInRange(key);
        return m.internal.putIfAbsentComputeIfPresent(key, value, computer);
    }

    @Override
    public Set<OakUnscopedBuffer> keySet() {
        return new ZcSet<>(Kind.KEYS, false);
    }

    @Override
    public Collection<OakUnscopedBuffer> values() {
        return new ZcCollection<>(Kind.VALUES, false);
    }

    @Override
    public Set<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> entrySet() {
        return new ZcSet<>(Kind.ENTRIES, false);
    }

    @Override
    public Set<OakUnscopedBuffer> keyStreamSet() {
        return new ZcSet<>(Kind.KEYS, true);
    }

    @Override
    public Collection<OakUnscopedBuffer> valueStreamSet() {
        return new ZcCollection<>(Kind.VALUES, true);
    }

    @Override
    public Set<Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer>> entryStreamSet() {
        return new ZcSet<>(Kind.ENTRIES, true);
    }

    /** What a bulk collection returns per mapping. */
    private enum Kind { KEYS, VALUES, ENTRIES }

    /** A reusable entry of two reusable views, for {@link #entryStreamSet()}. */
    private static final class StreamEntry implements Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> {
        OakUnscopedBuffer key;
        OakUnscopedBuffer value;

        @Override
        public OakUnscopedBuffer getKey() {
            return key;
        }

        @Override
        public OakUnscopedBuffer getValue() {
            return value;
        }

        @Override
        public OakUnscopedBuffer setValue(OakUnscopedBuffer v) {
            throw new UnsupportedOperationException("use OakZeroCopyMap.computeIfPresent to update in place");
        }

        @Override
        public String toString() {
            return key + "=" + value;
        }
    }

    /** A read-mostly collection over a cursor of the view. */
    private class ZcCollection<E> extends AbstractCollection<E> {
        private final Kind kind;
        private final boolean stream;

        ZcCollection(Kind kind, boolean stream) {
            this.kind = kind;
            this.stream = stream;
        }

        @Override
        public Iterator<E> iterator() {
            return new ZcIterator<>(kind, stream);
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
        public Spliterator<E> spliterator() {
            int ch = kind == Kind.VALUES ? 0 : Spliterator.DISTINCT;
            return new OakMap.ViewSpliterator<K, V, E>(m, v -> v.zcView().new ZcIterator<>(kind, stream), ch, null,
                    !stream);
        }

        @Override
        public boolean add(E e) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean addAll(Collection<? extends E> c) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean remove(Object o) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean removeAll(Collection<?> c) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean retainAll(Collection<?> c) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean removeIf(Predicate<? super E> filter) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void clear() {
            throw new UnsupportedOperationException();
        }
    }

    /** A {@link ZcCollection} with the equality of a {@link Set}. */
    private final class ZcSet<E> extends ZcCollection<E> implements Set<E> {
        ZcSet(Kind kind, boolean stream) {
            super(kind, stream);
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
                return size() == s.size() && containsAll(s);
            } catch (ClassCastException | NullPointerException unused) {
                return false;
            }
        }

        @Override
        public int hashCode() {
            int h = 0;
            for (E e : this) {
                h += e.hashCode();
            }
            return h;
        }

        @Override
        public Spliterator<E> spliterator() {
            return super.spliterator();
        }
    }

    /**
     * Iterates a cursor, looking ahead only when {@code hasNext} is called. {@code remove()}
     * removes the cursor's current mapping if it has not looked ahead since {@code next()}, and
     * its previous one if it has ({@link Cursor#removePrevious}).
     */
    private final class ZcIterator<E> implements Iterator<E> {
        private final Cursor<K, V> cursor;
        private final Kind kind;
        private final boolean stream;
        private final StreamEntry streamEntry;
        /** True if the cursor was advanced past the last returned element (by hasNext). */
        private boolean lookedAhead;
        private boolean hasNext;
        private boolean canRemove;

        ZcIterator(Kind kind, boolean stream) {
            this.cursor = m.viewCursor();
            if (cursor != null) {
                // no key copy per step: a stream's reused key view reads the protected key slice,
                // and each key view of a plain iterator takes the one copy it needs itself
                cursor.readKeysInPlace(!stream && kind != Kind.VALUES);
            }
            this.kind = kind;
            this.stream = stream;
            this.streamEntry = stream && kind == Kind.ENTRIES ? new StreamEntry() : null;
        }

        @Override
        public boolean hasNext() {
            if (!lookedAhead) {
                hasNext = cursor != null && cursor.advance();
                lookedAhead = true;
            }
            return hasNext;
        }

        @Override
        @SuppressWarnings("unchecked")
        public E next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            lookedAhead = false;
            canRemove = true;
            StreamEntry se = streamEntry;
            if (se != null && se.key != null) {
                cursor.requireCurrent(); // closed since hasNext()? Say so here, as for the other kinds
                return (E) se; // a stream's entry: its two reused views already follow the cursor
            }
            return element();
        }

        /** The element the cursor is on, for every kind but an already bound stream entry. */
        @SuppressWarnings("unchecked")
        private E element() {
            Object e;
            if (stream) {
                e = switch (kind) {
                    case KEYS -> cursor.reusableKeyView();
                    case VALUES -> cursor.reusableValueView();
                    case ENTRIES -> {
                        streamEntry.key = cursor.reusableKeyView();
                        streamEntry.value = cursor.reusableValueView();
                        yield streamEntry;
                    }
                };
            } else {
                e = switch (kind) {
                    case KEYS -> cursor.keyView();
                    case VALUES -> cursor.valueView();
                    case ENTRIES -> new AbstractMap.SimpleImmutableEntry<>(cursor.keyView(), cursor.valueView());
                };
            }
            return (E) e;
        }

        @Override
        public void remove() {
            if (!canRemove) {
                throw new IllegalStateException("next() was not called, or remove() was already called");
            }
            canRemove = false;
            if (lookedAhead) {
                cursor.removePrevious(); // hasNext() moved the cursor past the element last returned
            } else {
                cursor.removeCurrent();
            }
        }
    }
}
