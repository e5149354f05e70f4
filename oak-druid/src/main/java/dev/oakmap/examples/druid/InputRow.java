package dev.oakmap.examples.druid;

/**
 * One event to ingest: a millisecond timestamp, a value per dimension of the
 * {@linkplain IndexSchema schema}, a user id (the high-cardinality column whose distinct values a
 * rollup index counts with a HyperLogLog sketch), and metrics: {@code bytes} (a long),
 * {@code latencyMs} (a double, summarized by min, max and a quantiles sketch) and
 * {@link IndexSchema#extraMetrics()} further doubles.
 *
 * <p>An index reads a row only during the {@link IncrementalIndex#ingest(InputRow)} call that
 * receives it, so implementations may be reusable views over columnar input (see
 * {@link GeneratedEvents#cursor()}).
 */
public interface InputRow {

    /** @return the event time, in milliseconds since the epoch */
    long timestamp();

    /**
     * @param index a dimension index, {@code 0 <= index < schema.dimensions().size()}
     * @return the value of that dimension, or {@code null} if the event has none
     */
    String dimension(int index);

    /** @return the user id, or {@code null} if unknown (then it is not counted as a user) */
    String userId();

    /** @return the {@code bytes} metric */
    long bytes();

    /** @return the {@code latencyMs} metric; must be finite */
    double latencyMs();

    /**
     * @param index {@code 0 <= index < schema.extraMetrics()}
     * @return that extra metric
     */
    double extraMetric(int index);
}
