package dev.oakmap.examples.druid;

/**
 * A half-open interval of time, {@code [from, to)}, in milliseconds. A rollup fact belongs to a
 * range if the start of its bucket does (Druid's convention).
 *
 * @param from first millisecond included
 * @param to first millisecond excluded
 */
public record TimeRange(long from, long to) {

    /** @throws IllegalArgumentException if {@code from > to} */
    public TimeRange {
        if (from > to) {
            throw new IllegalArgumentException("empty range with from > to: [" + from + ", " + to + ")");
        }
    }

    /** @return the range of all (representable) time */
    public static TimeRange all() {
        return new TimeRange(Long.MIN_VALUE, Long.MAX_VALUE);
    }

    /** @return whether {@code time} lies in this range */
    public boolean contains(long time) {
        return time >= from && time < to;
    }
}
