package dev.oakmap.bench.somar;

import dev.oakmap.DeletedMemoryAccessException;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakScopedWriteBuffer;
import dev.oakmap.somar.Somar;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * A concurrent sorted map from byte strings to byte strings whose keys and values live off-heap in
 * a {@link Somar}: the Nova thesis's <em>LL-map</em> (§4.2.1), and the worked example of how to
 * build a data structure on the SOMAR interface. It works over any {@code Somar} implementation
 * (Nova, lock-based, grow-only, or the EBR and Hazard Eras adaptations of this package).
 *
 * <h2>Structure</h2>
 * A Harris-Michael lock-free sorted linked list. Nodes are small on-heap objects:
 * <pre>{@code
 * Node { final long key;      // safe pointer to the key slice (never written once published)
 *        volatile long value; // safe pointer to the value slice, or REMOVED (0)
 *        volatile Object next; } // the successor Node, or Marked(successor) once the node is unlinkable
 * }</pre>
 * Keys are ordered as unsigned bytes, lexicographically. The safe pointers are plain {@code long}s
 * stored in the nodes: SOMAR allows copies of a pointer anywhere, for any time, without telling the
 * memory manager; a pointer to a slice deleted meanwhile makes the access throw
 * {@link DeletedMemoryAccessException}, never return or change another slice's bytes.
 *
 * <h2>How each operation uses SOMAR</h2>
 * <ul>
 * <li><b>Comparisons</b> read each node's key through {@link Somar#read} with a comparing function
 *     (the "SOMAR approach": no protection spans the traversal; each key access is one call). The
 *     function must be free of side effects and tolerate torn bytes: under Nova it may run on bytes
 *     that are then discarded.
 * <li><b>put</b>, key absent: {@link Somar#allocate} a key slice and a value slice, fill them with
 *     {@link Somar#writePrivate} (no synchronization: nobody else can reach them yet), and link a
 *     node with one CAS. If the CAS loses a race to another insertion of the same key, the slices
 *     were never published: give them back with {@link Somar#deletePrivate}.
 * <li><b>put</b>, key present: overwrite the value slice in place with {@link Somar#write} if the
 *     new value has the same length (the write function first checks, under the slice's write
 *     lock, that the node still holds that slice, so a put never lands in a value already
 *     removed); otherwise allocate a new slice, {@code writePrivate} it, CAS it into the node, and
 *     {@link Somar#delete} the old one.
 * <li><b>remove</b>: CAS the node's value to REMOVED (the linearization point), mark the node's
 *     next pointer, unlink it, then {@code delete} the value slice and the key slice. Threads that
 *     still hold the node (in a traversal) or the value pointer (in a get) find the slices deleted
 *     and react: a key read that throws means the node is marked (keys are deleted only after
 *     marking), so the traversal unlinks or skips it; a value read that throws means the value was
 *     removed or replaced, so the get looks at the node again.
 * <li><b>get</b>: a read-only traversal (no CAS), then {@code read} the value with the caller's
 *     function (e.g. a copy into the caller's array).
 * </ul>
 * Note what is absent: no reference counting, no epochs or hazard pointers in the data structure,
 * no retry loops around every access beyond handling {@code DeletedMemoryAccessException}, and no
 * nesting of SOMAR calls (a function passed to {@code read}/{@code write} never calls back into
 * the manager).
 *
 * <h2>Guarantees</h2>
 * Linearizable put, remove, get and containsKey. The list itself is lock-free (CAS only); the one
 * place where a thread waits is a value slice's write lock, which {@link Somar#write} holds while
 * its function runs: a put that overwrites a value, a remove that deletes it, and (under Nova and
 * the EBR/HE adaptations, whose reads validate a write sequence) a get of that value wait for a
 * concurrent write of the same value to finish. {@link #size} and {@link #forEach} are weakly
 * consistent traversals. The map does not own its {@code Somar}: close the manager to free
 * everything.
 *
 * <pre>{@code
 * try (Somar memory = Somar.create(MemoryScheme.NOVA, 1L << 30)) {
 *     LinkedListMap map = new LinkedListMap(memory);
 *     map.put(key, value);
 *     byte[] copy = map.get(key);
 *     Long first = map.get(key, b -> b.getLong(0)); // zero-copy read of part of the value (null if absent)
 *     map.remove(key);
 * }
 * }</pre>
 */
public final class LinkedListMap {

    /** The value of a removed node. No safe pointer is 0 (block ids start at 1). */
    private static final long REMOVED = 0L;

    private static final VarHandle NEXT;
    private static final VarHandle VALUE;
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            NEXT = l.findVarHandle(Node.class, "next", Object.class);
            VALUE = l.findVarHandle(Node.class, "value", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** A list node; the head sentinel has no key. */
    static final class Node {
        final long key;
        volatile long value;
        /** The successor ({@code Node} or null), or a {@link Marked} wrapping it once this node is marked. */
        volatile Object next;

        Node(long key, long value) {
            this.key = key;
            this.value = value;
        }
    }

    /** A marked next pointer: the node holding it is being removed and its next never changes again. */
    private record Marked(Node next) {
    }

    /** The result of {@link #find}: {@code pred.key < key <= curr.key}, both unmarked when seen. */
    private static final class Window {
        Node pred;
        Node curr;
    }

    private final Somar memory;
    private final Node head = new Node(0L, REMOVED);

    /** @param memory where keys and values are allocated; shared with others is fine */
    public LinkedListMap(Somar memory) {
        this.memory = Objects.requireNonNull(memory, "memory");
    }

    /** @return the memory manager holding this map's keys and values */
    public Somar memory() {
        return memory;
    }

    /**
     * Maps {@code key} to a copy of {@code value}.
     *
     * @return true if the key was absent (a node was inserted), false if its value was replaced
     */
    public boolean put(byte[] key, byte[] value) {
        Objects.requireNonNull(value, "value");
        Function<OakScopedReadBuffer, Integer> cmp = comparing(key);
        Window w = new Window();
        Node fresh = null; // a node with private slices, not linked yet
        while (true) {
            if (find(key, cmp, w)) {
                if (fresh != null) { // lost the race to insert: our slices were never published
                    memory.deletePrivate(fresh.key);
                    memory.deletePrivate(fresh.value);
                    fresh = null;
                }
                Node n = w.curr;
                long old = n.value;
                if (old == REMOVED) {
                    mark(n); // removed but still linked: help, then look again
                    continue;
                }
                if (overwrite(n, old, value)) {
                    return false;
                }
                continue; // the value was removed or replaced under us
            }
            if (fresh == null) {
                fresh = newNode(key, value);
            }
            NEXT.set(fresh, w.curr); // published by the CAS below
            if (NEXT.compareAndSet(w.pred, w.curr, fresh)) {
                return true;
            }
        }
    }

    /**
     * Replaces the value of a present key.
     *
     * @return true if done; false to retry (the node's value changed, or was removed, meanwhile)
     */
    private boolean overwrite(Node n, long old, byte[] value) {
        Boolean inPlace;
        try {
            inPlace = memory.write(old, b -> {
                if (n.value != old) {
                    return null; // replaced or removed before we got the lock: do not write
                }
                if (b.capacity() != value.length) {
                    return Boolean.FALSE;
                }
                b.putBytes(0, value, 0, value.length);
                return Boolean.TRUE;
            });
        } catch (DeletedMemoryAccessException e) {
            return false; // the slice was deleted (removed or replaced) since we loaded it
        }
        if (inPlace == null) {
            return false;
        }
        if (inPlace) {
            return true;
        }
        long fresh = newSlice(value);
        if (VALUE.compareAndSet(n, old, fresh)) {
            memory.delete(old); // readers that loaded `old` now fail and look at the node again
            return true;
        }
        memory.deletePrivate(fresh);
        return false;
    }

    /**
     * Removes {@code key}'s mapping.
     *
     * @return true if this call removed it
     */
    public boolean remove(byte[] key) {
        Function<OakScopedReadBuffer, Integer> cmp = comparing(key);
        Window w = new Window();
        while (true) {
            if (!find(key, cmp, w)) {
                return false;
            }
            Node n = w.curr;
            long v = n.value;
            if (v == REMOVED) {
                mark(n); // another remove won; help it along
                return false;
            }
            if (VALUE.compareAndSet(n, v, REMOVED)) { // the linearization point
                mark(n);
                find(key, cmp, w); // unlinks n (find unlinks every marked node on its way)
                memory.delete(v);
                memory.delete(n.key); // after the mark: a traversal that finds it deleted knows n is marked
                return true;
            }
        }
    }

    /**
     * Reads {@code key}'s value with {@code reader} (zero-copy). Under Nova the reader may run more
     * than once and see torn bytes on runs that are discarded: keep it free of side effects.
     *
     * @return what {@code reader} returned, or null if the key is absent
     */
    public <R> R get(byte[] key, Function<? super OakScopedReadBuffer, ? extends R> reader) {
        Objects.requireNonNull(reader, "reader");
        Node n = search(key, comparing(key));
        if (n == null) {
            return null;
        }
        while (true) {
            long v = n.value;
            if (v == REMOVED) {
                return null;
            }
            try {
                return memory.read(v, reader);
            } catch (DeletedMemoryAccessException e) {
                // removed or replaced since we loaded v: the node holds the answer now
            }
        }
    }

    /** @return a copy of {@code key}'s value, or null if absent */
    public byte[] get(byte[] key) {
        return get(key, LinkedListMap::copy);
    }

    /** @return true if {@code key} is mapped */
    public boolean containsKey(byte[] key) {
        Node n = search(key, comparing(key));
        return n != null && n.value != REMOVED;
    }

    /** @return the number of mappings, counted by a traversal (O(n), weakly consistent) */
    public long size() {
        long n = 0;
        for (Node c = successor(head); c != null; c = successor(c)) {
            if (!(c.next instanceof Marked) && c.value != REMOVED) {
                n++;
            }
        }
        return n;
    }

    /**
     * Visits copies of the mappings in key order (weakly consistent: mappings removed during the
     * traversal may or may not be visited).
     */
    public void forEach(BiConsumer<byte[], byte[]> action) {
        for (Node c = successor(head); c != null; c = successor(c)) {
            long v = c.value;
            if (c.next instanceof Marked || v == REMOVED) {
                continue;
            }
            try {
                byte[] k = memory.read(c.key, LinkedListMap::copy);
                byte[] val = memory.read(v, LinkedListMap::copy);
                action.accept(k, val);
            } catch (DeletedMemoryAccessException removedMeanwhile) {
                // skip it
            }
        }
    }

    /** Removes every mapping (one remove per key found by a traversal). */
    public void clear() {
        for (Node c = successor(head); c != null; c = successor(c)) {
            try {
                byte[] k = memory.read(c.key, LinkedListMap::copy);
                remove(k);
            } catch (DeletedMemoryAccessException removedMeanwhile) {
                // skip it
            }
        }
    }

    // ---------------------------------------------------------------- internals

    private static Node successor(Node n) {
        Object nx = n.next;
        return nx instanceof Marked m ? m.next : (Node) nx;
    }

    private static void mark(Node n) {
        while (true) {
            Object nx = n.next;
            if (nx instanceof Marked || NEXT.compareAndSet(n, nx, new Marked((Node) nx))) {
                return;
            }
        }
    }

    /**
     * Harris-Michael search: finds {@code pred.key < key <= curr.key} (curr null at the end),
     * unlinking every marked node on the way.
     *
     * @return true if {@code curr} holds {@code key}
     */
    private boolean find(byte[] key, Function<OakScopedReadBuffer, Integer> cmp, Window w) {
        retry:
        while (true) {
            Node pred = head; // the head is never marked
            Node curr = (Node) pred.next;
            while (true) {
                if (curr == null) {
                    w.pred = pred;
                    w.curr = null;
                    return false;
                }
                Object cn = curr.next;
                if (cn instanceof Marked m) {
                    if (!NEXT.compareAndSet(pred, curr, m.next)) {
                        continue retry; // pred changed or was marked
                    }
                    curr = m.next;
                    continue;
                }
                int c;
                try {
                    c = memory.read(curr.key, cmp);
                } catch (DeletedMemoryAccessException e) {
                    requireMarked(curr);
                    continue; // go round: it is marked now, so it gets unlinked
                }
                if (c >= 0) {
                    w.pred = pred;
                    w.curr = curr;
                    return c == 0;
                }
                pred = curr;
                curr = (Node) cn;
            }
        }
    }

    /** Read-only search (no CAS): the unmarked node holding {@code key}, or null. */
    private Node search(byte[] key, Function<OakScopedReadBuffer, Integer> cmp) {
        Node curr = successor(head);
        while (curr != null) {
            Object cn = curr.next;
            if (cn instanceof Marked m) {
                curr = m.next;
                continue;
            }
            int c;
            try {
                c = memory.read(curr.key, cmp);
            } catch (DeletedMemoryAccessException e) {
                requireMarked(curr);
                continue;
            }
            if (c >= 0) {
                return c == 0 ? curr : null;
            }
            curr = (Node) cn;
        }
        return null;
    }

    /**
     * A key slice is deleted only after its node was marked (and the deletion's volatile CAS, seen
     * by the failed read, orders the mark before it): anything else is a bug.
     */
    private static void requireMarked(Node n) {
        if (!(n.next instanceof Marked)) {
            throw new IllegalStateException("a key slice was deleted while its node is not marked");
        }
    }

    private Node newNode(byte[] key, byte[] value) {
        long k = newSlice(key);
        long v;
        try {
            v = newSlice(value);
        } catch (RuntimeException | Error e) {
            memory.deletePrivate(k);
            throw e;
        }
        return new Node(k, v);
    }

    private long newSlice(byte[] bytes) {
        long p = memory.allocate(bytes.length);
        memory.writePrivate(p, b -> b.putBytes(0, bytes, 0, bytes.length));
        return p;
    }

    private static byte[] copy(OakScopedReadBuffer b) {
        byte[] a = new byte[b.capacity()];
        b.getBytes(0, a, 0, a.length);
        return a;
    }

    /** @return a function comparing a stored key with {@code key}: negative if the stored one is smaller */
    static Function<OakScopedReadBuffer, Integer> comparing(byte[] key) {
        Objects.requireNonNull(key, "key");
        return b -> compare(b, key);
    }

    /**
     * Compares a key slice with {@code key} as unsigned bytes, 8 at a time.
     *
     * @return -1, 0 or 1 as the slice is smaller than, equal to, or greater than {@code key}
     */
    static int compare(OakScopedReadBuffer b, byte[] key) {
        int len = b.capacity();
        int n = Math.min(len, key.length);
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
        return Integer.compare(len, key.length);
    }
}
