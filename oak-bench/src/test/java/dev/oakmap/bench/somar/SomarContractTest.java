package dev.oakmap.bench.somar;

import dev.oakmap.DeletedMemoryAccessException;
import dev.oakmap.OakClosedException;
import dev.oakmap.somar.Somar;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sequential contract of {@link Somar}, for every implementation compared by the thesis's
 * experiments: oak-core's Nova, lock-based and grow-only, and this package's EBR and Hazard Eras.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS) // a lost wake-up or livelock fails instead of hanging the build
class SomarContractTest {

    @ParameterizedTest
    @EnumSource(SomarKind.class)
    void allocateWriteReadDelete(SomarKind kind) {
        try (Somar m = kind.create(1 << 20)) {
            long p = m.allocate(16);
            m.writePrivate(p, b -> b.putLong(0, 41));
            assertEquals(16, m.length(p));
            assertEquals(41L, (long) m.read(p, b -> b.getLong(0)));
            assertEquals(42L, (long) m.write(p, b -> {
                b.putLong(8, b.getLong(0) + 1);
                return b.getLong(8);
            }));
            assertEquals(42L, (long) m.read(p, b -> b.getLong(8)));
            assertThrows(IndexOutOfBoundsException.class, () -> m.read(p, b -> b.getLong(9)),
                    "a buffer never reaches past its slice");
            assertThrows(UnsupportedOperationException.class,
                    () -> m.read(p, b -> ((dev.oakmap.OakScopedWriteBuffer) b).putLong(0, 1)),
                    "a read buffer is read-only");
            assertTrue(m.delete(p));
            assertFalse(m.delete(p), "a second delete fails");
            assertThrows(DeletedMemoryAccessException.class, () -> m.read(p, b -> b.getLong(0)));
            assertThrows(DeletedMemoryAccessException.class, () -> m.write(p, b -> null));
            assertThrows(DeletedMemoryAccessException.class, () -> m.length(p));
        }
    }

    @ParameterizedTest
    @EnumSource(SomarKind.class)
    void privateMethods(SomarKind kind) {
        try (Somar m = kind.create(1 << 20)) {
            long used = m.memoryUsed();
            long p = m.allocate(100);
            assertTrue(m.memoryUsed() >= used + 100);
            byte[] bytes = new byte[100];
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] = (byte) (i * 7);
            }
            m.writePrivate(p, b -> b.putBytes(0, bytes, 0, bytes.length));
            byte[] back = m.read(p, b -> {
                byte[] a = new byte[b.capacity()];
                b.getBytes(0, a, 0, a.length);
                return a;
            });
            assertArrayEquals(bytes, back);
            m.deletePrivate(p);
            assertEquals(used, m.memoryUsed(), "a private slice is given back at once");
            assertThrows(DeletedMemoryAccessException.class, () -> m.read(p, b -> b.get(0)));
        }
    }

    @ParameterizedTest
    @EnumSource(SomarKind.class)
    void exceptionOfAValidReadReachesTheCaller(SomarKind kind) {
        try (Somar m = kind.create(1 << 20)) {
            long p = m.allocate(8);
            m.writePrivate(p, b -> b.putLong(0, 7));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> m.read(p, b -> { throw new IllegalArgumentException("mine " + b.getLong(0)); }));
            assertEquals("mine 7", e.getMessage());
            assertThrows(ArithmeticException.class, () -> m.write(p, b -> 1 / (b.getLong(0) - 7)));
            assertEquals(7L, (long) m.read(p, b -> b.getLong(0)), "a write that threw still releases the slice");
            assertNull(m.read(p, b -> null));
        }
    }

    /**
     * Deletes slices, makes the scheme reuse them, and checks that every old pointer fails while the
     * new owners read their own bytes; the reclaiming schemes must not have grown.
     */
    @ParameterizedTest
    @EnumSource(SomarKind.class)
    void reusedSlicesRejectOldPointers(SomarKind kind) {
        int n = 3000; // more than a retire batch (1024), so every reclaiming scheme runs a round
        try (Somar m = kind.create(16 << 20)) {
            long[] old = new long[n];
            for (int i = 0; i < n; i++) {
                old[i] = m.allocate(32);
                long id = i;
                m.writePrivate(old[i], b -> b.putLong(0, id));
            }
            long full = m.memoryUsed();
            for (long p : old) {
                assertTrue(m.delete(p));
            }
            reclaim(m);
            long[] fresh = new long[n];
            for (int i = 0; i < n; i++) {
                fresh[i] = m.allocate(32);
                long id = 1_000_000 + i;
                m.writePrivate(fresh[i], b -> b.putLong(0, id));
            }
            int reused = 0;
            java.util.Set<Long> oldAddresses = new java.util.HashSet<>();
            for (long p : old) {
                oldAddresses.add(p >>> 28);
            }
            for (int i = 0; i < n; i++) {
                long p = old[i];
                assertThrows(DeletedMemoryAccessException.class, () -> m.read(p, b -> b.getLong(0)));
                assertFalse(m.delete(p));
                assertEquals(1_000_000L + i, (long) m.read(fresh[i], b -> b.getLong(0)));
                if (oldAddresses.contains(fresh[i] >>> 28)) {
                    reused++;
                }
            }
            if (kind.reclaims) {
                assertTrue(reused > n / 2, kind + " reused " + reused + " of " + n + " slices");
                assertTrue(m.memoryUsed() < 2 * full, kind + ": " + m.memoryUsed() + " B in use after reuse, "
                        + full + " B before the deletes");
            } else {
                assertEquals(0, reused, "grow-only never reuses");
                assertTrue(m.memoryUsed() >= 2 * full);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(SomarKind.class)
    void closedManagerRefusesCalls(SomarKind kind) {
        Somar m = kind.create(1 << 20);
        long p = m.allocate(8);
        m.close();
        m.close(); // idempotent
        assertThrows(OakClosedException.class, () -> m.allocate(8));
        assertThrows(OakClosedException.class, () -> m.read(p, b -> b.get(0)));
        assertThrows(OakClosedException.class, () -> m.delete(p));
    }

    /** Makes the SMR schemes run a round now (Nova and lock-based need nothing: see the batch sizes). */
    static void reclaim(Somar m) {
        if (m instanceof EbrSomar e) {
            e.reclaimNow();
            e.reclaimNow(); // the first round may only advance the epoch
        } else if (m instanceof HazardErasSomar h) {
            h.reclaimNow();
        }
    }
}
