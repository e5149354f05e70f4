package dev.oakmap.examples.druid;

import dev.oakmap.MemoryScheme;
import dev.oakmap.OakMap;
import dev.oakmap.OakMapBuilder;
import dev.oakmap.OakSerializer;
import dev.oakmap.OakUnscopedBuffer;

import java.lang.foreign.MemorySegment;
import java.util.Map;

/**
 * The incremental index on an {@link OakMap}: keys and values off-heap, dictionaries on-heap.
 *
 * <ul>
 *   <li><b>Memory</b>: {@link MemoryScheme#GROW_ONLY} for keys and values. The index never
 *       removes a row; it grows until it is persisted and then closed, which returns all its
 *       memory at once. Reclamation would buy nothing, and grow-only keys carry no header.</li>
 *   <li><b>Keys</b>: {@link RowKey}s serialized by {@link RowKeyCodec} (fixed width, byte-order
 *       comparable, with a time-based 64-bit prefix).</li>
 *   <li><b>Plain values</b>: the row's other columns ({@link PlainLayout}), inserted with
 *       {@code zc().putIfAbsent}.</li>
 *   <li><b>Rollup values</b>: a fixed-size aggregate slot ({@link RollupLayout}): numbers, an HLL
 *       and a KLL sketch. Each input row is one {@code zc().putIfAbsentComputeIfPresent(key,
 *       firstRow, updater)}: absent, the map serializes the first row into a new slot; present,
 *       the updater folds the row into the slot in place, under the slot's lock, sketches
 *       included. No aggregate object ever exists on the heap.</li>
 *   <li><b>Queries</b> scan a sub-map with the zero-copy stream iterators (one reused view per
 *       scan), decode the key fields they need straight from the key bytes, and read each value
 *       atomically with {@link OakUnscopedBuffer#transform}.</li>
 * </ul>
 */
public final class OakIncrementalIndex extends AbstractIncrementalIndex {

    private final OakMap<RowKey, IncomingRow> facts;
    private final RollupLayout rollup;

    /**
     * Entries per chunk of the map: 2,048, half the map's default. Rows arrive in time order, so
     * nearly every insertion lands past the last sorted entry of the last chunk; the map starts
     * those searches from its recent list ends, so chunk size matters less than it did (the map's
     * defaults, 4,096 and 0.5, measure the same within noise), but smaller chunks keep the walk
     * within a millisecond's rows short when many rows share a timestamp.
     */
    public static final int DEFAULT_CHUNK_CAPACITY = 2048;
    /** Unsorted entries a chunk takes, as a fraction of its sorted ones, before it is rebalanced: 0.25. */
    public static final double DEFAULT_REBALANCE_RATIO = 0.25;

    /**
     * An index with {@link #DEFAULT_CHUNK_CAPACITY} and {@link #DEFAULT_REBALANCE_RATIO}.
     *
     * @param schema the schema
     * @param offHeapCapacity the most off-heap memory the index may use, in bytes
     */
    public OakIncrementalIndex(IndexSchema schema, long offHeapCapacity) {
        this(schema, offHeapCapacity, DEFAULT_CHUNK_CAPACITY, DEFAULT_REBALANCE_RATIO);
    }

    /**
     * @param schema the schema
     * @param offHeapCapacity the most off-heap memory the index may use, in bytes
     * @param chunkCapacity entries per chunk of the map ({@link OakMapBuilder#chunkCapacity})
     * @param rebalanceRatio the map's {@link OakMapBuilder#rebalanceRatio}
     */
    public OakIncrementalIndex(IndexSchema schema, long offHeapCapacity, int chunkCapacity, double rebalanceRatio) {
        super(schema);
        RowKeyCodec keys = new RowKeyCodec(schema.dimensionCount(), !schema.rollup(), schema.granularity());
        this.rollup = schema.rollup() ? new RollupLayout(schema) : null;
        OakSerializer<IncomingRow> values = schema.rollup() ? rollup : new PlainLayout(schema.extraMetrics());
        // an incremental index only grows until it is persisted and dropped whole: nothing is ever
        // removed, so no memory needs reclaiming while it lives (keys then need no header at all)
        this.facts = new OakMapBuilder<>(keys, values, keys).memoryCapacity(offHeapCapacity)
                .chunkCapacity(chunkCapacity).rebalanceRatio(rebalanceRatio)
                .keyMemory(MemoryScheme.GROW_ONLY).valueMemory(MemoryScheme.GROW_ONLY).build();
    }

    /** @return the size of every value (plain row or aggregate slot), in bytes */
    public int valueBytes() {
        return rollup != null ? rollup.size() : new PlainLayout(schema.extraMetrics()).size();
    }

    @Override
    protected void insertPlainRow(RowKey key, InputRow row, int userCode) {
        if (!facts.zc().putIfAbsent(key, new IncomingRow(row, userCode))) {
            throw new IllegalStateException("duplicate plain key " + key);
        }
    }

    @Override
    protected void foldIntoAggregate(RowKey key, InputRow row) {
        facts.zc().putIfAbsentComputeIfPresent(key, new IncomingRow(row, -1), buf -> rollup.update(buf, row));
    }

    @Override
    protected void scanFacts(TimeRange range, boolean descending, FactSink sink) {
        int d = schema.dimensionCount();
        OakMap<RowKey, IncomingRow> view = facts.subMap(RowKey.lowerBound(range.from(), d), true,
                RowKey.lowerBound(range.to(), d), false);
        if (descending) {
            view = view.descendingMap();
        }
        int[] dims = new int[d];
        Reader reader = new Reader();
        for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : view.zc().entryStreamSet()) {
            OakUnscopedBuffer k = e.getKey();
            long time = k.getLong(0) ^ Long.MIN_VALUE;
            for (int i = 0; i < d; i++) {
                dims[i] = k.getInt(8 + 4 * i) ^ Integer.MIN_VALUE;
            }
            reader.value = e.getValue();
            if (!sink.accept(time, dims, reader)) {
                return;
            }
        }
    }

    /**
     * Reads the value a scan is positioned on. {@code transform} runs its function on a consistent
     * snapshot, possibly more than once when it races with an update; the functions below only
     * overwrite scratch state, so the run that counts (the last, validated one) leaves it right.
     */
    private final class Reader implements FactReader {
        OakUnscopedBuffer value;
        private final Numbers numbers = new Numbers();
        private MemorySegment copy;

        @Override
        public void readNumbers(Numbers out) {
            value.transform(b -> {
                if (rollup != null) {
                    RollupLayout.readNumbers(b, out);
                } else {
                    PlainLayout.readNumbers(b, out);
                }
                return null;
            });
        }

        @Override
        public void addTo(GroupAccumulator acc) {
            if (rollup == null) {
                readNumbers(numbers);
                addPlainRow(numbers, acc);
                return;
            }
            if (copy == null) {
                copy = MemorySegment.ofArray(new byte[rollup.size()]);
            }
            MemorySegment dst = copy;
            value.transform(b -> {
                MemorySegment.copy(b.segment(), 0, dst, 0, rollup.size());
                return null;
            });
            rollup.addCopyTo(dst, numbers, acc);
        }
    }

    @Override
    public long factCount() {
        checkOpen();
        return facts.size();
    }

    @Override
    public long offHeapBytesUsed() {
        return facts.memoryUsed();
    }

    @Override
    public long offHeapBytesReserved() {
        return facts.memoryReserved();
    }

    @Override
    public void close() {
        if (markClosed()) {
            facts.close();
        }
    }
}
