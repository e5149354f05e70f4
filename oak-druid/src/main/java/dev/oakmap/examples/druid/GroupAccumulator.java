package dev.oakmap.examples.druid;

import org.apache.datasketches.hll.HllSketch;
import org.apache.datasketches.hll.HllUnion;
import org.apache.datasketches.kll.KllDoublesSketch;

import java.util.ArrayList;
import java.util.List;

/**
 * The running aggregate of one group of a query: numbers, an HLL union of user ids and a KLL
 * sketch of latencies, all on-heap (a query's result is small). Not thread-safe.
 */
final class GroupAccumulator {
    private long count;
    private long bytesSum;
    private double latencySum;
    private double latencyMin = Double.POSITIVE_INFINITY;
    private double latencyMax = Double.NEGATIVE_INFINITY;
    private final HllUnion users;
    private final KllDoublesSketch latencies;

    GroupAccumulator(IndexSchema.SketchSpec spec) {
        this.users = new HllUnion(spec.hllLgK());
        this.latencies = KllDoublesSketch.newHeapInstance(spec.kllK());
    }

    void addNumbers(Numbers n) {
        count += n.count;
        bytesSum += n.bytesSum;
        latencySum += n.latencySum;
        latencyMin = Math.min(latencyMin, n.latencyMin);
        latencyMax = Math.max(latencyMax, n.latencyMax);
    }

    /** Plain rows: one user id ({@code null} is not a user). */
    void addUser(String userId) {
        if (userId != null) {
            users.update(userId);
        }
    }

    /** Plain rows: one latency. */
    void addLatency(double latencyMs) {
        latencies.update(latencyMs);
    }

    /** Aggregates: their user sketch. */
    void mergeUsers(HllSketch sketch) {
        users.update(sketch);
    }

    /** Aggregates: their latency sketch. */
    void mergeLatencies(KllDoublesSketch sketch) {
        latencies.merge(sketch);
    }

    GroupRow toRow(long bucket, List<String> group, List<Double> quantiles) {
        List<Double> q = new ArrayList<>(quantiles.size());
        for (double f : quantiles) {
            q.add(latencies.isEmpty() ? Double.NaN : latencies.getQuantile(f));
        }
        return new GroupRow(bucket, group, count, bytesSum, latencySum, latencyMin, latencyMax,
                users.getEstimate(), users.getLowerBound(2), users.getUpperBound(2), q);
    }
}
