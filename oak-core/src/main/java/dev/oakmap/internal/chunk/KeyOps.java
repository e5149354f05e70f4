package dev.oakmap.internal.chunk;

import dev.oakmap.OakComparator;
import dev.oakmap.OakSerializer;
import dev.oakmap.internal.buffer.Codec;
import dev.oakmap.internal.buffer.SliceBuffer;
import dev.oakmap.internal.memory.BlockAllocator;
import dev.oakmap.internal.memory.Refs;

import java.lang.foreign.MemorySegment;

/**
 * Everything the chunks need to know about keys: writing a key off-heap, reading it back, and
 * comparing a key object with a serialized key. Keys are immutable slices without a header; a
 * key reference carries the key's length in its aux field. Key slices are never reused while the
 * map lives, except ones that were never published (grow-only scheme for keys).
 */
public final class KeyOps<K> {
    private final OakSerializer<K> serializer;
    private final OakComparator<K> comparator;
    private final BlockAllocator allocator;

    public KeyOps(OakSerializer<K> serializer, OakComparator<K> comparator, BlockAllocator allocator) {
        this.serializer = serializer;
        this.comparator = comparator;
        this.allocator = allocator;
    }

    public OakComparator<K> comparator() {
        return comparator;
    }

    /** Compares a key object with the serialized key {@code keyRef}. */
    public int compare(K key, long keyRef) {
        SliceBuffer b = new SliceBuffer(allocator.segment(keyRef), Refs.offset(keyRef), Refs.aux(keyRef), false);
        try {
            return comparator.compareKeyAndSerializedKey(key, b);
        } finally {
            b.close();
        }
    }

    /**
     * Compares a key object, whose prefix is {@code keyPrefix}, with a serialized key whose
     * prefix is {@code refPrefix}: the on-heap prefixes first, the off-heap bytes only on a tie.
     */
    public int compare(K key, long keyPrefix, long keyRef, long refPrefix) {
        if (keyPrefix != refPrefix) {
            return Long.compareUnsigned(keyPrefix, refPrefix);
        }
        return compare(key, keyRef);
    }

    /** @return the comparator's order-preserving prefix of {@code key} */
    public long prefix(K key) {
        return comparator.keyPrefix(key);
    }

    /** @return the comparator's prefix of the serialized key {@code keyRef} */
    public long prefixOf(long keyRef) {
        SliceBuffer b = new SliceBuffer(allocator.segment(keyRef), Refs.offset(keyRef), Refs.aux(keyRef), false);
        try {
            return comparator.serializedKeyPrefix(b);
        } finally {
            b.close();
        }
    }

    /** Compares two key objects. */
    public int compareKeys(K a, K b) {
        return comparator.compareKeys(a, b);
    }

    /** Writes {@code key} to a new slice. @return its reference */
    public long write(K key) {
        int len = Codec.sizeOf(serializer, key, Refs.MAX_AUX);
        long ref = allocator.allocate(len, BlockAllocator.Kind.KEY);
        try {
            Codec.write(serializer, key, allocator.segment(ref), Refs.offset(ref), len);
        } catch (RuntimeException e) {
            allocator.free(ref, len, BlockAllocator.Kind.KEY);
            throw e;
        }
        return Refs.withAux(ref, len);
    }

    /** Frees a key slice that was never published. */
    public void discard(long keyRef) {
        allocator.free(keyRef, Refs.aux(keyRef), BlockAllocator.Kind.KEY);
    }

    /**
     * Reads the first byte of a key with no ordering, only to bring its cache line in early
     * (scan lookahead). @return the byte, meaningless to the caller
     */
    public byte touch(long keyRef) {
        return allocator.segment(keyRef).get(java.lang.foreign.ValueLayout.JAVA_BYTE, Refs.offset(keyRef));
    }

    /** @return a deserialized copy of the key */
    public K read(long keyRef) {
        return Codec.read(serializer, allocator.segment(keyRef), Refs.offset(keyRef), Refs.aux(keyRef));
    }

    /** @return the segment holding the key */
    public MemorySegment segment(long keyRef) {
        return allocator.segment(keyRef);
    }
}
