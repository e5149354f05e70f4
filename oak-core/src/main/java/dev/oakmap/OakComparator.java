package dev.oakmap;

import java.util.Comparator;

/**
 * Orders keys both as objects and in serialized form, so the map can search its off-heap keys
 * without deserializing them. The three methods must agree with each other: for any keys
 * {@code a}, {@code b} and their serialized forms {@code sa}, {@code sb}, the signs of
 * {@code compareKeys(a, b)}, {@code compareSerializedKeys(sa, sb)} and
 * {@code compareKeyAndSerializedKey(a, sb)} are the same. Implementations must be thread-safe.
 *
 * <p>If a comparison throws, the operation that called it fails with that exception and has no
 * effect on the map. The map also computes key prefixes when it reorganizes its metadata after
 * an operation took effect; if that throws, the operation still returns normally, the
 * reorganization is left undone, and the next operation that cannot proceed without it (an
 * insertion that needs the room it would make) fails with the exception instead.
 *
 * @param <K> the key type
 */
public interface OakComparator<K> extends Comparator<K> {

    /**
     * Compares two key objects.
     *
     * @param key1 the first key
     * @param key2 the second key
     * @return a negative number, zero or a positive number as {@code key1} is less than, equal to or
     *     greater than {@code key2}
     */
    int compareKeys(K key1, K key2);

    /**
     * Compares two serialized keys.
     *
     * @param serializedKey1 the first serialized key; valid only during the call
     * @param serializedKey2 the second serialized key; valid only during the call
     * @return a negative number, zero or a positive number as the first key is less than, equal to
     *     or greater than the second
     */
    int compareSerializedKeys(OakScopedReadBuffer serializedKey1, OakScopedReadBuffer serializedKey2);

    /**
     * Compares a key object with a serialized key.
     *
     * @param key the key object
     * @param serializedKey the serialized key; valid only during the call
     * @return a negative number, zero or a positive number as {@code key} is less than, equal to or
     *     greater than the key {@code serializedKey} holds
     */
    int compareKeyAndSerializedKey(K key, OakScopedReadBuffer serializedKey);

    /**
     * Optional acceleration: an order-preserving 64-bit summary of a key (an "abbreviated key",
     * such as its first 8 bytes). The map keeps these summaries in on-heap arrays and compares them
     * (as unsigned longs) before touching serialized keys, so most search steps never leave the
     * array. The contract: if {@code compareKeys(a, b) < 0} then
     * {@code Long.compareUnsigned(keyPrefix(a), keyPrefix(b)) <= 0}, and
     * {@code serializedKeyPrefix} of a key's serialized form equals {@code keyPrefix} of the key.
     * Equal prefixes say nothing; the map then compares in full. Prefixes that break this
     * contract make the map's answers wrong (lookups miss keys, scans come out of order), as a
     * comparator inconsistent with itself does; they are not meant to do more harm than that
     * (the map is tested with prefixes that reverse the key order: no hang, no key freed while a
     * chunk still links it).
     *
     * <p>The default returns 0 for every key, which is always correct and gives no acceleration:
     * every step of every search then reads a key off-heap, about 21 per lookup in a map of 1M
     * pairs against 2 with a prefix, and point operations run at a quarter to two fifths of the speed
     * (measured in the project's {@code docs/results.md}, "Comparators without a key prefix").
     * For keys whose serialized form orders byte-wise,
     * {@link dev.oakmap.common.ByteStringComparator#of ByteStringComparator.of} supplies the
     * prefix.
     *
     * @param key the key object
     * @return the prefix of {@code key}
     */
    default long keyPrefix(K key) {
        return 0L;
    }

    /**
     * The prefix of a serialized key; must equal {@link #keyPrefix} of the deserialized key. The
     * map calls it when it rebuilds the prefixes of keys already stored (their on-heap copies keep
     * fewer bits), so it should be cheap. The map checks the two methods against each other on a
     * sample of the keys it writes; if they disagree (for instance when only {@code keyPrefix} is
     * overridden) or this one throws, the map computes stored keys' prefixes from deserialized
     * keys instead, which is slower but correct.
     *
     * @param serializedKey the serialized key; valid only during the call
     * @return the prefix of {@code serializedKey}
     */
    default long serializedKeyPrefix(OakScopedReadBuffer serializedKey) {
        return 0L;
    }

    /** Same as {@link #compareKeys(Object, Object)}, so that this comparator is a {@link Comparator}. */
    @Override
    default int compare(K key1, K key2) {
        return compareKeys(key1, key2);
    }
}
