package dev.oakmap.lincheck;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Functions shared by the tests and their sequential specification, so both compute the same. */
final class LincheckOps {

    private LincheckOps() {
    }

    /** compute(): inserts 1 if absent, increments up to 3, then removes (covers all three outcomes). */
    static Long computeFn(Integer key, Long v) {
        if (v == null) {
            return 1L;
        }
        return v >= 3 ? null : v + 1;
    }

    /** merge(): adds, and removes the mapping once the sum reaches 5. */
    static Long mergeFn(Long a, Long b) {
        long sum = a + b;
        return sum >= 5 ? null : sum;
    }

    /** @return "key=value", or null for no entry */
    static String entry(Map.Entry<Integer, Long> e) {
        return e == null ? null : e.getKey() + "=" + e.getValue();
    }

    static List<String> render(Map<Integer, Long> m) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<Integer, Long> e : m.entrySet()) {
            out.add(e.getKey() + "=" + e.getValue());
        }
        return out;
    }
}
