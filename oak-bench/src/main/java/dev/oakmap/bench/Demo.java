package dev.oakmap.bench;

import dev.oakmap.bench.harness.Demonstration;

/**
 * The main demonstration ({@code bin/demo}): a small side-by-side run of {@code OakMap} (through its
 * zero-copy and its legacy, object-copying API) against {@code ConcurrentSkipListMap<byte[], byte[]>}
 * (which stores copies of keys and values on the Java heap), on the workload of the Oak papers.
 *
 * <p>Method: keys of {@code key-size} random bytes (key {@code i} derived deterministically from
 * {@code i} and the seed, as in the benchmark harness), values of {@code value-size} bytes. One
 * thread ingests {@code pairs} pairs with {@code putIfAbsent}; then, for each workload and thread
 * count, the workload runs {@code warmup} seconds (discarded) and {@code duration} seconds
 * (measured) on that many threads, each with its own deterministically seeded random generator
 * choosing keys uniformly among the ingested ones. Both maps see the same key sequences. Memory is
 * measured after ingestion: heap in use after {@code System.gc()}, minus the heap in use before the
 * map was built, plus, for Oak, the off-heap bytes in use.
 *
 * <p>This is a demonstration, not a rigorous benchmark: one JVM, one repetition, both maps in the
 * same process (Oak first). Use its ratios as a first impression; the benchmark harness
 * ({@code bin/bench}) is the measurement. The demonstration is built from the harness's parts (its
 * key space, map adapters, ingestion and sustained-rate loops): see {@link Demonstration}.
 *
 * <p>Usage: {@code bin/demo [--pairs=200000] [--key-size=100] [--value-size=1000] [--duration=5]
 * [--warmup=2] [--threads=1,2] [--scan=10000] [--seed=42]}.
 */
public final class Demo {

    private Demo() {
    }

    /**
     * Runs the demonstration and prints the tables.
     *
     * @param args see the class comment, or run with {@code --help}
     */
    public static void main(String[] args) throws Exception {
        Demonstration.main(args);
    }
}
