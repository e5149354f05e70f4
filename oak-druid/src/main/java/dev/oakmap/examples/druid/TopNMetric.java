package dev.oakmap.examples.druid;

import java.util.function.ToDoubleFunction;

/** What a top-N query ranks groups by (descending). */
public enum TopNMetric {
    /** Number of input rows. */
    COUNT(r -> r.count()),
    /** Sum of {@code bytes}. */
    BYTES_SUM(r -> r.bytesSum()),
    /** Sum of {@code latencyMs}. */
    LATENCY_SUM(GroupRow::latencySum),
    /** Estimated distinct users. */
    UNIQUE_USERS(GroupRow::uniqueUsers);

    private final ToDoubleFunction<GroupRow> value;

    TopNMetric(ToDoubleFunction<GroupRow> value) {
        this.value = value;
    }

    /** @return this metric's value for {@code row} */
    public double of(GroupRow row) {
        return value.applyAsDouble(row);
    }
}
