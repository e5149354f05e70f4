package dev.oakmap.bench.harness;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * The key space and the key choosers.
 *
 * <p>Key {@code i} of the range {@code [0, keys)} is {@code keySize} pseudo-random bytes derived
 * from {@code i} and the seed; its first 8 bytes are a bijection of {@code i}, so distinct indexes
 * give distinct keys, and key order is unrelated to index order (so ingesting indexes in order
 * would still insert keys in random order; the harness shuffles anyway).
 *
 * <p>With {@code --key-order ascending}, the first {@link #INDEX_BYTES} bytes of key {@code i} are
 * {@code i} instead, big-endian, so that key order (unsigned, byte by byte) is index order, and the
 * ingestion stage inserts its keys in that order: keys that arrive in order, such as timestamps.
 * With {@code --key-head B}, the first {@code B} bytes of every key are the same (and the index,
 * if ascending, follows them): distinct keys then differ only after them, as keys that start with
 * a table or tenant name do.
 */
final class Keys {

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private Keys() {
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Bytes of a key that carry its index when keys are in index order. */
    static final int INDEX_BYTES = 4;

    /**
     * How keys are laid out beyond their random bytes.
     *
     * @param ascending whether key {@code i} carries {@code i} in the {@link #INDEX_BYTES} bytes
     *     after its head, so that key order is index order ({@code --key-order ascending})
     * @param head how many leading bytes every key shares ({@code --key-head}): a constant run,
     *     as keys that start with a table, tenant or type name have
     */
    record Layout(boolean ascending, int head) {
        /** Random keys, no shared head: the default. */
        static final Layout PLAIN = new Layout(false, 0);
    }

    /** The bytes shared by every key's head, repeated as needed. */
    private static final byte[] HEAD = "tenant-0042/orders/".getBytes(StandardCharsets.US_ASCII);

    /**
     * Writes key {@code i} into {@code out} (all of it): {@link #key(long, int, byte[])}, with
     * its first {@code layout.head()} bytes the shared head, and {@code i} in the
     * {@link #INDEX_BYTES} bytes after them if {@code layout.ascending()}.
     */
    static void key(long seed, int i, byte[] out, Layout layout) {
        key(seed, i, out);
        int head = Math.min(layout.head(), out.length);
        for (int b = 0; b < head; b++) {
            out[b] = HEAD[b % HEAD.length];
        }
        if (layout.ascending()) {
            for (int b = 0; b < INDEX_BYTES; b++) {
                out[head + b] = (byte) (i >>> (8 * (INDEX_BYTES - 1 - b)));
            }
        }
    }

    /** Writes key {@code i} into {@code out} (all of it). */
    static void key(long seed, int i, byte[] out) {
        long base = seed + i * GOLDEN;
        int words = out.length / 8;
        for (int w = 0; w < words; w++) {
            LONGS.set(out, w * 8, mix(base + w * 0xD1B54A32D192ED03L));
        }
        if (out.length % 8 != 0) {
            long last = mix(base + words * 0xD1B54A32D192ED03L);
            for (int j = words * 8; j < out.length; j++) {
                out[j] = (byte) (last >>> 56);
                last <<= 8;
            }
        }
    }

    /** @return a random permutation of {@code [0, n)} (Fisher-Yates) */
    static int[] permutation(int n, long seed) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) {
            p[i] = i;
        }
        SplittableRandom r = new SplittableRandom(seed);
        for (int i = n - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            int t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
        return p;
    }

    /** Picks key indexes for one thread. Not thread-safe: one per thread. */
    interface Chooser {
        int next();
    }

    static Chooser uniform(int keys, SplittableRandom rnd) {
        return () -> rnd.nextInt(keys);
    }

    /**
     * Zipfian over {@code [0, n)} with exponent {@code theta} (Gray et al., "Quickly generating
     * billion-record synthetic databases", as in YCSB), the popular ranks scattered over the range by
     * hashing so that hot keys are not neighbours in key order. The constants cost O(n) to compute;
     * build one {@code Zipf} per run and a chooser per thread.
     */
    static final class Zipf {
        final int n;
        final double theta;
        final double alpha;
        final double zetan;
        final double eta;
        final long scramble;

        Zipf(int n, double theta, long seed) {
            if (!(theta > 0) || theta >= 1) {
                throw new IllegalArgumentException("zipf theta must be in (0, 1): " + theta);
            }
            this.n = n;
            this.theta = theta;
            this.alpha = 1 / (1 - theta);
            this.zetan = zeta(n, theta);
            double zeta2 = zeta(Math.min(n, 2), theta);
            this.eta = (1 - Math.pow(2.0 / n, 1 - theta)) / (1 - zeta2 / zetan);
            this.scramble = seed;
        }

        private static double zeta(long n, double theta) {
            double s = 0;
            for (long i = 1; i <= n; i++) {
                s += 1 / Math.pow(i, theta);
            }
            return s;
        }

        /** @return the rank (0 = most popular) for a uniform {@code u} in [0, 1) */
        int rank(double u) {
            double uz = u * zetan;
            if (uz < 1) {
                return 0;
            }
            if (uz < 1 + Math.pow(0.5, theta)) {
                return Math.min(1, n - 1);
            }
            long r = (long) (n * Math.pow(eta * u - eta + 1, alpha));
            return (int) Math.min(Math.max(r, 0), n - 1);
        }

        Chooser chooser(SplittableRandom rnd) {
            return () -> (int) Long.remainderUnsigned(mix(rank(rnd.nextDouble()) + scramble), n);
        }
    }
}
