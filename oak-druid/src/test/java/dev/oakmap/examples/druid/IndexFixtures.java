package dev.oakmap.examples.druid;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/** Shared set-up of the index tests: seeded events and ingestion on one or more threads. */
final class IndexFixtures {

    static final long OFF_HEAP = 256L << 20;

    private IndexFixtures() {
    }

    /** Four dimensions of cardinalities 3, 8, 30, 200, 3,000 users, 2,000 events per second. */
    static GeneratorConfig config(long seed) {
        return new GeneratorConfig(seed, List.of("country", "device", "page", "campaign"), List.of(3, 8, 30, 200), 1.0,
                3_000, 0.8, 1_735_689_600_000L, 2_000, 2);
    }

    static List<Event> events(GeneratedEvents g) {
        List<Event> out = new ArrayList<>(g.size());
        for (int i = 0; i < g.size(); i++) {
            out.add(g.event(i));
        }
        return out;
    }

    /** Ingests every event on {@code threads} threads, thread t taking events t, t + threads, ... */
    static void ingest(IncrementalIndex index, GeneratedEvents events, int threads) throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts.add(Thread.ofPlatform().name("ingest-" + t).start(() -> {
                try {
                    GeneratedEvents.Cursor c = events.cursor();
                    for (int i = id; i < events.size(); i += threads) {
                        index.ingest(c.position(i));
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        if (failure.get() != null) {
            throw new AssertionError("ingestion failed", failure.get());
        }
    }
}
