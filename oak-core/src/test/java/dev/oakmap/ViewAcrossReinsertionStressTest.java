package dev.oakmap;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Zero-copy views held across the removal and re-insertion of their key: each worker owns its
 * keys (so it knows their mappings exactly), holds a view of a mapping, updates it in place,
 * removes the key and inserts it again (a value of the same size, so the freed slice is the
 * likeliest to be handed out again), while the other workers do the same to neighbouring keys,
 * so that chunks of 4 are rebalanced (and, with placement, their pairs moved) all the time,
 * under every memory scheme, with blocks of 4 KiB reused whole.
 *
 * <p>Checked: a view shows its own mapping (its key and generation, with every in-place
 * increment made before the read) until the key is removed; after that every read throws
 * {@link DeletedMemoryAccessException} and never shows the re-inserted mapping's bytes or
 * another key's. Seeded; the interleavings are not, so this is coverage.
 */
class ViewAcrossReinsertionStressTest {

    /** A value: key, generation, counter, in one fixed-size long triple. */
    private static final OakSerializer<long[]> TRIPLE = new OakSerializer<>() {
        @Override
        public void serialize(long[] v, OakScopedWriteBuffer b) {
            b.putLong(0, v[0]);
            b.putLong(8, v[1]);
            b.putLong(16, v[2]);
        }

        @Override
        public long[] deserialize(OakScopedReadBuffer b) {
            return new long[]{b.getLong(0), b.getLong(8), b.getLong(16)};
        }

        @Override
        public int calculateSize(long[] v) {
            return 24;
        }
    };

    @ParameterizedTest(name = "keys={0} values={1} place={2}")
    @CsvSource({"NOVA, NOVA, false", "NOVA, NOVA, true", "LOCK_BASED, LOCK_BASED, false", "GROW_ONLY, GROW_ONLY, false",
            "NOVA, LOCK_BASED, false"})
    void viewsNeverShowTheNextMapping(MemoryScheme keyScheme, MemoryScheme valueScheme, boolean place) throws Exception {
        int workers = 3;
        int keysPerWorker = 4;
        int rounds = 4_000 * TestMaps.scale();
        String ctx = "views keys=" + keyScheme + " values=" + valueScheme + " place=" + place;
        boolean growOnly = valueScheme == MemoryScheme.GROW_ONLY;
        OakMapBuilder<Integer, long[]> b = TestMaps.builder(TRIPLE, 4).keyMemory(keyScheme).valueMemory(valueScheme)
                .blockSize(growOnly ? 1L << 20 : 4096)
                .memoryCapacity(growOnly ? 32L * TestMaps.scale() << 20 : 8L << 20);
        b.placePairs = place;
        AtomicLong deletedReads = new AtomicLong();
        try (OakMap<Integer, long[]> map = b.build()) {
            List<TestMaps.Task> tasks = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                int worker = w;
                Random rnd = new Random(7L * 1000 + w);
                tasks.add(() -> {
                    long[] generation = new long[keysPerWorker];
                    for (int i = 0; i < keysPerWorker; i++) {
                        int k = i * workers + worker; // interleaved with the other workers' keys
                        map.put(k, new long[]{k, 0, 0});
                    }
                    for (int r = 0; r < rounds; r++) {
                        int i = rnd.nextInt(keysPerWorker);
                        int k = i * workers + worker;
                        long gen = generation[i];
                        OakUnscopedBuffer view = map.zc().get(k);
                        int incs = rnd.nextInt(3);
                        for (int n = 0; n < incs; n++) {
                            assertTrue(map.zc().computeIfPresent(k, wb -> wb.putLong(16, wb.getLong(16) + 1)), ctx);
                        }
                        long[] seen = view.transform(TRIPLE::deserialize);
                        assertEquals(List.of((long) k, gen, (long) incs), List.of(seen[0], seen[1], seen[2]),
                                ctx + ": live view of key " + k);
                        if (rnd.nextBoolean()) {
                            assertTrue(map.zc().remove(k), ctx);
                        } else {
                            assertEquals(gen, map.remove(k)[1], ctx);
                        }
                        generation[i] = ++gen;
                        map.put(k, new long[]{k, gen, 0});
                        try {
                            long[] stale = view.transform(TRIPLE::deserialize);
                            throw new AssertionError(ctx + ": view of removed key " + k + " generation " + (gen - 1)
                                    + " read " + stale[0] + "/" + stale[1] + "/" + stale[2]);
                        } catch (DeletedMemoryAccessException expected) {
                            deletedReads.incrementAndGet();
                        }
                    }
                });
            }
            TestMaps.runConcurrently(ctx, 120, tasks);
            assertEquals((long) workers * rounds, deletedReads.get(), ctx);
            assertEquals(workers * keysPerWorker, map.size(), ctx);
        }
    }
}
