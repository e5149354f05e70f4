package dev.oakmap.examples.druid;

import java.util.List;

/**
 * An incremental index in the Apache Druid sense: it absorbs rows and answers queries at the same
 * time, from any number of threads. In a plain index every input row is a fact of its own; in a
 * rollup index rows with the same time bucket and dimension values fold into one aggregate
 * (count, sums, min, max, a HyperLogLog sketch of user ids, a KLL sketch of latencies).
 *
 * <p>Two implementations: {@link OakIncrementalIndex} (facts off-heap in an
 * {@link dev.oakmap.OakMap}, aggregates updated in place) and {@link LegacyIncrementalIndex}
 * (a {@link java.util.concurrent.ConcurrentSkipListMap} of on-heap objects). Given the same rows
 * in the same order they give the same answers: exactly for counts, sums, min and max and
 * unique-user estimates (HLL is deterministic), and within the sketch's rank error for latency
 * quantiles (KLL compaction flips coins from an unseeded generator inside DataSketches, so two
 * sketches fed the same items agree exactly only while they hold every item).
 *
 * <p>Queries see a weakly consistent snapshot under concurrent ingestion: facts present
 * throughout a query are seen, each aggregate is read atomically, newer ones may or may not be.
 * Every query method throws {@link IllegalArgumentException} for dimension names the schema does
 * not have, and {@link IllegalStateException} once the index is closed.
 */
public interface IncrementalIndex extends AutoCloseable {

    /** @return the schema */
    IndexSchema schema();

    /**
     * Adds one row. Thread-safe. The row is read only during this call.
     *
     * @throws NullPointerException if {@code row} is null
     * @throws IllegalArgumentException if the row's latency is not finite, or the row has fewer
     *     dimension values or extra metrics than the schema (nothing is stored)
     * @throws IllegalStateException if the index is closed or a rollup aggregate is full
     * @throws dev.oakmap.OakOutOfMemoryException if an Oak index's off-heap capacity is exhausted
     */
    void ingest(InputRow row);

    /** @return the number of rows ingested so far */
    long rowsIngested();

    /** @return the number of facts: rows (plain) or aggregates (rollup) */
    long factCount();

    /**
     * @return up to {@code limit} facts of {@code range} that pass {@code filter}, oldest first
     *     (in key order: time, then dimension codes)
     */
    List<ScanRow> scan(TimeRange range, DimFilter filter, int limit);

    /** @return up to {@code limit} facts of {@code range} that pass {@code filter}, newest first */
    List<ScanRow> newest(TimeRange range, DimFilter filter, int limit);

    /** @return the groups of the query, ordered by bucket, then by group values (missing first) */
    List<GroupRow> groupBy(GroupByQuery query);

    /**
     * @return the {@code n} values of {@code dimension} with the highest {@code metric} among the
     *     facts of {@code range} that pass {@code filter} (ties in value order), with all their
     *     aggregates
     */
    List<GroupRow> topN(TimeRange range, DimFilter filter, String dimension, TopNMetric metric, int n);

    /** @return off-heap bytes used by keys and values (0 for an on-heap index) */
    long offHeapBytesUsed();

    /** @return off-heap bytes held (0 for an on-heap index) */
    long offHeapBytesReserved();

    /** Releases the index's memory; later calls throw {@link IllegalStateException}. Idempotent. */
    @Override
    void close();
}
