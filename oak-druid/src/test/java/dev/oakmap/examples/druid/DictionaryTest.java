package dev.oakmap.examples.druid;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The dictionary gives each value one code, also when threads race to add it. */
class DictionaryTest {

    @Test
    void concurrentEncodersAgreeOnEveryCode() throws Exception {
        Dictionary d = new Dictionary();
        int threads = 4;
        int values = 20_000;
        int[][] seen = new int[threads][values];
        int[] steps = {1, 3, 7, 9}; // coprime with 20,000: each thread visits every value, in its own order
        java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts.add(Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                    for (int i = 0; i < values; i++) {
                        int v = (int) ((long) i * steps[id] % values);
                        seen[id][v] = d.encode("v" + v);
                        assertEquals("v" + v, d.decode(seen[id][v]));
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        go.countDown();
        for (Thread t : ts) {
            t.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        Set<Integer> codes = new HashSet<>();
        for (int v = 0; v < values; v++) {
            for (int t = 1; t < threads; t++) {
                assertEquals(seen[0][v], seen[t][v], "value " + v);
            }
            codes.add(seen[0][v]);
        }
        assertEquals(values, codes.size());
        assertEquals(values, d.size());
    }

    @Test
    void nullIsCodeZeroAndUnknownValuesAreMinusOne() {
        Dictionary d = new Dictionary();
        assertEquals(Dictionary.NULL_CODE, d.encode(null));
        assertEquals(-1, d.lookup("x"));
        int x = d.encode("x");
        assertEquals(1, x);
        assertEquals(x, d.lookup("x"));
        assertThrows(IllegalArgumentException.class, () -> d.decode(7));
    }
}
