package dev.oakmap.examples.druid;

import org.apache.datasketches.hll.TgtHllType;
import org.junit.jupiter.api.Test;

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
}
