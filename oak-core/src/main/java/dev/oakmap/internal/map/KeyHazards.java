package dev.oakmap.internal.map;

import dev.oakmap.internal.memory.Refs;

import java.lang.ref.WeakReference;
import java.util.Arrays;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Hazard pointers that keep the key an ascending stream scan is on from being deleted, so that
 * the scan can hand out a view that reads the key in place (no copy) and still never fails
 * because the mapping was removed meanwhile.
 *
 * <h2>Protocol</h2>
 * Each thread has one slot per map. A cursor that reads keys in place, before it returns a
 * mapping, stores the mapping's key reference in its thread's slot (a volatile store) and then
 * checks that the chunk it found the key in is not released (a volatile load). The rebalancer
 * deletes the keys it dropped only after it released their chunk, and reads every slot (volatile
 * loads) after that release: a key found in a slot is deferred, not deleted, and retried at the
 * next rebalance. By the total order of volatile accesses, either the rebalancer sees the hazard,
 * or the cursor's check comes after the release and sees the chunk released, and then the cursor
 * re-locates instead of returning the key. A key is therefore never deleted while a slot has held
 * it since before its chunk was released.
 *
 * <h2>Limits</h2>
 * One slot per thread: a second in-place scan running in the same thread (nested loops) takes the
 * slot over, and the first scan's current key is then protected no longer; its view may throw
 * {@link dev.oakmap.DeletedMemoryAccessException} if the mapping is removed and rebalanced away
 * in that window, as a value view would. An abandoned scan keeps its last key until its thread's
 * next in-place scan or its death (a cursor handed to another thread loses the protection when
 * the thread that created it dies): at most one deferred key per live thread.
 */
final class KeyHazards {

    /** One thread's hazard: the key its latest in-place scan is on, or {@link Refs#NULL}. */
    static final class Slot {
        final WeakReference<Thread> owner = new WeakReference<>(Thread.currentThread());
        volatile long key;

        /** Protects {@code ref} (a volatile store: ordered before the caller's release check). */
        void protect(long ref) {
            key = ref;
        }

        /** Drops the protection of {@code ref}, unless another scan of this thread took the slot. */
        void clear(long ref) {
            if (key == ref) {
                key = Refs.NULL;
            }
        }
    }

    private final CopyOnWriteArrayList<Slot> slots = new CopyOnWriteArrayList<>();
    private final ThreadLocal<Slot> local = ThreadLocal.withInitial(this::register);
    /** Dropped keys found protected, to be deleted by a later rebalance (guarded by the rebalance lock). */
    private long[] deferred = new long[8];
    private int deferredCount;

    private Slot register() {
        Slot s = new Slot();
        slots.add(s);
        return s;
    }

    /** @return the calling thread's slot */
    Slot slot() {
        return local.get();
    }

    /**
     * Splits keys the rebalancer dropped into those it may delete now and those a scan protects,
     * which are kept here. Also hands back earlier deferred keys that are no longer protected.
     * Call under the rebalance lock, after the chunks holding {@code dropped} were released.
     *
     * @param dropped sorted, distinct references of released chunks' dropped keys
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

    /** @return the number of keys deferred (for tests) */
    int deferredCount() {
        return deferredCount;
    }

    private void defer(long ref) {
        if (deferredCount == deferred.length) {
            deferred = Arrays.copyOf(deferred, deferredCount * 2);
        }
        deferred[deferredCount++] = ref;
    }

    /** @return the keys protected now, sorted (volatile loads); drops slots of dead threads */
    private long[] snapshot() {
        long[] out = new long[8];
        int n = 0;
        for (Slot s : slots) { // the iterator reads the current array (a volatile load)
            if (s.owner.get() == null) {
                slots.remove(s); // its thread died: an abandoned scan's key is freed with it
                continue;
            }
            long k = s.key;
            if (k != Refs.NULL) {
                if (n == out.length) {
                    out = Arrays.copyOf(out, n * 2);
                }
                out[n++] = k;
            }
        }
        long[] sorted = Arrays.copyOf(out, n);
        Arrays.sort(sorted);
        return sorted;
    }
}
