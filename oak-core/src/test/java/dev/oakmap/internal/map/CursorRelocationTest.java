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
        InternalOakMap<Integer, int[]> m = new InternalOakMap<>(INT, ARR, cmp, 64L << 20, 1 << 20, 16, 0.5,
                MemoryScheme.NOVA, MemoryScheme.NOVA);
        try {
            for (int k = 10; k <= 40; k += 10) {
                m.put(k, val(k, 1), false);
            }
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
            Cursor<Integer, int[]> scan = m.cursor(25, true, null, false, true);
            List<Integer> keys = new ArrayList<>();
            while (scan.advance() && keys.size() < 10) {
                keys.add(scan.key());
            }
            assertEquals(List.of("released=true hint=2 first=47"), setUp, "the hook ran as designed");
            assertEquals(List.of(47, 45, 40, 30), keys);
        } finally {
            m.close();
        }
    }
}
