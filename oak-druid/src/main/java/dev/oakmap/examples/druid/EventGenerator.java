package dev.oakmap.examples.druid;

import java.util.SplittableRandom;

/**
 * Makes seeded, realistic event streams for the indexes: Zipf-distributed dimension values and
 * user ids, timestamps that advance in real-time order (spatially local keys, as in the paper's
 * experiment), log-normal latencies around 20 ms and exponential byte counts. The events are
 * generated in advance into compact columns ({@link GeneratedEvents}), so a benchmark measures
 * ingestion only.
 */
public final class EventGenerator {

    private EventGenerator() {
    }

    /** @return {@code count} events drawn as {@code config} says */
    public static GeneratedEvents generate(GeneratorConfig config, int count) {
        if (count < 0) {
            throw new IllegalArgumentException("count must not be negative: " + count);
        }
        int d = config.dimensions().size();
        SplittableRandom rnd = new SplittableRandom(config.seed());
        Zipf[] values = new Zipf[d];
        String[][] pools = new String[d][];
        for (int i = 0; i < d; i++) {
            int card = config.cardinalities().get(i);
            values[i] = new Zipf(card, config.zipfExponent());
            pools[i] = pool(config.dimensions().get(i) + "-", card);
        }
        Zipf users = new Zipf(config.users(), config.userZipfExponent());
        String[] userPool = pool("user-", config.users());

        long[] time = new long[count];
        int[][] dims = new int[d][count];
        int[] user = new int[count];
        long[] bytes = new long[count];
        double[] latency = new double[count];
        double meanGapMs = 1000.0 / config.eventsPerSecond();
        double t = config.startTime();
        for (int r = 0; r < count; r++) {
            t += -Math.log(1.0 - rnd.nextDouble()) * meanGapMs;
            time[r] = (long) t;
            for (int i = 0; i < d; i++) {
                dims[i][r] = values[i].sample(rnd);
            }
            user[r] = users.sample(rnd);
            bytes[r] = 200 + (long) (-Math.log(1.0 - rnd.nextDouble()) * 2_000);
            latency[r] = Math.round(Math.exp(Math.log(20) + 0.8 * rnd.nextGaussian()) * 1000) / 1000.0;
        }
        return new GeneratedEvents(config, time, dims, pools, user, userPool, bytes, latency);
    }

    private static String[] pool(String prefix, int n) {
        String[] p = new String[n];
        for (int i = 0; i < n; i++) {
            p[i] = prefix + i;
        }
        return p;
    }
}
