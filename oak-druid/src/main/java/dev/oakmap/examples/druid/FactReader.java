package dev.oakmap.examples.druid;

/**
 * Access to the value of the fact a scan is positioned on, valid only during the sink call that
 * received it. Each method reads the value atomically.
 */
interface FactReader {

    /** Reads the numeric fields. */
    void readNumbers(Numbers out);

    /** Adds the whole fact (numbers and, for aggregates, sketches) to {@code acc}. */
    void addTo(GroupAccumulator acc);
}
