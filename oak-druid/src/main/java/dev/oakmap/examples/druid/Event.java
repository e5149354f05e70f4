package dev.oakmap.examples.druid;

import java.util.Arrays;
import java.util.Objects;

/**
 * A self-contained {@link InputRow}, for tests, examples and small inputs. The arrays are copied
 * on construction, so the event is immutable.
 *
 * @param timestamp event time, ms since the epoch
 * @param dimensions one value per schema dimension, {@code null} for a missing value
 * @param userId the user id, or {@code null}
 * @param bytes the long metric
 * @param latencyMs the double metric summarized by min, max and quantiles
 * @param extraMetrics the schema's extra double metrics
 */
public record Event(long timestamp, String[] dimensions, String userId, long bytes, double latencyMs,
                    double[] extraMetrics) implements InputRow {

    /** Copies the arrays. @throws NullPointerException if an array is null */
    public Event {
        dimensions = Objects.requireNonNull(dimensions, "dimensions").clone();
        extraMetrics = Objects.requireNonNull(extraMetrics, "extraMetrics").clone();
    }

    /** An event without extra metrics. */
    public Event(long timestamp, String[] dimensions, String userId, long bytes, double latencyMs) {
        this(timestamp, dimensions, userId, bytes, latencyMs, new double[0]);
    }

    @Override
    public String dimension(int index) {
        return dimensions[index];
    }

    @Override
    public double extraMetric(int index) {
        return extraMetrics[index];
    }

    /** @return a copy of the dimension values */
    @Override
    public String[] dimensions() {
        return dimensions.clone();
    }

    /** @return a copy of the extra metrics */
    @Override
    public double[] extraMetrics() {
        return extraMetrics.clone();
    }

    /** Copies any input row (for instance a reused cursor) into an event. */
    public static Event copyOf(InputRow row, int dimensionCount, int extraMetricCount) {
        String[] dims = new String[dimensionCount];
        for (int i = 0; i < dimensionCount; i++) {
            dims[i] = row.dimension(i);
        }
        double[] extras = new double[extraMetricCount];
        for (int i = 0; i < extraMetricCount; i++) {
            extras[i] = row.extraMetric(i);
        }
        return new Event(row.timestamp(), dims, row.userId(), row.bytes(), row.latencyMs(), extras);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Event e && timestamp == e.timestamp && bytes == e.bytes
                && Double.compare(latencyMs, e.latencyMs) == 0 && Objects.equals(userId, e.userId)
                && Arrays.equals(dimensions, e.dimensions) && Arrays.equals(extraMetrics, e.extraMetrics);
    }

    @Override
    public int hashCode() {
        return Objects.hash(timestamp, Arrays.hashCode(dimensions), userId, bytes, latencyMs,
                Arrays.hashCode(extraMetrics));
    }

    @Override
    public String toString() {
        return "Event[" + timestamp + ", " + Arrays.toString(dimensions) + ", user=" + userId + ", bytes=" + bytes
                + ", latencyMs=" + latencyMs + ", extras=" + extraMetrics.length + "]";
    }
}
