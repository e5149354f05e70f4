package dev.oakmap.examples.druid;

import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakScopedWriteBuffer;
import dev.oakmap.OakSerializer;
import org.apache.datasketches.common.MemorySegmentRequest;
import org.apache.datasketches.hll.HllSketch;
import org.apache.datasketches.kll.KllDoublesSketch;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The off-heap value of a rollup aggregate, a fixed-size slot, and the code that creates it,
 * updates it in place and reads it.
 *
 * <h2>Layout</h2>
 * <pre>
 *   0           long    count
 *   8           long    bytes sum
 *   16          double  latency sum
 *   24          double  latency min
 *   32          double  latency max
 *   40          double  extra metric sums, 8 each
 *   hllOffset   HLL sketch, updatable image, {@link IndexSchema.SketchSpec#hllBytes()} bytes
 *   kllOffset   KLL doubles sketch, updatable image, {@link IndexSchema.SketchSpec#kllBytes()} bytes
 * </pre>
 * The numbers are big-endian (through the buffer's getters and setters); the sketch regions are
 * 8-aligned within the slot and belong to DataSketches, which reads and writes them through
 * {@link MemorySegment} slices of the value's writable segment.
 *
 * <h2>Why the slot never has to grow</h2>
 * An updatable HLL image has a fixed maximum size. A KLL image grows by one level when its item
 * count doubles past its capacity; the slot is sized for {@code maxRowsPerAggregate} items, and a
 * direct KLL sketch that finds room in its segment grows in place. So in-place updates never
 * need more room. The {@link MemorySegmentRequest} handed to DataSketches (called only if a
 * sketch wanted a bigger segment) throws, and {@link #update} refuses a row beyond
 * {@code maxRowsPerAggregate} before writing anything.
 */
final class RollupLayout implements OakSerializer<IncomingRow> {

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    static final int COUNT = 0;
    static final int BYTES = 8;
    static final int LATENCY_SUM = 16;
    static final int LATENCY_MIN = 24;
    static final int LATENCY_MAX = 32;
    static final int EXTRAS = 40;

    /** Called by DataSketches only if a sketch outgrew its region, which the sizing rules out. */
    private static final MemorySegmentRequest NO_GROWTH = new MemorySegmentRequest() {
        @Override
        public MemorySegment request(long bytes) {
            throw new IllegalStateException("a KLL sketch asked for " + bytes
                    + " bytes, more than the slot sized for maxRowsPerAggregate holds");
        }

        @Override
        public void requestClose(MemorySegment segment) {
            // the slot belongs to the map
        }
    };

    private final IndexSchema.SketchSpec spec;
    private final int extraMetrics;
    private final int hllOffset;
    private final int hllBytes;
    private final int kllOffset;
    private final int kllBytes;
    private final int size;

    RollupLayout(IndexSchema schema) {
        this.spec = schema.sketches();
        this.extraMetrics = schema.extraMetrics();
        this.hllOffset = EXTRAS + 8 * extraMetrics;
        this.hllBytes = spec.hllBytes();
        this.kllOffset = hllOffset + align8(hllBytes);
        this.kllBytes = spec.kllBytes();
        this.size = kllOffset + align8(kllBytes);
    }

    private static int align8(int n) {
        return (n + 7) & ~7;
    }

    /** @return the size of every aggregate, in bytes */
    int size() {
        return size;
    }

    // ------------------------------------------------------------------------------ write path

    /** Creates the aggregate of a first row in a fresh slot (the map's serialization of the value). */
    @Override
    public void serialize(IncomingRow v, OakScopedWriteBuffer target) {
        InputRow row = v.row();
        double latency = row.latencyMs();
        target.putLong(COUNT, 1L);
        target.putLong(BYTES, row.bytes());
        // sums start at +0.0 and add the first row, as the legacy index's and a query's
        // accumulators do: 0.0 + -0.0 is +0.0, so a -0.0 latency must not be stored as the sum
        target.putDouble(LATENCY_SUM, 0.0 + latency);
        target.putDouble(LATENCY_MIN, latency);
        target.putDouble(LATENCY_MAX, latency);
        for (int i = 0; i < extraMetrics; i++) {
            target.putDouble(EXTRAS + 8 * i, 0.0 + row.extraMetric(i));
        }
        MemorySegment seg = target.writableSegment();
        MemorySegment hll = seg.asSlice(hllOffset, hllBytes).fill((byte) 0); // a reused slice keeps old bytes
        MemorySegment kll = seg.asSlice(kllOffset, kllBytes).fill((byte) 0);
        HllSketch users = new HllSketch(spec.hllLgK(), spec.hllType(), hll);
        if (row.userId() != null) {
            users.update(row.userId());
        }
        KllDoublesSketch.newDirectInstance(spec.kllK(), kll, NO_GROWTH).update(latency);
    }

    /**
     * Folds {@code row} into the aggregate in {@code buf}, in place. Runs inside the map's
     * {@code putIfAbsentComputeIfPresent}, so no other writer touches the slot meanwhile and no
     * reader sees a half-done update.
     *
     * @throws IllegalStateException if the aggregate already holds {@code maxRowsPerAggregate}
     *     rows (nothing is written then)
     */
    void update(OakScopedWriteBuffer buf, InputRow row) {
        long count = buf.getLong(COUNT);
        if (count >= spec.maxRowsPerAggregate()) {
            throw new IllegalStateException("the aggregate already holds maxRowsPerAggregate = "
                    + spec.maxRowsPerAggregate() + " rows; its quantiles sketch is sized for no more "
                    + "(persist the index and start a new one, or raise the limit in the schema)");
        }
        double latency = row.latencyMs();
        buf.putLong(COUNT, count + 1);
        buf.putLong(BYTES, buf.getLong(BYTES) + row.bytes());
        buf.putDouble(LATENCY_SUM, buf.getDouble(LATENCY_SUM) + latency);
        buf.putDouble(LATENCY_MIN, Math.min(buf.getDouble(LATENCY_MIN), latency));
        buf.putDouble(LATENCY_MAX, Math.max(buf.getDouble(LATENCY_MAX), latency));
        for (int i = 0; i < extraMetrics; i++) {
            int at = EXTRAS + 8 * i;
            buf.putDouble(at, buf.getDouble(at) + row.extraMetric(i));
        }
        MemorySegment seg = buf.writableSegment();
        if (row.userId() != null) {
            HllSketch.writableWrap(seg.asSlice(hllOffset, hllBytes)).update(row.userId());
        }
        KllDoublesSketch.wrap(seg.asSlice(kllOffset, kllBytes), NO_GROWTH).update(latency);
    }

    @Override
    public IncomingRow deserialize(OakScopedReadBuffer source) {
        throw new UnsupportedOperationException("index values are read in place by the index's queries, "
                + "never deserialized");
    }

    @Override
    public int calculateSize(IncomingRow v) {
        return size;
    }

    // ------------------------------------------------------------------------------ read path

    /** Reads the numbers of an aggregate (from the map's buffer). */
    static void readNumbers(OakScopedReadBuffer b, Numbers out) {
        out.set(b.getLong(COUNT), b.getLong(BYTES), b.getDouble(LATENCY_SUM), b.getDouble(LATENCY_MIN),
                b.getDouble(LATENCY_MAX), -1);
    }

    /**
     * Adds an aggregate to a group, from a private copy of its slot (taken atomically by the
     * caller): the numbers, then the two sketches: the KLL sketch wrapped read-only over the copy,
     * the HLL sketch heapified from it.
     *
     * <p>Why heapify: in DataSketches 9.0.0 an {@code HllUnion} fed a sketch wrapped over a
     * {@link MemorySegment} and one fed the equal heap sketch can end with estimates that differ
     * (by up to about 1% for two aggregates of a few hundred users at lgK 11), so group-bys of this
     * index and of the legacy index, which merges heap sketches, disagreed. A heapified copy merges
     * exactly as the heap sketch does.
     */
    void addCopyTo(MemorySegment copy, Numbers scratch, GroupAccumulator acc) {
        scratch.set(copy.get(LONG, COUNT), copy.get(LONG, BYTES), copy.get(DOUBLE, LATENCY_SUM),
                copy.get(DOUBLE, LATENCY_MIN), copy.get(DOUBLE, LATENCY_MAX), -1);
        acc.addNumbers(scratch);
        acc.mergeUsers(HllSketch.heapify(copy.asSlice(hllOffset, hllBytes)));
        acc.mergeLatencies(KllDoublesSketch.wrap(copy.asSlice(kllOffset, kllBytes)));
    }
}
