package dev.oakmap.bench.harness;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The workloads of the harness. Every workload but {@link #INGEST} and the two memory-budget
 * experiments runs in the sustained-rate stage, after the ingestion stage, on {@code threads}
 * symmetric worker threads for a fixed time; each operation picks its key uniformly (or Zipfian)
 * over the whole key range, so about half of the lookups of a fresh map miss. {@link #INGEST}
 * measures the ingestion stage itself.
 *
 * <p>The memory-budget experiments of the Oak paper's Figure 3, {@link #CAPACITY} and
 * {@link #INGEST_RAM}, run instead once per RAM budget of a list, on one thread (see
 * {@link MemoryRunner}); their figures are the pairs that fit and the ingestion rate.
 *
 * <p>What each operation means for each map is defined by the map's {@link BenchMap.Session}; the
 * descriptions below are the contract every adapter implements.
 */
public enum Workload {
    /** The ingestion stage: putIfAbsent of 50% of the range, in the --key-order (split over the threads). */
    INGEST("ingest", "putIfAbsent of 50% of the key range, in random or key order (the ingestion stage itself)"),
    /** Put-only: insert or overwrite a full value. */
    PUT("put", "put of a full value (inserts or overwrites)"),
    /** putIfAbsentComputeIfPresent, incrementing the value's first 8 bytes in place. */
    UPDATE("update", "putIfAbsentComputeIfPresent: +1 on the value's first 8 bytes (CSLM and legacy: compute with a copied array)"),
    /** Get, reading 8 bytes of the value without copying it where the API allows. */
    GET_ZC("get-zc", "get, reading the value's first 8 bytes (Oak: zero-copy view)"),
    /** Get, materializing the whole value as a byte array. */
    GET_COPY("get-copy", "get, obtaining the whole value as a byte[] (Oak: a copy; CSLM: its stored array)"),
    /** 95% get (as get-zc), 5% put. */
    MIX95("mix95", "95% get (as get-zc), 5% put"),
    /** Ascending scans through the iterator (entry set) API. */
    SCAN_ASC("scan-asc", "ascending scan of `scan` pairs from a random key, entrySet() iterator"),
    /** Descending scans through the iterator (entry set) API. */
    SCAN_DESC("scan-desc", "descending scan of `scan` pairs from a random key, entrySet() iterator"),
    /** Ascending scans through Oak's zero-copy stream entry set (one reused entry per scan). */
    SCAN_ASC_STREAM("scan-asc-stream", "ascending scan, Oak's zero-copy entryStreamSet() (CSLM: same as scan-asc)"),
    /** Descending scans through Oak's zero-copy stream entry set. */
    SCAN_DESC_STREAM("scan-desc-stream", "descending scan, Oak's zero-copy entryStreamSet() (CSLM: same as scan-desc)"),
    /** 50% put, 50% remove: the map stays at about half of the range. */
    CHURN("churn", "50% put, 50% remove (the size stays at about half the range)"),
    /** The Nova thesis's read-write mix. */
    RW_MIX("rw-mix", "25% put, 25% remove, 50% get (as get-zc)"),
    /** Figure 3a: ingest until the map runs out of its RAM budget; the figure is the pairs that fit. */
    CAPACITY("capacity", "putIfAbsent of fresh keys, one thread, until the map runs out of the RAM budget "
            + "(one run per --capacity-ram budget): the pairs that fit"),
    /** Figure 3b: ingest a fixed number of pairs under shrinking RAM budgets. */
    INGEST_RAM("ingest-ram", "putIfAbsent of --ram-pairs fresh keys, one thread, under each --ingest-ram budget: "
            + "pairs/s, or out of memory");

    /** The command-line name. */
    public final String id;
    /** What one operation does. */
    public final String description;

    Workload(String id, String description) {
        this.id = id;
        this.description = description;
    }

    /** @return true for the scan workloads (one operation = one scan of {@code scan} pairs) */
    public boolean isScan() {
        return this == SCAN_ASC || this == SCAN_DESC || this == SCAN_ASC_STREAM || this == SCAN_DESC_STREAM;
    }

    /**
     * @return true for the memory-budget experiments, which run once per RAM budget on one thread
     *         rather than once per thread count
     */
    public boolean isMemory() {
        return this == CAPACITY || this == INGEST_RAM;
    }

    /** @return the workload called {@code id} (case-insensitive) */
    public static Workload byId(String id) {
        String s = id.trim().toLowerCase(Locale.ROOT);
        for (Workload w : values()) {
            if (w.id.equals(s)) {
                return w;
            }
        }
        throw new IllegalArgumentException("unknown workload '" + id + "'; known: all, "
                + String.join(", ", ids()));
    }

    /** @return every workload's command-line name, in order */
    public static List<String> ids() {
        return Arrays.stream(values()).map(w -> w.id).toList();
    }
}
