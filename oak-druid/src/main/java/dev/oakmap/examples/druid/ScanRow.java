package dev.oakmap.examples.druid;

import java.util.List;

/**
 * One fact as a scan returns it: a plain row (count 1, its own metrics, its user id) or a rollup
 * aggregate (its bucket, count, sums, min and max; no user id).
 *
 * @param time the row's timestamp, or the start of the aggregate's bucket
 * @param dimensions the dimension values, in schema order ({@code null} for missing)
 * @param userId the user id of a plain row; {@code null} for an aggregate
 * @param count 1 for a plain row, the number of rows folded in for an aggregate
 * @param bytesSum sum of {@code bytes}
 * @param latencySum sum of {@code latencyMs}
 * @param latencyMin minimum {@code latencyMs}
 * @param latencyMax maximum {@code latencyMs}
 */
public record ScanRow(long time, List<String> dimensions, String userId, long count, long bytesSum,
                      double latencySum, double latencyMin, double latencyMax) {
}
