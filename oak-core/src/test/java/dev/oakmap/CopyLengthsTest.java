package dev.oakmap;

import dev.oakmap.common.OakCommonTypes;
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
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Keys and values of lengths on both sides of every bound at which the map changes how it copies
 * bytes between off-heap slices and the heap (64 bytes, where the JDK's segment copy calls its
 * stub, and 256, where the map's word loop hands it back): every way of reading them back
 * returns exactly the bytes stored, under each memory scheme. The plain zero-copy iterator's key
 * views, which copy their keys, still read them after the mappings are removed.
 */
class CopyLengthsTest {

    private static final int[] LENGTHS = {1, 7, 8, 9, 63, 64, 65, 71, 72, 100, 255, 256, 257, 263, 1024, 3000};

    private static byte[] bytes(SplittableRandom r, int length, int tag) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) r.nextInt();
        }
        b[0] = (byte) tag; // distinct first bytes: distinct keys, in the order of the tags
        return b;
    }

    private static byte[] read(OakBuffer buffer) {
        byte[] out = new byte[buffer.capacity()];
        buffer.getBytes(0, out, 0, out.length);
        return out;
    }

    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void everyReadReturnsTheBytesStoredAtEveryLength(MemoryScheme scheme) {
        SplittableRandom r = new SplittableRandom(11);
        List<byte[][]> model = new ArrayList<>(); // {key, value} pairs, as stored
        try (OakMap<byte[], byte[]> map = new OakMapBuilder<>(OakCommonTypes.BYTE_ARRAY_SERIALIZER,
                OakCommonTypes.BYTE_ARRAY_SERIALIZER, OakCommonTypes.BYTE_ARRAY_COMPARATOR)
                .keyMemory(scheme).valueMemory(scheme).chunkCapacity(8).build()) {
            int tag = 0;
            for (int k : LENGTHS) {
                for (int v : LENGTHS) {
                    byte[] key = bytes(r, k, tag);
                    key[k > 1 ? 1 : 0] = (byte) (k > 1 ? v : tag); // keys of one length differ past their first byte too
                    byte[] value = bytes(r, v, tag);
                    map.put(key, value);
                    model.add(new byte[][] {key, value});
                    tag = (tag + 1) & 0x7f;
                }
            }
            assertEquals(model.size(), map.size());
            for (byte[][] kv : model) {
                assertArrayEquals(kv[1], map.get(kv[0]), "legacy get");
                assertArrayEquals(kv[1], map.zc().get(kv[0]).transform(CopyLengthsTest::read),
                        "zero-copy get, copied in a transform");
                assertArrayEquals(kv[1], read(map.zc().get(kv[0])), "zero-copy get's getBytes");
            }
            Map<String, byte[]> expected = new TreeMap<>();
            for (byte[][] kv : model) {
                expected.put(Arrays.toString(kv[0]), kv[1]);
            }
            for (OakMap<byte[], byte[]> view : List.of(map, map.descendingMap())) {
                int seen = 0;
                for (Map.Entry<byte[], byte[]> e : view.entrySet()) {
                    assertArrayEquals(expected.get(Arrays.toString(e.getKey())), e.getValue(), "legacy entry");
                    seen++;
                }
                assertEquals(model.size(), seen);
                for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : view.zc().entrySet()) {
                    assertArrayEquals(expected.get(Arrays.toString(read(e.getKey()))), read(e.getValue()), "zero-copy entry");
                }
                seen = 0;
                for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : view.zc().entryStreamSet()) {
                    assertArrayEquals(expected.get(Arrays.toString(read(e.getKey()))), read(e.getValue()), "stream entry");
                    seen++;
                }
                assertEquals(model.size(), seen);
            }

            // key views of a plain iterator copy their keys: they outlive the mappings
            List<OakUnscopedBuffer> keyViews = new ArrayList<>();
            for (OakUnscopedBuffer k : map.zc().keySet()) {
                keyViews.add(k);
            }
            List<byte[]> before = keyViews.stream().map(CopyLengthsTest::read).toList();
            map.clear();
            assertFalse(map.zc().entrySet().iterator().hasNext());
            for (byte[][] kv : model) {
                map.put(bytes(r, kv[0].length, 0x7f), kv[1]); // new keys reuse the freed memory
            }
            for (int i = 0; i < keyViews.size(); i++) {
                assertArrayEquals(before.get(i), read(keyViews.get(i)), "key view after its mapping went");
            }
        }
    }
}
