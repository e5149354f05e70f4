package dev.oakmap;

import com.google.common.collect.testing.ConcurrentNavigableMapTestSuiteBuilder;
import com.google.common.collect.testing.SampleElements;
import com.google.common.collect.testing.TestSortedMapGenerator;
import com.google.common.collect.testing.features.CollectionFeature;
import com.google.common.collect.testing.features.CollectionSize;
import com.google.common.collect.testing.features.MapFeature;
import junit.framework.Test;
import junit.framework.TestCase;
import junit.framework.TestFailure;
import junit.framework.TestResult;
import junit.framework.TestSuite;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * Runs Guava testlib's {@code ConcurrentNavigableMapTestSuiteBuilder} (with its derived sub-map,
 * descending-map and collection-view suites) against {@link OakMap}, each JUnit 3 case as a JUnit 5
 * dynamic test. Two configurations: the default chunk capacity, and chunks of 4 entries so that
 * every test map splits and rebalances.
 */
class GuavaConformanceTest {

    /** Maps created by the case currently running; closed after it. */
    private static final List<OakMap<?, ?>> OPEN_MAPS = Collections.synchronizedList(new ArrayList<>());

    @TestFactory
    Stream<DynamicNode> guavaConcurrentNavigableMapSuite() {
        List<DynamicNode> nodes = new ArrayList<>();
        int total = 0;
        for (int chunkCapacity : new int[] {OakMapBuilder.DEFAULT_CHUNK_CAPACITY, 4}) {
            TestSuite s = suite("OakMap[chunkCapacity=" + chunkCapacity + "]", chunkCapacity);
            total += s.countTestCases();
            nodes.add(toNode(s));
        }
        System.out.println("GuavaConformanceTest: " + total + " Guava testlib cases");
        return nodes.stream();
    }

    static TestSuite suite(String name, int chunkCapacity) {
        return ConcurrentNavigableMapTestSuiteBuilder.using(new Generator(chunkCapacity))
                .named(name)
                .withFeatures(
                        MapFeature.GENERAL_PURPOSE,
                        CollectionFeature.SUPPORTS_ITERATOR_REMOVE,
                        CollectionFeature.KNOWN_ORDER,
                        CollectionSize.ANY)
                .createTestSuite();
    }

    /**
     * Converts lazily, and forgets each JUnit 3 test once converted: the testers keep their map in
     * a field, so a suite that stayed reachable would keep tens of thousands of (closed) maps'
     * on-heap metadata alive.
     */
    private static DynamicNode toNode(Test test) {
        if (test instanceof TestSuite suite) {
            ArrayDeque<Test> children = new ArrayDeque<>(Collections.list(suite.tests()));
            Iterator<DynamicNode> nodes = new Iterator<>() {
                @Override
                public boolean hasNext() {
                    return !children.isEmpty();
                }

                @Override
                public DynamicNode next() {
                    return toNode(children.removeFirst());
                }
            };
            return DynamicContainer.dynamicContainer(String.valueOf(suite.getName()),
                    StreamSupport.stream(Spliterators.spliteratorUnknownSize(nodes, Spliterator.ORDERED), false));
        }
        if (test instanceof TestCase testCase) {
            return DynamicTest.dynamicTest(testCase.getName(), () -> run(testCase));
        }
        throw new IllegalArgumentException("unexpected JUnit 3 test type: " + test.getClass());
    }

    private static void run(TestCase testCase) throws Throwable {
        TestResult result = new TestResult();
        try {
            testCase.run(result);
        } finally {
            closeOpenMaps();
        }
        if (result.errorCount() > 0) {
            throw first(result.errors().nextElement());
        }
        if (result.failureCount() > 0) {
            throw first(result.failures().nextElement());
        }
    }

    private static Throwable first(TestFailure failure) {
        return failure.thrownException();
    }

    private static void closeOpenMaps() {
        synchronized (OPEN_MAPS) {
            for (OakMap<?, ?> m : OPEN_MAPS) {
                m.close();
            }
            OPEN_MAPS.clear();
        }
    }

    /** Block size of the test maps (property {@code oak.guava.blockSize}, default 64 KiB). */
    private static final long BLOCK_SIZE = Long.getLong("oak.guava.blockSize", 64L << 10);

    /**
     * A small map for one test: small blocks, taken lazily, so tens of thousands of maps are cheap
     * (every block is zeroed when allocated, so the block size dominates the suite's run time).
     */
    static OakMap<Integer, String> newMap(int chunkCapacity) {
        return new OakMapBuilder<>(new IntSerializer(), new StringSerializer(), new IntComparator())
                .memoryCapacity(64L << 20)
                .blockSize(BLOCK_SIZE)
                .chunkCapacity(chunkCapacity)
                .build();
    }

    /** Integer keys 10..50 and String values; below/above samples for the sub-map suites. */
    private static final class Generator implements TestSortedMapGenerator<Integer, String> {
        private final int chunkCapacity;

        Generator(int chunkCapacity) {
            this.chunkCapacity = chunkCapacity;
        }

        @Override
        public SampleElements<Map.Entry<Integer, String>> samples() {
            return new SampleElements<>(
                    Map.entry(10, "ten"), Map.entry(20, "twenty"), Map.entry(30, "thirty"),
                    Map.entry(40, "forty"), Map.entry(50, "fifty"));
        }

        @Override
        @SuppressWarnings("unchecked")
        public SortedMap<Integer, String> create(Object... elements) {
            OakMap<Integer, String> map = newMap(chunkCapacity);
            OPEN_MAPS.add(map);
            for (Object o : elements) {
                Map.Entry<Integer, String> e = (Map.Entry<Integer, String>) o;
                map.put(e.getKey(), e.getValue());
            }
            return map;
        }

        @Override
        @SuppressWarnings("unchecked")
        public Map.Entry<Integer, String>[] createArray(int length) {
            return (Map.Entry<Integer, String>[]) new Map.Entry<?, ?>[length];
        }

        @Override
        public Iterable<Map.Entry<Integer, String>> order(List<Map.Entry<Integer, String>> insertionOrder) {
            List<Map.Entry<Integer, String>> sorted = new ArrayList<>(insertionOrder);
            sorted.sort(Map.Entry.comparingByKey());
            return sorted;
        }

        @Override
        public Integer[] createKeyArray(int length) {
            return new Integer[length];
        }

        @Override
        public String[] createValueArray(int length) {
            return new String[length];
        }

        @Override
        public Map.Entry<Integer, String> belowSamplesLesser() {
            return Map.entry(-5, "minus five");
        }

        @Override
        public Map.Entry<Integer, String> belowSamplesGreater() {
            return Map.entry(0, "zero");
        }

        @Override
        public Map.Entry<Integer, String> aboveSamplesLesser() {
            return Map.entry(100, "hundred");
        }

        @Override
        public Map.Entry<Integer, String> aboveSamplesGreater() {
            return Map.entry(1000, "thousand");
        }
    }

    // Minimal serializers for the tests of this package (independent of the shared ready-made ones).

    /** A 4-byte big-endian int. */
    static final class IntSerializer implements OakSerializer<Integer> {
        @Override
        public void serialize(Integer object, OakScopedWriteBuffer target) {
            target.putInt(0, object);
        }

        @Override
        public Integer deserialize(OakScopedReadBuffer source) {
            return source.getInt(0);
        }

        @Override
        public int calculateSize(Integer object) {
            return Integer.BYTES;
        }
    }

    /** Signed int order, on objects and on serialized ints. */
    static final class IntComparator implements OakComparator<Integer> {
        @Override
        public int compareKeys(Integer key1, Integer key2) {
            return Integer.compare(key1, key2);
        }

        @Override
        public int compareSerializedKeys(OakScopedReadBuffer k1, OakScopedReadBuffer k2) {
            return Integer.compare(k1.getInt(0), k2.getInt(0));
        }

        @Override
        public int compareKeyAndSerializedKey(Integer key, OakScopedReadBuffer serializedKey) {
            return Integer.compare(key, serializedKey.getInt(0));
        }
    }

    /** UTF-8 bytes, no length prefix (the slice capacity is the length). */
    static final class StringSerializer implements OakSerializer<String> {
        @Override
        public void serialize(String object, OakScopedWriteBuffer target) {
            byte[] b = object.getBytes(StandardCharsets.UTF_8);
            target.putBytes(0, b, 0, b.length);
        }

        @Override
        public String deserialize(OakScopedReadBuffer source) {
            byte[] b = new byte[source.capacity()];
            source.getBytes(0, b, 0, b.length);
            return new String(b, StandardCharsets.UTF_8);
        }

        @Override
        public int calculateSize(String object) {
            return object.getBytes(StandardCharsets.UTF_8).length;
        }
    }
}
