package dev.oakmap.internal.map;

import dev.oakmap.OakUnscopedBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.oakmap.internal.map.InternalOakMapModelTest.newMap;
import static dev.oakmap.internal.map.InternalOakMapModelTest.val;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The hazard pointers of in-place key scans ({@link KeyHazards}): a key a scan is on is
 * deferred, not deleted, when the rebalancer drops it, and stays readable; a later rebalance
 * deletes it once the scan has moved on, or once an abandoned scan is collected, so scans do not
 * make key memory grow under churn.
 */
class KeyHazardsTest {

    @Test
    void protectedKeyIsDeferredThenDeletedOnceTheScanMovesOn() {
        InternalOakMap<Integer, int[]> m = newMap(8);
        try {
            fill(m);
            Cursor<Integer, int[]> scan = inPlaceScan(m, null);
            assertTrue(scan.advance());
            assertTrue(scan.advance());
            OakUnscopedBuffer key = scan.reusableKeyView();
            assertEquals(1, intKey(key));
            m.delete(1);
            churnBelow(m, 0);
            assertEquals(1, m.keyHazards().deferredCount(), "key 1 was dropped while the scan was on it");
            churnBelow(m, 1);
            assertEquals(1, m.keyHazards().deferredCount(), "still protected");
            assertEquals(1, intKey(key), "and readable");
            int n = 0;
            while (scan.advance()) { // to the end: the scan gives its hazard up
                assertEquals(2 + n++, intKey(scan.reusableKeyView()));
            }
            assertEquals(62, n);
            churnBelow(m, 2);
            assertEquals(0, m.keyHazards().deferredCount(), "deleted by a later rebalance");
        } finally {
            m.close();
        }
    }

    @Test
    void abandonedScansKeepTheirKeysUntilTheyAreCollected() throws InterruptedException {
        InternalOakMap<Integer, int[]> m = newMap(8);
        try {
            fill(m);
            List<Cursor<Integer, int[]>> abandoned = new ArrayList<>();
            for (int s = 0; s < 10; s++) { // each scan stops on key s, which is then removed
                Cursor<Integer, int[]> scan = inPlaceScan(m, s);
                abandoned.add(scan);
                assertTrue(scan.advance());
                assertEquals(s, intKey(scan.reusableKeyView()));
                m.delete(s);
                churnBelow(m, s);
            }
            assertEquals(10, m.keyHazards().deferredCount(), "one key per scan still reachable");
            abandoned.clear();
            Cursor<Integer, int[]> finished = inPlaceScan(m, null);
            while (finished.advance()) {
                assertTrue(intKey(finished.reusableKeyView()) >= 10);
            }
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (m.keyHazards().registered() > 1 && System.nanoTime() < deadline) {
                System.gc();
                Thread.sleep(10);
            }
            // the finished scan left its cleared slot registered, for this thread's next scan
            assertEquals(1, m.keyHazards().registered(), "the abandoned scans' slots were collected");
            churnBelow(m, 99);
            assertEquals(0, m.keyHazards().deferredCount(), "and their keys deleted by the next rebalance");
        } finally {
            m.close();
        }
    }

    @Test
    void registryRecyclesItsEntries() throws InterruptedException {
        KeyHazards h = new KeyHazards();
        List<KeyHazards.Slot> live = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            live.add(h.register());
        }
        for (int i = 0; i < 100; i += 2) {
            h.unregister(live.get(i));
            h.unregister(live.get(i)); // idempotent
        }
        assertEquals(51, h.registered(), "50 in use, and the first one given back, idle for this thread");
        for (int i = 0; i < 1000; i++) {
            h.register(); // dropped at once: recycled once collected (the first takes the idle slot, live.get(0))
        }
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (h.registered() > 51 && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(10);
        }
        assertEquals(51, h.registered(), "the 50 odd slots, and the idle one taken again (still reachable)");
        live.get(1).protect(42);
        live.get(1).commit();
        live.get(3).protect(7);
        assertArrayEquals(new long[] {5}, h.deletable(new long[] {5, 7, 42}), "7 and 42 are protected");
        assertEquals(2, h.deferredCount());
        h.unregister(live.get(1));
        assertArrayEquals(new long[] {42}, h.deletable(new long[0]), "42 is free now");
        assertEquals(1, h.deferredCount());
        assertTrue(live.size() == 100); // the slots stayed reachable up to here
    }

    /**
     * A thread's finished scan leaves its slot for the thread's next scan (no lock, no new weak
     * reference), cleared: it protects nothing until that scan sets it. Another thread's scan
     * registers a slot of its own.
     */
    @Test
    void aThreadsNextScanReusesItsFinishedScansSlot() throws Exception {
        InternalOakMap<Integer, int[]> m = newMap(8);
        try {
            fill(m);
            int before = m.keyHazards().registered();
            for (int s = 0; s < 100; s++) {
                Cursor<Integer, int[]> scan = inPlaceScan(m, null);
                int n = 0;
                while (scan.advance()) {
                    assertEquals(n++, intKey(scan.reusableKeyView()));
                }
                assertEquals(64, n);
            }
            assertEquals(before + 1, m.keyHazards().registered(), "one slot, reused by every scan");
            int[] seenByOther = new int[1];
            Thread other = new Thread(() -> {
                Cursor<Integer, int[]> scan = inPlaceScan(m, null);
                scan.advance();
                seenByOther[0] = m.keyHazards().registered(); // its slot is reachable: its scan is open
                while (scan.advance()) { // to the end, giving its hazards up
                    intKey(scan.reusableKeyView());
                }
            });
            other.start();
            other.join();
            assertEquals(before + 2, seenByOther[0], "another thread's scan registers a slot of its own");
            Cursor<Integer, int[]> open = inPlaceScan(m, null); // takes the idle slot and keeps it
            assertTrue(open.advance());
            assertEquals(0, intKey(open.reusableKeyView()));
            m.delete(0);
            churnBelow(m, 0);
            assertEquals(1, m.keyHazards().deferredCount(), "the reused slot protects the key its scan is on");
            while (open.advance()) {
                intKey(open.reusableKeyView());
            }
            churnBelow(m, 1);
            assertEquals(0, m.keyHazards().deferredCount(), "given up at the end of the scan");
        } finally {
            m.close();
        }
    }

    /**
     * By default a scan copies its first {@link Cursor#IN_PLACE_AFTER} keys and registers no
     * hazards, so a short scan that is abandoned costs no registration; past them it protects
     * its keys in place, and a reusable key view taken while it copied follows it.
     */
    @Test
    void scansCopyTheirFirstKeysThenProtectInPlace() {
        InternalOakMap<Integer, int[]> m = newMap(8);
        try {
            fill(m);
            int before = m.keyHazards().registered();
            Cursor<Integer, int[]> shortScan = m.cursor(null, true, null, true, false);
            shortScan.readKeysInPlace(false);
            for (int i = 0; i < Cursor.IN_PLACE_AFTER; i++) {
                assertTrue(shortScan.advance());
                assertEquals(i, intKey(shortScan.reusableKeyView()));
            }
            assertEquals(before, m.keyHazards().registered(), "no hazards registered while copying");
            Cursor<Integer, int[]> scan = m.cursor(null, true, null, true, false);
            scan.readKeysInPlace(false);
            assertTrue(scan.advance());
            OakUnscopedBuffer view = scan.reusableKeyView(); // taken while the scan copies
            for (int i = 1; i <= Cursor.IN_PLACE_AFTER; i++) {
                assertTrue(scan.advance());
                assertEquals(i, intKey(view));
            }
            assertEquals(before + 1, m.keyHazards().registered(), "in place from the key after the copied ones");
            m.delete(Cursor.IN_PLACE_AFTER);
            m.compact(m.locate(Cursor.IN_PLACE_AFTER)); // drops the removed key from its chunk
            assertEquals(Cursor.IN_PLACE_AFTER, intKey(view), "the key the scan is on stays readable");
            assertTrue(m.keyHazards().deferredCount() >= 1, "protected, so deferred");
            for (int i = Cursor.IN_PLACE_AFTER + 1; i < 64; i++) {
                assertTrue(scan.advance());
                assertEquals(i, intKey(view));
            }
            assertFalse(scan.advance());
        } finally {
            m.close();
        }
    }

    /**
     * The switch to in-place keys happens at a key whose chunk was replaced since the scan entered
     * it: the protection fails, and the scan re-locates by its last copied key and goes on in
     * order, with nothing skipped or repeated. The key the scan stands on was removed and its
     * memory reused by other keys meanwhile (it was copied, not protected), so re-locating by
     * that key read in place instead of by its copy would restart the scan below zero.
     */
    @Test
    void switchingToInPlaceKeysInAReplacedChunkRelocates() {
        InternalOakMap<Integer, int[]> m = newMap(8);
        try {
            fill(m);
            Cursor<Integer, int[]> scan = m.cursor(null, true, null, true, false);
            scan.readKeysInPlace(false, 2); // copies keys 0 and 1, then switches
            assertTrue(scan.advance());
            assertTrue(scan.advance());
            assertEquals(1, intKey(scan.reusableKeyView()));
            m.delete(1);
            churnBelow(m, 0); // replaces the chunk the scan is in, and deletes key 1's memory
            for (int i = 0; i < 200; i++) {
                m.put(-10_000 + i, val(i, 4), false); // stay, below the scan: reuse the freed key memory
            }
            assertEquals(1, intKey(scan.reusableKeyView()), "the view reads the scan's copy");
            for (int i = 2; i < 64; i++) {
                assertTrue(scan.advance());
                assertEquals(i, intKey(scan.reusableKeyView()));
            }
            assertFalse(scan.advance());
        } finally {
            m.close();
        }
    }

    /** Virtual threads (a thread per task, say) free their finished scans' slots at once. */
    @Test
    void virtualThreadsLeaveNoIdleSlots() throws Exception {
        InternalOakMap<Integer, int[]> m = newMap(8);
        try {
            fill(m);
            int before = m.keyHazards().registered();
            List<java.util.concurrent.Future<Integer>> scans = new ArrayList<>();
            try (var executor = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
                for (int t = 0; t < 200; t++) {
                    scans.add(executor.submit(() -> {
                        Cursor<Integer, int[]> scan = inPlaceScan(m, null);
                        int n = 0;
                        while (scan.advance()) {
                            assertEquals(n++, intKey(scan.reusableKeyView()));
                        }
                        return n;
                    }));
                }
            }
            for (var scan : scans) {
                assertEquals(64, scan.get(), "every key, in order");
            }
            assertEquals(before, m.keyHazards().registered(), "no slot left registered by the finished tasks");
        } finally {
            m.close();
        }
    }

    @Test
    void keyMemoryStaysFlatUnderChurnWhileAScanIsOpen() {
        InternalOakMap<Integer, int[]> m = newMap(8);
        try {
            fill(m);
            Cursor<Integer, int[]> scan = inPlaceScan(m, null);
            assertTrue(scan.advance());
            for (int round = 0; round < 20; round++) {
                churnBelow(m, round);
            }
            long settled = m.offHeapUsedBytes();
            for (int round = 20; round < 2000; round++) {
                churnBelow(m, round);
                if (round % 40 == 0) { // the scan moves on now and then
                    assertTrue(scan.advance());
                }
            }
            // without reuse, 1980 rounds of 64 pairs would hold over 1.5 MB more
            assertTrue(m.offHeapUsedBytes() < settled + (256 << 10),
                    "used " + m.offHeapUsedBytes() + " bytes, " + settled + " after 20 rounds");
        } finally {
            m.close();
        }
    }

    /**
     * An iterator that has looked ahead removes the mapping it returned before ({@link
     * Cursor#removePrevious}); that mapping's key was read in place, and stays protected until
     * the cursor's next step even if the mapping is removed and its chunk compacted meanwhile: the
     * removal then reads the right key, not memory reused by another.
     */
    @Test
    void theKeyBeforeTheCurrentOneStaysProtectedForOneStep() {
        InternalOakMap<Integer, int[]> m = newMap(8);
        try {
            fill(m);
            Cursor<Integer, int[]> scan = inPlaceScan(m, null);
            for (int i = 0; i <= 21; i++) {
                assertTrue(scan.advance());
            }
            assertEquals(21, scan.key()); // the previous mapping: 20
            m.delete(20);
            m.compact(m.locate(20)); // drops key 20 from its chunk
            churnBelow(m, 0);
            assertTrue(m.keyHazards().deferredCount() >= 1, "key 20 protected, so deferred");
            long size = m.size();
            scan.removePrevious(); // 20 is gone already: removes nothing
            assertEquals(size, m.size());
            scan.removeCurrent();
            assertEquals(size - 1, m.size());
            assertNull(m.get(21));
            assertTrue(scan.advance());
            assertEquals(22, scan.key());
            scan.removePrevious(); // 21, gone already
            assertEquals(size - 1, m.size());
            assertTrue(scan.advance());
            scan.removePrevious(); // 22
            assertNull(m.get(22));
            assertEquals(size - 2, m.size());
            churnBelow(m, 1);
            assertEquals(0, m.keyHazards().deferredCount(), "20 given up two steps later");
            while (scan.advance()) {
                scan.key();
            }
            scan.removePrevious(); // the scan has ended: the last mapping, 63
            assertNull(m.get(63));
            assertEquals(size - 3, m.size());
        } finally {
            m.close();
        }
    }

    private static void fill(InternalOakMap<Integer, int[]> m) {
        for (int i = 0; i < 64; i++) {
            m.put(i, val(i, 4), false);
        }
    }

    private static Cursor<Integer, int[]> inPlaceScan(InternalOakMap<Integer, int[]> m, Integer from) {
        Cursor<Integer, int[]> c = m.cursor(from, true, null, true, false);
        c.readKeysInPlace(false, 0); // protect from the first key on
        return c;
    }

    /** The key as the test serializer writes it (sign bit flipped). */
    private static int intKey(OakUnscopedBuffer b) {
        return b.getInt(0) ^ Integer.MIN_VALUE;
    }

    /**
     * Inserts and removes 64 keys below all others (distinct per round): rebalances the first
     * chunks, where the scans are.
     */
    private static void churnBelow(InternalOakMap<Integer, int[]> m, int round) {
        int base = -64 * (round + 1);
        for (int i = 0; i < 64; i++) {
            m.put(base + i, val(i, 4), false);
        }
        for (int i = 0; i < 64; i++) {
            m.delete(base + i);
        }
    }
}
