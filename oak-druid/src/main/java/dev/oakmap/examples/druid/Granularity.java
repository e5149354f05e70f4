package dev.oakmap.examples.druid;

/**
 * How finely a rollup index buckets time: every row's timestamp is truncated to the start of its
 * bucket before it becomes part of a key, so rows of the same bucket and dimension values fold
 * into one aggregate. Buckets are aligned to the Unix epoch (UTC).
 */
public enum Granularity {
    /** No truncation: one bucket per millisecond. */
    MILLISECOND(1L),
    /** One-second buckets. */
    SECOND(1_000L),
    /** One-minute buckets. */
    MINUTE(60_000L),
    /** One-hour buckets. */
    HOUR(3_600_000L),
    /** One-day buckets (UTC days). */
    DAY(86_400_000L);

    private final long millis;

    Granularity(long millis) {
        this.millis = millis;
    }

    /** @return the length of a bucket, in milliseconds */
    public long millis() {
        return millis;
    }

    /**
     * @return the start of the bucket holding {@code timestamp} (floor, also for negative times), or
     *     {@link Long#MIN_VALUE} for the first bucket, which starts before {@code Long.MIN_VALUE}
     */
    public long truncate(long timestamp) {
        if (millis == 1L) {
            return timestamp;
        }
        long bucket = Math.floorDiv(timestamp, millis);
        // the first bucket's start is not representable: multiplying would wrap around to a time
        // near Long.MAX_VALUE, and the oldest row would become the newest. Clamping keeps the order.
        return bucket < Long.MIN_VALUE / millis ? Long.MIN_VALUE : bucket * millis;
    }
}
