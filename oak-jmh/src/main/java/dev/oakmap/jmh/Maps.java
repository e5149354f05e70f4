package dev.oakmap.jmh;

import dev.oakmap.MemoryScheme;
import dev.oakmap.OakMap;
import dev.oakmap.OakMapBuilder;
import dev.oakmap.common.OakCommonTypes;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.util.Arrays;
import java.util.concurrent.ConcurrentSkipListMap;

/** The maps under test, built and filled once per trial (fork), and the per-thread key cursor. */
public final class Maps {

    private Maps() {
    }

    /** The benchmarks' data set; {@code pairs} can be changed with {@code -p pairs=...}. */
    @State(Scope.Benchmark)
    public static class DataState {
        /** Pairs in the map. */
        @Param("100000")
        public int pairs;
        /** Key size in bytes. */
        @Param("100")
        public int keySize;
        /** Value size in bytes. */
        @Param("1000")
        public int valueSize;
        /**
         * The order in which the maps are fed: {@code random} (the data set's order) or
         * {@code sorted} (ascending keys, so that every map's memory lies in key order; shows
         * what placement alone is worth to scans).
         */
        @Param("random")
        public String ingestOrder;

        Data data;

        /** @return the keys in the order the maps are fed */
        byte[][] ingestKeys() {
            return switch (ingestOrder) {
                case "random" -> data.keys;
                case "sorted" -> data.sorted;
                default -> throw new IllegalArgumentException("ingestOrder: random or sorted, not " + ingestOrder);
            };
        }

        /** Generates the keys and values. */
        @Setup(Level.Trial)
        public void generate() {
            data = new Data(pairs, keySize, valueSize, 42);
        }
    }

    /**
     * {@code OakMap<byte[], byte[]>} holding every pair, built with the given value memory scheme
     * ({@code -p scheme=NOVA,GROW_ONLY,LOCK_BASED} to compare them).
     */
    @State(Scope.Benchmark)
    public static class OakState {
        /** The memory scheme of keys and values. */
        @Param("NOVA")
        public String scheme;

        OakMap<byte[], byte[]> map;

        /** Builds the map and ingests every pair through the zero-copy API. */
        @Setup(Level.Trial)
        public void build(DataState d) {
            MemoryScheme s = MemoryScheme.valueOf(scheme);
            map = new OakMapBuilder<>(OakCommonTypes.BYTE_ARRAY_SERIALIZER, OakCommonTypes.BYTE_ARRAY_SERIALIZER,
                    OakCommonTypes.BYTE_ARRAY_COMPARATOR).keyMemory(s).valueMemory(s).build();
            for (byte[] k : d.ingestKeys()) {
                map.zc().putIfAbsent(k, d.data.value);
            }
            if (map.size() != d.data.keys.length) {
                throw new IllegalStateException("Oak holds " + map.size() + " pairs, expected " + d.data.keys.length);
            }
        }

        /** Releases the off-heap memory. */
        @TearDown(Level.Trial)
        public void close() {
            map.close();
        }
    }

    /** {@code ConcurrentSkipListMap<byte[], byte[]>} (unsigned order) holding copies of every pair. */
    @State(Scope.Benchmark)
    public static class CslmState {
        ConcurrentSkipListMap<byte[], byte[]> map;

        /** Builds the map with copies of the keys and values, as a user storing byte strings would. */
        @Setup(Level.Trial)
        public void build(DataState d) {
            map = new ConcurrentSkipListMap<>(Arrays::compareUnsigned);
            for (byte[] k : d.ingestKeys()) {
                map.putIfAbsent(k.clone(), d.data.value.clone());
            }
        }
    }

    /** One thread's position in the random visiting order; distinct start per thread. */
    @State(Scope.Thread)
    public static class Cursor {
        private static final java.util.concurrent.atomic.AtomicInteger THREADS = new java.util.concurrent.atomic.AtomicInteger();
        int i = THREADS.getAndIncrement() * 7919;

        /** @return the next key, in the data set's random order */
        byte[] next(Data d) {
            return d.keys[d.order[i++ & (Data.ORDER - 1)]];
        }

        /** @return a random index in {@code [lo, hi)}, from the data set's random order */
        int nextIn(Data d, int lo, int hi) {
            return lo + d.order[i++ & (Data.ORDER - 1)] % (hi - lo);
        }
    }
}
