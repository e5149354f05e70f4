package dev.oakmap;

import dev.oakmap.common.OakCommonTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The map under virtual threads, where waiting differs from platform threads: a virtual thread
 * that waits for another by yielding keeps its carrier busy, and a holder that is unmounted (its
 * {@code compute} function sleeps or blocks) then never gets a carrier back. Before waiters
 * parked, the first test hung (its holder sat in a 300 ms sleep for over 60 s behind 400
 * yielding waiters). That test runs in a child JVM, so that a regression fails it in a minute
 * rather than hanging the suite.
 */
class VirtualThreadsTest {

    private static OakMap<Integer, Long> map(MemoryScheme scheme) {
        return new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER, OakCommonTypes.LONG_SERIALIZER,
                OakCommonTypes.INTEGER_COMPARATOR).keyMemory(scheme).valueMemory(scheme).build();
    }

    /**
     * Runs {@link BlockedWriter} for each scheme in a JVM of its own, killed after 60 seconds: a
     * build whose waiters yield hangs there, and its abandoned virtual threads would keep this
     * JVM's carriers busy after a timeout here (so the suite, not the test, would hang).
     */
    @ParameterizedTest
    @EnumSource(MemoryScheme.class)
    void writersAndReadersWaitingForABlockedWriterLetItFinish(MemoryScheme scheme) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        Process child = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                BlockedWriter.class.getName(), scheme.name())
                .redirectErrorStream(true)
                .start();
        child.getOutputStream().close();
        CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> {
            try (InputStream in = child.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "(output unreadable: " + e + ")";
            }
        });
        if (!child.waitFor(60, TimeUnit.SECONDS)) {
            child.destroyForcibly().waitFor();
            fail("hung: the blocked writer did not finish within 60 s (waiters starve it?)\n" + output.get());
        }
        assertEquals(0, child.exitValue(), "the child failed:\n" + output.get());
        assertTrue(output.get().contains(BlockedWriter.DONE), "the child did not finish:\n" + output.get());
    }

    /**
     * A {@code zc().computeIfPresent} whose function sleeps 200 ms (its virtual thread unmounted
     * while it holds the value's write lock), then 200 writers and 200 readers of the same key,
     * each on a virtual thread of its own: every increment must land, and every read must see the
     * blocked write. Exits with status 1 on a failed check.
     */
    static final class BlockedWriter {
        static final String DONE = "blocked writer finished";

        public static void main(String[] args) throws Exception {
            MemoryScheme scheme = MemoryScheme.valueOf(args[0]);
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
                            Thread.sleep(200);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        b.putLong(0, b.getLong(0) + 1);
                    }));
                    check(inside.await(30, TimeUnit.SECONDS), "the blocked writer never started");
                    for (int i = 0; i < writers; i++) {
                        executor.submit(() -> map.zc().computeIfPresent(1, b -> b.putLong(0, b.getLong(0) + 1)));
                    }
                    for (int i = 0; i < readers; i++) {
                        reads.add(executor.submit(() -> map.get(1)));
                    }
                }
                long total = map.get(1);
                check(total == writers + 1, "every increment, the blocked one included: " + total);
                for (Future<?> f : reads) {
                    long seen = (Long) f.get();
                    check(seen >= 1 && seen <= writers + 1, "a read after the blocked write: " + seen);
                }
            }
            System.out.println(DONE);
        }

        private static void check(boolean ok, String what) {
            if (!ok) {
                System.out.println("failed: " + what);
                System.exit(1);
            }
        }
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
