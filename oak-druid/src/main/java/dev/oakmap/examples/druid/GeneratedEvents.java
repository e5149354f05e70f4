package dev.oakmap.examples.druid;

/**
 * A generated event stream in columns: per event a timestamp, a value index per dimension, a user
 * index, {@code bytes} and {@code latencyMs} (8 + 4d + 4 + 8 + 8 bytes), the strings coming from
 * shared pools. Extra metrics are not stored: they are a deterministic hash of the seed, the
 * event and the metric index, computed when read. Immutable and safe to read from many threads,
 * each with its own {@link #cursor()}.
 */
public final class GeneratedEvents {

    private final GeneratorConfig config;
    private final long[] time;
    private final int[][] dims;
    private final String[][] pools;
    private final int[] user;
    private final String[] userPool;
    private final long[] bytes;
    private final double[] latency;

    GeneratedEvents(GeneratorConfig config, long[] time, int[][] dims, String[][] pools, int[] user, String[] userPool,
                    long[] bytes, double[] latency) {
        this.config = config;
        this.time = time;
        this.dims = dims;
        this.pools = pools;
        this.user = user;
        this.userPool = userPool;
        this.bytes = bytes;
        this.latency = latency;
    }

    /** @return the configuration the events were generated with */
    public GeneratorConfig config() {
        return config;
    }

    /** @return the number of events */
    public int size() {
        return time.length;
    }

    /** @return an approximation of the heap bytes these columns take */
    public long heapBytes() {
        return (long) size() * (8 + 4L * dims.length + 4 + 8 + 8);
    }

    /** @return a reusable view positioned with {@link Cursor#position(int)}; one per thread */
    public Cursor cursor() {
        return new Cursor();
    }

    /** @return event {@code i} as a self-contained {@link Event} */
    public Event event(int i) {
        Cursor c = cursor();
        c.position(i);
        return Event.copyOf(c, dims.length, config.extraMetrics());
    }

    /** A view of one event, moved from event to event without allocating. Not thread-safe. */
    public final class Cursor implements InputRow {
        private int i;

        /** Moves to event {@code index}. @return this */
        public Cursor position(int index) {
            if (index < 0 || index >= time.length) {
                throw new IndexOutOfBoundsException("event " + index + " of " + time.length);
            }
            this.i = index;
            return this;
        }

        @Override
        public long timestamp() {
            return time[i];
        }

        @Override
        public String dimension(int index) {
            return pools[index][dims[index][i]];
        }

        @Override
        public String userId() {
            return userPool[user[i]];
        }

        @Override
        public long bytes() {
            return bytes[i];
        }

        @Override
        public double latencyMs() {
            return latency[i];
        }

        @Override
        public double extraMetric(int index) {
            if (index < 0 || index >= config.extraMetrics()) {
                throw new IndexOutOfBoundsException("extra metric " + index + " of " + config.extraMetrics());
            }
            long h = mix(config.seed() ^ (i * 0x9E3779B97F4A7C15L) ^ ((long) index << 40));
            return (h >>> 11) * 0x1.0p-53 * 1000.0;
        }
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
