package dev.oakmap;

import dev.oakmap.common.OakCommonTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The map under virtual threads, where waiting differs from platform threads: a virtual thread
 * that waits for another by yielding keeps its carrier busy, and a holder that is unmounted (its
 * {@code compute} function sleeps or blocks) then never gets a carrier back. Before waiters
 * parked, the first test hung (its holder sat in a 300 ms sleep for over 60 s behind 400
 * yielding waiters).
 */
class VirtualThreadsTest {

    private static OakMap<Integer, Long> map(MemoryScheme scheme) {
        return new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER, OakCommonTypes.LONG_SERIALIZER,
                OakCommonTypes.INTEGER_COMPARATOR).keyMemory(scheme).valueMemory(scheme).build();
    }

    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void writersAndReadersWaitingForABlockedWriterLetItFinish(MemoryScheme scheme) {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            try (OakMap<Integer, Long> map = map(scheme)) {
                map.put(1, 0L);
                int writers = 200;
                int readers = 200;
                CountDownLatch inside = new CountDownLatch(1);
                List<Future<?>> reads = new ArrayList<>();
                try (ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor()) {
                    executor.submit(() -> map.zc().computeIfPresent(1, b -> {
                        inside.countDown();
                        try {
                            Thread.sleep(200); // unmounted while it holds the value's write lock
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        b.putLong(0, b.getLong(0) + 1);
                    }));
                    assertTrue(inside.await(30, TimeUnit.SECONDS));
                    for (int i = 0; i < writers; i++) {
                        executor.submit(() -> map.zc().computeIfPresent(1, b -> b.putLong(0, b.getLong(0) + 1)));
                    }
                    for (int i = 0; i < readers; i++) {
                        reads.add(executor.submit(() -> map.get(1)));
                    }
                }
                assertEquals(writers + 1, map.get(1), "every increment, the blocked one included");
                for (Future<?> f : reads) {
                    long seen = (Long) f.get();
                    assertTrue(seen >= 1 && seen <= writers + 1, "a read after the blocked write: " + seen);
                }
            }
        });
    }

    @Test
    void aVirtualThreadPerTaskSeesAConsistentMap() throws Exception {
        try (OakMap<Integer, Long> map = map(MemoryScheme.NOVA)) {
            int keys = 500;
            int tasks = 20_000;
            try (ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int i = 0; i < tasks; i++) {
                    int k = i % keys;
                    executor.submit(() -> map.merge(k, 1L, Long::sum));
                }
            }
            assertEquals(keys, map.size());
            for (int k = 0; k < keys; k++) {
                assertEquals((long) tasks / keys, map.get(k), "increments of key " + k);
            }
        }
    }
}
