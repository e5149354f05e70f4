package dev.oakmap.examples.druid;

import org.apache.datasketches.hll.TgtHllType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Inputs at the edges that {@link SameAnswersTest}'s generated events never produce: both indexes
 * must give the same answers (or the same exception) and keep their contents intact.
 */
class EdgeAnswersTest {

    private static final long T = 1_735_689_600_000L;

    private static List<Function<IndexSchema, IncrementalIndex>> both() {
        return List.of(LegacyIncrementalIndex::new, s -> new OakIncrementalIndex(s, 64L << 20));
    }

    @Test
    void bothIndexesRefuseARowBeyondMaxRowsPerAggregate() {
        IndexSchema schema = IndexSchema.rollup(Granularity.HOUR, "a")
                .withSketches(new IndexSchema.SketchSpec(10, TgtHllType.HLL_8, 16, 3));
        for (var make : both()) {
            try (IncrementalIndex index = make.apply(schema)) {
                for (int i = 0; i < 3; i++) {
                    index.ingest(new Event(T + i, new String[]{"p"}, "u" + i, 10, i));
                }
                IllegalStateException e = assertThrows(IllegalStateException.class,
                        () -> index.ingest(new Event(T + 3, new String[]{"p"}, "u3", 10, 3)), index.getClass().getName());
                assertTrue(e.getMessage().contains("maxRowsPerAggregate"), e.getMessage());
                ScanRow agg = index.scan(TimeRange.all(), DimFilter.all(), 10).getFirst();
                assertEquals(3, agg.count(), index.getClass().getName());
                assertEquals(30, agg.bytesSum());
                assertEquals(3, index.rowsIngested());
            }
        }
    }

    @ParameterizedTest(name = "rollup={0}")
    @ValueSource(booleans = {false, true})
    void aRowShorterThanTheSchemaIsRejectedBeforeAnythingIsStored(boolean rollup) {
        IndexSchema schema = (rollup ? IndexSchema.rollup(Granularity.HOUR, "a", "b") : IndexSchema.plain("a", "b"))
                .withExtraMetrics(2);
        for (var make : both()) {
            try (IncrementalIndex index = make.apply(schema)) {
                index.ingest(new Event(T, new String[]{"p", "q"}, "u", 1, 1.0, new double[]{1, 2}));
                List<ScanRow> before = index.scan(TimeRange.all(), DimFilter.all(), 10);
                String name = index.getClass().getName();
                // one extra metric short: into the existing aggregate, and as a new fact
                for (String a : new String[]{"p", "new"}) {
                    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> index.ingest(
                            new Event(T, new String[]{a, "q"}, "u2", 5, 7.0, new double[]{1})), name);
                    assertTrue(e.getMessage().contains("extra metric"), e.getMessage());
                }
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> index.ingest(
                        new Event(T, new String[]{"p"}, "u2", 5, 7.0, new double[]{1, 2})), name);
                assertTrue(e.getMessage().contains("dimension"), e.getMessage());
                assertEquals(before, index.scan(TimeRange.all(), DimFilter.all(), 10), name);
                assertEquals(1, index.factCount(), name);
                assertEquals(1, index.rowsIngested(), name);
            }
        }
    }

    @Test
    void aTimestampWhoseBucketStartsBeforeLongMinValueStaysTheOldest() {
        for (var make : both()) {
            try (IncrementalIndex index = make.apply(IndexSchema.rollup(Granularity.MINUTE, "a"))) {
                index.ingest(new Event(T, new String[]{"now"}, "u", 1, 1.0));
                index.ingest(new Event(Long.MIN_VALUE + 5, new String[]{"ancient"}, "u", 1, 1.0));
                assertEquals(List.of("now"), index.newest(TimeRange.all(), DimFilter.all(), 1).getFirst().dimensions(),
                        "newest first");
                List<ScanRow> past = index.scan(new TimeRange(Long.MIN_VALUE, 0), DimFilter.all(), 10);
                assertEquals(1, past.size());
                assertEquals(List.of("ancient"), past.getFirst().dimensions());
                assertEquals(Long.MIN_VALUE, past.getFirst().time(), "the earliest representable bucket start");
            }
            try (IncrementalIndex index = make.apply(IndexSchema.plain("a"))) {
                index.ingest(new Event(Long.MIN_VALUE, new String[]{"ancient"}, "u", 1, 1.0));
                GroupRow g = index.groupBy(new GroupByQuery(TimeRange.all(), DimFilter.all(), List.of(),
                        Granularity.DAY, GroupByQuery.DEFAULT_QUANTILES)).getFirst();
                assertTrue(g.bucket() < 0, "day bucket of Long.MIN_VALUE: " + g.bucket());
            }
        }
        assertEquals(Long.MIN_VALUE, Granularity.HOUR.truncate(Long.MIN_VALUE));
        assertEquals(-3_600_000L, Granularity.HOUR.truncate(-1));
        long first = Long.MIN_VALUE / 3_600_000L * 3_600_000L; // the first whole hour
        assertEquals(first, Granularity.HOUR.truncate(first));
        assertEquals(Long.MIN_VALUE, Granularity.HOUR.truncate(first - 1));
    }

    @Test
    void anAggregateOfANegativeZeroLatencyReadsTheSameInBothIndexes() {
        IndexSchema schema = IndexSchema.rollup(Granularity.SECOND, "a");
        try (IncrementalIndex oak = new OakIncrementalIndex(schema, 64L << 20);
             IncrementalIndex legacy = new LegacyIncrementalIndex(schema)) {
            for (IncrementalIndex index : List.of(oak, legacy)) {
                index.ingest(new Event(T, new String[]{"p"}, "u", 1, -0.0));
                index.ingest(new Event(T, new String[]{"q"}, "u", 1, -0.0));
                index.ingest(new Event(T, new String[]{"q"}, "u", 1, -0.0));
            }
            assertEquals(legacy.scan(TimeRange.all(), DimFilter.all(), 10), oak.scan(TimeRange.all(), DimFilter.all(), 10));
            assertEquals(legacy.newest(TimeRange.all(), DimFilter.all(), 10),
                    oak.newest(TimeRange.all(), DimFilter.all(), 10));
        }
    }

    @Test
    void groupsOfSeveralAggregatesEstimateTheSameUniqueUsersInBothIndexes() {
        // two aggregates of 200 rows each from 1,800 users: their HLL sketches are in HLL mode, where
        // a union of sketches wrapped over memory and one of heap sketches could disagree (seed 6: 358.46 vs 357.39)
        IndexSchema schema = IndexSchema.rollup(Granularity.MINUTE, "a");
        GroupByQuery all = GroupByQuery.of(TimeRange.all(), DimFilter.all());
        for (long seed = 0; seed < 20; seed++) {
            try (IncrementalIndex oak = new OakIncrementalIndex(schema, 64L << 20);
                 IncrementalIndex legacy = new LegacyIncrementalIndex(schema)) {
                java.util.Random r = new java.util.Random(seed);
                for (int i = 0; i < 400; i++) {
                    Event e = new Event(T, new String[]{"v" + r.nextInt(2)}, "user-" + r.nextInt(1800), 1, 1.0);
                    oak.ingest(e);
                    legacy.ingest(e);
                }
                GroupRow o = oak.groupBy(all).getFirst();
                GroupRow l = legacy.groupBy(all).getFirst();
                assertEquals(l.uniqueUsers(), o.uniqueUsers(), "seed " + seed);
                assertEquals(l.uniqueUsersLow(), o.uniqueUsersLow(), "seed " + seed);
                assertEquals(l.uniqueUsersHigh(), o.uniqueUsersHigh(), "seed " + seed);
            }
        }
    }

    @Test
    void aSketchSpecNoKllSketchCanHoldIsRejected() {
        // Long.MAX_VALUE ("no limit") was accepted, then the Oak index threw ArrayIndexOutOfBoundsException
        // from DataSketches when it sized its slots, while the legacy index took the schema
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new IndexSchema.SketchSpec(11, TgtHllType.HLL_4, 128, Long.MAX_VALUE));
        assertTrue(e.getMessage().contains("maxRowsPerAggregate"), e.getMessage());
        assertEquals(6288, new IndexSchema.SketchSpec(11, TgtHllType.HLL_4, 128,
                IndexSchema.SketchSpec.MAX_ROWS_PER_AGGREGATE).kllBytes(), "the largest limit still sizes a slot");
    }
}
