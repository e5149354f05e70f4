package dev.oakmap.bench.somar;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Objects;

/**
 * The on-heap baseline of the LL-map experiment: the same Harris-Michael list as
 * {@link LinkedListMap}, with the keys and values as {@code byte[]} objects on the heap, managed by
 * the garbage collector (the thesis's "GC" lines in Figure 4.1(a)-(c)). Values are immutable
 * arrays: a put of a present key installs a new copy with a CAS (the natural managed-memory way;
 * overwriting a shared array in place would let readers see torn values), a remove CASes the value
 * to null. Kept separate from {@code LinkedListMap} rather than parametrized, so that neither pays
 * for an abstraction the other does not need.
 */
public final class HeapLinkedListMap {

    private static final VarHandle NEXT;
    private static final VarHandle VALUE;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            NEXT = l.findVarHandle(Node.class, "next", Object.class);
            VALUE = l.findVarHandle(Node.class, "value", byte[].class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static final class Node {
        final byte[] key;
        volatile byte[] value; // null once removed
        volatile Object next;  // Node, null, or Marked

        Node(byte[] key, byte[] value) {
            this.key = key;
            this.value = value;
        }
    }

    private record Marked(Node next) {
    }

    private final Node head = new Node(new byte[0], null);

    /** Maps {@code key} to a copy of {@code value}. @return true if the key was absent */
    public boolean put(byte[] key, byte[] value) {
        Objects.requireNonNull(value, "value");
        Node[] w = new Node[2];
        Node fresh = null;
        while (true) {
            if (find(key, w)) {
                Node n = w[1];
                byte[] old = n.value;
                if (old == null) {
                    mark(n);
                    continue;
                }
                if (VALUE.compareAndSet(n, old, value.clone())) {
                    return false;
                }
                continue;
            }
            if (fresh == null) {
                fresh = new Node(key.clone(), value.clone());
            }
            NEXT.set(fresh, w[1]);
            if (NEXT.compareAndSet(w[0], w[1], fresh)) {
                return true;
            }
        }
    }

    /** Removes {@code key}. @return true if this call removed it */
    public boolean remove(byte[] key) {
        Node[] w = new Node[2];
        while (true) {
            if (!find(key, w)) {
                return false;
            }
            Node n = w[1];
            byte[] v = n.value;
            if (v == null) {
                mark(n);
                return false;
            }
            if (VALUE.compareAndSet(n, v, null)) {
                mark(n);
                find(key, w);
                return true;
            }
        }
    }

    /** @return the stored value array (the caller must not modify it), or null */
    public byte[] get(byte[] key) {
        Node curr = successor(head);
        while (curr != null) {
            Object cn = curr.next;
            if (cn instanceof Marked m) {
                curr = m.next;
                continue;
            }
            int c = Arrays.compareUnsigned(curr.key, key);
            if (c >= 0) {
                return c == 0 ? curr.value : null;
            }
            curr = (Node) cn;
        }
        return null;
    }

    /** @return the number of mappings (O(n), weakly consistent) */
    public long size() {
        long n = 0;
        for (Node c = successor(head); c != null; c = successor(c)) {
            if (!(c.next instanceof Marked) && c.value != null) {
                n++;
            }
        }
        return n;
    }

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

    /** Fills {@code w} with pred and curr ({@code pred.key < key <= curr.key}); unlinks marked nodes. */
    private boolean find(byte[] key, Node[] w) {
        retry:
        while (true) {
            Node pred = head;
            Node curr = (Node) pred.next;
            while (true) {
                if (curr == null) {
                    w[0] = pred;
                    w[1] = null;
                    return false;
                }
                Object cn = curr.next;
                if (cn instanceof Marked m) {
                    if (!NEXT.compareAndSet(pred, curr, m.next)) {
                        continue retry;
                    }
                    curr = m.next;
                    continue;
                }
                int c = Arrays.compareUnsigned(curr.key, key);
                if (c >= 0) {
                    w[0] = pred;
                    w[1] = curr;
                    return c == 0;
                }
                pred = curr;
                curr = (Node) cn;
            }
        }
    }
}
