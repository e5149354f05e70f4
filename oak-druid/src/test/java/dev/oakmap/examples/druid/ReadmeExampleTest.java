package dev.oakmap.examples.druid;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The quick start of oak-druid/README.md, verbatim between the markers, so it stays correct. */
class ReadmeExampleTest {

    @Test
    void quickStart() {
        // README quick start: begin
        IndexSchema schema = IndexSchema.rollup(Granularity.MINUTE, "country", "device");
        try (IncrementalIndex index = new OakIncrementalIndex(schema, 256L << 20)) { // 256 MiB off-heap
            long t = 1_735_689_600_000L; // 2025-01-01T00:00Z
            index.ingest(new Event(t, new String[]{"NL", "ios"}, "alice", 512, 12.5));
            index.ingest(new Event(t + 1_000, new String[]{"NL", "ios"}, "bob", 256, 30.0));
            index.ingest(new Event(t + 2_000, new String[]{"US", "android"}, "alice", 128, 8.0));

            // group-by over the rollup: counts, sums, unique users (HLL), latency quantiles (KLL)
            List<GroupRow> byCountry = index.groupBy(GroupByQuery.of(TimeRange.all(), DimFilter.all(), "country"));
            GroupRow nl = byCountry.getFirst();   // group [NL]: count 2, bytesSum 768, ~2 users, p50 12.5 ms

            // newest first (a descending scan), with a filter on dictionary codes
            List<ScanRow> latest = index.newest(TimeRange.all(), DimFilter.eq("device", "ios"), 10);

            // top-N values of a dimension by a metric
            List<GroupRow> top = index.topN(TimeRange.all(), DimFilter.all(), "device", TopNMetric.BYTES_SUM, 1);
            // README quick start: end

            assertEquals(List.of("NL"), nl.group());
            assertEquals(2, nl.count());
            assertEquals(768, nl.bytesSum());
            assertEquals(2.0, nl.uniqueUsers(), 1e-6);
            assertEquals(12.5, nl.latencyQuantiles().getFirst());
            assertEquals(1, latest.size());
            assertEquals(2, latest.getFirst().count(), "both NL/ios rows folded into one minute's aggregate");
            assertEquals(List.of("ios"), top.getFirst().group());
            assertEquals(2, index.factCount());
        }
    }
}
