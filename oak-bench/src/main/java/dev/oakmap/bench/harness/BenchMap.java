package dev.oakmap.bench.harness;

/**
 * The adapter every compared map implements: the harness drives all maps through this interface
 * only, so adding a map (Oak under another memory manager, a skiplist over off-heap cells, MapDB)
 * means one new class and one entry in {@link MapKind}.
 *
 * <p>Keys and values are byte strings ({@code keySize} and {@code valueSize} bytes) compared as
 * unsigned bytes. The harness passes per-thread scratch arrays that it overwrites after each call:
 * an adapter that keeps a key or value must copy it (the on-heap skiplist stores copies, as its
 * users would).
 *
 * <p>Thread safety: a {@code BenchMap} is shared by all workers; each worker thread gets its own
 * {@link Session} from {@link #newSession}, used by that thread only, where an adapter keeps
 * reusable per-thread objects (lambdas, buffers) so that the hot path allocates nothing the
 * map's own API does not force.
 */
public interface BenchMap extends AutoCloseable {

    /**
     * @param valueTemplate the value written by puts and by absent-key updates (the session may
     *                      keep it; the harness does not change it)
     * @return a session for the calling thread
     */
    Session newSession(byte[] valueTemplate);

    /** @return the number of pairs (may be approximate while workers run) */
    long size();

    /** @return off-heap bytes in use by the map's data and metadata, 0 for an on-heap map */
    long offHeapUsed();

    /** @return off-heap bytes reserved from the operating system, 0 for an on-heap map */
    long offHeapReserved();

    /**
     * @return how the map's layout stands, for the run's log (say, pairs a map moved to reorganize
     *     itself, or memory it gave back), or "" if it has nothing to report; logged after each
     *     warm-up second and the measured window
     */
    default String state() {
        return "";
    }

    /** Releases the map's memory. */
    @Override
    void close();

    /**
     * One worker thread's handle on the map. Each operation returns a value derived from what it
     * read, which the harness sums so the JIT cannot drop the reads.
     */
    interface Session {

        /** The ingestion operation. @return true if the key was absent and is now mapped */
        boolean putIfAbsent(byte[] key);

        /** Maps {@code key} to the value template (insert or overwrite). */
        long put(byte[] key);

        /**
         * Adds 1 to the big-endian long in the value's first 8 bytes if the key is present (in
         * place, where the map can), else maps the key to the value template; atomically.
         */
        long update(byte[] key);

        /** Looks {@code key} up and reads the value's first 8 bytes, copying no more than the API forces. */
        long get(byte[] key);

        /** Looks {@code key} up and obtains the whole value as a byte array the caller may read. */
        long getCopy(byte[] key);

        /** Removes {@code key}'s mapping if any. */
        long remove(byte[] key);

        /**
         * Visits {@code length} pairs from the first key at or after {@code from} in the scan's
         * direction, wrapping around to the first pair when the map runs out, reading the first
         * byte of each key and value.
         *
         * @param descending scan in descending key order
         * @param stream     use the zero-copy stream API where the map has one
         */
        long scan(byte[] from, int length, boolean descending, boolean stream);
    }
}
