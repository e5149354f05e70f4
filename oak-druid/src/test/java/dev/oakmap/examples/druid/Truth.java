package dev.oakmap.examples.druid;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Exact group-by answers computed from the events themselves, to check sketch estimates against. */
final class Truth {

    /** The exact contents of one group. */
    static final class Group {
        long count;
        long bytes;
        final Set<String> users = new HashSet<>();
        final List<Double> latencies = new ArrayList<>();
        double[] sorted;

        double[] sortedLatencies() {
            if (sorted == null) {
                sorted = latencies.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            }
            return sorted;
        }
    }

    private Truth() {
    }

    /** @return the exact groups of {@code q} over {@code events}, keyed by bucket and group values */
    static Map<List<Object>, Group> groupBy(List<Event> events, IndexSchema schema, GroupByQuery q) {
        int[] by = q.dimensions().stream().mapToInt(schema::dimensionIndex).toArray();
        Map<List<Object>, Group> out = new HashMap<>();
        for (Event e : events) {
            long t = schema.granularity().truncate(e.timestamp());
            if (!q.range().contains(t) || !passes(q.filter(), schema, e)) {
                continue;
            }
            List<Object> key = new ArrayList<>();
            key.add(q.timeBucket() == null ? Long.MIN_VALUE : q.timeBucket().truncate(t));
            for (int d : by) {
                key.add(e.dimension(d));
            }
            Group g = out.computeIfAbsent(key, k -> new Group());
            g.count++;
            g.bytes += e.bytes();
            if (e.userId() != null) {
                g.users.add(e.userId());
            }
            g.latencies.add(e.latencyMs());
        }
        return out;
    }

    static List<Object> keyOf(GroupRow r) {
        List<Object> key = new ArrayList<>();
        key.add(r.bucket());
        key.addAll(r.group());
        return key;
    }

    static boolean passes(DimFilter f, IndexSchema schema, Event e) {
        return switch (f) {
            case DimFilter.All a -> true;
            case DimFilter.In in -> in.values().contains(e.dimension(schema.dimensionIndex(in.dimension())));
            case DimFilter.And and -> and.filters().stream().allMatch(g -> passes(g, schema, e));
        };
    }

    /** @return the fraction of {@code sorted} below and at-or-below {@code v} */
    static double[] rankRange(double[] sorted, double v) {
        int lo = 0;
        while (lo < sorted.length && sorted[lo] < v) {
            lo++;
        }
        int hi = lo;
        while (hi < sorted.length && sorted[hi] <= v) {
            hi++;
        }
        return new double[]{(double) lo / sorted.length, (double) hi / sorted.length};
    }

    static String describe(double[] sorted) {
        return sorted.length <= 10 ? Arrays.toString(sorted) : sorted.length + " values";
    }
}
