package dev.oakmap;

import dev.oakmap.common.OakCommonTypes;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Spliterator;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Contract corners of the views of an {@link OakMap} used as a plain
 * {@link java.util.concurrent.ConcurrentNavigableMap}: views of views, their collections, iterators
 * and spliterators, compared with what the JDK interfaces require (and with
 * {@link java.util.concurrent.ConcurrentSkipListMap} where the interfaces leave a choice).
 */
class ViewContractTest {

    private static OakMap<Integer, Integer> intMap(int chunkCapacity) {
        return new OakMapBuilder<>(OakCommonTypes.INTEGER_SERIALIZER, OakCommonTypes.INTEGER_SERIALIZER,
                OakCommonTypes.INTEGER_COMPARATOR).chunkCapacity(chunkCapacity).memoryCapacity(16L << 20)
                .blockSize(1L << 20).build();
    }

    // ------------------------------------------------------------------------------------------
    // spliterators

    /**
     * Checks that every part {@code sp} splits into, down to single batches, reports SORTED with a
     * comparator that orders its elements as they come (a null comparator means natural order,
     * which neither a descending key set nor entries follow). @return the elements, in order
     */
    private static <T> List<T> checkSortedParts(String ctx, Spliterator<T> sp) {
        List<T> out = new ArrayList<>();
        Spliterator<T> part = sp.trySplit();
        if (part != null) {
            out.addAll(checkSortedParts(ctx + ", split part", part));
            out.addAll(checkSortedParts(ctx, sp));
            return out;
        }
        assertTrue(sp.hasCharacteristics(Spliterator.SORTED), ctx + ": SORTED");
        assertTrue(sp.hasCharacteristics(Spliterator.ORDERED), ctx + ": ORDERED");
        Comparator<? super T> cmp = sp.getComparator();
        assertNotNull(cmp, ctx + ": a null comparator claims natural order");
        List<T> mine = new ArrayList<>();
        sp.forEachRemaining(mine::add);
        for (int i = 1; i < mine.size(); i++) {
            assertTrue(cmp.compare(mine.get(i - 1), mine.get(i)) < 0,
                    ctx + ": its comparator disagrees with its order at " + mine.get(i - 1) + ", " + mine.get(i));
        }
        out.addAll(mine);
        return out;
    }

    /**
     * A small view (within one chunk) splits by handing out a batch of its elements; the batch is
     * an array spliterator, which reports SORTED with a null comparator. That said "natural
     * order" for the elements of a descending key set and for entries, against the
     * {@link Spliterator#getComparator()} contract.
     */
    @Test
    void batchesSplitOffASortedSpliteratorReportTheViewsComparator() {
        for (int chunk : new int[] {4, 64}) {
            try (OakMap<Integer, Integer> map = intMap(chunk)) {
                for (int k = 0; k < 40; k += 2) {
                    map.put(k, -k);
                }
                List<Function<OakMap<Integer, Integer>, Spliterator<?>>> views = List.of(
                        m -> m.keySet().spliterator(),
                        m -> m.descendingKeySet().spliterator(),
                        m -> m.descendingMap().navigableKeySet().spliterator(),
                        m -> m.entrySet().spliterator(),
                        m -> m.descendingMap().entrySet().spliterator(),
                        m -> m.subMap(3, true, 31, false).descendingKeySet().spliterator(),
                        m -> m.descendingMap().headMap(10, true).entrySet().spliterator(),
                        m -> m.navigableKeySet().descendingSet().tailSet(20, false).spliterator());
                for (int v = 0; v < views.size(); v++) {
                    String ctx = "chunk " + chunk + ", view " + v;
                    List<?> all = checkSortedParts(ctx, views.get(v).apply(map));
                    List<Object> iterated = new ArrayList<>();
                    views.get(v).apply(map).forEachRemaining(iterated::add);
                    assertTrue(all.equals(iterated), ctx + ": the parts, in order, are the view: " + all);
                }
                // a started spliterator splits by batches too
                Spliterator<Integer> sp = map.descendingKeySet().spliterator();
                assertTrue(sp.tryAdvance(k -> { }));
                checkSortedParts("started descending key set", sp);
            }
        }
    }
}
