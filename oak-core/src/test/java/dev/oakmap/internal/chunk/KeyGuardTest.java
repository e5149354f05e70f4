package dev.oakmap.internal.chunk;

import dev.oakmap.MemoryScheme;
import dev.oakmap.common.OakCommonTypes;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.BlockPool;
import dev.oakmap.internal.memory.Refs;
import dev.oakmap.internal.reclaim.SliceManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Nova keys carry no header: a key read is validated against the chunk its reference was read
 * from (see {@link Chunk}, "Lifecycle", and {@link KeyOps}). Once the rebalancer marks a chunk,
 * every read through it fails as stale, even after the key's memory went to another key; reads
 * of protected keys (no guard) go on.
 */
class KeyGuardTest {

    private BlockAllocator allocator;
    private SliceManager slices;
    private KeyOps<String> keys;

    @BeforeEach
    void setUp() {
        allocator = new BlockAllocator(BlockPool.shared(), 1 << 16, 1 << 20);
        slices = SliceManager.create(MemoryScheme.NOVA, allocator, BlockAllocator.Kind.KEY);
        keys = new KeyOps<>(OakCommonTypes.STRING_SERIALIZER, OakCommonTypes.STRING_COMPARATOR, slices);
    }

    @AfterEach
    void tearDown() {
        allocator.close();
    }

    private long write(String k) {
        return keys.write(k, OakCommonTypes.STRING_COMPARATOR.keyPrefix(k));
    }

    @Test
    void novaKeysHaveNoHeaderAndKeepTheirLengthInTheReference() {
        long ref = write("eleven byte");
        assertEquals(0, slices.headerBytes());
        assertTrue(slices.reclaims());
        assertEquals(slices.length(ref), Refs.aux(ref));
        assertEquals(OakCommonTypes.STRING_SERIALIZER.calculateSize("eleven byte"), Refs.aux(ref));
    }

    @Test
    void readsThroughAMarkedChunkFailEvenAfterTheMemoryIsReused() {
        Chunk guard = Chunk.empty(16);
        long ref = write("apple");
        assertEquals(0, keys.compare("apple", ref, guard));
        assertEquals("apple", keys.read(ref, guard));

        guard.markKeysDeleted();
        assertTrue(slices.delete(ref));
        long reused = write("zebra"); // same size: the freed slice comes back at once
        assertEquals(Refs.withAux(ref, 0), Refs.withAux(reused, 0), "the slice was reused");

        int[] len = new int[1];
        assertThrows(StaleKeyException.class, () -> keys.compare("apple", ref, guard));
        assertThrows(StaleKeyException.class, () -> keys.read(ref, guard));
        assertThrows(StaleKeyException.class, () -> keys.copy(ref, new byte[0], len, guard));
        // the new owner reads fine through a chunk whose keys are intact, or as a protected key
        assertEquals("zebra", keys.read(reused, Chunk.empty(16)));
        assertEquals("zebra", keys.read(reused, null));
    }

    @Test
    void aKeyIsNeverDeletedTwice() {
        long ref = write("once");
        assertTrue(slices.delete(ref));
        // with assertions on (as in the test runs), a second delete of a slice not allocated again is caught
        assertThrows(AssertionError.class, () -> slices.delete(ref));
    }

    @Test
    void growOnlyKeysNeedNoGuard() {
        SliceManager growOnly = SliceManager.create(MemoryScheme.GROW_ONLY, allocator, BlockAllocator.Kind.KEY);
        KeyOps<String> ops = new KeyOps<>(OakCommonTypes.STRING_SERIALIZER, OakCommonTypes.STRING_COMPARATOR, growOnly);
        long ref = ops.write("kept", OakCommonTypes.STRING_COMPARATOR.keyPrefix("kept"));
        Chunk guard = Chunk.empty(16);
        guard.markKeysDeleted();
        assertEquals("kept", ops.read(ref, guard), "grow-only keys are never deleted: the mark is moot");
        assertEquals(false, growOnly.delete(ref));
    }
}
