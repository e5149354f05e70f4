package dev.oakmap;

import org.junit.jupiter.api.Test;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Spliterator;
import java.util.function.IntFunction;
import java.util.stream.BaseStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Use after close, swept over the whole public surface: every public method of the map, its
 * sub-map and descending views, its key, value and entry collections (legacy and zero-copy,
 * plain and stream), and its zero-copy views, called by reflection on a closed map with ordinary
 * arguments. Each call must end in one of:
 * <ul>
 * <li>{@link OakClosedException};
 * <li>{@link UnsupportedOperationException}, for an operation the view never supports;
 * <li>a lazy object (a view, iterator, spliterator or stream) whose first use throws
 *     {@link OakClosedException};
 * <li>a value from a method that is documented to work after close or that never touches the
 *     map ({@link #ANSWER_AFTER_CLOSE}).
 * </ul>
 * Anything else (a stale answer, another exception, an arena's failure) is listed in the failure.
 * The sweep finds new methods by itself, so a method added later without a closed check fails it.
 */
class ClosedMapSweepTest {

    /** Methods that may answer after close: memory accessors, the comparator, identity and close. */
    private static final Set<String> ANSWER_AFTER_CLOSE = Set.of("memoryCapacity", "memoryReserved", "memoryUsed",
            "comparator", "close", "hashCode", "equals", "toString", "getClass");

    @Test
    void everyPublicMethodFailsCleanlyOnAClosedMap() {
        OakMap<Integer, Long> map = TestMaps.intLongMap(8);
        for (int i = 0; i < 100; i++) {
            map.put(i, (long) i);
        }
        Map<String, Object> targets = new LinkedHashMap<>();
        targets.put("map", map);
        targets.put("subMap", map.subMap(10, 90));
        targets.put("descendingMap", map.descendingMap());
        targets.put("keySet", map.keySet());
        targets.put("navigableKeySet", map.navigableKeySet());
        targets.put("descendingKeySet", map.descendingKeySet());
        targets.put("values", map.values());
        targets.put("entrySet", map.entrySet());
        targets.put("zc", map.zc());
        targets.put("subMap.zc", map.subMap(10, 90).zc());
        targets.put("zc.keySet", map.zc().keySet());
        targets.put("zc.values", map.zc().values());
        targets.put("zc.entrySet", map.zc().entrySet());
        targets.put("zc.keyStreamSet", map.zc().keyStreamSet());
        targets.put("zc.valueStreamSet", map.zc().valueStreamSet());
        targets.put("zc.entryStreamSet", map.zc().entryStreamSet());
        map.close();

        List<String> failures = new ArrayList<>();
        int calls = 0;
        for (Map.Entry<String, Object> t : targets.entrySet()) {
            for (Method m : publicMethods(t.getValue())) {
                calls++;
                String what = t.getKey() + "." + m.getName() + List.of(m.getParameterTypes());
                String problem = outcome(t.getValue(), m, t.getKey().toLowerCase().contains("entry"));
                if (problem != null) {
                    failures.add(what + ": " + problem);
                }
            }
        }
        assertTrue(calls > 300, "the sweep called only " + calls + " methods");
        assertEquals(List.of(), failures, failures.size() + " of " + calls + " calls misbehaved after close");
    }

    /** @return the methods callable on {@code target} through its public interfaces and class */
    private static List<Method> publicMethods(Object target) {
        List<Method> methods = new ArrayList<>();
        for (Method m : target.getClass().getMethods()) {
            if (!Modifier.isStatic(m.getModifiers()) && m.getDeclaringClass() != Object.class) {
                methods.add(m);
            }
        }
        return methods;
    }

    /** @return null if calling {@code m} on {@code target} ended acceptably, else what happened */
    private static String outcome(Object target, Method m, boolean entries) {
        Object result;
        try {
            m.setAccessible(true);
            result = m.invoke(target, arguments(m.getParameterTypes(), entries));
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            return cause instanceof OakClosedException || cause instanceof UnsupportedOperationException ? null
                    : "threw " + cause;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return "could not be called: " + e;
        }
        if (ANSWER_AFTER_CLOSE.contains(m.getName())) {
            return null;
        }
        if (result instanceof Map<?, ?> || result instanceof Collection<?> || result instanceof Iterator<?>
                || result instanceof Spliterator<?> || result instanceof BaseStream<?, ?>
                || result instanceof OakZeroCopyMap<?, ?>) {
            return firstUseFails(result);
        }
        return "answered " + result;
    }

    /** @return null if the first use of lazy object {@code o} throws OakClosedException */
    private static String firstUseFails(Object o) {
        try {
            switch (o) {
                case Map<?, ?> map -> map.size();
                case Collection<?> c -> c.iterator().hasNext();
                case Iterator<?> it -> it.hasNext();
                case Spliterator<?> s -> s.tryAdvance(x -> { });
                case BaseStream<?, ?> s -> s.iterator().hasNext();
                case OakZeroCopyMap<?, ?> zc -> ((OakZeroCopyMap<Integer, ?>) zc).get(KEY);
                default -> throw new AssertionError(o);
            }
        } catch (OakClosedException e) {
            return null;
        } catch (RuntimeException e) {
            return "returned " + o.getClass().getSimpleName() + ", whose first use threw " + e;
        }
        return "returned " + o.getClass().getSimpleName() + ", which works after close";
    }

    /** A key inside every view's range, present when the map was closed. */
    private static final int KEY = 50;

    /** Ordinary arguments: key {@link #KEY}, value 1, an entry of them for entry collections, no-op functions. */
    private static Object[] arguments(Class<?>[] types, boolean entries) {
        Object[] args = new Object[types.length];
        for (int i = 0; i < types.length; i++) {
            args[i] = argument(types[i], entries);
        }
        return args;
    }

    private static Object argument(Class<?> t, boolean entries) {
        if (t == int.class || t == Integer.class) {
            return KEY;
        }
        if (t == long.class || t == Long.class) {
            return 1L;
        }
        if (t == boolean.class) {
            return true;
        }
        if (t == Object.class) {
            return entries ? Map.entry(KEY, 1L) : KEY;
        }
        if (t == Object[].class) {
            return new Object[0];
        }
        if (t == Collection.class) {
            return List.of(entries ? Map.entry(KEY, 1L) : KEY);
        }
        if (t == Map.class) {
            return Map.of(KEY, 1L);
        }
        if (t == Comparator.class) {
            return Comparator.naturalOrder();
        }
        if (t == IntFunction.class) {
            return (IntFunction<Object[]>) Object[]::new;
        }
        if (t.isInterface()) { // functions: do nothing, answer false / 1
            return Proxy.newProxyInstance(t.getClassLoader(), new Class<?>[] {t}, (p, m, a) -> {
                if (m.getDeclaringClass() == Object.class) {
                    return m.getName().equals("equals") ? p == a[0] : m.getName().equals("hashCode") ? 0 : "fn";
                }
                Class<?> r = m.getReturnType();
                return r == boolean.class ? false : r == long.class ? 1L : r == int.class ? 0 : r == void.class ? null : 1L;
            });
        }
        throw new AssertionError("no argument for " + t);
    }
}
