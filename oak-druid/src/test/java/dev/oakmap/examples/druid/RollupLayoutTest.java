package dev.oakmap.examples.druid;

import org.apache.datasketches.kll.KllDoublesSketch;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The aggregate slot: fixed size, sketches that grow only inside it. */
class RollupLayoutTest {

    @Test
    void defaultSlotSizeIsWhatTheReadmeSays() {
        RollupLayout layout = new RollupLayout(IndexSchema.rollup(Granularity.MINUTE, "a"));
        assertEquals(1128, IndexSchema.SketchSpec.DEFAULT.hllBytes());
        assertEquals(4180, IndexSchema.SketchSpec.DEFAULT.kllBytes());
        assertEquals(40 + 1128 + 4184, layout.size());
    }

    @Test
    void oneAggregateAbsorbsManyRowsInPlace() {
        IndexSchema schema = IndexSchema.rollup(Granularity.DAY, "a");
        RollupLayout layout = new RollupLayout(schema);
        HeapBuffer slot = new HeapBuffer(layout.size());
        int rows = 200_000;
        layout.serialize(new IncomingRow(new Event(0, new String[]{"x"}, "u0", 1, 0.0), -1), slot);
        KllDoublesSketch heap = KllDoublesSketch.newHeapInstance(schema.sketches().kllK());
        heap.update(0.0);
        for (int i = 1; i < rows; i++) {
            layout.update(slot, new Event(i, new String[]{"x"}, "u" + (i % 5000), 1, i));
            heap.update(i);
        }
        GroupAccumulator acc = new GroupAccumulator(schema.sketches());
        layout.addCopyTo(slot.writableSegment(), new Numbers(), acc);
        GroupRow r = acc.toRow(0, List.of(), List.of(0.5, 0.99));
        assertEquals(rows, r.count());
        assertEquals(rows, r.bytesSum());
        assertEquals(0.0, r.latencyMin());
        assertEquals(rows - 1.0, r.latencyMax());
        assertEquals(5000, r.uniqueUsers(), 5000 * 0.1);
        double tol = 2.5 * heap.getNormalizedRankError(false) * rows;
        assertEquals(0.5 * rows, r.latencyQuantiles().get(0), tol);
        assertEquals(0.99 * rows, r.latencyQuantiles().get(1), tol);
        assertTrue(KllDoublesSketch.wrap(slot.segment().asSlice(layout.size() - 4184, 4180)).getN() == rows);
    }
}
