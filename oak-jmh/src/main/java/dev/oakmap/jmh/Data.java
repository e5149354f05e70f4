package dev.oakmap.jmh;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The data set of the map benchmarks: distinct random keys, a value template, and a random visiting
 * order. Deterministic for a given seed, so every map and every run sees the same keys.
 */
public final class Data {

    /** Lookups cycle through this many precomputed random key indexes (a power of two). */
    static final int ORDER = 1 << 16;

    /** The keys, distinct (the first 8 bytes are a counter's bijection), in random order. */
    final byte[][] keys;
    /** The keys in ascending unsigned order. */
    final byte[][] sorted;
    /** The value every pair starts with. */
    final byte[] value;
    /** Indexes into {@link #keys}, uniformly random. */
    final int[] order;

    /**
     * @param pairs     number of keys
     * @param keySize   bytes per key (at least 8)
     * @param valueSize bytes per value (at least 8)
     * @param seed      seed of every random choice
     */
    Data(int pairs, int keySize, int valueSize, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        keys = new byte[pairs][];
        for (int i = 0; i < pairs; i++) {
            byte[] k = new byte[keySize];
            r.nextBytes(k);
            long id = mix(seed + i); // a bijection of i: distinct first 8 bytes
            for (int b = 0; b < 8; b++) {
                k[b] = (byte) (id >>> (56 - 8 * b));
            }
            keys[i] = k;
        }
        sorted = keys.clone();
        Arrays.sort(sorted, Arrays::compareUnsigned);
        value = new byte[valueSize];
        r.nextBytes(value);
        order = new int[ORDER];
        for (int i = 0; i < ORDER; i++) {
            order[i] = r.nextInt(pairs);
        }
    }

    /**
     * @return {@code 0..n-1} in an order drawn from {@code random} (Fisher-Yates, from the top),
     *     for probes that lay data out at shuffled places
     */
    static int[] permutation(int n, SplittableRandom random) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) {
            p[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
        return p;
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
