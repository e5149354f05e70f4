package dev.oakmap.examples.druid;

import java.util.Arrays;

/**
 * A {@link DimFilter} translated to dictionary codes: for each dimension, the sorted codes it
 * accepts, or {@code null} for "any". Values the dictionary has never seen match nothing.
 */
final class CompiledFilter {

    private final int[][] accepted;

    private CompiledFilter(int[][] accepted) {
        this.accepted = accepted;
    }

    static CompiledFilter compile(DimFilter filter, IndexSchema schema, Dictionary[] dictionaries) {
        int[][] acc = new int[schema.dimensionCount()][];
        add(filter, schema, dictionaries, acc);
        return new CompiledFilter(acc);
    }

    private static void add(DimFilter f, IndexSchema schema, Dictionary[] dictionaries, int[][] acc) {
        switch (f) {
            case DimFilter.All a -> { }
            case DimFilter.And and -> and.filters().forEach(g -> add(g, schema, dictionaries, acc));
            case DimFilter.In in -> {
                int d = schema.dimensionIndex(in.dimension());
                int[] codes = in.values().stream().mapToInt(dictionaries[d]::lookup).filter(c -> c >= 0)
                        .sorted().distinct().toArray();
                acc[d] = acc[d] == null ? codes : intersect(acc[d], codes);
            }
        }
    }

    private static int[] intersect(int[] a, int[] b) {
        return Arrays.stream(a).filter(c -> Arrays.binarySearch(b, c) >= 0).toArray();
    }

    /** @return whether a fact with these dimension codes passes */
    boolean matches(int[] dims) {
        for (int d = 0; d < accepted.length; d++) {
            int[] a = accepted[d];
            if (a != null && Arrays.binarySearch(a, dims[d]) < 0) {
                return false;
            }
        }
        return true;
    }
}
