package dev.oakmap.examples.druid;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What both index implementations share: the on-heap dictionaries, row validation and encoding,
 * and the query engine. An implementation supplies the fact map: how to insert a plain row, how to
 * fold a row into a rollup aggregate, and how to scan the facts of a time range in either
 * direction ({@link #scanFacts}); every query is written once, here, on top of that scan, so the
 * two implementations cannot differ in query semantics.
 */
abstract class AbstractIncrementalIndex implements IncrementalIndex {

    private static final Comparator<List<String>> GROUP_ORDER = (a, b) -> {
        for (int i = 0; i < a.size(); i++) {
            int c = Objects.compare(a.get(i), b.get(i), Comparator.nullsFirst(Comparator.<String>naturalOrder()));
            if (c != 0) {
                return c;
            }
        }
        return 0;
    };

    protected final IndexSchema schema;
    /** one dictionary per dimension */
    protected final Dictionary[] dictionaries;
    /** the user id column's dictionary (plain indexes store user codes) */
    protected final Dictionary users = new Dictionary();
    private final LongAdder rows = new LongAdder();
    private final AtomicLong sequence = new AtomicLong();
    private volatile boolean closed;

    AbstractIncrementalIndex(IndexSchema schema) {
        this.schema = Objects.requireNonNull(schema, "schema");
        this.dictionaries = new Dictionary[schema.dimensionCount()];
        for (int i = 0; i < dictionaries.length; i++) {
            dictionaries[i] = new Dictionary();
        }
    }

    // ------------------------------------------------------------------------------ ingestion

    @Override
    public final void ingest(InputRow row) {
        Objects.requireNonNull(row, "row");
        checkOpen();
        double latency = row.latencyMs();
        if (!Double.isFinite(latency)) {
            throw new IllegalArgumentException("latencyMs must be finite, got " + latency + " at time " + row.timestamp());
        }
        checkShape(row);
        int[] codes = new int[dictionaries.length];
        for (int i = 0; i < codes.length; i++) {
            codes[i] = dictionaries[i].encode(row.dimension(i));
        }
        long time = schema.granularity().truncate(row.timestamp());
        if (schema.rollup()) {
            foldIntoAggregate(new RowKey(time, codes, 0L), row);
        } else {
            insertPlainRow(new RowKey(time, codes, sequence.getAndIncrement()), row, users.encode(row.userId()));
        }
        rows.increment();
    }

    /**
     * Reads the last dimension value and the last extra metric the schema expects before anything
     * is stored. A row built for a narrower schema would otherwise fail half-way through the write:
     * the legacy index had already folded its count and latency into an aggregate (and created the
     * aggregate of a new key) when the missing metric threw, while the Oak index's serializer failed
     * with an error that blamed the serializer.
     */
    private void checkShape(InputRow row) {
        int extras = schema.extraMetrics();
        try {
            row.dimension(dictionaries.length - 1);
        } catch (IndexOutOfBoundsException e) {
            throw new IllegalArgumentException("the row has fewer dimension values than the schema's "
                    + dictionaries.length + " " + schema.dimensions() + " at time " + row.timestamp(), e);
        }
        try {
            if (extras > 0) {
                row.extraMetric(extras - 1);
            }
        } catch (IndexOutOfBoundsException e) {
            throw new IllegalArgumentException("the row has fewer extra metrics than the schema's " + extras
                    + " at time " + row.timestamp(), e);
        }
    }

    /** Stores a plain row under its unique key. */
    protected abstract void insertPlainRow(RowKey key, InputRow row, int userCode);

    /** Creates the aggregate of {@code key} from {@code row}, or folds {@code row} into it, atomically. */
    protected abstract void foldIntoAggregate(RowKey key, InputRow row);

    /**
     * Calls {@code sink} for the facts whose time is in {@code range}, in key order (or reverse key
     * order), until it returns false.
     */
    protected abstract void scanFacts(TimeRange range, boolean descending, FactSink sink);

    @Override
    public IndexSchema schema() {
        return schema;
    }

    @Override
    public long rowsIngested() {
        return rows.sum();
    }

    protected final void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the index is closed");
        }
    }

    /** Marks the index closed; @return false if it already was */
    protected final boolean markClosed() {
        if (closed) {
            return false;
        }
        closed = true;
        return true;
    }

    // ------------------------------------------------------------------------------ queries

    @Override
    public List<ScanRow> scan(TimeRange range, DimFilter filter, int limit) {
        return scanRows(range, filter, limit, false);
    }

    @Override
    public List<ScanRow> newest(TimeRange range, DimFilter filter, int limit) {
        return scanRows(range, filter, limit, true);
    }

    private List<ScanRow> scanRows(TimeRange range, DimFilter filter, int limit, boolean descending) {
        Objects.requireNonNull(range, "range");
        if (limit < 0) {
            throw new IllegalArgumentException("limit must not be negative: " + limit);
        }
        CompiledFilter f = compile(filter);
        checkOpen();
        List<ScanRow> out = new ArrayList<>();
        if (limit == 0) {
            return out;
        }
        Numbers n = new Numbers();
        scanFacts(range, descending, (time, dims, fact) -> {
            if (f.matches(dims)) {
                fact.readNumbers(n);
                out.add(new ScanRow(time, decode(dims), n.userCode < 0 ? null : users.decode(n.userCode), n.count,
                        n.bytesSum, n.latencySum, n.latencyMin, n.latencyMax));
            }
            return out.size() < limit;
        });
        return out;
    }

    @Override
    public List<GroupRow> groupBy(GroupByQuery q) {
        Objects.requireNonNull(q, "query");
        CompiledFilter f = compile(q.filter());
        int[] by = q.dimensions().stream().mapToInt(schema::dimensionIndex).toArray();
        checkOpen();
        Granularity bucket = q.timeBucket();
        Map<GroupKey, GroupAccumulator> groups = new HashMap<>();
        scanFacts(q.range(), false, (time, dims, fact) -> {
            if (f.matches(dims)) {
                GroupKey k = GroupKey.of(bucket == null ? Long.MIN_VALUE : bucket.truncate(time), dims, by);
                fact.addTo(groups.computeIfAbsent(k, x -> new GroupAccumulator(schema.sketches())));
            }
            return true;
        });
        List<GroupRow> out = new ArrayList<>(groups.size());
        for (Map.Entry<GroupKey, GroupAccumulator> e : groups.entrySet()) {
            List<String> values = new ArrayList<>(by.length);
            for (int i = 0; i < by.length; i++) {
                values.add(dictionaries[by[i]].decode(e.getKey().codes[i]));
            }
            out.add(e.getValue().toRow(e.getKey().bucket, values, q.quantiles()));
        }
        out.sort(Comparator.comparingLong(GroupRow::bucket).thenComparing(GroupRow::group, GROUP_ORDER));
        return out;
    }

    @Override
    public List<GroupRow> topN(TimeRange range, DimFilter filter, String dimension, TopNMetric metric, int n) {
        Objects.requireNonNull(metric, "metric");
        if (n < 0) {
            throw new IllegalArgumentException("n must not be negative: " + n);
        }
        List<GroupRow> all = groupBy(new GroupByQuery(range, filter, List.of(dimension), null,
                GroupByQuery.DEFAULT_QUANTILES));
        // groupBy returned them in value order; a stable sort keeps that order among ties
        all.sort(Comparator.comparingDouble(metric::of).reversed());
        return Collections.unmodifiableList(new ArrayList<>(all.subList(0, Math.min(n, all.size()))));
    }

    private CompiledFilter compile(DimFilter filter) {
        return CompiledFilter.compile(Objects.requireNonNull(filter, "filter"), schema, dictionaries);
    }

    private List<String> decode(int[] dims) {
        List<String> values = new ArrayList<>(dims.length);
        for (int i = 0; i < dims.length; i++) {
            values.add(dictionaries[i].decode(dims[i]));
        }
        return values;
    }

    /** Adds a plain row, read into {@code n}, to a group: numbers, its user id and its latency. */
    protected final void addPlainRow(Numbers n, GroupAccumulator acc) {
        acc.addNumbers(n);
        acc.addUser(users.decode(n.userCode));
        acc.addLatency(n.latencySum);
    }

    /** A group's identity during a query: bucket and the grouping dimensions' codes. */
    private static final class GroupKey {
        final long bucket;
        final int[] codes;
        private final int hash;

        private GroupKey(long bucket, int[] codes) {
            this.bucket = bucket;
            this.codes = codes;
            this.hash = Long.hashCode(bucket) * 31 + Arrays.hashCode(codes);
        }

        static GroupKey of(long bucket, int[] dims, int[] by) {
            int[] c = new int[by.length];
            for (int i = 0; i < by.length; i++) {
                c[i] = dims[by[i]];
            }
            return new GroupKey(bucket, c);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof GroupKey g && g.bucket == bucket && Arrays.equals(g.codes, codes);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }
}
