package dev.oakmap.internal.map;

import dev.oakmap.MemoryScheme;
import dev.oakmap.OakComparator;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.internal.chunk.Chunk;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static dev.oakmap.internal.map.InternalOakMapModelTest.ARR;
import static dev.oakmap.internal.map.InternalOakMapModelTest.CMP;
import static dev.oakmap.internal.map.InternalOakMapModelTest.INT;
import static dev.oakmap.internal.map.InternalOakMapModelTest.val;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Cursors re-locating at chosen moments. A comparator without prefixes is called for every key
 * comparison, so a hook in it runs on the scanning thread between two steps of the cursor's
 * state machine, where a concurrent rebalance could land; the hook makes that rebalance happen
 * there, deterministically.
 */
class CursorRelocationTest {

    /** {@link InternalOakMapModelTest#CMP} that runs a hook, once, at its next serialized comparison. */
    private static final class HookedComparator implements OakComparator<Integer> {
        final AtomicReference<Runnable> hook = new AtomicReference<>();

        public int compareKeys(Integer a, Integer b) { return CMP.compareKeys(a, b); }

        public int compareSerializedKeys(OakScopedReadBuffer a, OakScopedReadBuffer b) {
            return CMP.compareSerializedKeys(a, b);
        }

        public int compareKeyAndSerializedKey(Integer k, OakScopedReadBuffer b) {
            Runnable h = hook.getAndSet(null);
            if (h != null) {
                h.run();
            }
            return CMP.compareKeyAndSerializedKey(k, b);
        }
    }

    /**
     * A descending scan peeks at its chunk's last entry first (without walking the bypass that
     * holds it). Here its first key read goes stale: the chunk is compacted meanwhile, and the
     * replacement is entered through its dead-suffix hint. The scan must return each key once:
     * a peeked index left over from the old chunk made it load a bypass of the new one twice
     * (found by a stress test: "37 then 37").
     */
    @Test
    void aDescendingScanThatReLocatesAtItsFirstKeyReturnsEachKeyOnce() {
        HookedComparator cmp = new HookedComparator();
        InternalOakMap<Integer, int[]> m = newMap(cmp);
        try {
            putAll(m, 10, 20, 30, 40);
            m.compact(m.index().last()); // sorted entries 1-4: 10, 20, 30, 40
            m.put(50, val(50, 1), false); // appended: entries 5 and 6
            m.put(60, val(60, 1), false);
            Chunk old = m.index().last();
            assertEquals(6, old.lastLinked(), "precondition: the last entry is known without a walk");

            List<String> setUp = new ArrayList<>();
            cmp.hook.set(() -> {
                // the scan has peeked at entry 6 (60) of the old chunk and is comparing it with its bound
                m.delete(10);
                m.delete(20);
                m.compact(old); // the replacement's sorted entries 1-4: 30, 40, 50, 60; old keys now stale
                Chunk replacement = m.index().last();
                m.put(45, val(45, 1), false); // entries 5 and 6, in the bypass of sorted entry 2 (40)
                m.put(47, val(47, 1), false);
                m.delete(50);
                m.delete(60);
                Cursor<Integer, int[]> probe = m.cursor(null, false, null, false, true);
                probe.advance(); // walks the dead end: proposes, and makes, the dead-suffix hint
                setUp.add("released=" + old.isReleased() + " hint=" + replacement.deadAfter()
                        + " first=" + probe.key());
            });
            List<Integer> keys = keys(m.cursor(25, true, null, false, true));
            assertEquals(List.of("released=true hint=2 first=47"), setUp, "the hook ran as designed");
            assertEquals(List.of(47, 45, 40, 30), keys);
        } finally {
            m.close();
        }
    }

    /**
     * The ascending mirror: the first key read goes stale as the first chunk is compacted, with
     * keys removed and inserted meanwhile; the scan starts again from the new first chunk.
     */
    @Test
    void anAscendingScanThatReLocatesAtItsFirstKeyStartsAgainFromTheNewHead() {
        HookedComparator cmp = new HookedComparator();
        InternalOakMap<Integer, int[]> m = newMap(cmp);
        try {
            putAll(m, 10, 20, 30, 40, 50, 60);
            m.compact(m.index().first());
            Chunk old = m.index().first();
            List<Boolean> released = new ArrayList<>();
            cmp.hook.set(() -> {
                // the scan is comparing its first entry (10) with its upper bound
                m.delete(10);
                m.delete(20);
                m.put(15, val(15, 1), false);
                m.compact(old);
                released.add(old.isReleased());
            });
            assertEquals(List.of(15, 30, 40, 50), keys(m.cursor(null, false, 55, false, false)));
            assertEquals(List.of(true), released, "the hook ran as designed");
        } finally {
            m.close();
        }
    }

    /**
     * Re-locating after keys were returned: a descending scan's read goes stale in the middle, and
     * it goes on strictly below the last key it returned, through the replacement chunk, seeing
     * what was inserted below that key and not what was removed.
     */
    @Test
    void aDescendingScanThatReLocatesInTheMiddleGoesOnBelowItsLastKey() {
        HookedComparator cmp = new HookedComparator();
        InternalOakMap<Integer, int[]> m = newMap(cmp);
        try {
            putAll(m, 10, 20, 30, 40, 50, 60);
            m.compact(m.index().last());
            Chunk old = m.index().last();
            Cursor<Integer, int[]> scan = m.cursor(25, true, null, false, true);
            assertTrue(scan.advance());
            assertEquals(60, scan.key());
            List<Boolean> released = new ArrayList<>();
            cmp.hook.set(() -> {
                // the scan is comparing its next entry (50) with its lower bound
                m.delete(50);
                m.put(65, val(65, 1), false); // above the last key returned: not for this scan
                m.put(55, val(55, 1), false);
                m.put(45, val(45, 1), false);
                m.compact(old);
                released.add(old.isReleased());
            });
            List<Integer> rest = keys(scan);
            assertEquals(List.of(true), released, "the hook ran as designed");
            assertEquals(List.of(55, 45, 40, 30), rest);
        } finally {
            m.close();
        }
    }

    /**
     * With keys that are never reclaimed, a key read through a replaced chunk stays valid, so a
     * scan that finds a value gone from a replaced chunk looks that key up again (the value may
     * have moved) instead of re-locating by its last key: here the value was replaced by a larger
     * one, and the scan returns the key once, with the new value.
     */
    @Test
    void aDescendingScanLooksAKeyUpAgainWhenItsValueLeftAReplacedChunk() {
        HookedComparator cmp = new HookedComparator();
        InternalOakMap<Integer, int[]> m = newMap(cmp, MemoryScheme.GROW_ONLY);
        try {
            putAll(m, 10, 20, 30, 40, 50, 60);
            m.compact(m.index().last());
            Chunk old = m.index().last();
            Cursor<Integer, int[]> scan = m.cursor(25, true, null, false, true);
            assertTrue(scan.advance());
            assertEquals(60, scan.key());
            List<Boolean> released = new ArrayList<>();
            cmp.hook.set(() -> {
                // the scan is comparing its next entry (50) with its lower bound
                m.compact(old);
                released.add(old.isReleased());
                m.put(50, val(50, 3), false); // in the replacement; larger: a new slice, the old one deleted
            });
            List<String> rest = keysAndLengths(scan);
            assertEquals(List.of(true), released, "the hook ran as designed");
            assertEquals(List.of("50=3", "40=1", "30=1"), rest);
        } finally {
            m.close();
        }
    }

    /** The ascending mirror of {@link #aDescendingScanLooksAKeyUpAgainWhenItsValueLeftAReplacedChunk}. */
    @Test
    void anAscendingScanLooksAKeyUpAgainWhenItsValueLeftAReplacedChunk() {
        HookedComparator cmp = new HookedComparator();
        InternalOakMap<Integer, int[]> m = newMap(cmp, MemoryScheme.GROW_ONLY);
        try {
            putAll(m, 10, 20, 30, 40, 50, 60);
            m.compact(m.index().first());
            Chunk old = m.index().first();
            Cursor<Integer, int[]> scan = m.cursor(null, false, 45, false, false);
            assertTrue(scan.advance());
            assertEquals(10, scan.key());
            List<Boolean> released = new ArrayList<>();
            cmp.hook.set(() -> {
                // the scan is comparing its next entry (20) with its upper bound
                m.compact(old);
                released.add(old.isReleased());
                m.put(20, val(20, 3), false); // in the replacement; larger: a new slice, the old one deleted
            });
            List<String> rest = keysAndLengths(scan);
            assertEquals(List.of(true), released, "the hook ran as designed");
            assertEquals(List.of("20=3", "30=1", "40=1"), rest);
        } finally {
            m.close();
        }
    }

    /**
     * {@code remove()} after {@code hasNext()} removes the mapping the cursor was on before its
     * last step ({@link Cursor#removePrevious}), by its value's reference. If a placing rebalance
     * moved that value meanwhile, the reference is gone; the removal must then fall back to the
     * key and remove the mapping at its new place, and nothing else. With the previous key copied,
     * and read in place (still protected by the hazard it was taken with).
     */
    @Test
    void removingThePreviousMappingAfterItsValueMovedRemovesItByKey() {
        for (boolean inPlace : new boolean[] {false, true}) {
            InternalOakMap<Integer, int[]> m = new InternalOakMap<>(INT, ARR, CMP, 64L << 20, 1 << 20, 16, 0.5,
                    MemoryScheme.NOVA, MemoryScheme.NOVA, true);
            try {
                putAll(m, 10, 20, 30, 40, 50, 60);
                m.compact(m.index().first()); // all sorted now
                m.put(35, val(35, 2), false); // unsorted: the next placing rebalance moves it
                Cursor<Integer, int[]> c = m.cursor(null, false, null, false, false);
                if (inPlace) {
                    c.readKeysInPlace(false, 0);
                }
                List<Integer> seen = new ArrayList<>();
                while (c.advance()) {
                    seen.add(c.key());
                    if (c.key() == 40) {
                        break; // 35 is the previous mapping
                    }
                }
                long movedBefore = m.pairsMoved();
                Chunk before = m.index().first();
                m.compact(before);
                assertTrue(before.isReleased(), "the chunk was replaced");
                assertEquals(1, m.pairsMoved() - movedBefore, "35's value (the one unsorted pair) moved");
                c.removePrevious();
                seen.addAll(keys(c));
                String ctx = inPlace ? "key read in place" : "key copied";
                assertEquals(List.of(10, 20, 30, 35, 40, 50, 60), seen, ctx);
                assertEquals(List.of(10, 20, 30, 40, 50, 60), keys(m.cursor(null, false, null, false, false)), ctx);
            } finally {
                m.close();
            }
        }
    }

    private static InternalOakMap<Integer, int[]> newMap(HookedComparator cmp) {
        return newMap(cmp, MemoryScheme.NOVA);
    }

    private static InternalOakMap<Integer, int[]> newMap(HookedComparator cmp, MemoryScheme keys) {
        return new InternalOakMap<>(INT, ARR, cmp, 64L << 20, 1 << 20, 16, 0.5, keys, MemoryScheme.NOVA);
    }

    private static void putAll(InternalOakMap<Integer, int[]> m, int... keys) {
        for (int k : keys) {
            m.put(k, val(k, 1), false);
        }
    }

    /** @return "key=value length" of what a cursor returns from here on (at most 20) */
    private static List<String> keysAndLengths(Cursor<Integer, int[]> c) {
        List<String> out = new ArrayList<>();
        while (out.size() < 20 && c.advance()) {
            out.add(c.key() + "=" + c.value().length);
        }
        return out;
    }

    /** @return the keys a cursor returns from here on (at most 20, so that a loop shows as a failure) */
    private static List<Integer> keys(Cursor<Integer, int[]> c) {
        List<Integer> out = new ArrayList<>();
        while (out.size() < 20 && c.advance()) {
            out.add(c.key());
        }
        return out;
    }
}
