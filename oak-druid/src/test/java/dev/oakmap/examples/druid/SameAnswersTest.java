package dev.oakmap.examples.druid;

import org.apache.datasketches.kll.KllSketch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Oak index and the legacy index give the same answers on the same seeded input, in plain
 * and rollup mode, with one ingestion thread (same order: identical answers, HLL estimates
 * included) and with several (exact numbers equal, sketch estimates within their error bounds of
 * the exact answers).
 */
class SameAnswersTest {

    private static final int EVENTS = 24_000;

    private static IndexSchema schema(GeneratorConfig c, boolean rollup) {
        return rollup ? c.rollupSchema(Granularity.SECOND) : c.plainSchema();
    }

    /** A spread of queries over the middle of the stream. */
    private static List<Object> queries(GeneratedEvents g) {
        long t0 = g.event(0).timestamp();
        long t1 = g.event(g.size() - 1).timestamp();
        long span = t1 - t0;
        TimeRange all = TimeRange.all();
        TimeRange middle = new TimeRange(t0 + span / 4, t0 + 3 * span / 4);
        TimeRange narrow = new TimeRange(t0 + span / 2, t0 + span / 2 + 2_000);
        List<DimFilter> filters = List.of(DimFilter.all(), DimFilter.eq("country", "country-0"),
                DimFilter.in("device", "device-1", "device-2", "no-such-device"),
                DimFilter.and(DimFilter.eq("country", "country-1"), DimFilter.in("page", "page-0", "page-3")),
                DimFilter.eq("campaign", "never-seen"));
        List<Object> qs = new ArrayList<>();
        for (TimeRange r : List.of(all, middle, narrow)) {
            for (DimFilter f : filters) {
                qs.add(new ScanQ(r, f, 400, false));
                qs.add(new ScanQ(r, f, 150, true));
                qs.add(GroupByQuery.of(r, f));
                qs.add(GroupByQuery.of(r, f, "country"));
                qs.add(new GroupByQuery(r, f, List.of("country", "device"), Granularity.MINUTE,
                        GroupByQuery.DEFAULT_QUANTILES));
                qs.add(GroupByQuery.of(r, f, "campaign"));
                for (TopNMetric m : TopNMetric.values()) {
                    qs.add(new TopNQ(r, f, "page", m, 7));
                }
            }
        }
        return qs;
    }

    record ScanQ(TimeRange range, DimFilter filter, int limit, boolean newest) {
        List<ScanRow> run(IncrementalIndex i) {
            return newest ? i.newest(range, filter, limit) : i.scan(range, filter, limit);
        }
    }

    record TopNQ(TimeRange range, DimFilter filter, String dimension, TopNMetric metric, int n) {
        List<GroupRow> run(IncrementalIndex i) {
            return i.topN(range, filter, dimension, metric, n);
        }
    }

    @ParameterizedTest(name = "rollup={0}")
    @ValueSource(booleans = {false, true})
    void oneIngestionThreadGivesIdenticalAnswers(boolean rollup) throws Exception {
        GeneratorConfig c = IndexFixtures.config(11);
        GeneratedEvents g = EventGenerator.generate(c, EVENTS);
        List<Event> events = IndexFixtures.events(g);
        IndexSchema schema = schema(c, rollup);
        try (IncrementalIndex legacy = new LegacyIncrementalIndex(schema);
             IncrementalIndex oak = new OakIncrementalIndex(schema, IndexFixtures.OFF_HEAP)) {
            IndexFixtures.ingest(legacy, g, 1);
            IndexFixtures.ingest(oak, g, 1);
            assertEquals(EVENTS, oak.rowsIngested());
            assertEquals(legacy.factCount(), oak.factCount());
            if (!rollup) {
                assertEquals(EVENTS, oak.factCount());
            } else {
                assertTrue(oak.factCount() < EVENTS, "rollup folds rows: " + oak.factCount());
            }
            int kllK = schema.sketches().kllK();
            for (Object q : queries(g)) {
                switch (q) {
                    case ScanQ s -> assertEquals(s.run(legacy), s.run(oak), s.toString());
                    case TopNQ t -> assertSameGroups(t.run(legacy), t.run(oak), true, kllK, t.toString());
                    case GroupByQuery gq -> {
                        List<GroupRow> expected = legacy.groupBy(gq);
                        assertSameGroups(expected, oak.groupBy(gq), true, kllK, gq.toString());
                        checkAgainstTruth(oak.groupBy(gq), Truth.groupBy(events, schema, gq), schema, gq);
                    }
                    default -> throw new AssertionError(q);
                }
            }
        }
    }

    @ParameterizedTest(name = "rollup={0}")
    @ValueSource(booleans = {false, true})
    void concurrentIngestionGivesTheSameExactAggregates(boolean rollup) throws Exception {
        GeneratorConfig c = IndexFixtures.config(12);
        GeneratedEvents g = EventGenerator.generate(c, EVENTS);
        List<Event> events = IndexFixtures.events(g);
        IndexSchema schema = schema(c, rollup);
        try (IncrementalIndex legacy = new LegacyIncrementalIndex(schema);
             IncrementalIndex oak = new OakIncrementalIndex(schema, IndexFixtures.OFF_HEAP)) {
            IndexFixtures.ingest(legacy, g, 3);
            IndexFixtures.ingest(oak, g, 4);
            assertEquals(EVENTS, oak.rowsIngested());
            assertEquals(legacy.factCount(), oak.factCount());
            List<ScanRow> a = legacy.scan(TimeRange.all(), DimFilter.all(), Integer.MAX_VALUE);
            List<ScanRow> b = oak.scan(TimeRange.all(), DimFilter.all(), Integer.MAX_VALUE);
            assertSameScanRowsIgnoringOrderAndRounding(a, b, rollup);
            for (Object q : queries(g)) {
                if (q instanceof GroupByQuery gq) {
                    List<GroupRow> oakRows = oak.groupBy(gq);
                    assertSameGroups(legacy.groupBy(gq), oakRows, false, 0, gq.toString());
                    checkAgainstTruth(oakRows, Truth.groupBy(events, schema, gq), schema, gq);
                } else if (q instanceof TopNQ t && t.metric() != TopNMetric.UNIQUE_USERS
                        && t.metric() != TopNMetric.LATENCY_SUM) {
                    assertEquals(t.run(legacy).stream().map(GroupRow::group).toList(),
                            t.run(oak).stream().map(GroupRow::group).toList(), t.toString());
                }
            }
        }
    }

    @Test
    void queriesRunWhileRowsArrive() throws Exception {
        GeneratorConfig c = IndexFixtures.config(13);
        GeneratedEvents g = EventGenerator.generate(c, EVENTS);
        IndexSchema schema = c.rollupSchema(Granularity.SECOND);
        try (IncrementalIndex oak = new OakIncrementalIndex(schema, IndexFixtures.OFF_HEAP);
             IncrementalIndex legacy = new LegacyIncrementalIndex(schema)) {
            Thread writer = Thread.ofPlatform().start(() -> {
                try {
                    IndexFixtures.ingest(oak, g, 2);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            long lastCount = 0;
            int rounds = 0;
            do {
                List<GroupRow> total = oak.groupBy(GroupByQuery.of(TimeRange.all(), DimFilter.all()));
                long count = total.isEmpty() ? 0 : total.getFirst().count();
                assertTrue(count >= lastCount, "a later query saw fewer rows: " + count + " < " + lastCount);
                lastCount = count;
                List<ScanRow> newest = oak.newest(TimeRange.all(), DimFilter.all(), 50);
                for (int i = 1; i < newest.size(); i++) {
                    assertTrue(newest.get(i - 1).time() >= newest.get(i).time(), "newest-first order");
                }
                rounds++;
            } while (writer.isAlive());
            writer.join();
            assertTrue(rounds > 0);
            IndexFixtures.ingest(legacy, g, 1);
            GroupByQuery q = GroupByQuery.of(TimeRange.all(), DimFilter.all(), "country");
            assertSameGroups(legacy.groupBy(q), oak.groupBy(q), false, 0, "after concurrent queries");
        }
    }

    // ------------------------------------------------------------------------------ checks

    /**
     * Same groups with the same exact numbers. With {@code identicalSketches}, unique-user
     * estimates must be identical and so must the quantiles of groups small enough
     * ({@code count <= kllK}) for KLL to hold every item; latency sums are then compared exactly,
     * otherwise to a relative 1e-9 (floating-point sums in another order).
     */
    static void assertSameGroups(List<GroupRow> expected, List<GroupRow> actual, boolean identicalSketches, int kllK,
                                 String what) {
        assertEquals(expected.size(), actual.size(), what + ": number of groups");
        for (int i = 0; i < expected.size(); i++) {
            GroupRow e = expected.get(i);
            GroupRow a = actual.get(i);
            String at = what + " group " + e.bucket() + " " + e.group();
            assertEquals(e.bucket(), a.bucket(), at);
            assertEquals(e.group(), a.group(), at);
            assertEquals(e.count(), a.count(), at + " count");
            assertEquals(e.bytesSum(), a.bytesSum(), at + " bytes");
            assertEquals(e.latencyMin(), a.latencyMin(), at + " min");
            assertEquals(e.latencyMax(), a.latencyMax(), at + " max");
            if (identicalSketches) {
                assertEquals(e.latencySum(), a.latencySum(), at + " latency sum");
                assertEquals(e.uniqueUsers(), a.uniqueUsers(), at + " unique users");
                if (e.count() <= kllK) {
                    assertEquals(e.latencyQuantiles(), a.latencyQuantiles(), at + " quantiles (exact mode)");
                }
            } else {
                assertEquals(e.latencySum(), a.latencySum(), Math.abs(e.latencySum()) * 1e-9, at + " latency sum");
            }
        }
    }

    /** Counts, bytes, min and max exact; HLL and KLL estimates within generous bounds of the truth. */
    static void checkAgainstTruth(List<GroupRow> rows, Map<List<Object>, Truth.Group> truth, IndexSchema schema,
                                  GroupByQuery q) {
        assertEquals(truth.size(), rows.size(), q + ": number of groups");
        double hllRse = 1.04 / Math.sqrt(1 << schema.sketches().hllLgK());
        double rankTol = 2.5 * KllSketch.getNormalizedRankError(schema.sketches().kllK(), false);
        for (GroupRow r : rows) {
            Truth.Group t = truth.get(Truth.keyOf(r));
            assertNotNull(t, "unexpected group " + Truth.keyOf(r));
            String at = q + " group " + Truth.keyOf(r);
            assertEquals(t.count, r.count(), at);
            assertEquals(t.bytes, r.bytesSum(), at);
            double[] sorted = t.sortedLatencies();
            assertEquals(sorted[0], r.latencyMin(), at);
            assertEquals(sorted[sorted.length - 1], r.latencyMax(), at);
            double users = t.users.size();
            assertTrue(Math.abs(r.uniqueUsers() - users) <= 5 * hllRse * users + 1,
                    at + ": unique users " + r.uniqueUsers() + " for " + users);
            assertTrue(r.uniqueUsersLow() <= r.uniqueUsers() && r.uniqueUsers() <= r.uniqueUsersHigh(), at);
            for (int i = 0; i < q.quantiles().size(); i++) {
                double fraction = q.quantiles().get(i);
                double[] rank = Truth.rankRange(sorted, r.latencyQuantiles().get(i));
                assertTrue(rank[0] - rankTol <= fraction && fraction <= rank[1] + rankTol,
                        at + ": quantile " + fraction + " estimated " + r.latencyQuantiles().get(i) + " has rank "
                                + rank[0] + ".." + rank[1] + " in " + Truth.describe(sorted));
            }
        }
    }

    private static void assertSameScanRowsIgnoringOrderAndRounding(List<ScanRow> a, List<ScanRow> b, boolean rollup) {
        assertEquals(a.size(), b.size());
        Comparator<ScanRow> order = Comparator.comparingLong(ScanRow::time)
                .thenComparing(r -> r.dimensions().toString())
                .thenComparing(r -> String.valueOf(r.userId()))
                .thenComparingLong(ScanRow::bytesSum)
                .thenComparingDouble(ScanRow::latencyMin);
        // dictionary codes (hence key order) depend on which thread saw a value first: sort by values
        List<ScanRow> sa = new ArrayList<>(a);
        List<ScanRow> sb = new ArrayList<>(b);
        sa.sort(order);
        sb.sort(order);
        if (!rollup) {
            assertEquals(sa, sb);
            return;
        }
        for (int i = 0; i < sa.size(); i++) {
            ScanRow x = sa.get(i);
            ScanRow y = sb.get(i);
            assertEquals(x.time(), y.time());
            assertEquals(x.dimensions(), y.dimensions());
            assertEquals(x.count(), y.count());
            assertEquals(x.bytesSum(), y.bytesSum());
            assertEquals(x.latencyMin(), y.latencyMin());
            assertEquals(x.latencyMax(), y.latencyMax());
            assertEquals(x.latencySum(), y.latencySum(), Math.abs(x.latencySum()) * 1e-9);
            assertFalse(x.userId() != null || y.userId() != null, "aggregates have no user id");
        }
    }
}
