package dev.oakmap.common;

import dev.oakmap.OakComparator;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakScopedWriteBuffer;
import dev.oakmap.OakSerializer;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;

/**
 * Ready-made serializers and comparators for {@code Integer}, {@code Long}, {@code String} and
 * {@code byte[]} keys and values.
 *
 * <p>Every serialized form here is <em>order-preserving</em>: comparing two serialized keys as
 * unsigned byte strings gives the same order as comparing the objects. So the comparators compare
 * serialized keys without deserializing them, and any of these key types could also be used with
 * {@link ByteStringComparator}. For every pair of keys, the three methods of each comparator
 * ({@code compareKeys}, {@code compareSerializedKeys}, {@code compareKeyAndSerializedKey}) agree in
 * sign.
 *
 * <table class="striped">
 * <caption>Serialized forms</caption>
 * <thead><tr><th>type</th><th>bytes</th><th>form</th><th>order</th></tr></thead>
 * <tbody>
 * <tr><td>Integer</td><td>4</td><td>big-endian, sign bit flipped</td><td>numeric</td></tr>
 * <tr><td>Long</td><td>8</td><td>big-endian, sign bit flipped</td><td>numeric</td></tr>
 * <tr><td>String</td><td>1-3 per char</td><td>UTF-8 of each UTF-16 char (CESU-8), no length
 *     prefix</td><td>{@link String#compareTo}</td></tr>
 * <tr><td>byte[]</td><td>length</td><td>the raw bytes</td><td>{@link
 *     java.util.Arrays#compareUnsigned(byte[], byte[])}</td></tr>
 * </tbody>
 * </table>
 *
 * <p>All constants are immutable, stateless and thread-safe. Serializers and comparators throw
 * {@link NullPointerException} on null objects (the map never passes them any), and deserializers
 * expect buffers written by the matching serializer: a buffer of the wrong size throws
 * {@link IndexOutOfBoundsException} (numbers) or {@link IllegalArgumentException} (malformed
 * strings).
 */
public final class OakCommonTypes {

    private OakCommonTypes() {
    }

    // ---------------------------------------------------------------- Integer

    /**
     * Serializes an {@code Integer} as 4 bytes: the value with its sign bit flipped, big-endian.
     * The unsigned byte order of serialized values is their numeric order
     * ({@code MIN_VALUE} is {@code 00 00 00 00}, {@code -1} is {@code 7F FF FF FF}, {@code 0} is
     * {@code 80 00 00 00}).
     */
    public static final OakSerializer<Integer> INTEGER_SERIALIZER = new OakSerializer<>() {
        @Override
        public void serialize(Integer value, OakScopedWriteBuffer target) {
            target.putInt(0, value ^ Integer.MIN_VALUE);
        }

        @Override
        public Integer deserialize(OakScopedReadBuffer source) {
            return source.getInt(0) ^ Integer.MIN_VALUE;
        }

        @Override
        public int calculateSize(Integer value) {
            return Integer.BYTES;
        }
    };

    /**
     * Numeric order of {@code Integer} keys serialized by {@link #INTEGER_SERIALIZER}. Serialized
     * keys are compared as raw unsigned ints, never deserialized into objects.
     */
    public static final OakComparator<Integer> INTEGER_COMPARATOR = new OakComparator<>() {
        @Override
        public int compareKeys(Integer key1, Integer key2) {
            return Integer.compare(key1, key2);
        }

        @Override
        public int compareSerializedKeys(OakScopedReadBuffer serializedKey1, OakScopedReadBuffer serializedKey2) {
            return Integer.compareUnsigned(serializedKey1.getInt(0), serializedKey2.getInt(0));
        }

        @Override
        public int compareKeyAndSerializedKey(Integer key, OakScopedReadBuffer serializedKey) {
            return Integer.compareUnsigned(key ^ Integer.MIN_VALUE, serializedKey.getInt(0));
        }

        /** The whole serialized key, as an unsigned number: comparing prefixes decides every comparison. */
        @Override
        public long keyPrefix(Integer key) {
            return Integer.toUnsignedLong(key ^ Integer.MIN_VALUE);
        }

        @Override
        public long serializedKeyPrefix(OakScopedReadBuffer serializedKey) {
            return Integer.toUnsignedLong(serializedKey.getInt(0));
        }
    };

    // ---------------------------------------------------------------- Long

    /**
     * Serializes a {@code Long} as 8 bytes: the value with its sign bit flipped, big-endian. The
     * unsigned byte order of serialized values is their numeric order.
     */
    public static final OakSerializer<Long> LONG_SERIALIZER = new OakSerializer<>() {
        @Override
        public void serialize(Long value, OakScopedWriteBuffer target) {
            target.putLong(0, value ^ Long.MIN_VALUE);
        }

        @Override
        public Long deserialize(OakScopedReadBuffer source) {
            return source.getLong(0) ^ Long.MIN_VALUE;
        }

        @Override
        public int calculateSize(Long value) {
            return Long.BYTES;
        }
    };

    /**
     * Numeric order of {@code Long} keys serialized by {@link #LONG_SERIALIZER}. Serialized keys are
     * compared as raw unsigned longs, never deserialized into objects.
     */
    public static final OakComparator<Long> LONG_COMPARATOR = new OakComparator<>() {
        @Override
        public int compareKeys(Long key1, Long key2) {
            return Long.compare(key1, key2);
        }

        @Override
        public int compareSerializedKeys(OakScopedReadBuffer serializedKey1, OakScopedReadBuffer serializedKey2) {
            return Long.compareUnsigned(serializedKey1.getLong(0), serializedKey2.getLong(0));
        }

        @Override
        public int compareKeyAndSerializedKey(Long key, OakScopedReadBuffer serializedKey) {
            return Long.compareUnsigned(key ^ Long.MIN_VALUE, serializedKey.getLong(0));
        }

        /** The whole serialized key: comparing prefixes decides every comparison. */
        @Override
        public long keyPrefix(Long key) {
            return key ^ Long.MIN_VALUE;
        }

        @Override
        public long serializedKeyPrefix(OakScopedReadBuffer serializedKey) {
            return serializedKey.getLong(0);
        }
    };

    // ---------------------------------------------------------------- String

    /**
     * Serializes a {@code String} as UTF-8, with no length prefix: the serialized size is the byte
     * count.
     *
     * <p>Precisely, each UTF-16 {@code char} of the string is encoded on its own, as the 1-, 2- or
     * 3-byte UTF-8 sequence of its value (the encoding known as CESU-8). For strings without
     * supplementary characters (code points above U+FFFF) this is byte-for-byte standard UTF-8, so
     * ASCII text takes one byte per character. A supplementary character takes 6 bytes (its two
     * surrogates, 3 bytes each) instead of standard UTF-8's 4. This choice buys two properties
     * standard UTF-8 lacks:
     * <ul>
     * <li>the unsigned byte order of serialized strings is exactly {@link String#compareTo}'s
     *     order (UTF-16 code unit order; standard UTF-8 orders by code point, which differs when a
     *     supplementary character meets a character in U+E000..U+FFFF), so
     *     {@link #STRING_COMPARATOR} compares serialized keys with a plain byte comparison;</li>
     * <li>every Java string round-trips exactly, including ones with unpaired surrogates, which
     *     {@link String#getBytes(java.nio.charset.Charset)} would replace with {@code '?'}.</li>
     * </ul>
     * The character U+0000 is encoded as the single byte 0 (not as Java's "modified UTF-8"
     * {@code C0 80}). The deserializer also accepts standard 4-byte UTF-8 sequences (for data
     * written by other encoders) and throws {@link IllegalArgumentException} on malformed input.
     */
    public static final OakSerializer<String> STRING_SERIALIZER = new StringSerializer();

    /**
     * The order of {@link String#compareTo} (lexicographic over UTF-16 chars), for keys serialized
     * by {@link #STRING_SERIALIZER}. Serialized keys are compared byte-wise with
     * {@link MemorySegment#mismatch}; a key object is compared with a serialized key by encoding its
     * chars on the fly, without allocating.
     */
    public static final ByteStringComparator<String> STRING_COMPARATOR = new StringComparator();

    // ---------------------------------------------------------------- byte[]

    /**
     * Serializes a {@code byte[]} as its raw bytes (no length prefix; the serialized size is the
     * array length). Deserializing returns a new array.
     */
    public static final OakSerializer<byte[]> BYTE_ARRAY_SERIALIZER = new OakSerializer<>() {
        @Override
        public void serialize(byte[] value, OakScopedWriteBuffer target) {
            target.putBytes(0, value, 0, value.length);
        }

        @Override
        public byte[] deserialize(OakScopedReadBuffer source) {
            byte[] bytes = new byte[source.capacity()];
            source.getBytes(0, bytes, 0, bytes.length);
            return bytes;
        }

        @Override
        public int calculateSize(byte[] value) {
            return value.length;
        }
    };

    /**
     * Unsigned lexicographic order of {@code byte[]} keys, a proper prefix first (as
     * {@link java.util.Arrays#compareUnsigned(byte[], byte[])}), for keys serialized by
     * {@link #BYTE_ARRAY_SERIALIZER}. All three comparisons use {@link MemorySegment#mismatch} and
     * allocate nothing beyond a possibly scalar-replaced segment wrapper.
     */
    public static final ByteStringComparator<byte[]> BYTE_ARRAY_COMPARATOR = ByteStringComparator.forByteArrays();

    // ---------------------------------------------------------------- String implementation

    /** CESU-8, see {@link #STRING_SERIALIZER}. */
    private static final class StringSerializer implements OakSerializer<String> {

        @Override
        public void serialize(String value, OakScopedWriteBuffer target) {
            MemorySegment out = target.writableSegment();
            int n = value.length();
            long pos = 0;
            for (int i = 0; i < n; i++) {
                char c = value.charAt(i);
                if (c < 0x80) {
                    out.set(ValueLayout.JAVA_BYTE, pos++, (byte) c);
                } else if (c < 0x800) {
                    out.set(ValueLayout.JAVA_BYTE, pos++, (byte) (0xC0 | (c >> 6)));
                    out.set(ValueLayout.JAVA_BYTE, pos++, (byte) (0x80 | (c & 0x3F)));
                } else {
                    out.set(ValueLayout.JAVA_BYTE, pos++, (byte) (0xE0 | (c >> 12)));
                    out.set(ValueLayout.JAVA_BYTE, pos++, (byte) (0x80 | ((c >> 6) & 0x3F)));
                    out.set(ValueLayout.JAVA_BYTE, pos++, (byte) (0x80 | (c & 0x3F)));
                }
            }
        }

        @Override
        public String deserialize(OakScopedReadBuffer source) {
            int n = source.capacity();
            byte[] bytes = new byte[n];
            source.getBytes(0, bytes, 0, n);
            int i = 0;
            while (i < n && bytes[i] >= 0) {
                i++;
            }
            if (i == n) {
                return new String(bytes, StandardCharsets.ISO_8859_1); // all ASCII: the fast path
            }
            char[] chars = new char[n];
            for (int j = 0; j < i; j++) {
                chars[j] = (char) bytes[j];
            }
            int len = i;
            while (i < n) {
                int b = bytes[i] & 0xFF;
                if (b < 0x80) {
                    chars[len++] = (char) b;
                    i++;
                } else if ((b & 0xE0) == 0xC0) {
                    chars[len++] = (char) (((b & 0x1F) << 6) | continuation(bytes, i + 1));
                    i += 2;
                } else if ((b & 0xF0) == 0xE0) {
                    chars[len++] = (char) (((b & 0x0F) << 12) | (continuation(bytes, i + 1) << 6)
                            | continuation(bytes, i + 2));
                    i += 3;
                } else if ((b & 0xF8) == 0xF0) {
                    int cp = ((b & 0x07) << 18) | (continuation(bytes, i + 1) << 12)
                            | (continuation(bytes, i + 2) << 6) | continuation(bytes, i + 3);
                    if (cp < 0x10000 || cp > Character.MAX_CODE_POINT) {
                        throw malformed(i);
                    }
                    chars[len++] = Character.highSurrogate(cp);
                    chars[len++] = Character.lowSurrogate(cp);
                    i += 4;
                } else {
                    throw malformed(i);
                }
            }
            return new String(chars, 0, len);
        }

        private static int continuation(byte[] bytes, int index) {
            if (index >= bytes.length || (bytes[index] & 0xC0) != 0x80) {
                throw malformed(index);
            }
            return bytes[index] & 0x3F;
        }

        private static IllegalArgumentException malformed(int index) {
            return new IllegalArgumentException("malformed serialized string at byte " + index);
        }

        @Override
        public int calculateSize(String value) {
            int n = value.length();
            long size = n;
            for (int i = 0; i < n; i++) {
                char c = value.charAt(i);
                if (c >= 0x80) {
                    size += c < 0x800 ? 1 : 2;
                }
            }
            if (size > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("string too long to serialize: " + size + " bytes");
            }
            return (int) size;
        }
    }

    /** String order: byte-wise on serialized keys, on-the-fly encoding for key vs serialized. */
    private static final class StringComparator extends ByteStringComparator<String> {

        StringComparator() {
            super(Comparator.naturalOrder(), STRING_SERIALIZER);
        }

        @Override
        public int compareKeys(String key1, String key2) {
            return key1.compareTo(key2);
        }

        @Override
        public int compareKeyAndSerializedKey(String key, OakScopedReadBuffer serializedKey) {
            MemorySegment s = serializedKey.segment();
            long size = s.byteSize();
            long pos = 0;
            int n = key.length();
            for (int i = 0; i < n; i++) {
                char c = key.charAt(i);
                int d;
                if (c < 0x80) {
                    if (pos == size) {
                        return 1;
                    }
                    d = c - Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, pos++));
                } else if (c < 0x800) {
                    d = compareTail(s, pos, size, 0xC0 | (c >> 6), 0x80 | (c & 0x3F), -1);
                    pos += 2;
                } else {
                    d = compareTail(s, pos, size, 0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F));
                    pos += 3;
                }
                if (d != 0) {
                    return d;
                }
            }
            return pos == size ? 0 : -1;
        }

        /** The first 8 bytes of the key's encoding, computed without serializing the whole key. */
        @Override
        public long keyPrefix(String key) {
            long p = 0;
            int shift = 56;
            int n = key.length();
            for (int i = 0; i < n && shift >= 0; i++) {
                char c = key.charAt(i);
                if (c < 0x80) {
                    p |= (long) c << shift;
                    shift -= 8;
                } else if (c < 0x800) {
                    p |= (long) (0xC0 | (c >> 6)) << shift;
                    shift -= 8;
                    if (shift >= 0) {
                        p |= (long) (0x80 | (c & 0x3F)) << shift;
                        shift -= 8;
                    }
                } else {
                    p |= (long) (0xE0 | (c >> 12)) << shift;
                    shift -= 8;
                    if (shift >= 0) {
                        p |= (long) (0x80 | ((c >> 6) & 0x3F)) << shift;
                        shift -= 8;
                    }
                    if (shift >= 0) {
                        p |= (long) (0x80 | (c & 0x3F)) << shift;
                        shift -= 8;
                    }
                }
            }
            return p;
        }

        /**
         * Compares the 2 or 3 bytes of one encoded char ({@code b2 < 0} for 2) with the serialized
         * bytes at {@code pos}: negative, zero or positive, where running out of serialized bytes
         * counts as the key being greater.
         */
        private static int compareTail(MemorySegment s, long pos, long size, int b0, int b1, int b2) {
            if (pos == size) {
                return 1;
            }
            int d = b0 - Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, pos));
            if (d != 0) {
                return d;
            }
            if (pos + 1 == size) {
                return 1;
            }
            d = b1 - Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, pos + 1));
            if (d != 0 || b2 < 0) {
                return d;
            }
            if (pos + 2 == size) {
                return 1;
            }
            return b2 - Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, pos + 2));
        }
    }
}
