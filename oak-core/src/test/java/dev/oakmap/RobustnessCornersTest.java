package dev.oakmap;

import dev.oakmap.common.ByteStringComparator;
import dev.oakmap.common.OakCommonTypes;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Robustness corners of the public helpers not covered by {@link MisuseTest} and {@link ContractCornersTest}. */
class RobustnessCornersTest {

    /**
     * {@link ByteStringComparator}'s class comment promises NullPointerException for null keys;
     * the comparators that serialize key objects threw OakSerializationException instead (the
     * serializer's NullPointerException wrapped as a serializer failure).
     */
    @Test
    void byteStringComparatorsRejectNullKeysWithNullPointerException() {
        ByteStringComparator<String> bySerialized = ByteStringComparator.bySerializedForm(OakCommonTypes.STRING_SERIALIZER);
        ByteStringComparator<String> of = ByteStringComparator.of(String::compareTo, OakCommonTypes.STRING_SERIALIZER);
        assertThrows(NullPointerException.class, () -> bySerialized.compareKeys(null, "a"));
        assertThrows(NullPointerException.class, () -> bySerialized.compareKeys("a", null));
        assertThrows(NullPointerException.class, () -> bySerialized.keyPrefix(null));
        assertThrows(NullPointerException.class, () -> of.keyPrefix(null));
        assertThrows(NullPointerException.class, () -> of.compareKeys(null, "a"));
        assertThrows(NullPointerException.class, () -> OakCommonTypes.STRING_COMPARATOR.compareKeys(null, "a"));
        assertThrows(NullPointerException.class, () -> OakCommonTypes.BYTE_ARRAY_COMPARATOR.compareKeys(null, new byte[0]));
        // and they still work on keys, also ones differing only after the 8-byte prefix
        assertEquals(0, Integer.signum(bySerialized.compareKeys("abcdefghX", "abcdefghX")));
        assertEquals(-1, Integer.signum(bySerialized.compareKeys("abcdefghX", "abcdefghY")));
        assertEquals(-1, Integer.signum(bySerialized.compareKeys("abcdefgh", "abcdefgh\u0000")));
        assertEquals(bySerialized.keyPrefix("abcdefghX"), bySerialized.keyPrefix("abcdefghY"));
    }
}
