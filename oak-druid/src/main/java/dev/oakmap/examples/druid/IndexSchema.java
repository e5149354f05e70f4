package dev.oakmap.examples.druid;

import org.apache.datasketches.hll.HllSketch;
import org.apache.datasketches.hll.TgtHllType;
import org.apache.datasketches.kll.KllSketch;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;

/**
 * What an index stores: the names of its string dimensions, how many extra double metrics rows
 * carry, whether it rolls rows up, the time granularity of rollup keys, and the configuration of
 * its sketches.
 *
 * <p>Every index also knows three fixed columns: the user id (the high-cardinality column), the
 * long metric {@code bytes} and the double metric {@code latencyMs} (see {@link InputRow}).
 *
 * @param dimensions the dimension names, in key order (the first one is part of the key prefix)
 * @param extraMetrics number of extra double metrics per row, stored (plain) or summed (rollup)
 * @param rollup whether rows with the same bucket and dimension values fold into one aggregate
 * @param granularity time bucket of rollup keys ({@link Granularity#MILLISECOND} for plain indexes)
 * @param sketches sketch parameters of rollup aggregates
 */
public record IndexSchema(List<String> dimensions, int extraMetrics, boolean rollup, Granularity granularity,
                          SketchSpec sketches) {

    /** Validates and copies. @throws IllegalArgumentException on empty or duplicate dimension names */
    public IndexSchema {
        dimensions = List.copyOf(Objects.requireNonNull(dimensions, "dimensions"));
        Objects.requireNonNull(granularity, "granularity");
        Objects.requireNonNull(sketches, "sketches");
        if (dimensions.isEmpty()) {
            throw new IllegalArgumentException("a schema needs at least one dimension");
        }
        if (new HashSet<>(dimensions).size() != dimensions.size()) {
            throw new IllegalArgumentException("duplicate dimension names: " + dimensions);
        }
        if (extraMetrics < 0 || extraMetrics > 1024) {
            throw new IllegalArgumentException("extraMetrics must be in [0, 1024]: " + extraMetrics);
        }
        if (!rollup && granularity != Granularity.MILLISECOND) {
            throw new IllegalArgumentException("a plain index keeps raw timestamps; granularity must be MILLISECOND");
        }
    }

    /** A plain (non-rollup) schema: one key per input row. */
    public static IndexSchema plain(String... dimensions) {
        return new IndexSchema(List.of(dimensions), 0, false, Granularity.MILLISECOND, SketchSpec.DEFAULT);
    }

    /** A rollup schema with the default sketches. */
    public static IndexSchema rollup(Granularity granularity, String... dimensions) {
        return new IndexSchema(List.of(dimensions), 0, true, granularity, SketchSpec.DEFAULT);
    }

    /** @return this schema with {@code count} extra metrics */
    public IndexSchema withExtraMetrics(int count) {
        return new IndexSchema(dimensions, count, rollup, granularity, sketches);
    }

    /** @return this schema with other sketch parameters */
    public IndexSchema withSketches(SketchSpec spec) {
        return new IndexSchema(dimensions, extraMetrics, rollup, granularity, spec);
    }

    /** @return the number of dimensions */
    public int dimensionCount() {
        return dimensions.size();
    }

    /**
     * @return the position of dimension {@code name}
     * @throws IllegalArgumentException if the schema has no such dimension
     */
    public int dimensionIndex(String name) {
        int i = dimensions.indexOf(name);
        if (i < 0) {
            throw new IllegalArgumentException("unknown dimension '" + name + "'; the schema has " + dimensions);
        }
        return i;
    }

    /**
     * The bytes of one input row's own data, the measure of "raw data" in the benchmark: the
     * timestamp (8), a 4-byte code per dimension, the user id code (4), {@code bytes} (8),
     * {@code latencyMs} (8) and 8 per extra metric.
     *
     * @return raw bytes per input row
     */
    public int rawRowBytes() {
        return 8 + 4 * dimensions.size() + 4 + 8 + 8 + 8 * extraMetrics;
    }

    /**
     * Parameters of the two sketches of every rollup aggregate, which also fix its size.
     *
     * <ul>
     *   <li>Unique users: an HLL sketch of {@code 2^hllLgK} buckets of type {@code hllType}. Its
     *       updatable image never exceeds {@link HllSketch#getMaxUpdatableSerializationBytes}, so a
     *       slot of that size holds it for ever.</li>
     *   <li>Latency quantiles: a KLL doubles sketch with parameter {@code kllK}. An updatable KLL
     *       image grows by one level each time its item count doubles past its capacity, about
     *       {@code log2(n / k)} levels in all; {@link KllSketch#getMaxSerializedSizeBytes} gives
     *       the size it reaches after {@code maxRowsPerAggregate} updates, and the slot is sized
     *       for that. A KLL sketch given a larger segment than it needs grows inside it, so it
     *       never leaves the slot. An aggregate refuses a row beyond {@code maxRowsPerAggregate}
     *       with an {@link IllegalStateException} rather than outgrow its slot.</li>
     * </ul>
     *
     * @param hllLgK log2 of the HLL buckets, 4..21 (rank error about 1.04 / sqrt(2^lgK))
     * @param hllType HLL_4, HLL_6 or HLL_8 (smaller or faster)
     * @param kllK the KLL accuracy parameter, 8..65535 (normalized rank error about 1.65% at 200,
     *     2.05% at 128)
     * @param maxRowsPerAggregate the most input rows one aggregate accepts, 1..2^62
     */
    public record SketchSpec(int hllLgK, TgtHllType hllType, int kllK, long maxRowsPerAggregate) {

        /** The largest {@code maxRowsPerAggregate}, 2^62: DataSketches sizes no KLL sketch for much more. */
        public static final long MAX_ROWS_PER_AGGREGATE = 1L << 62;

        /** lgK 11, HLL_4 (1,128 bytes); KLL k = 128 sized for 2^31 - 1 rows (4,180 bytes). */
        public static final SketchSpec DEFAULT = new SketchSpec(11, TgtHllType.HLL_4, 128, Integer.MAX_VALUE);

        /** Validates. @throws IllegalArgumentException on out-of-range parameters */
        public SketchSpec {
            Objects.requireNonNull(hllType, "hllType");
            if (hllLgK < 4 || hllLgK > 21) {
                throw new IllegalArgumentException("hllLgK must be in [4, 21]: " + hllLgK);
            }
            if (kllK < 8 || kllK > KllSketch.MAX_K) {
                throw new IllegalArgumentException("kllK must be in [8, " + KllSketch.MAX_K + "]: " + kllK);
            }
            if (maxRowsPerAggregate < 1) {
                throw new IllegalArgumentException("maxRowsPerAggregate must be positive: " + maxRowsPerAggregate);
            }
            // DataSketches cannot size a KLL sketch for much more than 2^62 items (Long.MAX_VALUE, a
            // natural "no limit", throws ArrayIndexOutOfBoundsException, or AssertionError under -ea):
            // refuse it here, or the Oak index fails when it sizes its slots while the legacy index
            // takes the same schema. 2^62 sizes for every k (checked for 8 .. 65,535).
            if (maxRowsPerAggregate > MAX_ROWS_PER_AGGREGATE) {
                throw new IllegalArgumentException("maxRowsPerAggregate must be at most 2^62 (a KLL sketch cannot be "
                        + "sized for more): " + maxRowsPerAggregate);
            }
        }

        /** @return the bytes reserved for the HLL sketch in every aggregate */
        public int hllBytes() {
            return HllSketch.getMaxUpdatableSerializationBytes(hllLgK, hllType);
        }

        /** @return the bytes reserved for the KLL sketch in every aggregate */
        public int kllBytes() {
            return KllSketch.getMaxSerializedSizeBytes(kllK, maxRowsPerAggregate,
                    KllSketch.SketchType.KLL_DOUBLES_SKETCH, true);
        }
    }
}
