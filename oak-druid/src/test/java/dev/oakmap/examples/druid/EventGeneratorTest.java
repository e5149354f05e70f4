package dev.oakmap.examples.druid;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The generator is repeatable, time-ordered and skewed as configured. */
class EventGeneratorTest {

    @Test
    void sameSeedSameEventsOtherSeedOtherEvents() {
        GeneratorConfig c = IndexFixtures.config(5);
        GeneratedEvents a = EventGenerator.generate(c, 2_000);
        GeneratedEvents b = EventGenerator.generate(c, 2_000);
        GeneratedEvents other = EventGenerator.generate(c.withSeed(6), 2_000);
        for (int i = 0; i < a.size(); i++) {
            assertEquals(a.event(i), b.event(i));
        }
        assertNotEquals(IndexFixtures.events(a), IndexFixtures.events(other));
    }

    @Test
    void timestampsAdvanceAtTheConfiguredRate() {
        GeneratorConfig c = IndexFixtures.config(5).withEventsPerSecond(1_000);
        GeneratedEvents g = EventGenerator.generate(c, 50_000);
        for (int i = 1; i < g.size(); i++) {
            assertTrue(g.event(i - 1).timestamp() <= g.event(i).timestamp(), "time order at " + i);
        }
        double seconds = (g.event(g.size() - 1).timestamp() - c.startTime()) / 1000.0;
        assertEquals(50.0, seconds, 2.0, "50,000 events at 1,000 per second");
    }

    @Test
    void dimensionValuesFollowZipf() {
        GeneratorConfig c = IndexFixtures.config(5);
        GeneratedEvents g = EventGenerator.generate(c, 40_000);
        int card = c.cardinalities().get(3);
        int[] counts = new int[card];
        GeneratedEvents.Cursor cur = g.cursor();
        for (int i = 0; i < g.size(); i++) {
            String v = cur.position(i).dimension(3);
            counts[Integer.parseInt(v.substring(v.indexOf('-') + 1))]++;
        }
        Zipf z = new Zipf(card, c.zipfExponent());
        for (int r : new int[]{0, 1, 9}) {
            double expected = z.probability(r) * g.size();
            assertEquals(expected, counts[r], 5 * Math.sqrt(expected), "rank " + r);
        }
        assertTrue(counts[0] > 10 * counts[card - 1] / 2 + 1, "skewed");
    }

    @Test
    void extraMetricsAreDeterministicAndInRange() {
        GeneratorConfig c = IndexFixtures.config(5).withExtraMetrics(3);
        GeneratedEvents g = EventGenerator.generate(c, 100);
        GeneratedEvents.Cursor cur = g.cursor().position(42);
        double m = cur.extraMetric(2);
        assertEquals(m, EventGenerator.generate(c, 100).cursor().position(42).extraMetric(2));
        assertTrue(m >= 0 && m < 1000);
        assertEquals(3, g.event(1).extraMetrics().length);
    }

    @Test
    void webConfigurationsOfManyDimensionsCapTheirCardinalities() {
        // the cardinality grew by x4 in a long before the cap: 4^32 wrapped to 0, and --dims 32 or
        // more failed with "cardinalities must be positive"
        GeneratorConfig c = GeneratorConfig.web(1, 40);
        assertEquals(40, c.cardinalities().size());
        assertEquals(java.util.List.of(4, 16, 64), c.cardinalities().subList(0, 3));
        assertTrue(c.cardinalities().subList(8, 40).stream().allMatch(n -> n == 100_000), c.cardinalities().toString());
    }
}
