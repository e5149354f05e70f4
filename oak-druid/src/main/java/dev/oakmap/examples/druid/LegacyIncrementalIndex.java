package dev.oakmap.examples.druid;

import org.apache.datasketches.hll.HllSketch;
import org.apache.datasketches.kll.KllDoublesSketch;

import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The baseline: the incremental index the way Druid's on-heap index works, a
 * {@link ConcurrentSkipListMap} from key objects to on-heap value objects.
 *
 * <ul>
 *   <li>Plain mode: one {@link RowKey} (with its {@code int[]} of codes) and one
 *       {@link PlainRow} object (with its {@code double[]} of extra metrics) per row.</li>
 *   <li>Rollup mode: one {@link Aggregate} object per key, holding the numbers and an on-heap
 *       {@link HllSketch} and {@link KllDoublesSketch}. A row finds or inserts its aggregate
 *       ({@code get}, then {@code putIfAbsent}) and folds itself in under the aggregate's monitor,
 *       as Druid's on-heap index synchronizes on its aggregators.</li>
 * </ul>
 * This is a tidy version of the design (one object per value instead of Druid's array of
 * per-metric aggregator objects), so it is, if anything, leaner than the original.
 */
public final class LegacyIncrementalIndex extends AbstractIncrementalIndex {

    private final ConcurrentSkipListMap<RowKey, Object> facts = new ConcurrentSkipListMap<>();

    /** @param schema the schema */
    public LegacyIncrementalIndex(IndexSchema schema) {
        super(schema);
    }

    @Override
    protected void insertPlainRow(RowKey key, InputRow row, int userCode) {
        double[] extras = new double[schema.extraMetrics()];
        for (int i = 0; i < extras.length; i++) {
            extras[i] = row.extraMetric(i);
        }
        if (facts.putIfAbsent(key, new PlainRow(userCode, row.bytes(), row.latencyMs(), extras)) != null) {
            throw new IllegalStateException("duplicate plain key " + key);
        }
    }

    @Override
    protected void foldIntoAggregate(RowKey key, InputRow row) {
        Aggregate agg = (Aggregate) facts.get(key);
        if (agg == null) {
            Aggregate fresh = new Aggregate(schema);
            agg = (Aggregate) facts.putIfAbsent(key, fresh);
            if (agg == null) {
                agg = fresh;
            }
        }
        agg.add(row);
    }

    @Override
    protected void scanFacts(TimeRange range, boolean descending, FactSink sink) {
        int d = schema.dimensionCount();
        NavigableMap<RowKey, Object> view = facts.subMap(RowKey.lowerBound(range.from(), d), true,
                RowKey.lowerBound(range.to(), d), false);
        if (descending) {
            view = view.descendingMap();
        }
        int[] dims = new int[d];
        Reader reader = new Reader();
        for (Map.Entry<RowKey, Object> e : view.entrySet()) {
            RowKey k = e.getKey();
            for (int i = 0; i < d; i++) {
                dims[i] = k.dim(i);
            }
            reader.value = e.getValue();
            if (!sink.accept(k.time(), dims, reader)) {
                return;
            }
        }
    }

    private final class Reader implements FactReader {
        Object value;
        private final Numbers numbers = new Numbers();

        @Override
        public void readNumbers(Numbers out) {
            if (value instanceof PlainRow p) {
                out.set(1, p.bytes, p.latency, p.latency, p.latency, p.userCode);
            } else {
                ((Aggregate) value).readNumbers(out);
            }
        }

        @Override
        public void addTo(GroupAccumulator acc) {
            if (value instanceof PlainRow) {
                readNumbers(numbers);
                addPlainRow(numbers, acc);
            } else {
                ((Aggregate) value).addTo(acc, numbers);
            }
        }
    }

    @Override
    public long factCount() {
        checkOpen();
        return facts.size();
    }

    @Override
    public long offHeapBytesUsed() {
        return 0;
    }

    @Override
    public long offHeapBytesReserved() {
        return 0;
    }

    @Override
    public void close() {
        if (markClosed()) {
            facts.clear();
        }
    }

    /** A plain row's columns outside the key. Immutable. */
    static final class PlainRow {
        final int userCode;
        final long bytes;
        final double latency;
        final double[] extras;

        PlainRow(int userCode, long bytes, double latency, double[] extras) {
            this.userCode = userCode;
            this.bytes = bytes;
            this.latency = latency;
            this.extras = extras;
        }
    }

    /** A rollup aggregate on the heap; every access holds its monitor. */
    static final class Aggregate {
        private long count;
        private long bytesSum;
        private double latencySum;
        private double latencyMin = Double.POSITIVE_INFINITY;
        private double latencyMax = Double.NEGATIVE_INFINITY;
        private final double[] extraSums;
        private final HllSketch users;
        private final KllDoublesSketch latencies;
        private final long maxRows;

        Aggregate(IndexSchema schema) {
            IndexSchema.SketchSpec spec = schema.sketches();
            this.maxRows = spec.maxRowsPerAggregate();
            this.extraSums = new double[schema.extraMetrics()];
            this.users = new HllSketch(spec.hllLgK(), spec.hllType());
            this.latencies = KllDoublesSketch.newHeapInstance(spec.kllK());
        }

        synchronized void add(InputRow row) {
            // a heap sketch could grow past the limit, but the Oak index's slot cannot: refuse the
            // row here too (before writing anything), or the two indexes would answer differently
            if (count >= maxRows) {
                throw new IllegalStateException("the aggregate already holds maxRowsPerAggregate = " + maxRows
                        + " rows (persist the index and start a new one, or raise the limit in the schema)");
            }
            double latency = row.latencyMs();
            count++;
            bytesSum += row.bytes();
            latencySum += latency;
            latencyMin = Math.min(latencyMin, latency);
            latencyMax = Math.max(latencyMax, latency);
            for (int i = 0; i < extraSums.length; i++) {
                extraSums[i] += row.extraMetric(i);
            }
            if (row.userId() != null) {
                users.update(row.userId());
            }
            latencies.update(latency);
        }

        synchronized void readNumbers(Numbers out) {
            out.set(count, bytesSum, latencySum, latencyMin, latencyMax, -1);
        }

        synchronized void addTo(GroupAccumulator acc, Numbers scratch) {
            readNumbers(scratch);
            acc.addNumbers(scratch);
            acc.mergeUsers(users);
            acc.mergeLatencies(latencies);
        }
    }
}
