package dev.oakmap.examples.druid;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A thread-safe, append-only dictionary of the values of one string column: each distinct value
 * gets the next int code, for the life of the index. Code {@link #NULL_CODE} (0) stands for a
 * missing value, so keys stay fixed-width.
 *
 * <p>Lookups of known values are lock-free (one {@link ConcurrentHashMap} read); a new value is
 * appended under a lock. Decoding reads a volatile array that is replaced, copied, when it grows:
 * a code obtained from {@link #encode} is always present in any array published afterwards.
 */
public final class Dictionary {

    /** The code of a missing ({@code null}) value. */
    public static final int NULL_CODE = 0;

    private final ConcurrentHashMap<String, Integer> codes = new ConcurrentHashMap<>();
    private volatile String[] values = new String[16];
    private int size = 1; // code 0 is null; guarded by this

    /**
     * @return the code of {@code value}, assigning the next one if it is new; {@link #NULL_CODE}
     *     for {@code null}
     */
    public int encode(String value) {
        if (value == null) {
            return NULL_CODE;
        }
        Integer code = codes.get(value);
        return code != null ? code : append(value);
    }

    private synchronized int append(String value) {
        Integer code = codes.get(value);
        if (code != null) {
            return code;
        }
        String[] v = values;
        if (size == v.length) {
            v = Arrays.copyOf(v, v.length * 2);
        }
        int c = size++;
        v[c] = value;
        values = v;          // publish before the code becomes visible
        codes.put(value, c);
        return c;
    }

    /**
     * @return the code of {@code value} if it was ever encoded, {@link #NULL_CODE} for {@code null},
     *     or -1 if the value is unknown (so no stored row has it)
     */
    public int lookup(String value) {
        if (value == null) {
            return NULL_CODE;
        }
        Integer code = codes.get(value);
        return code == null ? -1 : code;
    }

    /**
     * @return the value of {@code code} ({@code null} for {@link #NULL_CODE})
     * @throws IllegalArgumentException if no value has that code
     */
    public String decode(int code) {
        String[] v = values;
        if (code == NULL_CODE) {
            return null;
        }
        if (code < 0 || code >= v.length || v[code] == null) {
            throw new IllegalArgumentException("no dictionary value has code " + code);
        }
        return v[code];
    }

    /** @return the number of distinct non-null values encoded so far */
    public int size() {
        return codes.size();
    }
}
