package dev.oakmap.somar;

import dev.oakmap.DeletedMemoryAccessException;
import dev.oakmap.MemoryScheme;
import dev.oakmap.OakClosedException;
import dev.oakmap.OakOutOfMemoryException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The sequential contract of {@link Somar}, under every scheme. */
class SomarTest {

    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void allocateWriteReadDelete(MemoryScheme scheme) {
        try (Somar m = Somar.create(scheme, 1 << 20)) {
            long p = m.allocate(16);
            m.writePrivate(p, b -> b.putLong(0, 41));
            assertEquals(16, m.length(p));
            long first = m.read(p, b -> b.getLong(0));
            assertEquals(41L, first);
            assertEquals(42L, (long) m.write(p, b -> {
                b.putLong(8, b.getLong(0) + 1);
                return b.getLong(8);
            }));
            long second = m.read(p, b -> b.getLong(8));
            assertEquals(42L, second);
            assertThrows(IndexOutOfBoundsException.class, () -> m.read(p, b -> b.getLong(9)));
            assertTrue(m.delete(p));
            assertFalse(m.delete(p), "a second delete fails");
            assertThrows(DeletedMemoryAccessException.class, () -> m.read(p, b -> b.getLong(0)));
            assertThrows(DeletedMemoryAccessException.class, () -> m.write(p, b -> null));
            assertThrows(DeletedMemoryAccessException.class, () -> m.length(p));
        }
    }

    @ParameterizedTest
    @EnumSource(value = MemoryScheme.class, names = {"NOVA", "LOCK_BASED"})
    void reusedSliceRejectsOldPointers(MemoryScheme scheme) {
        try (Somar m = Somar.create(scheme, 1 << 20)) {
            long old = m.allocate(32);
            m.writePrivate(old, b -> b.putInt(0, 1));
            m.delete(old);
            long used = m.memoryUsed();
            // churn until the slice comes back (Nova reuses it after its release list is reclaimed)
            long reused = 0;
            for (int i = 0; i < 100_000 && reused == 0; i++) {
                long p = m.allocate(32);
                if ((p & ~((1L << 28) - 1)) == (old & ~((1L << 28) - 1))) {
                    reused = p;
                } else {
                    m.delete(p);
                }
            }
            assertTrue(reused != 0, "the slice was reused");
            assertTrue(reused != old, "with a new version");
            long r = reused;
            m.writePrivate(r, b -> b.putInt(0, 2));
            assertThrows(DeletedMemoryAccessException.class, () -> m.read(old, b -> b.getInt(0)));
            assertThrows(DeletedMemoryAccessException.class, () -> m.write(old, b -> b.putInt(0, 3)));
            assertFalse(m.delete(old));
            int now = m.read(r, b -> b.getInt(0));
            assertEquals(2, now, "the new owner's bytes are untouched");
            assertTrue(m.memoryUsed() <= used + 64 * 1024, "memory is reused, not grown");
        }
    }

    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void privateDeleteAndCapacityAndClose(MemoryScheme scheme) {
        Somar m = Somar.create(scheme, 64 * 1024);
        long p = m.allocate(1000);
        m.deletePrivate(p);
        assertThrows(OakOutOfMemoryException.class, () -> {
            for (int i = 0; i < 1000; i++) {
                m.allocate(1000);
            }
        });
        assertThrows(IllegalArgumentException.class, () -> m.allocate(-1));
        // longer than any block can hold: an argument error, whatever capacity is left (it was an
        // OakOutOfMemoryException under a small capacity, IllegalArgumentException under a large one)
        IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class,
                () -> m.allocate(Integer.MAX_VALUE));
        assertTrue(tooLong.getMessage().contains("outside"), tooLong.getMessage());
        assertThrows(IllegalArgumentException.class, () -> m.allocate((1 << 27) - 11)); // + header > 128 MiB
        try (Somar large = Somar.create(scheme, 1L << 40)) {
            assertThrows(IllegalArgumentException.class, () -> large.allocate((1 << 27) - 11));
        }
        m.close();
        m.close();
        OakClosedException closed = assertThrows(OakClosedException.class, () -> m.allocate(8));
        assertTrue(closed.getMessage().contains("SOMAR"), closed.getMessage()); // not "this Oak map"
        assertThrows(OakClosedException.class, () -> m.read(p, b -> 0));
    }

    /**
     * Memory freed by slices of one size serves slices of another: a manager filled with 100-byte
     * slices, emptied, then filled with 1,000-byte ones holds about as many bytes again (blocks
     * whose slices are all free are reused whole). Before 2026-11-28 no 1,000-byte slice fit at
     * all. Pointers to the deleted slices still throw, their blocks now holding other slices,
     * whose bytes they never change.
     */
    @ParameterizedTest
    @EnumSource(value = MemoryScheme.class, names = {"NOVA", "LOCK_BASED"})
    void memoryFreedBySlicesOfOneSizeServesSlicesOfAnother(MemoryScheme scheme) {
        long capacity = 16L << 20;
        try (Somar m = Somar.create(scheme, capacity)) {
            int[] sizes = {100, 1_000, 100, 3_000};
            long firstBytes = 0;
            List<Long> stale = new ArrayList<>();
            List<Long> live = new ArrayList<>();
            for (int phase = 0; phase < sizes.length; phase++) {
                int size = sizes[phase];
                live.clear();
                try {
                    while (true) {
                        long p = m.allocate(size);
                        long mark = phase * 1_000_000_000L + live.size();
                        m.writePrivate(p, b -> b.putLong(0, mark));
                        live.add(p);
                    }
                } catch (OakOutOfMemoryException expected) {
                    // full
                }
                long bytes = (long) live.size() * size;
                if (phase == 0) {
                    firstBytes = bytes;
                    assertTrue(bytes > capacity / 2, "the first fill held " + bytes + " bytes of " + capacity);
                } else {
                    assertTrue(bytes > 0.9 * firstBytes, "fill " + phase + " of " + size + "-byte slices held "
                            + bytes + " bytes, the first " + firstBytes);
                }
                for (long p : stale) {
                    assertThrows(DeletedMemoryAccessException.class, () -> m.read(p, b -> b.getLong(0)));
                    assertThrows(DeletedMemoryAccessException.class, () -> m.write(p, b -> b.putLong(0, -1)));
                    assertFalse(m.delete(p));
                }
                for (int i = 0; i < live.size(); i++) {
                    long mark = phase * 1_000_000_000L + i;
                    assertEquals(mark, (long) m.read(live.get(i), b -> b.getLong(0)), "slice " + i + " of fill " + phase);
                    assertTrue(m.delete(live.get(i)));
                }
                stale.clear();
                for (int i = 0; i < live.size(); i += 97) { // a sample: every read of a stale pointer is checked
                    stale.add(live.get(i));
                }
            }
        }
    }
}
