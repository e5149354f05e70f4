package dev.oakmap.jmh;

import dev.oakmap.common.ByteStringComparator;
import dev.oakmap.common.OakCommonTypes;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Comparison of two serialized keys of {@code keySize} bytes that share their first
 * {@code commonPrefix} bytes (and differ just after, unless the prefix is the whole key), the
 * operation a map lookup repeats at every step of its search:
 * <ul>
 *   <li>{@link ByteStringComparator#compareSegments} on two native segments (the core of Oak's
 *       byte-wise comparators: {@code MemorySegment.mismatch});</li>
 *   <li>{@code OakCommonTypes.BYTE_ARRAY_COMPARATOR} through its scoped-buffer methods:
 *       serialized vs serialized, key object vs serialized, and the 8-byte key prefix;</li>
 *   <li>{@code OakCommonTypes.STRING_COMPARATOR} on serialized strings of as many ASCII chars;</li>
 *   <li>the skiplist's comparison, {@code Arrays.compareUnsigned} of two heap arrays.</li>
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
@State(Scope.Thread)
public class KeyCompareBench {

    /** Bytes shared by the two keys before they differ. */
    @Param({"0", "16", "99"})
    public int commonPrefix;

    /** Key size in bytes (and string length in chars). */
    @Param("100")
    public int keySize;

    private Arena arena;
    private byte[] heapA;
    private byte[] heapB;
    private MemorySegment segA;
    private MemorySegment segB;
    private SegmentBuffer bufA;
    private SegmentBuffer bufB;
    private SegmentBuffer strA;
    private SegmentBuffer strB;

    /** Builds the two keys, on the heap, off-heap, and as serialized strings. */
    @Setup(Level.Trial)
    public void setUp() {
        if (commonPrefix >= keySize) {
            throw new IllegalArgumentException("commonPrefix must be below keySize");
        }
        SplittableRandom r = new SplittableRandom(7);
        heapA = new byte[keySize];
        r.nextBytes(heapA);
        heapB = heapA.clone();
        heapA[commonPrefix] = 0x10;
        heapB[commonPrefix] = 0x70; // a < b, unsigned and signed
        for (int i = commonPrefix + 1; i < keySize; i++) {
            heapB[i] = (byte) r.nextInt();
        }
        arena = Arena.ofShared();
        segA = arena.allocate(keySize, 8).copyFrom(MemorySegment.ofArray(heapA));
        segB = arena.allocate(keySize, 8).copyFrom(MemorySegment.ofArray(heapB));
        bufA = new SegmentBuffer(segA);
        bufB = new SegmentBuffer(segB);
        strA = serialize(ascii(heapA));
        strB = serialize(ascii(heapB));
        if (ByteStringComparator.compareSegments(segA, segB) >= 0
                || OakCommonTypes.STRING_COMPARATOR.compareSerializedKeys(strA, strB) >= 0) {
            throw new IllegalStateException("the keys are not ordered as intended");
        }
    }

    private static String ascii(byte[] b) {
        char[] c = new char[b.length];
        for (int i = 0; i < b.length; i++) {
            c[i] = (char) ('!' + (b[i] & 0xff) % 90); // printable, order of the bytes kept where they differ
        }
        return new String(c);
    }

    private SegmentBuffer serialize(String s) {
        int size = OakCommonTypes.STRING_SERIALIZER.calculateSize(s);
        SegmentBuffer b = new SegmentBuffer(arena.allocate(size, 8));
        OakCommonTypes.STRING_SERIALIZER.serialize(s, b);
        return b;
    }

    /** Frees the native segments. */
    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    /** {@code ByteStringComparator.compareSegments(a, b)} on native segments. */
    @Benchmark
    public int segments() {
        return ByteStringComparator.compareSegments(segA, segB);
    }

    /** {@code BYTE_ARRAY_COMPARATOR.compareSerializedKeys}: two serialized keys. */
    @Benchmark
    public int byteArraySerializedKeys() {
        return OakCommonTypes.BYTE_ARRAY_COMPARATOR.compareSerializedKeys(bufA, bufB);
    }

    /** {@code BYTE_ARRAY_COMPARATOR.compareKeyAndSerializedKey}: a heap key against a serialized one. */
    @Benchmark
    public int byteArrayKeyVsSerialized() {
        return OakCommonTypes.BYTE_ARRAY_COMPARATOR.compareKeyAndSerializedKey(heapA, bufB);
    }

    /** {@code BYTE_ARRAY_COMPARATOR.serializedKeyPrefix}: the 8-byte prefix a lookup compares first. */
    @Benchmark
    public long byteArraySerializedPrefix() {
        return OakCommonTypes.BYTE_ARRAY_COMPARATOR.serializedKeyPrefix(bufA);
    }

    /** {@code STRING_COMPARATOR.compareSerializedKeys}: two serialized strings. */
    @Benchmark
    public int stringSerializedKeys() {
        return OakCommonTypes.STRING_COMPARATOR.compareSerializedKeys(strA, strB);
    }

    /** The skiplist's comparator: {@code Arrays.compareUnsigned} of two heap arrays. */
    @Benchmark
    public int cslmArraysCompareUnsigned() {
        return Arrays.compareUnsigned(heapA, heapB);
    }
}
