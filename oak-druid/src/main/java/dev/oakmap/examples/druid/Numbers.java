package dev.oakmap.examples.druid;

/** The numeric part of one fact, read into a reusable holder. Not thread-safe. */
final class Numbers {
    long count;
    long bytesSum;
    double latencySum;
    double latencyMin;
    double latencyMax;
    /** the user id code of a plain row; -1 for an aggregate */
    int userCode;

    void set(long count, long bytesSum, double latencySum, double latencyMin, double latencyMax, int userCode) {
        this.count = count;
        this.bytesSum = bytesSum;
        this.latencySum = latencySum;
        this.latencyMin = latencyMin;
        this.latencyMax = latencyMax;
        this.userCode = userCode;
    }
}
