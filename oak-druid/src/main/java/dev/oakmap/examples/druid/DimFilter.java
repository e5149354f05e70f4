package dev.oakmap.examples.druid;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A filter on dimension values, evaluated on the dictionary codes in the keys (the index never
 * decodes a key to filter it). A {@code null} value stands for "missing".
 */
public sealed interface DimFilter {

    /** @return a filter that keeps every fact */
    static DimFilter all() {
        return All.INSTANCE;
    }

    /** @return a filter keeping facts whose {@code dimension} equals {@code value} ({@code null}: missing) */
    static DimFilter eq(String dimension, String value) {
        return new In(dimension, Collections.singleton(value));
    }

    /** @return a filter keeping facts whose {@code dimension} is one of {@code values} */
    static DimFilter in(String dimension, String... values) {
        return new In(dimension, new LinkedHashSet<>(Arrays.asList(values)));
    }

    /** @return a filter keeping facts that pass every one of {@code filters} */
    static DimFilter and(DimFilter... filters) {
        return new And(List.of(filters));
    }

    /** Keeps everything. */
    enum All implements DimFilter {
        /** The only instance. */
        INSTANCE
    }

    /**
     * Keeps facts whose dimension has one of the given values.
     *
     * @param dimension the dimension name
     * @param values the accepted values (may contain {@code null}, meaning missing)
     */
    record In(String dimension, Set<String> values) implements DimFilter {
        /** Copies the values. */
        public In {
            Objects.requireNonNull(dimension, "dimension");
            values = Collections.unmodifiableSet(new LinkedHashSet<>(Objects.requireNonNull(values, "values")));
        }
    }

    /**
     * Keeps facts that pass all the filters.
     *
     * @param filters the conjuncts
     */
    record And(List<DimFilter> filters) implements DimFilter {
        /** Copies the list. */
        public And {
            filters = List.copyOf(filters);
        }
    }
}
