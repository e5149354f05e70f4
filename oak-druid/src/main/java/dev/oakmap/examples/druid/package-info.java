/**
 * A case study: an incremental index in the Apache Druid sense, built on {@link dev.oakmap.OakMap}.
 *
 * <p>{@link dev.oakmap.examples.druid.OakIncrementalIndex} keeps every row (plain mode) or every
 * rolled-up aggregate (rollup mode) off-heap, keyed by {@link dev.oakmap.examples.druid.RowKey}
 * (time, then dimension codes); in rollup mode one
 * {@link dev.oakmap.OakZeroCopyMap#putIfAbsentComputeIfPresent putIfAbsentComputeIfPresent} per
 * input row updates the whole aggregate in place, Apache DataSketches HLL and KLL sketches
 * included. {@link dev.oakmap.examples.druid.LegacyIncrementalIndex} is the same index the way
 * Druid's on-heap index works: a {@link java.util.concurrent.ConcurrentSkipListMap} of key objects
 * to on-heap aggregator objects. Both answer the same {@link
 * dev.oakmap.examples.druid.IncrementalIndex} queries; {@link
 * dev.oakmap.examples.druid.EventGenerator} makes seeded input for them, and {@code
 * dev.oakmap.examples.druid.bench.DruidBench} compares their ingestion.
 */
package dev.oakmap.examples.druid;
