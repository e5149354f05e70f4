package dev.oakmap.examples.druid;

import dev.oakmap.OakOutOfMemoryException;
import org.apache.datasketches.hll.TgtHllType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What happens when the index is used wrongly or meets odd input: clear exceptions, consistent state. */
class MisuseTest {

    private static final long T = 1_735_689_600_000L;

    private static List<Function<IndexSchema, IncrementalIndex>> both() {
        return List.of(LegacyIncrementalIndex::new, s -> new OakIncrementalIndex(s, 64L << 20));
    }

    private static Event row(long t, String a, String b, String user, double latency) {
        return new Event(t, new String[]{a, b}, user, 100, latency);
    }

    @ParameterizedTest(name = "rollup={0}")
    @ValueSource(booleans = {false, true})
    void nullDimensionValuesAreStoredAsMissingAndCanBeFiltered(boolean rollup) {
        IndexSchema schema = rollup ? IndexSchema.rollup(Granularity.MINUTE, "a", "b") : IndexSchema.plain("a", "b");
        for (var make : both()) {
            try (IncrementalIndex index = make.apply(schema)) {
                index.ingest(row(T, null, "x", null, 1.0));
                index.ingest(row(T + 1, "p", null, "u1", 2.0));
                index.ingest(row(T + 2, null, null, "u2", 3.0));
                List<ScanRow> missingA = index.scan(TimeRange.all(), DimFilter.eq("a", null), 10);
                assertEquals(2, missingA.size());
                assertTrue(missingA.stream().allMatch(r -> r.dimensions().getFirst() == null));
                List<GroupRow> byA = index.groupBy(GroupByQuery.of(TimeRange.all(), DimFilter.all(), "a"));
                assertEquals(Arrays.asList(null, "p"), byA.stream().map(r -> r.group().getFirst()).toList(),
                        "missing values group first");
                assertEquals(2, byA.getFirst().count());
                assertEquals(1.0, byA.getFirst().uniqueUsers(), 1e-6, "a null user id is not a user");
            }
        }
    }

    @Test
    void nonFiniteLatencyIsRejectedBeforeAnythingIsStored() {
        for (var make : both()) {
            try (IncrementalIndex index = make.apply(IndexSchema.rollup(Granularity.SECOND, "a", "b"))) {
                index.ingest(row(T, "p", "q", "u", 5));
                for (double bad : new double[]{Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY}) {
                    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                            () -> index.ingest(row(T, "p", "q", "u", bad)));
                    assertTrue(e.getMessage().contains("latencyMs"), e.getMessage());
                }
                assertEquals(1, index.rowsIngested());
                assertEquals(1, index.scan(TimeRange.all(), DimFilter.all(), 10).getFirst().count());
                assertThrows(NullPointerException.class, () -> index.ingest(null));
            }
        }
    }

    @Test
    void unknownDimensionsInQueriesAreNamed() {
        for (var make : both()) {
            try (IncrementalIndex index = make.apply(IndexSchema.plain("a", "b"))) {
                index.ingest(row(T, "p", "q", "u", 5));
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> index.scan(TimeRange.all(), DimFilter.eq("country", "x"), 10));
                assertTrue(e.getMessage().contains("'country'"), e.getMessage());
                assertThrows(IllegalArgumentException.class,
                        () -> index.groupBy(GroupByQuery.of(TimeRange.all(), DimFilter.all(), "nope")));
                assertThrows(IllegalArgumentException.class,
                        () -> index.topN(TimeRange.all(), DimFilter.all(), "nope", TopNMetric.COUNT, 3));
                assertThrows(IllegalArgumentException.class, () -> index.scan(TimeRange.all(), DimFilter.all(), -1));
                assertThrows(IllegalArgumentException.class, () -> new TimeRange(2, 1));
            }
        }
    }

    @Test
    void aClosedIndexSaysSo() {
        for (var make : both()) {
            IncrementalIndex index = make.apply(IndexSchema.rollup(Granularity.SECOND, "a", "b"));
            index.ingest(row(T, "p", "q", "u", 5));
            index.close();
            index.close(); // idempotent
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> index.ingest(row(T, "p", "q", "u", 5)));
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
            assertThrows(IllegalStateException.class, () -> index.scan(TimeRange.all(), DimFilter.all(), 1));
            assertThrows(IllegalStateException.class, index::factCount);
        }
    }

    @Test
    void aFullAggregateRefusesTheRowAndStaysIntact() {
        IndexSchema schema = IndexSchema.rollup(Granularity.HOUR, "a", "b")
                .withSketches(new IndexSchema.SketchSpec(10, TgtHllType.HLL_8, 16, 3));
        try (OakIncrementalIndex index = new OakIncrementalIndex(schema, 16L << 20)) {
            for (int i = 0; i < 3; i++) {
                index.ingest(row(T + i, "p", "q", "u" + i, i));
            }
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> index.ingest(row(T + 3, "p", "q", "u3", 3)));
            assertTrue(e.getMessage().contains("maxRowsPerAggregate"), e.getMessage());
            index.ingest(row(T + 4, "p", "other", "u4", 4)); // other aggregates are unaffected
            GroupRow full = index.groupBy(GroupByQuery.of(TimeRange.all(), DimFilter.eq("b", "q"))).getFirst();
            assertEquals(3, full.count());
            assertEquals(3.0, full.uniqueUsers(), 1e-6);
            assertEquals(List.of(1.0, 2.0, 2.0), full.latencyQuantiles());
            assertEquals(4, index.rowsIngested());
        }
    }

    @Test
    void runningOutOfOffHeapMemoryLeavesTheIndexUsable() {
        IndexSchema schema = IndexSchema.rollup(Granularity.MILLISECOND, "a", "b");
        try (OakIncrementalIndex index = new OakIncrementalIndex(schema, 1L << 20)) {
            int stored = 0;
            OakOutOfMemoryException oom = null;
            for (int i = 0; i < 10_000 && oom == null; i++) {
                try {
                    index.ingest(row(T + i, "p", "q", "u", 1));
                    stored++;
                } catch (OakOutOfMemoryException e) {
                    oom = e;
                }
            }
            assertTrue(oom != null, "a 1 MiB index cannot hold 10,000 aggregates of " + index.valueBytes() + " bytes");
            assertEquals(stored, index.factCount());
            assertEquals(stored, index.rowsIngested());
            assertEquals(stored, index.groupBy(GroupByQuery.of(TimeRange.all(), DimFilter.all())).getFirst().count());
            index.ingest(row(T, "p", "q", "u", 1)); // folding into an existing aggregate needs no memory
            assertEquals(stored + 1, index.rowsIngested());
        }
    }

    @Test
    void schemasRejectNonsense() {
        assertThrows(IllegalArgumentException.class, () -> IndexSchema.plain());
        assertThrows(IllegalArgumentException.class, () -> IndexSchema.plain("a", "a"));
        assertThrows(IllegalArgumentException.class,
                () -> new IndexSchema(List.of("a"), 0, false, Granularity.MINUTE, IndexSchema.SketchSpec.DEFAULT));
        assertThrows(IllegalArgumentException.class, () -> new IndexSchema.SketchSpec(3, TgtHllType.HLL_4, 128, 10));
        assertThrows(IllegalArgumentException.class, () -> new IndexSchema.SketchSpec(11, TgtHllType.HLL_4, 4, 10));
        assertThrows(IllegalArgumentException.class, () -> new IndexSchema.SketchSpec(11, TgtHllType.HLL_4, 128, 0));
        assertNull(new Dictionary().decode(Dictionary.NULL_CODE));
    }
}
