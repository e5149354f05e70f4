package dev.oakmap.examples.druid;

/** Receives the facts of a scan, in scan order. */
@FunctionalInterface
interface FactSink {

    /**
     * @param time the fact's (bucket) time
     * @param dims its dimension codes; the array is reused, copy what you keep
     * @param fact its value, readable during this call only
     * @return whether to continue the scan
     */
    boolean accept(long time, int[] dims, FactReader fact);
}
