package dev.oakmap.bench.harness;

import dev.oakmap.DeletedMemoryAccessException;
import dev.oakmap.OakComparator;
import dev.oakmap.OakMap;
import dev.oakmap.MemoryScheme;
import dev.oakmap.OakMapBuilder;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakScopedWriteBuffer;
import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.OakZeroCopyMap;
import dev.oakmap.common.OakCommonTypes;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Field;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * {@link OakMap}{@code <byte[], byte[]>} with the byte-array serializer and the unsigned byte-wise
 * comparator, driven through one of its two APIs:
 * <ul>
 *   <li>zero-copy ({@link #zeroCopy}): {@code zc().get} views, {@code zc().put},
 *       {@code zc().putIfAbsentComputeIfPresent} in place, {@code zc().remove}, and scans over
 *       {@code zc().entrySet()} (iterator: a view object per pair) or {@code zc().entryStreamSet()}
 *       (stream: one reused entry); a full-value get copies the view with {@code transform};</li>
 *   <li>legacy ({@link #legacy}): the {@code ConcurrentNavigableMap} methods, which deserialize
 *       (copy) every value they return; updates through {@code compute} with a copied array, as
 *       for the skiplist.</li>
 * </ul>
 */
final class OakBenchMap implements BenchMap {

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    /** Adds 1 to the first 8 bytes, in place. */
    private static final Consumer<OakScopedWriteBuffer> INCREMENT = b -> b.putLong(0, b.getLong(0) + 1);

    /** Copies a whole value out of the map. */
    private static final Function<OakScopedReadBuffer, byte[]> COPY = b -> {
        byte[] a = new byte[b.capacity()];
        b.getBytes(0, a, 0, a.length);
        return a;
    };

    private final OakMap<byte[], byte[]> map;
    private final OakMap<byte[], byte[]> descending;
    private final boolean zc;

    private OakBenchMap(long capacity, boolean zc, MemoryScheme keys, MemoryScheme values) {
        this(capacity, zc, keys, values, OakCommonTypes.BYTE_ARRAY_COMPARATOR);
    }

    private OakBenchMap(long capacity, boolean zc, MemoryScheme keys, MemoryScheme values,
                        OakComparator<byte[]> comparator) {
        OakMapBuilder<byte[], byte[]> b = new OakMapBuilder<>(OakCommonTypes.BYTE_ARRAY_SERIALIZER,
                OakCommonTypes.BYTE_ARRAY_SERIALIZER, comparator);
        if (capacity > 0) {
            b.memoryCapacity(capacity);
        }
        b.keyMemory(keys).valueMemory(values);
        this.map = b.build();
        this.descending = map.descendingMap();
        this.zc = zc;
    }

    private OakBenchMap(OakMap<byte[], byte[]> map, boolean zc) {
        this.map = map;
        this.descending = map.descendingMap();
        this.zc = zc;
    }

    /**
     * @return this same map driven through the other API (zero-copy or legacy); closing either
     *         closes the map (the demo measures both APIs on one map)
     */
    OakBenchMap otherApi() {
        return new OakBenchMap(map, !zc);
    }

    /** @return an Oak map driven through its zero-copy API, with at most {@code capacity} bytes off-heap */
    static BenchMap zeroCopy(long capacity) {
        return new OakBenchMap(capacity, true, OakMapBuilder.DEFAULT_KEY_MEMORY, OakMapBuilder.DEFAULT_VALUE_MEMORY);
    }

    /** @return an Oak map driven through its legacy ConcurrentNavigableMap API */
    static BenchMap legacy(long capacity) {
        return new OakBenchMap(capacity, false, OakMapBuilder.DEFAULT_KEY_MEMORY, OakMapBuilder.DEFAULT_VALUE_MEMORY);
    }

    /**
     * @return an Oak map driven through its zero-copy API whose comparator orders keys as
     *     {@code oak-zc}'s does but offers no key prefix, as a comparator a user writes without
     *     the optional {@code keyPrefix} would
     */
    static BenchMap zeroCopyWithoutPrefixes(long capacity) {
        return new OakBenchMap(capacity, true, OakMapBuilder.DEFAULT_KEY_MEMORY, OakMapBuilder.DEFAULT_VALUE_MEMORY,
                WITHOUT_PREFIXES);
    }

    /** The unsigned byte order of {@code oak-zc}'s comparator, without its key prefixes. */
    private static final OakComparator<byte[]> WITHOUT_PREFIXES = new OakComparator<>() {
        private final OakComparator<byte[]> order = OakCommonTypes.BYTE_ARRAY_COMPARATOR;

        @Override
        public int compareKeys(byte[] key1, byte[] key2) {
            return order.compareKeys(key1, key2);
        }

        @Override
        public int compareSerializedKeys(OakScopedReadBuffer serializedKey1, OakScopedReadBuffer serializedKey2) {
            return order.compareSerializedKeys(serializedKey1, serializedKey2);
        }

        @Override
        public int compareKeyAndSerializedKey(byte[] key, OakScopedReadBuffer serializedKey) {
            return order.compareKeyAndSerializedKey(key, serializedKey);
        }
    };

    /** @return a factory of zero-copy Oak maps with the given memory schemes for keys and values */
    static LongFunction<BenchMap> zeroCopy(MemoryScheme keys, MemoryScheme values) {
        return capacity -> new OakBenchMap(capacity, true, keys, values);
    }

    /** @return the version of oak-core on the class path, as well as it can be told */
    static String version() {
        String v = OakMap.class.getPackage().getImplementationVersion();
        return "oak-core " + (v != null ? v : "0.1.0-SNAPSHOT (this tree)");
    }

    @Override
    public Session newSession(byte[] valueTemplate) {
        return zc ? new ZcSession(valueTemplate) : new LegacySession(valueTemplate);
    }

    @Override
    public long size() {
        return map.size();
    }

    @Override
    public long offHeapUsed() {
        return map.memoryUsed();
    }

    @Override
    public long offHeapReserved() {
        return map.memoryReserved();
    }

    @Override
    public void close() {
        map.close();
    }

    /**
     * Pairs the map moved into key order so far (placement, see oak-core's docs/placement.md) and
     * the off-heap bytes it holds and has given back: read from the map's internals by
     * reflection, which the harness can do because it runs Oak on the class path. Diagnostics
     * only; "" where the internals are not reachable (Oak on the module path).
     */
    @Override
    public String state() {
        if (INTERNAL == null) {
            return "";
        }
        try {
            Object internal = INTERNAL.invoke(map);
            return String.format(Locale.ROOT, "moved %,d pairs, reserved %,d MB, given back %,d MB",
                    (long) PAIRS_MOVED.invoke(internal), map.memoryReserved() >> 20,
                    (long) DISCARDED.invoke(internal) >> 20);
        } catch (Throwable t) {
            return "";
        }
    }

    private static final MethodHandle INTERNAL;
    private static final MethodHandle PAIRS_MOVED;
    private static final MethodHandle DISCARDED;

    static {
        MethodHandle internal = null;
        MethodHandle moved = null;
        MethodHandle discarded = null;
        try {
            Field f = OakMap.class.getDeclaredField("internal");
            f.setAccessible(true);
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            internal = lookup.unreflectGetter(f);
            moved = lookup.unreflect(f.getType().getMethod("pairsMoved"));
            discarded = lookup.unreflect(f.getType().getMethod("offHeapDiscardedBytes"));
        } catch (ReflectiveOperationException | RuntimeException unreachable) {
            internal = null;
        }
        INTERNAL = internal;
        PAIRS_MOVED = moved;
        DISCARDED = discarded;
    }

    private final class ZcSession implements Session {
        private final OakZeroCopyMap<byte[], byte[]> z = map.zc();
        private final byte[] value;

        ZcSession(byte[] value) {
            this.value = value;
        }

        @Override
        public boolean putIfAbsent(byte[] key) {
            return z.putIfAbsent(key, value);
        }

        @Override
        public long put(byte[] key) {
            z.put(key, value);
            return 1;
        }

        @Override
        public long update(byte[] key) {
            return z.putIfAbsentComputeIfPresent(key, value, INCREMENT) ? 1 : 0;
        }

        @Override
        public long get(byte[] key) {
            OakUnscopedBuffer v = z.get(key);
            try {
                return v == null ? 0 : v.getLong(0);
            } catch (DeletedMemoryAccessException removedSinceTheGet) {
                return 0; // a remove overtook the read: a miss, as the view's contract says
            }
        }

        @Override
        public long getCopy(byte[] key) {
            OakUnscopedBuffer v = z.get(key);
            try {
                return v == null ? 0 : v.transform(COPY).length;
            } catch (DeletedMemoryAccessException removedSinceTheGet) {
                return 0;
            }
        }

        @Override
        public long remove(byte[] key) {
            return z.remove(key) ? 1 : 0;
        }

        @Override
        public long scan(byte[] from, int length, boolean desc, boolean stream) {
            OakMap<byte[], byte[]> view = desc ? descending : map;
            long sum = 0;
            int n = 0;
            OakZeroCopyMap<byte[], byte[]> tail = view.tailMap(from, true).zc();
            for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : stream ? tail.entryStreamSet() : tail.entrySet()) {
                sum += read(e);
                if (++n == length) {
                    return sum;
                }
            }
            OakZeroCopyMap<byte[], byte[]> whole = view.zc();
            for (Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e : stream ? whole.entryStreamSet() : whole.entrySet()) {
                sum += read(e);
                if (++n == length) {
                    return sum;
                }
            }
            return sum;
        }

        private static long read(Map.Entry<OakUnscopedBuffer, OakUnscopedBuffer> e) {
            try {
                return e.getKey().get(0) + e.getValue().get(0);
            } catch (DeletedMemoryAccessException removedDuringTheScan) {
                return 0;
            }
        }
    }

    private final class LegacySession implements Session {
        private final byte[] value;
        private final BiFunction<byte[], byte[], byte[]> increment;

        LegacySession(byte[] value) {
            this.value = value;
            this.increment = (k, v) -> {
                if (v == null) {
                    return value;
                }
                // v is a private deserialized copy, but returning it mutated would be lost: OakMap's
                // compute treats a result identical to its argument as "unchanged". A fresh array, as
                // for the skiplist.
                byte[] next = v.clone();
                LONGS.set(next, 0, (long) LONGS.get(next, 0) + 1);
                return next;
            };
        }

        @Override
        public boolean putIfAbsent(byte[] key) {
            return map.putIfAbsent(key, value) == null;
        }

        @Override
        public long put(byte[] key) {
            byte[] old = map.put(key, value);
            return old == null ? 0 : old.length;
        }

        @Override
        public long update(byte[] key) {
            return map.compute(key, increment).length;
        }

        @Override
        public long get(byte[] key) {
            byte[] v = map.get(key);
            return v == null ? 0 : (long) LONGS.get(v, 0);
        }

        @Override
        public long getCopy(byte[] key) {
            byte[] v = map.get(key);
            return v == null ? 0 : v.length;
        }

        @Override
        public long remove(byte[] key) {
            byte[] old = map.remove(key);
            return old == null ? 0 : old.length;
        }

        @Override
        public long scan(byte[] from, int length, boolean desc, boolean stream) {
            OakMap<byte[], byte[]> view = desc ? descending : map;
            long sum = 0;
            int n = 0;
            for (Map.Entry<byte[], byte[]> e : view.tailMap(from, true).entrySet()) {
                sum += e.getKey()[0] + e.getValue()[0];
                if (++n == length) {
                    return sum;
                }
            }
            for (Map.Entry<byte[], byte[]> e : view.entrySet()) {
                sum += e.getKey()[0] + e.getValue()[0];
                if (++n == length) {
                    return sum;
                }
            }
            return sum;
        }
    }
}
