package dev.oakmap.internal.map;

import dev.oakmap.common.OakCommonTypes;
import dev.oakmap.MemoryScheme;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Which way scans touch ahead: by block-region position where native access is enabled on
 * Linux, else through each block's segment. The suites run in both configurations (see the
 * {@code no-native-access} execution in the module's build), and this says which one ran, so
 * that a configuration that silently fell back would be noticed.
 */
class TouchPathTest {

    @Test
    void scansTouchByRegionPositionExactlyWhenNativeAccessIsEnabledOnLinux() {
        boolean expected = InternalOakMap.class.getModule().isNativeAccessEnabled()
                && System.getProperty("os.name", "").toLowerCase().contains("linux")
                && !"false".equalsIgnoreCase(System.getProperty("oak.blockRegion"))
                && !"false".equalsIgnoreCase(System.getProperty("oak.hugePages"));
        InternalOakMap<Long, Long> map = new InternalOakMap<>(OakCommonTypes.LONG_SERIALIZER,
                OakCommonTypes.LONG_SERIALIZER, OakCommonTypes.LONG_COMPARATOR, 64L << 20, 1 << 20, 64, 0.5,
                MemoryScheme.NOVA, MemoryScheme.NOVA);
        try {
            assertEquals(expected, map.values().touchesByPosition(), "values");
            assertEquals(expected, map.keys().slices().touchesByPosition(), "keys");
        } finally {
            map.close();
        }
    }
}
