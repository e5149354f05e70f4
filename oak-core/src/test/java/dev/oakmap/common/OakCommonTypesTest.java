package dev.oakmap.common;

import dev.oakmap.OakComparator;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakSerializer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

class OakCommonTypesTest {

    private static final long SEED = 0x0a4c_2025L;

    // ------------------------------------------------------------------ helpers

    /**
     * Serializes every value, checks round trip and size, then checks, for every ordered pair,
     * that the reference order and the comparator's three methods agree in sign.
     */
    private static <T> void checkAll(List<T> values, OakSerializer<T> serializer, OakComparator<T> comparator,
                                     Comparator<T> reference, Function<T, Object> show) {
        List<OakScopedReadBuffer> serialized = new ArrayList<>(values.size());
        for (T v : values) {
            TestBuffers.Buffer b = TestBuffers.serialize(serializer, v);
            assertEquals(serializer.calculateSize(v), b.capacity(), () -> "size of " + show.apply(v));
            T back = serializer.deserialize(b);
            assertEquals(0, reference.compare(v, back), () -> "round trip of " + show.apply(v));
            assertEquals(comparator.keyPrefix(v), comparator.serializedKeyPrefix(b), () -> "prefix of " + show.apply(v));
            serialized.add(b);
        }
        for (int i = 0; i < values.size(); i++) {
            for (int j = 0; j < values.size(); j++) {
                T a = values.get(i);
                T b = values.get(j);
                int expected = Integer.signum(reference.compare(a, b));
                int objects = Integer.signum(comparator.compareKeys(a, b));
                int viaCompare = Integer.signum(comparator.compare(a, b));
                int bytes = Integer.signum(comparator.compareSerializedKeys(serialized.get(i), serialized.get(j)));
                int mixed = Integer.signum(comparator.compareKeyAndSerializedKey(a, serialized.get(j)));
                if (expected < 0 && Long.compareUnsigned(comparator.keyPrefix(a), comparator.keyPrefix(b)) > 0) {
                    fail("prefix order broken for " + show.apply(a) + " < " + show.apply(b));
                }
                if (expected != objects || expected != viaCompare || expected != bytes || expected != mixed) {
                    fail("disagreement for " + show.apply(a) + " vs " + show.apply(b) + ": reference=" + expected
                            + " compareKeys=" + objects + " compare=" + viaCompare + " serialized=" + bytes
                            + " keyVsSerialized=" + mixed);
                }
            }
        }
    }

    private static String showString(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c >= 0x20 && c < 0x7F) {
                sb.append(c);
            } else {
                sb.append(String.format("\\u%04X", (int) c));
            }
        }
        return sb.append('"').toString();
    }

    // ------------------------------------------------------------------ Integer and Long

    @Test
    void integers() {
        List<Integer> values = new ArrayList<>(List.of(Integer.MIN_VALUE, Integer.MIN_VALUE + 1, -65536, -256,
                -255, -2, -1, 0, 1, 2, 127, 128, 255, 256, 65535, Integer.MAX_VALUE - 1, Integer.MAX_VALUE));
        SplittableRandom rnd = new SplittableRandom(SEED);
        for (int i = 0; i < 120; i++) {
            values.add(i % 2 == 0 ? rnd.nextInt() : rnd.nextInt(-1000, 1000));
        }
        checkAll(values, OakCommonTypes.INTEGER_SERIALIZER, OakCommonTypes.INTEGER_COMPARATOR,
                Integer::compare, v -> v);
    }

    @Test
    void integerSerializedFormIsSignFlippedBigEndian() {
        assertArrayEquals(new byte[] {0, 0, 0, 0},
                TestBuffers.serialize(OakCommonTypes.INTEGER_SERIALIZER, Integer.MIN_VALUE).toArray());
        assertArrayEquals(new byte[] {(byte) 0x80, 0, 0, 0},
                TestBuffers.serialize(OakCommonTypes.INTEGER_SERIALIZER, 0).toArray());
        assertArrayEquals(new byte[] {(byte) 0x80, 0, 1, 2},
                TestBuffers.serialize(OakCommonTypes.INTEGER_SERIALIZER, 0x0102).toArray());
        assertArrayEquals(new byte[] {0x7F, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF},
                TestBuffers.serialize(OakCommonTypes.INTEGER_SERIALIZER, -1).toArray());
        assertEquals(4, OakCommonTypes.INTEGER_SERIALIZER.calculateSize(42));
    }

    @Test
    void longs() {
        List<Long> values = new ArrayList<>(List.of(Long.MIN_VALUE, Long.MIN_VALUE + 1, (long) Integer.MIN_VALUE - 1,
                (long) Integer.MIN_VALUE, -256L, -1L, 0L, 1L, 255L, 256L, (long) Integer.MAX_VALUE,
                (long) Integer.MAX_VALUE + 1, 1L << 32, Long.MAX_VALUE - 1, Long.MAX_VALUE));
        SplittableRandom rnd = new SplittableRandom(SEED + 1);
        for (int i = 0; i < 120; i++) {
            values.add(i % 3 == 0 ? rnd.nextLong() : i % 3 == 1 ? rnd.nextLong(-1000, 1000) : (long) rnd.nextInt());
        }
        checkAll(values, OakCommonTypes.LONG_SERIALIZER, OakCommonTypes.LONG_COMPARATOR, Long::compare, v -> v);
        assertEquals(8, OakCommonTypes.LONG_SERIALIZER.calculateSize(42L));
        assertArrayEquals(new byte[] {(byte) 0x80, 0, 0, 0, 0, 0, 0, 7},
                TestBuffers.serialize(OakCommonTypes.LONG_SERIALIZER, 7L).toArray());
    }

    @Test
    void numberSerializersRejectShortBuffers() {
        assertThrows(IndexOutOfBoundsException.class,
                () -> OakCommonTypes.INTEGER_SERIALIZER.serialize(1, TestBuffers.allocate(3)));
        assertThrows(IndexOutOfBoundsException.class,
                () -> OakCommonTypes.LONG_SERIALIZER.deserialize(TestBuffers.allocate(7)));
    }

    // ------------------------------------------------------------------ String

    private static final String EMOJI = "\uD83D\uDE00";             // U+1F600, a surrogate pair
    private static final String MAX_SUPPLEMENTARY = "\uDBFF\uDFFF"; // U+10FFFF

    private static List<String> edgeStrings() {
        return new ArrayList<>(List.of("", "\0", "\0\0", "a", "a\0", "ab", "abc", "b", "A", "z",
                "\u007F", "\u0080", "\u00E9", "\u00FF", "\u0100", "\u07FF", "\u0800", "\u20AC", "\uD7FF",
                "\uD800", "\uDBFF", "\uDC00", "\uDFFF",                   // lone surrogates
                "\uE000", "\uFFFD", "\uFFFF", "\uFFFF\uFFFF",
                EMOJI, EMOJI + "a", "a" + EMOJI, "\uD800\uDC00", MAX_SUPPLEMENTARY,
                "\uFFFF" + EMOJI, EMOJI + "\uFFFF", "\uD83D", "\uD83Da", "\uDE00\uD83D",
                "hello", "hello world", "hello\u00E9", "hell\u00F6", "\u65E5\u672C\u8A9E"));
    }

    private static String randomString(SplittableRandom rnd) {
        int len = rnd.nextInt(0, 7);
        StringBuilder sb = new StringBuilder(len);
        for (int i = 0; i < len; i++) {
            switch (rnd.nextInt(8)) {
                case 0, 1, 2 -> sb.append((char) rnd.nextInt('a', 'd'));      // small alphabet: shared prefixes
                case 3 -> sb.append((char) rnd.nextInt(0, 0x80));
                case 4 -> sb.append((char) rnd.nextInt(0x80, 0x800));
                case 5 -> sb.append((char) rnd.nextInt(0x800, 0x10000));      // includes lone surrogates
                case 6 -> sb.appendCodePoint(rnd.nextInt(0x10000, 0x110000)); // supplementary
                default -> sb.append((char) rnd.nextInt(0xE000, 0x10000));    // the range UTF-8 orders differently
            }
        }
        return sb.toString();
    }

    @Test
    void stringsAgreeWithStringCompareTo() {
        List<String> values = edgeStrings();
        SplittableRandom rnd = new SplittableRandom(SEED + 2);
        for (int i = 0; i < 250; i++) {
            values.add(randomString(rnd));
        }
        checkAll(values, OakCommonTypes.STRING_SERIALIZER, OakCommonTypes.STRING_COMPARATOR,
                String::compareTo, OakCommonTypesTest::showString);
    }

    @Test
    void supplementaryCharacterOrdersAsUtf16NotAsCodePoint() {
        // String.compareTo: U+D83D (high surrogate) < U+FFFF, although the code point U+1F600 > U+FFFF
        assertEquals(true, EMOJI.compareTo("\uFFFF") < 0);
        var emoji = TestBuffers.serialize(OakCommonTypes.STRING_SERIALIZER, EMOJI);
        var ffff = TestBuffers.serialize(OakCommonTypes.STRING_SERIALIZER, "\uFFFF");
        assertEquals(true, OakCommonTypes.STRING_COMPARATOR.compareSerializedKeys(emoji, ffff) < 0);
        assertEquals(true, OakCommonTypes.STRING_COMPARATOR.compareKeyAndSerializedKey(EMOJI, ffff) < 0);
        assertEquals(true, OakCommonTypes.STRING_COMPARATOR.compareKeyAndSerializedKey("\uFFFF", emoji) > 0);
    }

    @Test
    void stringSerializedFormIsUtf8ForBmpText() {
        SplittableRandom rnd = new SplittableRandom(SEED + 3);
        List<String> values = edgeStrings();
        for (int i = 0; i < 200; i++) {
            values.add(randomString(rnd));
        }
        for (String s : values) {
            byte[] bytes = TestBuffers.serialize(OakCommonTypes.STRING_SERIALIZER, s).toArray();
            boolean hasSurrogates = s.chars().anyMatch(c -> Character.isSurrogate((char) c));
            if (!hasSurrogates) {
                assertArrayEquals(s.getBytes(StandardCharsets.UTF_8), bytes, () -> showString(s));
            }
            long expectedSize = s.chars().mapToLong(c -> c < 0x80 ? 1 : c < 0x800 ? 2 : 3).sum();
            assertEquals(expectedSize, bytes.length, () -> showString(s));
        }
        assertEquals(6, OakCommonTypes.STRING_SERIALIZER.calculateSize(EMOJI));
        assertEquals(0, OakCommonTypes.STRING_SERIALIZER.calculateSize(""));
        assertArrayEquals(new byte[] {0}, TestBuffers.serialize(OakCommonTypes.STRING_SERIALIZER, "\0").toArray());
    }

    @Test
    void stringDeserializerAcceptsStandardUtf8AndRejectsMalformedInput() {
        String text = "a" + EMOJI + MAX_SUPPLEMENTARY + "\u00E9\uFFFF";
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);  // 4-byte sequences for the supplementary chars
        assertEquals(text, OakCommonTypes.STRING_SERIALIZER.deserialize(TestBuffers.of(utf8)));

        for (byte[] bad : List.of(new byte[] {(byte) 0x80}, new byte[] {(byte) 0xC3}, new byte[] {'a', (byte) 0xE2, (byte) 0x82},
                new byte[] {(byte) 0xC3, 'a'}, new byte[] {(byte) 0xFF}, new byte[] {(byte) 0xF8, (byte) 0x80, (byte) 0x80, (byte) 0x80},
                new byte[] {(byte) 0xF0, (byte) 0x80, (byte) 0x80, (byte) 0x80})) {
            assertThrows(IllegalArgumentException.class,
                    () -> OakCommonTypes.STRING_SERIALIZER.deserialize(TestBuffers.of(bad)), Arrays.toString(bad));
        }
    }

    @Test
    void longStringsRoundTrip() {
        SplittableRandom rnd = new SplittableRandom(SEED + 4);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 5000; i++) {
            sb.append(randomString(rnd));
        }
        String s = sb.toString();
        String ascii = "x".repeat(10_000);
        List<String> values = List.of(s, s + "a", ascii, ascii + "\u0080", ascii.substring(1));
        checkAll(values, OakCommonTypes.STRING_SERIALIZER, OakCommonTypes.STRING_COMPARATOR,
                String::compareTo, v -> v.length() + " chars");
    }

    // ------------------------------------------------------------------ byte[]

    private static List<byte[]> byteArrays(long seed, int randomCount) {
        List<byte[]> values = new ArrayList<>(List.of(new byte[0], new byte[] {0}, new byte[] {0, 0},
                new byte[] {1}, new byte[] {127}, new byte[] {(byte) 128}, new byte[] {-1}, new byte[] {-1, -1},
                new byte[] {-1, 0}, new byte[] {0, -1}, new byte[] {1, 2, 3}, new byte[] {1, 2, 3, 0},
                new byte[] {1, 2, 4}, new byte[100], new byte[101]));
        byte[] big = new byte[100];
        Arrays.fill(big, (byte) 0x7F);
        values.add(big);
        byte[] bigFlip = big.clone();
        bigFlip[99] = (byte) 0x80;
        values.add(bigFlip);
        values.add(Arrays.copyOf(big, 99));
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int i = 0; i < randomCount; i++) {
            byte[] b = new byte[rnd.nextInt(0, i % 4 == 0 ? 70 : 12)];
            for (int j = 0; j < b.length; j++) {
                // few distinct bytes, both signs, so arrays share long prefixes
                b[j] = (byte) (rnd.nextInt(3) == 0 ? rnd.nextInt(256) : (rnd.nextBoolean() ? 0x01 : 0xF0));
            }
            if (i % 5 == 0 && b.length > 20) {
                Arrays.fill(b, 0, 17, (byte) 0x01); // mismatch beyond the first vector word
            }
            values.add(b);
        }
        return values;
    }

    @Test
    void byteArrays() {
        checkAll(byteArrays(SEED + 5, 250), OakCommonTypes.BYTE_ARRAY_SERIALIZER, OakCommonTypes.BYTE_ARRAY_COMPARATOR,
                Arrays::compareUnsigned, Arrays::toString);
    }

    @Test
    void byteArraySerializedFormIsRaw() {
        byte[] b = {5, -3, 0, 9};
        assertArrayEquals(b, TestBuffers.serialize(OakCommonTypes.BYTE_ARRAY_SERIALIZER, b).toArray());
        assertEquals(4, OakCommonTypes.BYTE_ARRAY_SERIALIZER.calculateSize(b));
        assertEquals(0, OakCommonTypes.BYTE_ARRAY_SERIALIZER.calculateSize(new byte[0]));
        byte[] copy = OakCommonTypes.BYTE_ARRAY_SERIALIZER.deserialize(TestBuffers.of(b));
        assertArrayEquals(b, copy);
        assertEquals(false, copy == b);
    }

    // ------------------------------------------------------------------ ByteStringComparator

    @Test
    void byteStringComparatorFromObjectOrderAndSerializer() {
        // generic path: key-vs-serialized serializes the key into a temporary heap array
        ByteStringComparator<Long> c = ByteStringComparator.of(Comparator.naturalOrder(), OakCommonTypes.LONG_SERIALIZER);
        List<Long> values = new ArrayList<>(List.of(Long.MIN_VALUE, -1L, 0L, 1L, Long.MAX_VALUE));
        SplittableRandom rnd = new SplittableRandom(SEED + 6);
        for (int i = 0; i < 60; i++) {
            values.add(rnd.nextLong());
        }
        checkAll(values, OakCommonTypes.LONG_SERIALIZER, c, Long::compare, v -> v);
    }

    @Test
    void byteStringComparatorBySerializedForm() {
        ByteStringComparator<String> c = ByteStringComparator.bySerializedForm(OakCommonTypes.STRING_SERIALIZER);
        List<String> values = edgeStrings();
        SplittableRandom rnd = new SplittableRandom(SEED + 7);
        for (int i = 0; i < 80; i++) {
            values.add(randomString(rnd));
        }
        checkAll(values, OakCommonTypes.STRING_SERIALIZER, c, String::compareTo, OakCommonTypesTest::showString);

        ByteStringComparator<byte[]> raw = ByteStringComparator.bySerializedForm(OakCommonTypes.BYTE_ARRAY_SERIALIZER);
        checkAll(byteArrays(SEED + 8, 60), OakCommonTypes.BYTE_ARRAY_SERIALIZER, raw, Arrays::compareUnsigned,
                Arrays::toString);
    }

    @Test
    void compareSegmentsMatchesArraysCompareUnsigned() {
        List<byte[]> values = byteArrays(SEED + 9, 100);
        for (byte[] a : values) {
            for (byte[] b : values) {
                assertEquals(Integer.signum(Arrays.compareUnsigned(a, b)),
                        Integer.signum(ByteStringComparator.compareSegments(TestBuffers.of(a).segment(),
                                TestBuffers.of(b).writableSegment())));
            }
        }
    }

    @Test
    void prefixesAreInformative() {
        // the ready-made comparators give real prefixes, not the interface's always-0 default
        assertEquals(Long.compareUnsigned(OakCommonTypes.INTEGER_COMPARATOR.keyPrefix(-5),
                OakCommonTypes.INTEGER_COMPARATOR.keyPrefix(3)), -1);
        assertEquals(Long.MIN_VALUE, OakCommonTypes.LONG_COMPARATOR.keyPrefix(0L));
        assertEquals(0x6162630000000000L, OakCommonTypes.STRING_COMPARATOR.keyPrefix("abc"));
        assertEquals(0x6162636465666768L, OakCommonTypes.STRING_COMPARATOR.keyPrefix("abcdefghij"));
        assertEquals(0x61626364656667E2L, OakCommonTypes.STRING_COMPARATOR.keyPrefix("abcdefg\u20AC"));
        assertEquals(0x0102000000000000L, OakCommonTypes.BYTE_ARRAY_COMPARATOR.keyPrefix(new byte[] {1, 2}));
        assertEquals(0xFF01020304050607L, ByteStringComparator.prefixOf(new byte[] {-1, 1, 2, 3, 4, 5, 6, 7, 8}));
        assertEquals(0x8000000000000007L,
                ByteStringComparator.of(Long::compare, OakCommonTypes.LONG_SERIALIZER).keyPrefix(7L));
    }

    /**
     * A key serializer that misbehaves while the comparator serializes a key object is reported as
     * the map reports it, {@link dev.oakmap.OakSerializationException} (with the serializer's
     * exception as cause when it threw), from every method that serializes a key.
     */
    @Test
    void byteStringComparatorReportsAMisbehavingSerializer() {
        RuntimeException boom = new RuntimeException("boom");
        OakSerializer<Long> bad = new OakSerializer<>() {
            @Override
            public void serialize(Long v, dev.oakmap.OakScopedWriteBuffer target) {
                if (v == 1) {
                    throw boom;
                }
                target.putLong(0, v); // 8 bytes, past the promised 4 for v == 3
            }

            @Override
            public Long deserialize(OakScopedReadBuffer source) {
                return source.getLong(0);
            }

            @Override
            public int calculateSize(Long v) {
                return v == 2 ? -1 : v == 3 ? 4 : 8;
            }
        };
        OakScopedReadBuffer five = TestBuffers.of(new byte[] {0, 0, 0, 0, 0, 0, 0, 5});
        for (ByteStringComparator<Long> c : List.of(ByteStringComparator.of(Long::compare, bad),
                ByteStringComparator.bySerializedForm(bad))) {
            for (long key : new long[] {1, 2, 3}) {
                Throwable t = assertThrows(dev.oakmap.OakSerializationException.class,
                        () -> c.compareKeyAndSerializedKey(key, five), "key " + key);
                if (key == 1) {
                    assertEquals(boom, t.getCause());
                }
                assertThrows(dev.oakmap.OakSerializationException.class, () -> c.keyPrefix(key), "prefix " + key);
            }
            assertEquals(-1, Integer.signum(c.compareKeyAndSerializedKey(4L, five)), "a sound key still compares");
        }
        assertThrows(dev.oakmap.OakSerializationException.class,
                () -> ByteStringComparator.bySerializedForm(bad).compareKeys(1L, 4L));
    }

    @Test
    void forByteArraysIsTheCommonConstant() {
        assertEquals(OakCommonTypes.BYTE_ARRAY_COMPARATOR, ByteStringComparator.forByteArrays());
        assertThrows(NullPointerException.class, () -> ByteStringComparator.of(null, OakCommonTypes.LONG_SERIALIZER));
        assertThrows(NullPointerException.class, () -> ByteStringComparator.bySerializedForm(null));
    }

    @Test
    void nullKeysAreRejected() {
        assertThrows(NullPointerException.class, () -> OakCommonTypes.INTEGER_COMPARATOR.compareKeys(null, 1));
        assertThrows(NullPointerException.class, () -> OakCommonTypes.STRING_COMPARATOR.compareKeys("a", null));
        assertThrows(NullPointerException.class, () -> OakCommonTypes.BYTE_ARRAY_COMPARATOR.compareKeys(null, new byte[1]));
        assertThrows(NullPointerException.class, () -> OakCommonTypes.BYTE_ARRAY_COMPARATOR.compareKeys(new byte[1], null));
        assertThrows(NullPointerException.class, () -> OakCommonTypes.LONG_COMPARATOR.compareKeys(1L, null));
        assertThrows(NullPointerException.class, () -> OakCommonTypes.STRING_SERIALIZER.calculateSize(null));
        assertThrows(NullPointerException.class, () -> OakCommonTypes.BYTE_ARRAY_SERIALIZER.calculateSize(null));
    }
}
