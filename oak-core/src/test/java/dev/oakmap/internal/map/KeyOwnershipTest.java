package dev.oakmap.internal.map;

import dev.oakmap.MemoryScheme;
import dev.oakmap.OakComparator;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.internal.chunk.Chunk;
import dev.oakmap.internal.memory.Refs;
import dev.oakmap.internal.reclaim.SliceManager;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import static dev.oakmap.internal.map.InternalOakMapModelTest.ARR;
import static dev.oakmap.internal.map.InternalOakMapModelTest.CMP;
import static dev.oakmap.internal.map.InternalOakMapModelTest.INT;
import static dev.oakmap.internal.map.InternalOakMapModelTest.val;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The rebalancer's key ownership (see {@link Rebalancer}, "Key ownership"): a key slice is
 * referenced by one chunk at most, as an entry's key or as the chunk's minimum key, and no chunk
 * references a deleted one. A comparator whose key prefixes reverse the key order (and agree
 * with its serialized prefixes, so the map cannot tell) garbles every chunk's list, which the map
 * may answer wrongly from; before the first replacement of a rebalance was made to take the entry
 * holding the minimum key it inherits, a split could give that entry to a later replacement, and
 * a later rebalance of either chunk deleted the key under the other (seed 0 broke the invariant
 * after 266 operations, under either scheme).
 */
class KeyOwnershipTest {

    private static final OakComparator<Integer> REVERSED_PREFIX = new OakComparator<>() {
        public int compareKeys(Integer a, Integer b) { return CMP.compareKeys(a, b); }
        public int compareSerializedKeys(OakScopedReadBuffer a, OakScopedReadBuffer b) { return CMP.compareSerializedKeys(a, b); }
        public int compareKeyAndSerializedKey(Integer k, OakScopedReadBuffer b) { return CMP.compareKeyAndSerializedKey(k, b); }
        public long keyPrefix(Integer k) { return -(long) k; }
        public long serializedKeyPrefix(OakScopedReadBuffer b) { return -(long) (b.getInt(0) ^ Integer.MIN_VALUE); }
    };

    @ParameterizedTest
    @EnumSource(value = MemoryScheme.class, names = {"LOCK_BASED", "NOVA"})
    void noChunkSharesOrLinksADeletedKeyUnderPrefixesThatReverseTheOrder(MemoryScheme scheme) {
        for (int seed = 0; seed < 8; seed++) {
            InternalOakMap<Integer, int[]> m = new InternalOakMap<>(INT, ARR, REVERSED_PREFIX, 8L << 20, 64 << 10,
                    4 + seed % 3, 0.5, scheme, scheme);
            try {
                Random rnd = new Random(seed);
                for (int i = 0; i < 3000; i++) {
                    int k = rnd.nextInt(300);
                    int op = rnd.nextInt(6);
                    try {
                        switch (op) {
                            case 0, 1, 2 -> m.put(k, val(i, 1), false);
                            case 3 -> m.remove(k);
                            case 4 -> m.poll(null, false, null, false, false);
                            default -> m.poll(null, false, null, false, true);
                        }
                    } catch (RuntimeException wrongButAllowed) {
                        // a comparator that breaks its contract may get an exception
                    }
                    String broken = ownershipBroken(m);
                    if (broken != null) {
                        fail(scheme + ", seed " + seed + ", after operation " + i + ": " + broken);
                    }
                }
            } finally {
                m.close();
            }
        }
    }

    /** @return what breaks key ownership in {@code m} now, or null */
    private static String ownershipBroken(InternalOakMap<Integer, int[]> m) {
        SliceManager slices = m.keys().slices();
        boolean headers = slices.scheme() == MemoryScheme.LOCK_BASED; // header-less keys cannot tell
        Map<Long, Chunk> owner = new HashMap<>();
        int at = 0;
        for (Chunk c : m.index().snapshot()) {
            if (c.minKey != Refs.NULL) {
                if (headers && !slices.isLive(c.minKey)) {
                    return "chunk " + at + " has a deleted minimum key";
                }
                if (owner.putIfAbsent(c.minKey, c) != null) {
                    return "chunk " + at + " has as minimum key a key another chunk links";
                }
            }
            for (int e = c.nextEntry(Chunk.NONE); e != Chunk.NONE; e = c.nextEntry(e)) {
                long k = c.keyRef(e);
                if (headers && !slices.isLive(k)) {
                    return "chunk " + at + " links a deleted key at entry " + e;
                }
                Chunk o = owner.putIfAbsent(k, c);
                if (o != null && o != c) {
                    return "chunk " + at + " links, at entry " + e + ", a key another chunk references";
                }
            }
            at++;
        }
        return null;
    }
}
