package dev.oakmap.fuzz;

import dev.oakmap.DeletedMemoryAccessException;
import dev.oakmap.OakMap;
import dev.oakmap.OakMapBuilder;
import dev.oakmap.OakScopedWriteBuffer;
import dev.oakmap.OakUnscopedBuffer;
import dev.oakmap.OakZeroCopyMap;
import dev.oakmap.common.OakCommonTypes;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;

/**
 * The operations of the model-based fuzz tests, and how each runs on a {@link NavigableMap}: the
 * same code runs on the OakMap (or one of its views) and on the TreeMap model (or the same view
 * of it), and the results are compared. Zero-copy operations, which only OakMap has, are run on
 * the model through their {@code java.util} equivalents.
 *
 * <p>Results are normalized for comparison: entries become {@code "k=v"}, exceptions become
 * {@code "!SimpleClassName"} (so both maps must throw the same kind of exception).
 */
final class FuzzOps {

    private FuzzOps() {
    }

    enum Kind {
        GET, CONTAINS, PUT, PUT_IF_ABSENT, REMOVE, REMOVE_KV, REPLACE, REPLACE_KV,
        COMPUTE, COMPUTE_IF_PRESENT, COMPUTE_IF_ABSENT, MERGE,
        ZC_GET, ZC_PUT, ZC_PUT_IF_ABSENT, ZC_REMOVE, ZC_INCREMENT, ZC_COMPUTE_IF_PRESENT, ZC_SCAN,
        CEILING, FLOOR, HIGHER, LOWER, CEILING_ENTRY, FLOOR_ENTRY, HIGHER_ENTRY, LOWER_ENTRY,
        FIRST_KEY, LAST_KEY, FIRST_ENTRY, LAST_ENTRY, POLL_FIRST, POLL_LAST,
        SIZE, ITER_REMOVE, COLLECTION_REMOVE, CHECK_VIEW
    }

    /** One step of a view chain: 0 subMap, 1 headMap, 2 tailMap, 3 descendingMap. */
    record ViewStep(int kind, int from, boolean fromInclusive, int to, boolean toInclusive) {
        @Override
        public String toString() {
            return switch (kind) {
                case 0 -> ".subMap(" + from + "," + fromInclusive + "," + to + "," + toInclusive + ")";
                case 1 -> ".headMap(" + to + "," + toInclusive + ")";
                case 2 -> ".tailMap(" + from + "," + fromInclusive + ")";
                default -> ".descendingMap()";
            };
        }
    }

    /** An operation: its kind, a key, a value, an extra selector, applied to a view chain. */
    record Op(Kind kind, int key, long value, int param, List<ViewStep> view) {
        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder("map");
            view.forEach(sb::append);
            return sb.append('.').append(kind).append('(').append(key).append(", ").append(value)
                    .append(", p=").append(param).append(')').toString();
        }
    }

    static OakMap<Integer, Long> newOak() {
        return new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER, OakCommonTypes.LONG_SERIALIZER,
                OakCommonTypes.INTEGER_COMPARATOR)
                .chunkCapacity(4)
                .blockSize(1 << 16)
                .memoryCapacity(16L << 20)
                .build();
    }

    static NavigableMap<Integer, Long> view(NavigableMap<Integer, Long> root, List<ViewStep> steps) {
        NavigableMap<Integer, Long> m = root;
        for (ViewStep s : steps) {
            m = switch (s.kind()) {
                case 0 -> m.subMap(s.from(), s.fromInclusive(), s.to(), s.toInclusive());
                case 1 -> m.headMap(s.to(), s.toInclusive());
                case 2 -> m.tailMap(s.from(), s.fromInclusive());
                default -> m.descendingMap();
            };
        }
        return m;
    }

    /** Runs {@code op} on the root map or model, returning its normalized result. */
    static Object run(NavigableMap<Integer, Long> root, Op op) {
        NavigableMap<Integer, Long> m;
        try {
            m = view(root, op.view());
        } catch (RuntimeException e) {
            return "!view:" + e.getClass().getSimpleName();
        }
        try {
            return norm(apply(m, op));
        } catch (RuntimeException e) {
            return "!" + e.getClass().getSimpleName();
        }
    }

    static Long computeFn(Integer k, Long v) {
        if (v == null) {
            return 1L;
        }
        return v >= 4 ? null : v + 1;
    }

    static Long mergeFn(Long a, Long b) {
        long s = a + b;
        return s >= 6 ? null : s;
    }

    static void increment(OakScopedWriteBuffer b) {
        OakCommonTypes.LONG_SERIALIZER.serialize(OakCommonTypes.LONG_SERIALIZER.deserialize(b) + 1, b);
    }

    static Long readLong(OakUnscopedBuffer b) {
        return b.transform(OakCommonTypes.LONG_SERIALIZER::deserialize);
    }

    static Integer readInt(OakUnscopedBuffer b) {
        return b.transform(OakCommonTypes.INTEGER_SERIALIZER::deserialize);
    }

    private static Object apply(NavigableMap<Integer, Long> m, Op op) {
        int k = op.key();
        long v = op.value();
        OakZeroCopyMap<Integer, Long> zc = m instanceof OakMap<Integer, Long> oak ? oak.zc() : null;
        return switch (op.kind()) {
            case GET -> m.get(k);
            case CONTAINS -> m.containsKey(k);
            case PUT -> m.put(k, v);
            case PUT_IF_ABSENT -> m.putIfAbsent(k, v);
            case REMOVE -> m.remove(k);
            case REMOVE_KV -> m.remove(k, v);
            case REPLACE -> m.replace(k, v);
            case REPLACE_KV -> m.replace(k, v, v + op.param());
            case COMPUTE -> m.compute(k, FuzzOps::computeFn);
            case COMPUTE_IF_PRESENT -> m.computeIfPresent(k, (kk, old) -> old >= 4 ? null : old * 2);
            case COMPUTE_IF_ABSENT -> m.computeIfAbsent(k, kk -> op.param() == 0 ? null : (long) kk);
            case MERGE -> m.merge(k, v, FuzzOps::mergeFn);
            case ZC_GET -> {
                if (zc == null) {
                    yield m.get(k);
                }
                OakUnscopedBuffer b = zc.get(k);
                yield b == null ? null : readLong(b);
            }
            case ZC_PUT -> {
                if (zc == null) {
                    m.put(k, v);
                } else {
                    zc.put(k, v);
                }
                yield null;
            }
            case ZC_PUT_IF_ABSENT -> zc == null ? m.putIfAbsent(k, v) == null : zc.putIfAbsent(k, v);
            case ZC_REMOVE -> zc == null ? m.remove(k) != null : zc.remove(k);
            case ZC_INCREMENT -> {
                if (zc != null) {
                    yield zc.putIfAbsentComputeIfPresent(k, v, FuzzOps::increment);
                }
                Long old = m.get(k);
                m.put(k, old == null ? v : old + 1);
                yield old == null;
            }
            case ZC_COMPUTE_IF_PRESENT -> zc == null ? m.computeIfPresent(k, (kk, old) -> old + 1) != null
                    : zc.computeIfPresent(k, FuzzOps::increment);
            case ZC_SCAN -> zcScan(m, zc, op.param());
            case CEILING -> m.ceilingKey(k);
            case FLOOR -> m.floorKey(k);
            case HIGHER -> m.higherKey(k);
            case LOWER -> m.lowerKey(k);
            case CEILING_ENTRY -> m.ceilingEntry(k);
            case FLOOR_ENTRY -> m.floorEntry(k);
            case HIGHER_ENTRY -> m.higherEntry(k);
            case LOWER_ENTRY -> m.lowerEntry(k);
            case FIRST_KEY -> m.firstKey();
            case LAST_KEY -> m.lastKey();
            case FIRST_ENTRY -> m.firstEntry();
            case LAST_ENTRY -> m.lastEntry();
            case POLL_FIRST -> m.pollFirstEntry();
            case POLL_LAST -> m.pollLastEntry();
            case SIZE -> m.size() + "/" + m.isEmpty();
            case ITER_REMOVE -> iterRemove(m, op.param(), (int) v);
            case COLLECTION_REMOVE -> switch (op.param() % 4) {
                case 0 -> m.keySet().remove(k);
                case 1 -> m.values().remove(v);
                case 2 -> m.entrySet().remove(Map.entry(k, v));
                default -> m.descendingKeySet().remove(k);
            };
            case CHECK_VIEW -> describe(m);
        };
    }

    /** Every way of reading a view, in one comparable list. */
    static List<Object> describe(NavigableMap<Integer, Long> m) {
        List<Object> out = new ArrayList<>();
        out.add(new ArrayList<>(m.keySet()));
        out.add(new ArrayList<>(m.navigableKeySet()));
        out.add(new ArrayList<>(m.descendingKeySet()));
        out.add(new ArrayList<>(m.navigableKeySet().descendingSet()));
        out.add(new ArrayList<>(m.values()));
        out.add(norm(new ArrayList<>(m.entrySet())));
        out.add(norm(new ArrayList<>(m.descendingMap().entrySet())));
        out.add(m.size());
        out.add(m.isEmpty());
        return out;
    }

    private static List<Object> zcScan(NavigableMap<Integer, Long> m, OakZeroCopyMap<Integer, Long> zc, int param) {
        List<Object> out = new ArrayList<>();
        if (zc == null) {
            for (Map.Entry<Integer, Long> e : m.entrySet()) {
                out.add(switch (param % 4) {
                    case 0 -> e.getKey();
                    case 1 -> e.getValue();
                    default -> e.getKey() + "=" + e.getValue();
                });
            }
            return out;
        }
        switch (param % 4) {
            case 0 -> zc.keyStreamSet().forEach(b -> out.add(readInt(b)));
            case 1 -> zc.values().forEach(b -> out.add(readLong(b)));
            case 2 -> zc.entrySet().forEach(e -> out.add(readInt(e.getKey()) + "=" + readLong(e.getValue())));
            default -> zc.entryStreamSet().forEach(e -> out.add(readInt(e.getKey()) + "=" + readLong(e.getValue())));
        }
        return out;
    }

    /**
     * Walks one of the view's collections with an iterator, removing (with {@code Iterator.remove})
     * the elements whose key (or value) is congruent to {@code residue} mod 3; returns what it saw.
     */
    private static List<Object> iterRemove(NavigableMap<Integer, Long> m, int which, int residue) {
        Collection<?> c = switch (which % 6) {
            case 0 -> m.keySet();
            case 1 -> m.values();
            case 2 -> m.entrySet();
            case 3 -> m.descendingKeySet();
            case 4 -> m.descendingMap().entrySet();
            default -> m.navigableKeySet().descendingSet();
        };
        List<Object> seen = new ArrayList<>();
        for (Iterator<?> it = c.iterator(); it.hasNext(); ) {
            Object e = it.next();
            seen.add(norm(e));
            long num = e instanceof Map.Entry<?, ?> en ? (Integer) en.getKey() : ((Number) e).longValue();
            if (Math.floorMod(num, 3) == residue % 3) {
                it.remove();
            }
        }
        return seen;
    }

    static Object norm(Object o) {
        if (o instanceof Map.Entry<?, ?> e) {
            return e.getKey() + "=" + e.getValue();
        }
        if (o instanceof List<?> l) {
            List<Object> out = new ArrayList<>(l.size());
            l.forEach(x -> out.add(norm(x)));
            return out;
        }
        return o;
    }

    /** For the multi-threaded test: a read that may see a removal between the lookup and the read. */
    static Long zcGetOrNull(OakZeroCopyMap<Integer, Long> zc, int key) {
        OakUnscopedBuffer b = zc.get(key);
        if (b == null) {
            return null;
        }
        try {
            return readLong(b);
        } catch (DeletedMemoryAccessException e) {
            return null;
        }
    }
}
