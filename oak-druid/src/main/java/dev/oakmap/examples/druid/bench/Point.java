package dev.oakmap.examples.druid.bench;

import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;

/**
 * One run of the plan: an index implementation ingesting a number of rows on some threads in a
 * JVM with a RAM budget. A run may serve several figures ({@link #series}); its measurements are
 * filled in when it finishes.
 */
final class Point {
    final String impl;
    final String mode;       // "plain", "rollup-dense" or "rollup-sparse"
    final int rows;
    final int threads;
    final long budget;
    final Set<String> series = new LinkedHashSet<>();
    java.util.Map<String, String> result = java.util.Map.of();

    Point(String impl, String mode, int rows, int threads, long budget) {
        this.impl = impl;
        this.mode = mode;
        this.rows = rows;
        this.threads = threads;
        this.budget = budget;
    }

    String id() {
        return String.format(Locale.ROOT, "%s-%s-%d-t%d-%dm", impl, mode, rows, threads, budget >> 20);
    }

    boolean ok() {
        return result.containsKey("rows_per_s") && !result.containsKey("error");
    }

    double value(String column) {
        String v = result.get(column);
        return v == null ? Double.NaN : Double.parseDouble(v);
    }
}
