package dev.oakmap.examples.druid;

import java.util.List;
import java.util.Objects;

/**
 * A group-by: the facts of a time range that pass a filter, grouped by some dimensions (and
 * optionally by time bucket), each group with its count, sums, min and max, an estimate of its
 * distinct users and estimates of latency quantiles.
 *
 * @param range the time range
 * @param filter the dimension filter
 * @param dimensions the grouping dimensions (may be empty: one group)
 * @param timeBucket group by this time bucket as well, or {@code null} for the whole range
 * @param quantiles the latency quantile fractions to estimate, each in [0, 1]
 */
public record GroupByQuery(TimeRange range, DimFilter filter, List<String> dimensions, Granularity timeBucket,
                           List<Double> quantiles) {

    /** The quantiles a query estimates by default: median, 90th and 99th percentiles. */
    public static final List<Double> DEFAULT_QUANTILES = List.of(0.5, 0.9, 0.99);

    /** Validates and copies. */
    public GroupByQuery {
        Objects.requireNonNull(range, "range");
        Objects.requireNonNull(filter, "filter");
        dimensions = List.copyOf(dimensions);
        quantiles = List.copyOf(quantiles);
        for (double q : quantiles) {
            if (!(q >= 0 && q <= 1)) {
                throw new IllegalArgumentException("quantile fractions must be in [0, 1]: " + q);
            }
        }
    }

    /** A group-by over the whole range, with the default quantiles. */
    public static GroupByQuery of(TimeRange range, DimFilter filter, String... dimensions) {
        return new GroupByQuery(range, filter, List.of(dimensions), null, DEFAULT_QUANTILES);
    }
}
