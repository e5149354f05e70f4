package dev.oakmap;

import dev.oakmap.common.OakCommonTypes;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.BlockPool;
import dev.oakmap.internal.memory.Refs;
import dev.oakmap.internal.reclaim.SomarSlices;
import dev.oakmap.somar.Somar;
import org.junit.jupiter.api.Test;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Spliterator;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A map (or SOMAR manager) dropped without {@code close()} gives its off-heap blocks back once it
 * is unreachable, and not before: every view, iterator, spliterator and zero-copy buffer keeps it
 * reachable, so what they read stays valid. Each test watches the owner's allocator, which does not
 * keep the owner reachable, through full collections ({@code System.gc()}, confirmed by a cleared
 * weak reference).
 */
class UnreachableMapTest {

    private static final int PAIRS = 20_000;
    private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(30);

    private static OakMap<Long, Long> filledMap() {
        OakMap<Long, Long> m = new OakMapBuilder<>(OakCommonTypes.LONG_SERIALIZER, OakCommonTypes.LONG_SERIALIZER,
                OakCommonTypes.LONG_COMPARATOR).blockSize(64 << 10).chunkCapacity(64).build();
        for (long k = 0; k < PAIRS; k++) {
            m.put(k, 3 * k);
        }
        return m;
    }

    /** Builds a map, uses it in every way that leaves per-thread state behind, and drops it. */
    private static BlockAllocator useAndDrop() {
        OakMap<Long, Long> m = filledMap();
        m.zc().computeIfPresent(7L, b -> b.putLong(0, b.getLong(0) + 1));
        assertEquals(22L, m.get(7L));
        long n = 0;
        for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : m.descendingMap().zc().entryStreamSet()) {
            n += e.getKey().capacity() == 8 && e.getValue().capacity() == 8 ? 1 : 0;
        }
        assertEquals(PAIRS, n);
        assertEquals(100L, m.keySet().stream().limit(100).count());
        m.remove(5L);
        BlockAllocator a = m.internal.allocator();
        assertTrue(a.reservedBytes() > 4 * (64 << 10), "blocks held: " + a.reservedBytes());
        return a;
    }

    @Test
    void droppedMapGivesItsMemoryBack() {
        long warm = BlockPool.shared().warmBytes();
        BlockAllocator a = useAndDrop();
        assertTrue(collectUntil(() -> released(a)), "the allocator of an unreachable map was not closed");
        assertEquals(0, a.reservedBytes());
        assertEquals(0, a.usedBytes());
        // straight back to the OS: the pool's keeper thread stays out of the way of those who never close
        assertTrue(BlockPool.shared().warmBytes() <= warm, "a dropped map's blocks were kept warm");
    }

    @Test
    void closedMapIsNotReleasedTwice() {
        OakMap<Long, Long> m = filledMap();
        BlockAllocator a = m.internal.allocator();
        m.close();
        assertTrue(a.isClosed());
        assertEquals(0, a.reservedBytes());
        m = null;
        collectUntil(() -> false, 3); // the registration was cancelled by close(): nothing runs, nothing throws
        assertEquals(0, a.reservedBytes());
    }

    /** Views, iterators and buffers handed out before the map was dropped, kept by the caller. */
    private static final class Kept {
        OakMap<Long, Long> head;
        OakUnscopedBuffer value;
        long valueBits;
        Iterator<Long> keys;
        Spliterator<Map.Entry<Long, Long>> entries;
        BlockAllocator allocator;
    }

    private static Kept keepViewsAndDrop() {
        OakMap<Long, Long> m = filledMap();
        Kept k = new Kept();
        k.head = m.headMap(1_000L);
        k.value = m.zc().get(123L);
        k.valueBits = k.value.getLong(0); // the serialized form of 369
        k.keys = m.descendingMap().keySet().iterator();
        assertEquals(PAIRS - 1L, k.keys.next());
        k.entries = m.tailMap(500L).entrySet().spliterator();
        k.allocator = m.internal.allocator();
        return k;
    }

    @Test
    void keptViewsKeepTheMapAndItsMemory() {
        Kept k = keepViewsAndDrop();
        assertFalse(collectUntil(k.allocator::isClosed, 3), "the map was released while its views were reachable");
        assertEquals(k.valueBits, k.value.getLong(0));
        assertEquals(PAIRS - 2L, k.keys.next());
        assertEquals(1_000, k.head.size());
        assertTrue(k.entries.tryAdvance(e -> assertEquals(1_500L, e.getValue())));

        // drop them one kind at a time: each alone still holds the map
        k.head = null;
        k.keys = null;
        k.entries = null;
        assertFalse(collectUntil(k.allocator::isClosed, 3), "a zero-copy buffer alone must hold the map");
        assertEquals(k.valueBits, k.value.getLong(0));
        k.value = null;
        assertTrue(collectUntil(() -> released(k.allocator)), "the map was not released once its last view was dropped");
        assertEquals(0, k.allocator.reservedBytes());
    }

    private static BlockAllocator somarUsedAndDropped() {
        Somar s = Somar.create(MemoryScheme.NOVA, 64L << 20);
        for (int i = 0; i < 1_000; i++) {
            long p = s.allocate(1_000);
            s.writePrivate(p, b -> { b.putLong(0, 1); return null; });
        }
        BlockAllocator a = ((SomarSlices) s).allocator();
        assertTrue(a.reservedBytes() > 0);
        return a;
    }

    @Test
    void droppedSomarGivesItsMemoryBack() {
        BlockAllocator a = somarUsedAndDropped();
        assertTrue(collectUntil(() -> released(a)), "the allocator of an unreachable SOMAR manager was not closed");
        assertEquals(0, a.reservedBytes());
    }

    @Test
    void reachableSomarKeepsItsMemory() {
        Somar s = Somar.create(MemoryScheme.NOVA, 64L << 20);
        long p = s.allocate(8);
        s.writePrivate(p, b -> { b.putLong(0, 42); return null; });
        BlockAllocator a = ((SomarSlices) s).allocator();
        assertFalse(collectUntil(a::isClosed, 3));
        long read = s.read(p, b -> b.getLong(0));
        assertEquals(42L, read);
        s.close();
        assertTrue(a.isClosed());
    }

    private static OakMap<Integer, Integer> smallMap(int key) {
        OakMap<Integer, Integer> m = new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER,
                OakCommonTypes.INTEGER_SERIALIZER, OakCommonTypes.INTEGER_COMPARATOR).chunkCapacity(4).build();
        m.put(key, key);
        return m;
    }

    /**
     * Block ids are process-wide and few (4,095). A suite that builds a map per test and never
     * closes them used them all before any collection (a driver dropping one small map after
     * another failed at about the 6,000th): a new block now asks for a collection, whose
     * cleaners give the dropped maps' ids back, before it gives up. Deterministic both ways: the
     * maps are held until no id is left, which only then fails, and then dropped all at once.
     */
    @Test
    void mapsDroppedWithoutCloseGiveTheirIdsToNewOnes() {
        List<OakMap<Integer, Integer>> held = new ArrayList<>();
        OutOfMemoryError full = null;
        try {
            while (held.size() < 2 * Refs.MAX_BLOCK_ID) {
                held.add(smallMap(held.size()));
            }
        } catch (OutOfMemoryError e) {
            full = e;
        }
        assertNotNull(full, "built " + held.size() + " maps without running out of block ids");
        assertTrue(full.getMessage().contains("block ids"), full.getMessage());
        assertTrue(held.size() > 1_000, "ran out after " + held.size() + " maps");
        int before = held.size();
        held.clear(); // unreachable now, but their ids come back only through a collection
        for (int i = 0; i < before; i++) {
            OakMap<Integer, Integer> m;
            try {
                m = smallMap(i);
            } catch (OutOfMemoryError e) { // JUnit does not report errors of this kind, it rethrows them
                throw new AssertionError("map " + i + " of " + before + " after dropping the others", e);
            }
            assertEquals(i, m.get(i));
        }
    }

    /** @return whether {@code a} was closed and has given back every block (closing sets the flag first) */
    private static boolean released(BlockAllocator a) {
        return a.isClosed() && a.reservedBytes() == 0;
    }

    /** Runs full collections until {@code done} holds, for up to 30 s. */
    private static boolean collectUntil(BooleanSupplier done) {
        return collectUntil(done, Integer.MAX_VALUE);
    }

    /**
     * Runs up to {@code collections} confirmed full collections, each followed by a pause that
     * lets the cleaner thread run, until {@code done} holds or 30 s have passed.
     *
     * @return whether {@code done} held
     */
    private static boolean collectUntil(BooleanSupplier done, int collections) {
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        for (int i = 0; i < collections && System.nanoTime() < deadline; i++) {
            WeakReference<Object> sentinel = new WeakReference<>(new Object());
            while (sentinel.get() != null && System.nanoTime() < deadline) {
                System.gc();
            }
            assertNotNull(sentinel, "keeps the sentinel's reference reachable");
            for (int w = 0; w < 20; w++) {
                if (done.getAsBoolean()) {
                    return true;
                }
                sleep(10);
            }
        }
        return done.getAsBoolean();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
