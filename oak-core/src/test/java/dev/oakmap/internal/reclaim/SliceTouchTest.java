package dev.oakmap.internal.reclaim;

import dev.oakmap.MemoryScheme;
import dev.oakmap.OakMap;
import dev.oakmap.OakMapBuilder;
import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.common.OakCommonTypes;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.BlockPool;
import dev.oakmap.internal.memory.Refs;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The scan look-ahead touches slices at guessed offsets (a typical key length): a guess past the
 * end of a block must be skipped, never read out of bounds, and scans over keys of mixed
 * lengths, whose guesses are often wrong, must still return exactly the map's contents.
 */
class SliceTouchTest {

    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void touchesBeyondTheBlockAreSkipped(MemoryScheme scheme) {
        long blockSize = 4096;
        BlockAllocator allocator = new BlockAllocator(BlockPool.shared(), blockSize, 4 * blockSize);
        try {
            SliceManager slices = SliceManager.create(scheme, allocator, BlockAllocator.Kind.KEY);
            int length = 64;
            while (slices.sliceBytes(length) > 64) {
                length--; // a data length whose slices take 64 bytes, so that they tile the block
            }
            List<Long> refs = new ArrayList<>();
            long firstBlock = -1;
            while (true) { // fill the first block up to its end
                long ref = slices.allocate(length);
                if (firstBlock < 0) {
                    firstBlock = Refs.blockId(ref);
                }
                if (Refs.blockId(ref) != firstBlock) {
                    break;
                }
                refs.add(ref);
            }
            long last = refs.get(refs.size() - 1);
            assertEquals(blockSize, Refs.offset(last) + slices.sliceBytes(length), "the last slice ends the block");
            for (long ref : refs) {
                for (long at : new long[] {0, 7, 12, 63, 64, 255, blockSize, 1L << 40}) {
                    slices.touch(ref, at); // a hint: never an exception
                }
            }
            assertEquals(0, slices.touch(last, slices.sliceBytes(length)), "the word after the block is not read");
        } finally {
            allocator.close();
        }
    }

    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void scansOverKeysOfMixedLengthsReturnEverything(MemoryScheme keyScheme) {
        SplittableRandom rnd = new SplittableRandom(20261124L + keyScheme.ordinal());
        TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
        try (OakMap<byte[], byte[]> map = new OakMapBuilder<>(OakCommonTypes.BYTE_ARRAY_SERIALIZER,
                OakCommonTypes.BYTE_ARRAY_SERIALIZER, OakCommonTypes.BYTE_ARRAY_COMPARATOR)
                .keyMemory(keyScheme).blockSize(4096).chunkCapacity(16).build()) {
            for (int i = 0; i < 3000; i++) {
                byte[] key = new byte[1 + rnd.nextInt(rnd.nextBoolean() ? 24 : 400)]; // lengths change the hint
                rnd.nextBytes(key);
                byte[] value = new byte[rnd.nextInt(70)];
                rnd.nextBytes(value);
                if (rnd.nextInt(5) == 0 && !model.isEmpty()) {
                    byte[] victim = model.ceilingKey(key) != null ? model.ceilingKey(key) : model.firstKey();
                    map.remove(victim);
                    model.remove(victim);
                } else {
                    map.put(key, value);
                    model.put(key, value);
                }
            }
            assertScan(model, map);
            assertScan(model.descendingMap(), map.descendingMap());
        }
    }

    private static void assertScan(Map<byte[], byte[]> expected, OakMap<byte[], byte[]> map) {
        List<Map.Entry<byte[], byte[]>> want = new ArrayList<>(expected.entrySet());
        int i = 0;
        for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : map.zc().entryStreamSet()) {
            assertArrayEquals(want.get(i).getKey(), e.getKey().transform(OakCommonTypes.BYTE_ARRAY_SERIALIZER::deserialize), "key " + i);
            assertArrayEquals(want.get(i).getValue(), e.getValue().transform(OakCommonTypes.BYTE_ARRAY_SERIALIZER::deserialize), "value " + i);
            i++;
        }
        assertEquals(want.size(), i);
    }
}
