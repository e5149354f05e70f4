package dev.oakmap.examples.druid;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * A Zipf distribution over ranks {@code 0 .. n-1}: rank {@code r} has probability proportional
 * to {@code 1 / (r + 1)^s}. Sampling inverts a precomputed cumulative table by binary search
 * (O(log n) time, 8n bytes), exact for any exponent, including 0 (uniform).
 */
public final class Zipf {

    private final double[] cdf;

    /**
     * @param n the number of ranks, at least 1
     * @param exponent the skew {@code s}, at least 0
     */
    public Zipf(int n, double exponent) {
        if (n < 1) {
            throw new IllegalArgumentException("a Zipf distribution needs at least one rank: " + n);
        }
        if (!(exponent >= 0) || Double.isInfinite(exponent)) {
            throw new IllegalArgumentException("the Zipf exponent must be finite and >= 0: " + exponent);
        }
        cdf = new double[n];
        double sum = 0;
        for (int r = 0; r < n; r++) {
            sum += 1.0 / Math.pow(r + 1, exponent);
            cdf[r] = sum;
        }
        for (int r = 0; r < n; r++) {
            cdf[r] /= sum;
        }
        cdf[n - 1] = 1.0;
    }

    /** @return the number of ranks */
    public int size() {
        return cdf.length;
    }

    /** @return a rank drawn with {@code rnd} */
    public int sample(SplittableRandom rnd) {
        int i = Arrays.binarySearch(cdf, rnd.nextDouble());
        return i >= 0 ? i : -i - 1;
    }

    /** @return the probability of rank {@code r} */
    public double probability(int r) {
        return r == 0 ? cdf[0] : cdf[r] - cdf[r - 1];
    }
}
