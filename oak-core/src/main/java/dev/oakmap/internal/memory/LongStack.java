package dev.oakmap.internal.memory;

import java.util.Arrays;

/** A small synchronized stack of primitive longs (free slice references of one size class). */
final class LongStack {
    private long[] items = new long[4];
    private volatile int size;

    synchronized void push(long value) {
        int n = size;
        if (n == items.length) {
            items = Arrays.copyOf(items, n * 2);
        }
        items[n] = value;
        size = n + 1;
    }

    /** @return the popped value, or {@link Refs#NULL} if empty */
    long pop() {
        if (size == 0) { // racy fast path: an empty stack costs no lock
            return Refs.NULL;
        }
        synchronized (this) {
            int n = size;
            if (n == 0) {
                return Refs.NULL;
            }
            size = n - 1;
            return items[n - 1];
        }
    }

    /**
     * Removes every value for which {@code drop} holds.
     *
     * @return how many were removed
     */
    synchronized int removeIf(java.util.function.LongPredicate drop) {
        int kept = 0;
        int n = size;
        for (int i = 0; i < n; i++) {
            if (!drop.test(items[i])) {
                items[kept++] = items[i];
            }
        }
        size = kept;
        return n - kept;
    }

    int size() {
        return size;
    }
}
