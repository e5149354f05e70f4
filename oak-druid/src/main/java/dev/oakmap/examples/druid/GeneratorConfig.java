package dev.oakmap.examples.druid;

import java.util.List;
import java.util.Objects;

/**
 * What {@link EventGenerator} makes: the dimensions and their cardinalities, the skew of their
 * values, the user population, the event rate and the number of extra metrics.
 *
 * @param seed the seed; the same configuration and seed always give the same events
 * @param dimensions dimension names, the schema's
 * @param cardinalities distinct values per dimension, one per name
 * @param zipfExponent skew of dimension values (0: uniform; about 1: typical web traffic)
 * @param users number of distinct user ids
 * @param userZipfExponent skew of user activity
 * @param startTime time of the first event, ms since the epoch
 * @param eventsPerSecond mean event rate; timestamps advance by exponential gaps of mean
 *     {@code 1000 / eventsPerSecond} ms, so they never decrease
 * @param extraMetrics number of extra double metrics per event
 */
public record GeneratorConfig(long seed, List<String> dimensions, List<Integer> cardinalities, double zipfExponent,
                              int users, double userZipfExponent, long startTime, double eventsPerSecond,
                              int extraMetrics) {

    /** Validates and copies. */
    public GeneratorConfig {
        dimensions = List.copyOf(Objects.requireNonNull(dimensions, "dimensions"));
        cardinalities = List.copyOf(Objects.requireNonNull(cardinalities, "cardinalities"));
        if (dimensions.size() != cardinalities.size() || dimensions.isEmpty()) {
            throw new IllegalArgumentException("need one cardinality per dimension (and at least one): "
                    + dimensions + " vs " + cardinalities);
        }
        for (int c : cardinalities) {
            if (c < 1) {
                throw new IllegalArgumentException("cardinalities must be positive: " + cardinalities);
            }
        }
        if (users < 1 || !(eventsPerSecond > 0) || extraMetrics < 0) {
            throw new IllegalArgumentException("users must be positive, eventsPerSecond positive, extraMetrics >= 0");
        }
    }

    /**
     * A web-traffic-like stream: {@code dimensionCount} dimensions named {@code dim0, dim1, ...}
     * with cardinalities growing from 4 (×4 per dimension, capped at 100,000), Zipf 1.0 values,
     * 100,000 users with Zipf 0.8 activity, 20,000 events per second from 2025-01-01T00:00Z, no
     * extra metrics.
     */
    public static GeneratorConfig web(long seed, int dimensionCount) {
        List<String> names = new java.util.ArrayList<>();
        List<Integer> cards = new java.util.ArrayList<>();
        long c = 4;
        for (int i = 0; i < dimensionCount; i++) {
            names.add("dim" + i);
            cards.add((int) Math.min(c, 100_000));
            c = Math.min(c * 4, 100_000); // capped before it grows: 4^32 wraps a long around to 0
        }
        return new GeneratorConfig(seed, names, cards, 1.0, 100_000, 0.8, 1_735_689_600_000L, 20_000, 0);
    }

    /** @return this configuration with another seed */
    public GeneratorConfig withSeed(long newSeed) {
        return new GeneratorConfig(newSeed, dimensions, cardinalities, zipfExponent, users, userZipfExponent,
                startTime, eventsPerSecond, extraMetrics);
    }

    /** @return this configuration with other cardinalities */
    public GeneratorConfig withCardinalities(List<Integer> newCardinalities) {
        return new GeneratorConfig(seed, dimensions, newCardinalities, zipfExponent, users, userZipfExponent,
                startTime, eventsPerSecond, extraMetrics);
    }

    /** @return this configuration with another user population */
    public GeneratorConfig withUsers(int newUsers) {
        return new GeneratorConfig(seed, dimensions, cardinalities, zipfExponent, newUsers, userZipfExponent,
                startTime, eventsPerSecond, extraMetrics);
    }

    /** @return this configuration with another event rate */
    public GeneratorConfig withEventsPerSecond(double rate) {
        return new GeneratorConfig(seed, dimensions, cardinalities, zipfExponent, users, userZipfExponent,
                startTime, rate, extraMetrics);
    }

    /** @return this configuration with {@code count} extra metrics */
    public GeneratorConfig withExtraMetrics(int count) {
        return new GeneratorConfig(seed, dimensions, cardinalities, zipfExponent, users, userZipfExponent,
                startTime, eventsPerSecond, count);
    }

    /** @return a plain schema for these events */
    public IndexSchema plainSchema() {
        return new IndexSchema(dimensions, extraMetrics, false, Granularity.MILLISECOND,
                IndexSchema.SketchSpec.DEFAULT);
    }

    /** @return a rollup schema for these events, with the default sketches */
    public IndexSchema rollupSchema(Granularity granularity) {
        return new IndexSchema(dimensions, extraMetrics, true, granularity, IndexSchema.SketchSpec.DEFAULT);
    }
}
