/**
 * The benchmark harness: {@link dev.oakmap.bench.harness.Bench} (the command line, run by
 * {@code bin/bench}), the map adapters ({@link dev.oakmap.bench.harness.BenchMap},
 * {@link dev.oakmap.bench.harness.MapKind}) and the workloads
 * ({@link dev.oakmap.bench.harness.Workload}).
 */
package dev.oakmap.bench.harness;
