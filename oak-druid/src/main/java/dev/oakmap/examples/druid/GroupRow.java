package dev.oakmap.examples.druid;

import java.util.List;

/**
 * One group of a {@link GroupByQuery} or top-N result.
 *
 * @param bucket start of the group's time bucket, or {@link Long#MIN_VALUE} when not grouped by time
 * @param group the values of the grouping dimensions ({@code null} for missing)
 * @param count number of input rows
 * @param bytesSum sum of {@code bytes}
 * @param latencySum sum of {@code latencyMs}
 * @param latencyMin minimum {@code latencyMs} ({@code +Infinity} for no rows)
 * @param latencyMax maximum {@code latencyMs} ({@code -Infinity} for no rows)
 * @param uniqueUsers HLL estimate of the number of distinct user ids
 * @param uniqueUsersLow lower bound of that estimate (2 standard deviations)
 * @param uniqueUsersHigh upper bound of that estimate (2 standard deviations)
 * @param latencyQuantiles KLL estimates of the query's latency quantiles, in query order
 */
public record GroupRow(long bucket, List<String> group, long count, long bytesSum, double latencySum,
                       double latencyMin, double latencyMax, double uniqueUsers, double uniqueUsersLow,
                       double uniqueUsersHigh, List<Double> latencyQuantiles) {

    /** Copies the lists (the group may contain nulls). */
    public GroupRow {
        group = java.util.Collections.unmodifiableList(new java.util.ArrayList<>(group));
        latencyQuantiles = List.copyOf(latencyQuantiles);
    }
}
