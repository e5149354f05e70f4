package dev.oakmap;

import dev.oakmap.internal.chunk.Chunk;
import dev.oakmap.internal.map.InternalOakMap;

import java.util.Objects;

/**
 * Configures and builds an {@link OakMap}.
 *
 * <pre>{@code
 * OakMap<String, Long> map = new OakMapBuilder<>(
 *         OakCommonTypes.STRING_SERIALIZER, OakCommonTypes.LONG_SERIALIZER, OakCommonTypes.STRING_COMPARATOR)
 *     .memoryCapacity(1L << 30)
 *     .build();
 * }</pre>
 *
 * A builder is not thread-safe; the map it builds is.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
public final class OakMapBuilder<K, V> {

    /** Default off-heap capacity of a map: 16 GiB. */
    public static final long DEFAULT_MEMORY_CAPACITY = 16L << 30;
    /** Default size of the off-heap blocks a map takes from the shared pool: 64 MiB. */
    public static final long DEFAULT_BLOCK_SIZE = 64L << 20;
    /** Default number of entries per chunk (the paper's setting). */
    public static final int DEFAULT_CHUNK_CAPACITY = 4096;
    /**
     * Default ratio of unsorted to sorted entries of a chunk that triggers a rebalance: 0.25.
     * It is also the room a rebuilt chunk gets, so it sets the slack of the on-heap arrays. With
     * 1M random pairs of 100 B / 1 KB, against 0.5: 2.8 bytes less overhead a pair (50.7 B),
     * ingestion within the noise, zero-copy gets 9% faster (fewer unsorted entries to walk);
     * 0.125 saved 5 B more but cost 16-byte pairs a sixth of their ingestion rate.
     */
    public static final double DEFAULT_REBALANCE_RATIO = 0.25;
    /** Default memory scheme for keys: Nova, so keys of removed entries are reused. */
    public static final MemoryScheme DEFAULT_KEY_MEMORY = MemoryScheme.NOVA;
    /** Default memory scheme for values: Nova. */
    public static final MemoryScheme DEFAULT_VALUE_MEMORY = MemoryScheme.NOVA;

    final OakSerializer<K> keySerializer;
    final OakSerializer<V> valueSerializer;
    final OakComparator<K> comparator;
    long memoryCapacity = DEFAULT_MEMORY_CAPACITY;
    long blockSize = DEFAULT_BLOCK_SIZE;
    int chunkCapacity = DEFAULT_CHUNK_CAPACITY;
    double rebalanceRatio = DEFAULT_REBALANCE_RATIO;
    MemoryScheme keyMemory = DEFAULT_KEY_MEMORY;
    MemoryScheme valueMemory = DEFAULT_VALUE_MEMORY;
    /**
     * Not public yet: whether rebalances move pairs into key order (an experiment, off unless
     * {@code -Doak.placePairs=true}; tests in this package turn it on per map).
     */
    boolean placePairs = Boolean.getBoolean(InternalOakMap.PLACE_PAIRS_PROPERTY);
    /**
     * Not public yet: whether scans ask for the chunks they find scattered to be laid out anew in
     * key order (off unless {@code -Doak.placeOnScans=true}; tests in this package turn it on per map).
     */
    boolean placeOnScans = Boolean.getBoolean(InternalOakMap.PLACE_ON_SCANS_PROPERTY);

    /**
     * Creates a builder with the given key and value handling and the default settings.
     *
     * @param keySerializer how keys are written off-heap
     * @param valueSerializer how values are written off-heap
     * @param comparator the key order, on objects and on serialized keys
     * @throws NullPointerException if an argument is null
     */
    public OakMapBuilder(OakSerializer<K> keySerializer, OakSerializer<V> valueSerializer,
                         OakComparator<K> comparator) {
        this.keySerializer = Objects.requireNonNull(keySerializer, "keySerializer");
        this.valueSerializer = Objects.requireNonNull(valueSerializer, "valueSerializer");
        this.comparator = Objects.requireNonNull(comparator, "comparator");
    }

    /**
     * The most off-heap memory the map may hold, in bytes; beyond it, insertions throw
     * {@link OakOutOfMemoryException}. Default {@link #DEFAULT_MEMORY_CAPACITY}.
     *
     * @param bytes the capacity, in bytes
     * @return this builder
     * @throws IllegalArgumentException if {@code bytes} is not positive
     */
    public OakMapBuilder<K, V> memoryCapacity(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("memory capacity must be positive: " + bytes);
        }
        this.memoryCapacity = bytes;
        return this;
    }

    /**
     * Size of the off-heap blocks a large map takes, between 4 KiB and 128 MiB. Default
     * {@link #DEFAULT_BLOCK_SIZE}. A map's first block is 64 KiB (or this size, if smaller), and each
     * next one doubles until it reaches this size, so a map of a few pairs holds a few pages, not a
     * whole block. On Linux with native access enabled, the first block is committed page by page
     * as it fills, and later blocks whole when the map takes them (so that a growing map's writes
     * never wait for page faults); otherwise every block is committed (zeroed) when taken. Either
     * way resident memory grows by up to one block at a time. The maps of a process share 4,095
     * blocks, so the block size bounds how much they can hold in all: about 256 GiB with the
     * default, 512 GiB with 128 MiB blocks.
     *
     * @param bytes the block size, in bytes
     * @return this builder
     * @throws IllegalArgumentException if {@code bytes} is less than 4,096 (4 KiB) or more than
     *     134,217,728 (128 MiB)
     */
    public OakMapBuilder<K, V> blockSize(long bytes) {
        if (bytes < 4096 || bytes > (128L << 20)) {
            throw new IllegalArgumentException("block size must be between 4 KiB and 128 MiB: " + bytes);
        }
        this.blockSize = bytes;
        return this;
    }

    /**
     * Entries per chunk, from 4 to 65,535 (entries are linked by 16-bit indexes). Default
     * {@link #DEFAULT_CHUNK_CAPACITY}.
     *
     * @param entries the number of entries per chunk
     * @return this builder
     * @throws IllegalArgumentException if {@code entries} is less than 4 or more than 65,535
     */
    public OakMapBuilder<K, V> chunkCapacity(int entries) {
        if (entries < 4 || entries > Chunk.MAX_CAPACITY) {
            throw new IllegalArgumentException("chunk capacity must be between 4 and " + Chunk.MAX_CAPACITY + ": " + entries);
        }
        this.chunkCapacity = entries;
        return this;
    }

    /**
     * A chunk is reorganized when its unsorted entries exceed this fraction of its sorted ones.
     * Default {@link #DEFAULT_REBALANCE_RATIO}.
     *
     * @param unsortedToSorted the ratio of unsorted to sorted entries
     * @return this builder
     * @throws IllegalArgumentException if {@code unsortedToSorted} is not in {@code (0, 64]} (NaN
     *     included)
     */
    public OakMapBuilder<K, V> rebalanceRatio(double unsortedToSorted) {
        if (!(unsortedToSorted > 0) || unsortedToSorted > 64) {
            throw new IllegalArgumentException("rebalance ratio must be in (0, 64]: " + unsortedToSorted);
        }
        this.rebalanceRatio = unsortedToSorted;
        return this;
    }

    /**
     * How the memory of keys is managed: whether the keys of removed entries are reused, and how
     * safely against threads still reading them (see {@link MemoryScheme}). Default
     * {@link #DEFAULT_KEY_MEMORY}.
     *
     * @param scheme the memory scheme for keys
     * @return this builder
     * @throws NullPointerException if {@code scheme} is null
     */
    public OakMapBuilder<K, V> keyMemory(MemoryScheme scheme) {
        this.keyMemory = Objects.requireNonNull(scheme, "scheme");
        return this;
    }

    /**
     * How the memory of values is managed (see {@link MemoryScheme}). Default
     * {@link #DEFAULT_VALUE_MEMORY}.
     *
     * @param scheme the memory scheme for values
     * @return this builder
     * @throws NullPointerException if {@code scheme} is null
     */
    public OakMapBuilder<K, V> valueMemory(MemoryScheme scheme) {
        this.valueMemory = Objects.requireNonNull(scheme, "scheme");
        return this;
    }

    /**
     * Builds a map. Each call builds a new, independent map; the builder may be changed and
     * reused afterwards.
     *
     * @return a new, empty map with this configuration
     */
    public OakMap<K, V> build() {
        return OakMap.create(this);
    }
}
