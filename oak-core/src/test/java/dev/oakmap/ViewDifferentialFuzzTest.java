package dev.oakmap;

import dev.oakmap.common.OakCommonTypes;
import org.junit.jupiter.api.Test;

import java.util.AbstractMap.SimpleEntry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NavigableSet;
import java.util.Random;
import java.util.Set;
import java.util.Spliterator;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Differential fuzzing of the legacy API through views of views: each step derives a random chain
 * of views from an {@link OakMap} and from a {@link ConcurrentSkipListMap} holding the same
 * mappings ({@code descendingMap}, {@code headMap}, {@code tailMap} and {@code subMap} in their
 * inclusive and {@code SortedMap} forms, then possibly {@code navigableKeySet},
 * {@code keySet} or {@code descendingKeySet} and {@code descendingSet}, {@code headSet},
 * {@code tailSet}, {@code subSet} of those), and runs one random operation of the
 * {@code Map}, {@code ConcurrentMap}, {@code NavigableMap}, {@code SequencedMap},
 * {@code NavigableSet} or {@code Collection} interfaces on both: point operations (with keys out
 * of the view's range, null keys and values, keys of the wrong type), the compute family with
 * functions that return null or throw, navigation, polls, bulk removals through the key, value
 * and entry collections, {@code equals} and {@code hashCode} against {@code java.util} copies,
 * {@code toArray}, iterator scripts ({@code next}, {@code remove} twice or too early,
 * {@code hasNext}, {@code forEachRemaining}), spliterators split all the way and parallel
 * streams. Results, and the simple names of exceptions thrown, must agree, and so must the whole
 * contents after every step.
 *
 * <p>Where the interfaces leave a choice the comparison allows it: an argument both null and out
 * of range may raise either {@code NullPointerException} or {@code IllegalArgumentException};
 * comparators are compared by how they order keys (the skiplist's natural order is a null
 * comparator, Oak's never is); spliterators are compared by the elements their parts yield, in
 * order, not by where they split; the iterator entries' {@code setValue}, which OakMap documents
 * to write through, is not called. Keys of the wrong type are only given to non-empty maps (an
 * empty OakMap may answer null where the skiplist throws, as documented).
 *
 * <p>Seeded; {@code -Doak.test.seed=...} replays one seed.
 */
class ViewDifferentialFuzzTest {

    private static final int SEEDS = 40;
    private static final int STEPS = 150;

    /** Thrown by the functions given to the compute family. */
    private static final class Boom extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Boom() {
            super("boom");
        }
    }

    /** One seeded run: the random source and the map's configuration. */
    private static final class Fuzz {

        private final Random r;
        /** Keys are drawn from [LOW, high), plus rare extremes. */
        private static final int LOW = -2;
        private final int high;
        /** With TestMaps' comparator (no key prefixes) instead of OakCommonTypes' (prefixes). */
        private final boolean plainComparator;

        private Fuzz(long seed) {
            r = new Random(seed);
            high = r.nextInt(3) == 0 ? 70 : 18;
            plainComparator = r.nextBoolean();
        }

        private OakMap<Integer, Integer> newOak() {
            OakSerializer<Integer> keys = plainComparator ? TestMaps.INT_KEY : OakCommonTypes.INTEGER_SERIALIZER;
            OakComparator<Integer> order = plainComparator ? TestMaps.INT_CMP : OakCommonTypes.INTEGER_COMPARATOR;
            return new OakMapBuilder<>(keys, OakCommonTypes.INTEGER_SERIALIZER, order)
                    .chunkCapacity(4).memoryCapacity(16L << 20).blockSize(1L << 20).build();
        }

        // ------------------------------------------------------------------------------------------
        // Normalized results

        private static String sign(int x) {
            return x < 0 ? "-" : x > 0 ? "+" : "0";
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        private static String norm(Object o) {
            if (o instanceof Object[] a) {
                return a.getClass().getComponentType().getSimpleName() + a.length + Arrays.toString(a);
            }
            if (o instanceof Comparator c) {
                return "comparator " + sign(c.compare(1, 2)) + sign(c.compare(2, 1)) + sign(c.compare(3, 3));
            }
            return String.valueOf(o);
        }

        /** The normalized result of {@code s}, or "!" and the simple name of what it threw. */
        private static String outcome(Supplier<Object> s) {
            try {
                return norm(s.get());
            } catch (Throwable t) {
                return "!" + t.getClass().getSimpleName();
            }
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        private static Comparator naturalIfNull(Comparator c) {
            return c == null ? Comparator.naturalOrder() : c;
        }

        /** Splits {@code sp} as far as it goes; collects the parts' elements in encounter order. */
        @SuppressWarnings({"unchecked", "rawtypes"})
        private static List<Object> splitAll(Spliterator sp) {
            List<Object> out = new ArrayList<>();
            Spliterator part = sp.trySplit();
            if (part != null) {
                out.addAll(splitAll(part));
                out.addAll(splitAll(sp));
            } else {
                sp.forEachRemaining(out::add);
            }
            return out;
        }

        /** Runs an iterator script: n next, r remove, h hasNext, f forEachRemaining. */
        private static String script(Iterator<?> it, String s) {
            StringBuilder sb = new StringBuilder();
            for (char c : s.toCharArray()) {
                try {
                    switch (c) {
                        case 'n' -> sb.append(norm(it.next()));
                        case 'r' -> {
                            it.remove();
                            sb.append("removed");
                        }
                        case 'f' -> {
                            List<Object> l = new ArrayList<>();
                            it.forEachRemaining(l::add);
                            sb.append(l);
                        }
                        default -> sb.append(it.hasNext());
                    }
                } catch (Throwable t) {
                    sb.append('!').append(t.getClass().getSimpleName());
                }
                sb.append(' ');
            }
            return sb.toString();
        }

        // ------------------------------------------------------------------------------------------
        // Random arguments

        private int key() {
            if (r.nextInt(40) == 0) {
                return r.nextBoolean() ? Integer.MIN_VALUE : Integer.MAX_VALUE;
            }
            return r.nextInt(high - LOW) + LOW;
        }

        private int value() {
            return r.nextInt(6);
        }

        /** A key argument: usually a key, sometimes null, or (if the map is not empty) a String. */
        private Object keyArgument(boolean nonEmpty) {
            int x = r.nextInt(20);
            if (x == 0) {
                return null;
            }
            if (x == 1 && nonEmpty) {
                return "s";
            }
            return key();
        }

        private String randomScript() {
            StringBuilder sb = new StringBuilder();
            for (int i = r.nextInt(12); i > 0; i--) {
                sb.append("nnnrrhf".charAt(r.nextInt(7)));
            }
            return sb.toString();
        }

        // ------------------------------------------------------------------------------------------
        // View derivations

        /** A random derivation from a map (to a map or a key set) or from a key set (to a key set). */
        @SuppressWarnings({"unchecked", "rawtypes"})
        private Function<Object, Object> derivation(Object from, StringBuilder path) {
            int a = key();
            int b = key();
            boolean ai = r.nextBoolean();
            boolean bi = r.nextBoolean();
            if (from instanceof NavigableMap) {
                switch (r.nextInt(12)) {
                    case 0, 1 -> {
                        path.append(".descendingMap()");
                        return o -> ((NavigableMap) o).descendingMap();
                    }
                    case 2 -> {
                        path.append(".headMap(").append(a).append(", ").append(ai).append(')');
                        return o -> ((NavigableMap) o).headMap(a, ai);
                    }
                    case 3 -> {
                        path.append(".tailMap(").append(a).append(", ").append(ai).append(')');
                        return o -> ((NavigableMap) o).tailMap(a, ai);
                    }
                    case 4, 5 -> {
                        path.append(".subMap(").append(a).append(", ").append(ai).append(", ").append(b).append(", ")
                                .append(bi).append(')');
                        return o -> ((NavigableMap) o).subMap(a, ai, b, bi);
                    }
                    case 6 -> {
                        path.append(".headMap(").append(a).append(')');
                        return o -> ((ConcurrentNavigableMap) o).headMap(a);
                    }
                    case 7 -> {
                        path.append(".tailMap(").append(a).append(')');
                        return o -> ((ConcurrentNavigableMap) o).tailMap(a);
                    }
                    case 8 -> {
                        path.append(".subMap(").append(a).append(", ").append(b).append(')');
                        return o -> ((ConcurrentNavigableMap) o).subMap(a, b);
                    }
                    case 9 -> {
                        path.append(".navigableKeySet()");
                        return o -> ((NavigableMap) o).navigableKeySet();
                    }
                    case 10 -> {
                        path.append(".keySet()");
                        return o -> ((ConcurrentNavigableMap) o).keySet();
                    }
                    default -> {
                        path.append(".descendingKeySet()");
                        return o -> ((NavigableMap) o).descendingKeySet();
                    }
                }
            }
            switch (r.nextInt(8)) {
                case 0, 1 -> {
                    path.append(".descendingSet()");
                    return o -> ((NavigableSet) o).descendingSet();
                }
                case 2 -> {
                    path.append(".headSet(").append(a).append(", ").append(ai).append(')');
                    return o -> ((NavigableSet) o).headSet(a, ai);
                }
                case 3 -> {
                    path.append(".tailSet(").append(a).append(", ").append(ai).append(')');
                    return o -> ((NavigableSet) o).tailSet(a, ai);
                }
                case 4 -> {
                    path.append(".subSet(").append(a).append(", ").append(ai).append(", ").append(b).append(", ")
                            .append(bi).append(')');
                    return o -> ((NavigableSet) o).subSet(a, ai, b, bi);
                }
                case 5 -> {
                    path.append(".headSet(").append(a).append(')');
                    return o -> ((NavigableSet) o).headSet(a);
                }
                case 6 -> {
                    path.append(".tailSet(").append(a).append(')');
                    return o -> ((NavigableSet) o).tailSet(a);
                }
                default -> {
                    path.append(".subSet(").append(a).append(", ").append(b).append(')');
                    return o -> ((NavigableSet) o).subSet(a, b);
                }
            }
        }

        // ------------------------------------------------------------------------------------------
        // Operations

        /** A random operation on a view like {@code on}; its arguments are drawn now, described in {@code d}. */
        @SuppressWarnings({"unchecked", "rawtypes"})
        private Function<Object, Object> operation(Object on, StringBuilder d, boolean nonEmpty) {
            int k = key();
            int k2 = key();
            int v = value();
            int v2 = value();
            Object ka = keyArgument(nonEmpty);
            Integer vn = ka instanceof Integer && r.nextInt(15) == 0 ? null : v; // one bad argument at a time
            String scr = randomScript();
            int n = r.nextInt(8);
            List<Object> keys = new ArrayList<>();
            for (int i = r.nextInt(5); i > 0; i--) {
                keys.add(key());
            }
            int fn = r.nextInt(4);
            BiFunction<Integer, Integer, Integer> bf = (x, y) -> switch (fn) {
                case 0 -> null;
                case 1 -> throw new Boom();
                case 2 -> y == null ? 7 : y + 1;
                default -> v2;
            };
            Function<Integer, Integer> f = x -> switch (fn) {
                case 0 -> null;
                case 1 -> throw new Boom();
                default -> v2;
            };
            boolean split = r.nextBoolean();
            d.append(" k=").append(k).append(" k2=").append(k2).append(" ka=").append(ka).append(" v=").append(v)
                    .append(" vn=").append(vn).append(" v2=").append(v2).append(" fn=").append(fn).append(" script=")
                    .append(scr).append(" n=").append(n).append(" keys=").append(keys);
            if (on instanceof NavigableMap) {
                int op = r.nextInt(84);
                d.insert(0, " map op " + op);
                return o -> {
                    ConcurrentNavigableMap m = (ConcurrentNavigableMap) o;
                    return switch (op) {
                        case 0 -> m.get(ka);
                        case 1 -> m.containsKey(ka);
                        case 2 -> m.containsValue(vn);
                        case 3 -> m.put(ka, vn);
                        case 4 -> m.putIfAbsent(ka, vn);
                        case 5 -> m.remove(ka);
                        case 6 -> m.remove(ka, vn);
                        case 7 -> m.replace(ka, vn);
                        case 8 -> m.replace(ka, vn, v2);
                        case 9 -> m.compute(ka, bf);
                        case 10 -> m.computeIfAbsent(ka, f);
                        case 11 -> m.computeIfPresent(ka, bf);
                        case 12 -> m.merge(ka, v, (x, y) -> bf.apply((Integer) x, (Integer) y));
                        case 13 -> m.getOrDefault(ka, -1);
                        case 14 -> {
                            TreeMap<Integer, Integer> t = new TreeMap<>();
                            t.put(k, v);
                            t.put(k2, v2);
                            m.putAll(t);
                            yield m;
                        }
                        case 15 -> {
                            List<Object> l = new ArrayList<>();
                            m.forEach((x, y) -> l.add(x + "=" + y));
                            yield l;
                        }
                        case 16 -> {
                            m.replaceAll(bf);
                            yield m;
                        }
                        case 17 -> m.size() + " " + m.isEmpty();
                        case 18 -> {
                            m.clear();
                            yield m;
                        }
                        case 19 -> m.firstKey();
                        case 20 -> m.lastKey();
                        case 21 -> m.firstEntry();
                        case 22 -> m.lastEntry();
                        case 23 -> m.pollFirstEntry();
                        case 24 -> m.pollLastEntry();
                        case 25 -> m.lowerKey(ka) + " " + m.lowerEntry(k);
                        case 26 -> m.floorKey(ka) + " " + m.floorEntry(k);
                        case 27 -> m.ceilingKey(ka) + " " + m.ceilingEntry(k);
                        case 28 -> m.higherKey(ka) + " " + m.higherEntry(k);
                        case 29 -> norm(naturalIfNull(m.comparator()));
                        case 30 -> m.equals(new TreeMap<>(m)) + " " + new TreeMap<>(m).equals(m) + " "
                                + new HashMap<>(m).equals(m) + " " + m.equals(new HashMap<>(m));
                        case 31 -> m.hashCode() == new TreeMap<>(m).hashCode();
                        case 32 -> m.equals(m.descendingMap()) + " " + m.equals(Map.of()) + " " + m.equals("x") + " "
                                + m.equals(Map.of("a", 1));
                        case 33 -> m.toString();
                        case 34 -> {
                            Map.Entry e = m.firstEntry();
                            yield e == null ? null : outcome(() -> e.setValue(9)) + " " + e;
                        }
                        case 35 -> {
                            Map.Entry e = m.ceilingEntry(k);
                            yield e == null ? null
                                    : e.equals(Map.entry(e.getKey(), e.getValue())) + " " + e.hashCode() + " " + e;
                        }
                        case 36 -> script(m.entrySet().iterator(), scr);
                        case 37 -> script(m.keySet().iterator(), scr);
                        case 38 -> script(m.values().iterator(), scr);
                        case 39 -> script(m.descendingKeySet().iterator(), scr);
                        case 40 -> script(m.navigableKeySet().descendingIterator(), scr);
                        case 41 -> m.entrySet().contains(new SimpleEntry<>(ka, vn)) + " " + m.entrySet().contains("x");
                        case 42 -> m.entrySet().remove(new SimpleEntry<>(ka, vn)) + " " + m.entrySet().remove("x");
                        case 43 -> m.values().contains(vn);
                        case 44 -> m.values().remove(vn);
                        case 45 -> m.values().removeAll(List.of(v, v2));
                        case 46 -> m.values().retainAll(List.of(v, v2));
                        case 47 -> m.values().removeIf(x -> (Integer) x == v);
                        case 48 -> Arrays.toString(m.values().toArray()) + norm(m.values().toArray(new Integer[n]));
                        case 49 -> Arrays.toString(m.entrySet().toArray())
                                + norm(m.entrySet().toArray(new Map.Entry[n]));
                        case 50 -> m.entrySet().hashCode() == new HashSet<>(m.entrySet()).hashCode();
                        case 51 -> m.entrySet().equals(new HashSet<>(m.entrySet())) + " "
                                + new HashSet<>(m.entrySet()).equals(m.entrySet()) + " "
                                + m.entrySet().equals(Set.of());
                        case 52 -> m.entrySet().removeIf(e -> ((Map.Entry<Integer, Integer>) e).getValue() == v);
                        case 53 -> m.entrySet().retainAll(List.of(Map.entry(k, v), Map.entry(k2, v2)));
                        case 54 -> m.entrySet().removeAll(List.of(Map.entry(k, v), Map.entry(k2, v2)));
                        case 55 -> m.entrySet().add(Map.entry(k, v));
                        case 56 -> m.values().add(v);
                        case 57 -> splitAll(m.entrySet().spliterator());
                        case 58 -> splitAll(m.values().spliterator());
                        case 59 -> splitAll(m.keySet().spliterator()) + " "
                                + norm(naturalIfNull(m.keySet().spliterator().getComparator()));
                        case 60 -> m.values().toString() + m.entrySet() + m.keySet() + m.descendingKeySet();
                        case 61 -> {
                            List<Object> l = new ArrayList<>();
                            for (Object o2 : m.entrySet()) {
                                Map.Entry e = (Map.Entry) o2;
                                l.add(e.getKey() + ":" + e.getValue() + ":" + e.hashCode() + ":"
                                        + e.equals(Map.entry(e.getKey(), e.getValue())));
                            }
                            yield l;
                        }
                        case 62 -> m.entrySet().size() + " " + m.values().size() + " " + m.keySet().size() + " "
                                + m.entrySet().isEmpty() + m.values().isEmpty() + m.keySet().isEmpty();
                        case 63 -> m.values().stream().mapToInt(x -> (Integer) x).sum() + " "
                                + m.keySet().stream().count();
                        case 64 -> {
                            m.putAll(Map.of());
                            yield m;
                        }
                        case 65 -> m.putIfAbsent(k, v) + " " + m.get(k) + " " + m.replace(k, v2) + " "
                                + m.replace(k, v2, v);
                        case 66 -> m.containsKey(k) + " " + m.get(k) + " " + m.remove(k) + " " + m.remove(k2, v2);
                        case 67 -> {
                            m.entrySet().clear();
                            yield m;
                        }
                        case 68 -> m.merge(k, v, (x, y) -> null);
                        case 69 -> m.compute(k, (x, y) -> y == null ? v : null);
                        case 70 -> {
                            m.putAll(m.descendingMap());
                            yield m;
                        }
                        case 71 -> {
                            m.putAll(new TreeMap<>(Map.of(k, v, k2 == k ? k + 1 : k2, v2)));
                            yield m;
                        }
                        case 72 -> m.descendingKeySet().parallelStream().toList() + " "
                                + m.keySet().stream().sorted(Comparator.reverseOrder()).toList();
                        case 73 -> splitAll(m.descendingMap().entrySet().spliterator());
                        case 74 -> m.keySet().parallelStream().toList() + " "
                                + m.entrySet().parallelStream().map(Object::toString).toList()
                                + m.values().parallelStream().toList();
                        case 75 -> m.reversed() + " " + m.sequencedKeySet().reversed() + m.sequencedValues().reversed()
                                + m.sequencedEntrySet().reversed();
                        case 76 -> m.sequencedKeySet().getFirst() + " " + m.sequencedEntrySet().getLast();
                        case 77 -> m.sequencedKeySet().removeFirst() + " " + m;
                        case 78 -> m.sequencedValues().removeLast() + " " + m;
                        case 79 -> m.putFirst(k, v);
                        case 80 -> m.reversed().pollFirstEntry() + " " + m.reversed().firstEntry();
                        case 81 -> m.sequencedEntrySet().removeFirst() + " " + m;
                        case 82 -> m.keySet().parallelStream().sorted().toList() + " "
                                + m.keySet().parallelStream().skip(2).limit(3).toList();
                        default -> script(m.sequencedEntrySet().reversed().iterator(), scr);
                    };
                };
            }
            int op = r.nextInt(48);
            d.insert(0, " set op " + op);
            return o -> {
                NavigableSet s = (NavigableSet) o;
                return switch (op) {
                    case 0 -> s.contains(ka);
                    case 1 -> s.remove(ka);
                    case 2 -> s.add(k);
                    case 3 -> s.addAll(List.of(k));
                    case 4 -> s.first();
                    case 5 -> s.last();
                    case 6 -> s.pollFirst();
                    case 7 -> s.pollLast();
                    case 8 -> s.lower(ka);
                    case 9 -> s.floor(ka);
                    case 10 -> s.ceiling(ka);
                    case 11 -> s.higher(ka);
                    case 12 -> s.size() + " " + s.isEmpty();
                    case 13 -> {
                        s.clear();
                        yield s;
                    }
                    case 14 -> script(s.iterator(), scr);
                    case 15 -> script(s.descendingIterator(), scr);
                    case 16 -> Arrays.toString(s.toArray());
                    case 17 -> norm(s.toArray(new Integer[n]));
                    case 18 -> norm(s.toArray(Integer[]::new));
                    case 19 -> s.removeAll(keys);
                    case 20 -> s.retainAll(keys);
                    case 21 -> s.removeIf(x -> (Integer) x % 3 == 0);
                    case 22 -> s.containsAll(keys);
                    case 23 -> s.equals(new TreeSet<>(s)) + " " + new TreeSet<>(s).equals(s) + " "
                            + s.equals(new HashSet<>(s)) + " " + new HashSet<>(s).equals(s);
                    case 24 -> s.hashCode() == new HashSet<>(s).hashCode();
                    case 25 -> norm(naturalIfNull(s.comparator()));
                    case 26 -> splitAll(s.spliterator()) + " " + norm(naturalIfNull(s.spliterator().getComparator()));
                    case 27 -> s.toString();
                    case 28 -> s.equals(s.descendingSet()) + " " + s.equals(Set.of()) + " " + s.equals(List.of()) + " "
                            + s.equals(Set.of("a"));
                    case 29 -> s.stream().toList();
                    case 30 -> {
                        Spliterator sp = s.spliterator();
                        List<Object> l = new ArrayList<>();
                        if (split) {
                            sp.tryAdvance(l::add);
                        }
                        l.addAll(splitAll(sp));
                        yield l;
                    }
                    case 31 -> s.removeAll(new ArrayList<>(List.of(k, k2)));
                    case 32 -> s.containsAll(List.of());
                    case 33 -> s.descendingSet().descendingSet();
                    case 34 -> s.headSet(k, true).size() + " " + s.tailSet(k, false).size();
                    case 35 -> s.subSet(k, true, k, true) + " " + s.subSet(k, false, k, false)
                            + s.subSet(k, true, k, false);
                    case 36 -> s.retainAll(List.of());
                    case 37 -> s.removeAll(List.of());
                    case 38 -> s.contains(k) + " " + s.remove(k);
                    case 39 -> s.isEmpty() ? "empty" : s.first() + " " + s.last();
                    case 40 -> s.reversed() + " " + s.reversed().reversed();
                    case 41 -> s.getFirst() + " " + s.getLast();
                    case 42 -> s.removeFirst() + " " + s;
                    case 43 -> s.removeLast() + " " + s;
                    case 44 -> s.parallelStream().toList();
                    case 45 -> s.descendingSet().parallelStream().toList();
                    case 46 -> {
                        s.addFirst(k);
                        yield s;
                    }
                    default -> s.reversed().pollFirst() + " " + s.reversed().headSet(k);
                };
            };
        }

        // ------------------------------------------------------------------------------------------
        // The run

        /** Runs {@code steps} steps; @return null, or a description of the first disagreement */
        private String run(long seed, int steps) {
            try (OakMap<Integer, Integer> oak = newOak()) {
                ConcurrentSkipListMap<Integer, Integer> ref = new ConcurrentSkipListMap<>();
                for (int i = high > 20 ? 40 : 8; i > 0; i--) {
                    int k = key();
                    int v = value();
                    oak.put(k, v);
                    ref.put(k, v);
                }
                for (int step = 0; step < steps; step++) {
                    Object o = oak;
                    Object c = ref;
                    StringBuilder path = new StringBuilder("map");
                    for (int d = r.nextInt(5); d > 0; d--) {
                        Function<Object, Object> derive = derivation(c, path);
                        Object fo = o;
                        Object fc = c;
                        String fromOak = outcome(() -> derive.apply(fo).getClass() == null);
                        String fromRef = outcome(() -> derive.apply(fc).getClass() == null);
                        if (!fromOak.equals(fromRef)) {
                            return "seed " + seed + ", step " + step + ": deriving " + path + ": oak " + fromOak
                                    + ", skiplist " + fromRef;
                        }
                        if (fromRef.startsWith("!")) {
                            path.append(" (threw, not taken)");
                            break;
                        }
                        o = derive.apply(o);
                        c = derive.apply(c);
                    }
                    String before = ref.toString();
                    StringBuilder args = new StringBuilder();
                    Function<Object, Object> op = operation(c, args, !ref.isEmpty());
                    Object fo = o;
                    Object fc = c;
                    String fromOak = outcome(() -> op.apply(fo));
                    String fromRef = outcome(() -> op.apply(fc));
                    String ctx = "seed " + seed + ", step " + step + ": " + path + args + "\n  on " + before;
                    boolean bothNullOrRange = fromOak.matches("!(NullPointer|IllegalArgument)Exception")
                            && fromRef.matches("!(NullPointer|IllegalArgument)Exception");
                    if (!fromOak.equals(fromRef) && !(bothNullOrRange && args.toString().contains("null"))) {
                        return ctx + "\n  oak:      " + fromOak + "\n  skiplist: " + fromRef;
                    }
                    if (!oak.toString().equals(ref.toString()) || oak.size() != ref.size()) {
                        return ctx + "\n  contents: oak " + oak + " (size " + oak.size() + "), skiplist " + ref;
                    }
                    if (r.nextInt(10) == 0) { // keep the map from draining
                        int k = key();
                        int v = value();
                        oak.put(k, v);
                        ref.put(k, v);
                    }
                }
            }
            return null;
        }
    }

    @Test
    void viewsOfViewsBehaveLikeConcurrentSkipListMapViews() {
        long[] seeds = TestMaps.seeds(java.util.stream.LongStream.rangeClosed(1, SEEDS).toArray());
        List<String> failures = new ArrayList<>();
        for (long seed : seeds) {
            String failure = new Fuzz(seed).run(seed, STEPS);
            if (failure != null) {
                failures.add(failure);
            }
        }
        if (!failures.isEmpty()) {
            fail(failures.size() + " of " + seeds.length + " seeds disagree; the first ones:\n"
                    + String.join("\n", failures.subList(0, Math.min(5, failures.size()))));
        }
    }
}
