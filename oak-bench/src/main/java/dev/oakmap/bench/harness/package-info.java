/**
 * The benchmark harness: {@link dev.oakmap.bench.harness.Bench} (the command line, run by
 * {@code bin/bench}), the map adapters ({@link dev.oakmap.bench.harness.BenchMap},
 * {@link dev.oakmap.bench.harness.MapKind}: Oak's zero-copy and legacy APIs,
 * {@code ConcurrentSkipListMap}, MapDB's {@code BTreeMap} on direct memory), the workloads
 * ({@link dev.oakmap.bench.harness.Workload}), including the memory-budget experiments of the Oak
 * paper's Figure 3, and {@link dev.oakmap.bench.harness.Demonstration}, the side-by-side demo of
 * {@code bin/demo} built from the same parts.
 */
package dev.oakmap.bench.harness;
