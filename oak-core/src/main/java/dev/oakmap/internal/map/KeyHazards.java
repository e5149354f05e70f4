package dev.oakmap.internal.map;

import dev.oakmap.internal.memory.Refs;

import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.Arrays;

/**
 * Hazard pointers that keep the keys stream scans are on from being deleted, so that a scan can
 * read keys in place (no copy per step) and hand out key views that stay readable after their
 * mapping is removed, and can always re-locate by reading its current key.
 *
 * <h2>Protocol</h2>
 * Each in-place cursor registers a {@link Slot} of two hazards. Before it returns a mapping, it
 * stores the mapping's key reference in the hazard that does not hold its current key (a
 * volatile store), then checks that the chunk it found the key in is not released (a volatile
 * load). If the chunk is released, it does not return the key, and re-locates by reading its
 * current key, still protected by the other hazard. The rebalancer deletes the keys it dropped
 * only after it released their chunk, and then reads every registered hazard ({@link #deletable},
 * volatile loads): a key found in a hazard is deferred, not deleted, and retried at the next
 * rebalance. By the total order of volatile accesses (and the registry lock, for slots registered
 * meanwhile), either the rebalancer sees the hazard, or the cursor's check comes after the
 * release and fails. So the key a cursor is on, and the one it was on before, are never deleted.
 *
 * <h2>Reuse</h2>
 * Registering takes the registry's lock and a weak reference, which short scans on several
 * threads at once paid on every scan. So a cursor that runs to its end leaves its slot, cleared
 * and still registered, to its thread ({@link #unregister}), and that thread's next in-place
 * cursor takes it without the lock ({@link #register}). A cleared slot holds no key. A thread
 * keeps one such slot per map; it is dropped with the thread, and then found unreachable as
 * below. Virtual threads free their slot at once, as before: a program that runs each task on a
 * virtual thread of its own would otherwise leave a registered slot per finished task until the
 * collector found it, and every rebalance reads all registered slots.
 *
 * <h2>Abandoned scans</h2>
 * A cursor that runs to its end unregisters its slot. The registry holds slots through weak
 * references, and the cursor and its key views hold them strongly: a scan that is abandoned
 * (the loop broke off) keeps its two keys until the garbage collector finds the cursor and its
 * views unreachable; then its reference is cleared, the slot stops counting, and its entry is
 * recycled by a later registration. So deferred keys are bounded by the scans that are reachable.
 */
final class KeyHazards {

    /** The hazards of one in-place cursor. Written only by the thread using the cursor. */
    static final class Slot {
        private volatile long first;
        private volatile long second;
        /** True if the next key goes to {@link #first} (the current key is in {@link #second}). */
        private boolean nextIsFirst = true;
        /** The slot's entry in the registry, or -1 once unregistered. */
        private int index = -1;

        /**
         * Stores {@code ref} in the hazard not holding the current key: a volatile store, ordered
         * before the caller's check that the key's chunk is not released.
         */
        void protect(long ref) {
            if (nextIsFirst) {
                first = ref;
            } else {
                second = ref;
            }
        }

        /** Makes the key last protected the current one: the next key goes to the other hazard. */
        void commit() {
            nextIsFirst = !nextIsFirst;
        }

        /** Drops both hazards; the next key goes to {@link #first}, as in a new slot. */
        private void clear() {
            first = Refs.NULL;
            second = Refs.NULL;
            nextIsFirst = true;
        }
    }

    /** A registry entry: a weak reference to a slot, and its index for recycling. */
    private static final class Entry extends WeakReference<Slot> {
        final int index;

        Entry(Slot slot, int index, ReferenceQueue<Slot> queue) {
            super(slot, queue);
            this.index = index;
        }
    }

    private final ReferenceQueue<Slot> cleared = new ReferenceQueue<>();
    /** Registered slots by index (null: free). Guarded by this. */
    private Entry[] entries = new Entry[8];
    /** Free indexes below {@link #high}. Guarded by this. */
    private int[] free = new int[8];
    private int freeCount;
    /** Indexes at or above this were never used. Guarded by this. */
    private int high;

    /** Dropped keys found protected, to delete at a later rebalance (guarded by the rebalance lock). */
    private long[] deferred = new long[8];
    private int deferredCount;

    /** Each thread's registered, cleared slot, left by its last finished cursor (see "Reuse"). */
    private final ThreadLocal<Slot[]> idle = ThreadLocal.withInitial(() -> new Slot[1]);

    /**
     * @return a registered slot with no hazards set: the calling thread's idle one if it has one,
     *     else a new one; its hazards count until {@link #unregister} or until it is unreachable
     */
    Slot register() {
        Slot[] mine = idle.get();
        Slot s = mine[0];
        if (s != null) {
            mine[0] = null;
            return s;
        }
        return registerNew();
    }

    private synchronized Slot registerNew() {
        recycleCleared();
        Slot s = new Slot();
        int i;
        if (freeCount > 0) {
            i = free[--freeCount];
        } else {
            if (high == entries.length) {
                entries = Arrays.copyOf(entries, high * 2);
            }
            i = high++;
        }
        s.index = i;
        entries[i] = new Entry(s, i, cleared);
        return s;
    }

    /**
     * Drops a slot's hazards (volatile stores), and keeps the slot registered for the calling
     * platform thread's next cursor if it has none idle, else frees its entry. Call once per
     * {@link #register}, from the thread that registered it, when no key it protects is read
     * any more.
     */
    void unregister(Slot s) {
        s.clear();
        Slot[] mine = idle.get();
        if (mine[0] == s) {
            return; // already left idle by an earlier call
        }
        if (mine[0] == null && s.index >= 0 && !Thread.currentThread().isVirtual()) {
            mine[0] = s;
            return;
        }
        free(s);
    }

    /** Frees a cleared slot's registry entry. Idempotent. */
    private synchronized void free(Slot s) {
        if (s.index >= 0) {
            Entry e = entries[s.index];
            entries[s.index] = null;
            e.clear(); // not enqueued once cleared by hand: recycled here, once
            freeIndex(s.index);
            s.index = -1;
        }
    }

    /** Frees the entries of slots the garbage collector found unreachable. */
    private void recycleCleared() {
        for (Reference<? extends Slot> r; (r = cleared.poll()) != null; ) {
            Entry e = (Entry) r;
            if (entries[e.index] == e) {
                entries[e.index] = null;
                freeIndex(e.index);
            }
        }
    }

    private void freeIndex(int i) {
        if (freeCount == free.length) {
            free = Arrays.copyOf(free, freeCount * 2);
        }
        free[freeCount++] = i;
    }

    /**
     * Splits keys the rebalancer dropped into those it may delete now and those a scan protects,
     * which are kept here. Also hands back earlier deferred keys that are no longer protected.
     * Call under the rebalance lock, after the chunks holding {@code dropped} were released.
     *
     * @param dropped distinct references of released chunks' dropped keys
     * @return the references to delete now
     */
    long[] deletable(long[] dropped) {
        long[] hazards = snapshot();
        long[] out = new long[dropped.length + deferredCount];
        int n = 0;
        int kept = 0;
        for (int i = 0; i < deferredCount; i++) {
            if (Arrays.binarySearch(hazards, deferred[i]) >= 0) {
                deferred[kept++] = deferred[i];
            } else {
                out[n++] = deferred[i];
            }
        }
        deferredCount = kept;
        for (long ref : dropped) {
            if (Arrays.binarySearch(hazards, ref) >= 0) {
                defer(ref);
            } else {
                out[n++] = ref;
            }
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    /** @return the keys deferred now; call under the rebalance lock, which keeps them from being deleted */
    long[] deferredKeys() {
        return Arrays.copyOf(deferred, deferredCount);
    }

    /** @return the number of keys deferred (for tests, and as a hint: read without the rebalance lock) */
    int deferredCount() {
        return deferredCount;
    }

    /** @return the number of registered slots not yet found unreachable, idle ones included (for tests) */
    synchronized int registered() {
        recycleCleared();
        return high - freeCount;
    }

    private void defer(long ref) {
        if (deferredCount == deferred.length) {
            deferred = Arrays.copyOf(deferred, deferredCount * 2);
        }
        deferred[deferredCount++] = ref;
    }

    /** @return every key protected now, sorted (volatile loads of every registered slot's hazards) */
    private synchronized long[] snapshot() {
        recycleCleared();
        long[] out = new long[8];
        int n = 0;
        for (int i = 0; i < high; i++) {
            Entry e = entries[i];
            Slot s = e == null ? null : e.get();
            if (s == null) {
                continue;
            }
            if (n + 2 > out.length) {
                out = Arrays.copyOf(out, out.length * 2);
            }
            long a = s.first;
            long b = s.second;
            if (a != Refs.NULL) {
                out[n++] = a;
            }
            if (b != Refs.NULL) {
                out[n++] = b;
            }
        }
        long[] sorted = Arrays.copyOf(out, n);
        Arrays.sort(sorted);
        return sorted;
    }
}
