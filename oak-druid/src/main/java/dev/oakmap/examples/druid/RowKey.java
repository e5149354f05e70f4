package dev.oakmap.examples.druid;

import java.util.Arrays;
import java.util.Objects;

/**
 * The key of a fact: a (bucketed) timestamp, one dictionary code per dimension, and a sequence
 * number that keeps plain rows with equal time and dimensions apart (0 in a rollup index).
 *
 * <p>Keys order by time, then by the dimension codes left to right (as signed ints), then by
 * sequence number. Time first is what makes the index useful to an analytics engine: a time
 * range is a contiguous key range, ingestion of events that arrive in time order appends near
 * the end of the map, and newest-first listings are a descending scan.
 *
 * <p>A key does not copy or expose its code array: the index builds each one from a fresh array.
 * {@link #lowerBound(long, int)} builds keys that sort before every real key of a timestamp
 * (their codes are -1, which no dictionary assigns), used as range bounds.
 */
public final class RowKey implements Comparable<RowKey> {

    private final long time;
    private final int[] dims;
    private final long seq;

    /**
     * @param time the timestamp (already truncated to the granularity in a rollup index)
     * @param dims the dimension codes; owned by the key from now on
     * @param seq the sequence number (0 in a rollup index)
     */
    public RowKey(long time, int[] dims, long seq) {
        this.time = time;
        this.dims = Objects.requireNonNull(dims, "dims");
        this.seq = seq;
    }

    /** @return a key smaller than every key at {@code time} or later, with {@code dimensionCount} codes */
    public static RowKey lowerBound(long time, int dimensionCount) {
        int[] d = new int[dimensionCount];
        Arrays.fill(d, -1);
        return new RowKey(time, d, Long.MIN_VALUE);
    }

    /** @return the timestamp */
    public long time() {
        return time;
    }

    /** @return the number of dimension codes */
    public int dimensionCount() {
        return dims.length;
    }

    /** @return the code of dimension {@code i} */
    public int dim(int i) {
        return dims[i];
    }

    /** @return the sequence number */
    public long seq() {
        return seq;
    }

    @Override
    public int compareTo(RowKey o) {
        int c = Long.compare(time, o.time);
        if (c != 0) {
            return c;
        }
        int n = Math.min(dims.length, o.dims.length);
        for (int i = 0; i < n; i++) {
            c = Integer.compare(dims[i], o.dims[i]);
            if (c != 0) {
                return c;
            }
        }
        c = Integer.compare(dims.length, o.dims.length);
        return c != 0 ? c : Long.compare(seq, o.seq);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RowKey k && time == k.time && seq == k.seq && Arrays.equals(dims, k.dims);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(time) * 31 + Arrays.hashCode(dims) * 17 + Long.hashCode(seq);
    }

    @Override
    public String toString() {
        return "RowKey[" + time + ", " + Arrays.toString(dims) + ", " + seq + "]";
    }
}
