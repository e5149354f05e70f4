package dev.oakmap.examples.druid;

import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakScopedWriteBuffer;
import dev.oakmap.OakSerializer;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The off-heap value of a plain row: its columns that are not in the key, big-endian.
 * <pre>
 *   0: int    user id code
 *   4: long   bytes
 *  12: double latencyMs
 *  20: double extra metric 0 .. e-1
 * </pre>
 * Written once, on insertion, and never updated.
 */
final class PlainLayout implements OakSerializer<IncomingRow> {

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private static final int USER = 0;
    private static final int BYTES = 4;
    private static final int LATENCY = 12;
    private static final int EXTRAS = 20;

    private final int extraMetrics;

    PlainLayout(int extraMetrics) {
        this.extraMetrics = extraMetrics;
    }

    /** Writes through the slice's segment: one bounds check per write, no call through the buffer. */
    @Override
    public void serialize(IncomingRow v, OakScopedWriteBuffer target) {
        InputRow row = v.row();
        MemorySegment s = target.writableSegment();
        s.set(INT, USER, v.userCode());
        s.set(LONG, BYTES, row.bytes());
        s.set(DOUBLE, LATENCY, row.latencyMs());
        for (int i = 0; i < extraMetrics; i++) {
            s.set(DOUBLE, EXTRAS + 8L * i, row.extraMetric(i));
        }
    }

    @Override
    public IncomingRow deserialize(OakScopedReadBuffer source) {
        throw new UnsupportedOperationException("index values are read in place by the index's queries, "
                + "never deserialized");
    }

    @Override
    public int calculateSize(IncomingRow v) {
        return size();
    }

    int size() {
        return EXTRAS + 8 * extraMetrics;
    }

    /** Reads a stored row's numbers (count 1, its own metrics). */
    static void readNumbers(OakScopedReadBuffer b, Numbers out) {
        double latency = b.getDouble(LATENCY);
        long bytes = b.getLong(BYTES);
        out.set(1, bytes, latency, latency, latency, b.getInt(USER));
    }
}
