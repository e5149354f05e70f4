package dev.oakmap.common;

import dev.oakmap.OakComparator;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakSerializer;
import dev.oakmap.internal.buffer.Codec;
import dev.oakmap.internal.buffer.Layouts;
import dev.oakmap.internal.memory.Refs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Objects;

/**
 * An {@link OakComparator} for keys whose serialized forms order byte-wise: two serialized keys
 * compare as unsigned byte strings, lexicographically, a proper prefix first (the order of
 * {@link Arrays#compareUnsigned(byte[], byte[])}). Serialized keys are compared with
 * {@link MemorySegment#mismatch(MemorySegment)}, which compares many bytes per instruction and
 * never deserializes.
 *
 * <p>The comparator is built from two things that <em>must agree</em>: an order on key objects
 * and a serializer. For every pair of keys {@code a}, {@code b}, the sign of
 * {@code objectOrder.compare(a, b)} must equal the sign of the unsigned byte-wise comparison of
 * their serialized forms; this class cannot check it, and a map built on a comparator that breaks
 * it misplaces keys. {@link #bySerializedForm(OakSerializer)} gives an order that agrees by
 * construction, at the cost of serializing both keys on every object comparison.
 *
 * <p>Comparing a key object with a serialized key ({@link #compareKeyAndSerializedKey}) by default
 * serializes the key object into a temporary heap array (allocated per call, so thread-safe and
 * lock-free, at the cost of one short-lived allocation) and compares the bytes. Subclasses that
 * can compare a key object with serialized bytes directly should override that method; the
 * instances returned by {@link #forByteArrays()} and the String comparator in
 * {@link OakCommonTypes} do so and allocate nothing. The serializer runs as it does when the map
 * stores a key: against a buffer scoped to the call, with its failures (a negative size, an
 * exception, a write past the promised size) reported as
 * {@link dev.oakmap.OakSerializationException}.
 *
 * <p>The {@linkplain #keyPrefix key prefix} the map uses to skip most off-heap comparisons is the
 * first 8 serialized bytes, big-endian, zero-padded: order-preserving for every byte-wise order.
 * For a key object it is computed, by default, by serializing the key into a temporary heap array.
 * Keys that share their first bytes (a table or tenant name, {@code "user"} and a number) all tie
 * on those 8 bytes; because this comparator's order is byte-wise, the map then compares the 8
 * bytes after the head its keys share instead, chunk by chunk, so such keys search about as fast
 * as keys that differ from the first byte. For that it serializes a searched key object again
 * for each window it compares in (the index's and a chunk's, about two per search), except
 * {@code byte[]} keys under {@link #forByteArrays()}, which it reads directly.
 *
 * <p>Instances are immutable and thread-safe if the supplied comparator and serializer are.
 * Comparing {@code null} keys throws {@link NullPointerException} (unless {@code objectOrder}
 * accepts nulls, which the map never relies on).
 *
 * @param <K> the key type
 */
public class ByteStringComparator<K> implements OakComparator<K> {

    private final Comparator<? super K> objectOrder;
    private final OakSerializer<K> serializer;

    /**
     * For subclasses.
     *
     * @param objectOrder the order of key objects; must agree with the byte order of serialized
     *     keys (see the class comment). If {@code null}, key objects are compared by serializing
     *     both and comparing the bytes.
     * @param serializer the serializer of the keys, used to compare key objects with serialized
     *     keys (and, if {@code objectOrder} is null, key objects with each other); may be
     *     {@code null} only if a subclass overrides every method that would use it
     */
    protected ByteStringComparator(Comparator<? super K> objectOrder, OakSerializer<K> serializer) {
        this.objectOrder = objectOrder;
        this.serializer = serializer;
    }

    /**
     * A comparator that orders key objects with {@code objectOrder} and serialized keys byte-wise.
     * Key-vs-serialized comparisons serialize the key into a temporary heap array.
     *
     * @param <K> the key type
     * @param objectOrder the order of key objects, which must agree with the unsigned byte order of
     *     their serialized forms
     * @param serializer the serializer the map uses for keys
     * @return a new comparator
     * @throws NullPointerException if an argument is null
     */
    public static <K> ByteStringComparator<K> of(Comparator<? super K> objectOrder, OakSerializer<K> serializer) {
        return new ByteStringComparator<>(Objects.requireNonNull(objectOrder, "objectOrder"),
                Objects.requireNonNull(serializer, "serializer"));
    }

    /**
     * A comparator whose order is, by definition, the unsigned byte order of the serialized keys,
     * for every kind of comparison. Always consistent, but comparing two key objects serializes
     * both (two temporary heap arrays), so prefer {@link #of(Comparator, OakSerializer)} when a
     * cheap object order is known.
     *
     * @param <K> the key type
     * @param serializer the serializer the map uses for keys
     * @return a new comparator
     * @throws NullPointerException if {@code serializer} is null
     */
    public static <K> ByteStringComparator<K> bySerializedForm(OakSerializer<K> serializer) {
        return new ByteStringComparator<>(null, Objects.requireNonNull(serializer, "serializer"));
    }

    /**
     * A comparator for {@code byte[]} keys serialized as their raw bytes (as
     * {@link OakCommonTypes#BYTE_ARRAY_SERIALIZER} does): unsigned lexicographic order, like
     * {@link Arrays#compareUnsigned(byte[], byte[])}. No comparison allocates or serializes; a key
     * array is compared directly against the serialized segment. This is the comparator behind
     * {@link OakCommonTypes#BYTE_ARRAY_COMPARATOR}.
     *
     * @return the shared comparator for {@code byte[]} keys
     */
    public static ByteStringComparator<byte[]> forByteArrays() {
        return ByteArrays.INSTANCE;
    }

    /** Compares two key objects with the object order (see the class comment). */
    @Override
    public int compareKeys(K key1, K key2) {
        if (objectOrder != null) {
            return objectOrder.compare(key1, key2);
        }
        return compareSegments(serialized(key1), serialized(key2));
    }

    /** Compares two serialized keys as unsigned byte strings; never deserializes or allocates. */
    @Override
    public final int compareSerializedKeys(OakScopedReadBuffer serializedKey1, OakScopedReadBuffer serializedKey2) {
        return compareSegments(serializedKey1.segment(), serializedKey2.segment());
    }

    /**
     * Compares a key object with a serialized key. This implementation serializes {@code key} into a
     * temporary heap array and compares bytes; subclasses may override it with a comparison that
     * reads the serialized bytes directly.
     */
    @Override
    public int compareKeyAndSerializedKey(K key, OakScopedReadBuffer serializedKey) {
        return compareSegments(serialized(key), serializedKey.segment());
    }

    /**
     * The first 8 bytes of the serialized key, big-endian, zero-padded when shorter. This class's
     * order guarantees that {@code a < b} implies {@code Long.compareUnsigned(prefix(a), prefix(b)) <= 0}.
     */
    @Override
    public final long serializedKeyPrefix(OakScopedReadBuffer serializedKey) {
        int n = serializedKey.capacity();
        if (n >= Long.BYTES) {
            return serializedKey.getLong(0);
        }
        long p = 0;
        for (int i = 0; i < n; i++) {
            p |= (long) Byte.toUnsignedInt(serializedKey.get(i)) << (56 - 8 * i);
        }
        return p;
    }

    /**
     * The {@linkplain #serializedKeyPrefix prefix} of the key's serialized form. This
     * implementation serializes the key into a temporary heap array; subclasses may compute it
     * directly.
     */
    @Override
    public long keyPrefix(K key) {
        return prefixOf(serialized(key));
    }

    /**
     * Serializes {@code key} into a new heap array the way the map serializes keys off-heap
     * ({@link Codec}): through a buffer scoped to the call, with a serializer that misbehaves (a
     * negative or impossible size, a throw, a write past its size) reported as
     * {@link dev.oakmap.OakSerializationException}.
     *
     * @return a segment over the array
     */
    private MemorySegment serialized(K key) {
        Objects.requireNonNull(key, "key"); // as the class comment says, not the serializer's failure
        return Codec.toHeap(serializer, key, Refs.MAX_AUX); // no map holds a longer key
    }

    /**
     * Computes the key prefix of a serialized key held in an array.
     *
     * @param bytes the serialized key
     * @return the first 8 bytes of {@code bytes}, big-endian, zero-padded when shorter: the
     *     prefix of a byte-string key, as {@link #serializedKeyPrefix} computes it
     * @throws NullPointerException if {@code bytes} is null
     */
    public static long prefixOf(byte[] bytes) {
        return prefixOf(MemorySegment.ofArray(bytes));
    }

    private static long prefixOf(MemorySegment s) {
        return Layouts.leadingLong(s, 0, s.byteSize());
    }

    /**
     * Compares the contents of two segments as unsigned byte strings, lexicographically, a proper
     * prefix ordering first: the order of {@link Arrays#compareUnsigned(byte[], byte[])}. Works on
     * any mix of heap and native segments.
     *
     * @param a the first segment
     * @param b the second segment
     * @return a negative number, zero or a positive number as {@code a} is less than, equal to or
     *     greater than {@code b}
     */
    public static int compareSegments(MemorySegment a, MemorySegment b) {
        long i = a.mismatch(b);
        if (i < 0) {
            return 0;
        }
        if (i == a.byteSize()) {
            return -1;          // a is a proper prefix of b
        }
        if (i == b.byteSize()) {
            return 1;           // b is a proper prefix of a
        }
        return Byte.toUnsignedInt(a.get(ValueLayout.JAVA_BYTE, i))
                - Byte.toUnsignedInt(b.get(ValueLayout.JAVA_BYTE, i));
    }

    /** The byte[] comparator: direct array-vs-segment comparison. */
    private static final class ByteArrays extends ByteStringComparator<byte[]> {
        static final ByteArrays INSTANCE = new ByteArrays();

        private ByteArrays() {
            super(null, null);
        }

        @Override
        public int compareKeys(byte[] key1, byte[] key2) {
            // Arrays.compareUnsigned orders null first; a comparator of keys rejects it, as the class says
            return Arrays.compareUnsigned(Objects.requireNonNull(key1, "key1"), Objects.requireNonNull(key2, "key2"));
        }

        @Override
        public int compareKeyAndSerializedKey(byte[] key, OakScopedReadBuffer serializedKey) {
            return compareSegments(MemorySegment.ofArray(key), serializedKey.segment());
        }

        @Override
        public long keyPrefix(byte[] key) {
            return prefixOf(key);
        }
    }
}
