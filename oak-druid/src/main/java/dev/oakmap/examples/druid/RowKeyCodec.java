package dev.oakmap.examples.druid;

import dev.oakmap.OakComparator;
import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakScopedWriteBuffer;
import dev.oakmap.OakSerializer;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * How {@link RowKey}s live off-heap in an {@link OakIncrementalIndex}: serializer, comparator
 * and 64-bit key prefix in one.
 *
 * <h2>Layout</h2>
 * <pre>
 *   offset 0        8                8 + 4d          (+8, plain only)
 *          | time   | code 0 .. code d-1 | seq |
 * </pre>
 * Every field is big-endian with its sign bit flipped ({@code time ^ Long.MIN_VALUE},
 * {@code code ^ Integer.MIN_VALUE}, {@code seq ^ Long.MIN_VALUE}), so the byte order of two
 * serialized keys (unsigned, lexicographic) is exactly {@link RowKey#compareTo}: two serialized
 * keys compare with one {@link MemorySegment#mismatch}, a key object with a serialized key field by
 * field, never deserializing. A rollup index leaves the sequence number out (it is always 0).
 *
 * <h2>Prefix</h2>
 * The map keeps a 64-bit order-preserving prefix of every key in on-heap arrays and compares it
 * before touching off-heap bytes, so the more of the key it captures, the fewer searches leave
 * the heap. Here it packs the leading fields of the key, from the high bits down:
 * <ul>
 *   <li>the time in granularity units, {@code floorDiv(time, granularity)}, in {@code T} bits:
 *       enough for the years 1970 to about 2500 (44 bits of milliseconds, 29 of minutes, 18 of
 *       days);</li>
 *   <li>then as many dimension codes (each + 1, so the bounds' -1 packs as 0) as fit 10 or more
 *       bits each into the remaining {@code 64 - T} bits: two of 10 bits for millisecond keys,
 *       three of 11 bits for minute buckets, four of 10 bits for hours.</li>
 * </ul>
 * A field too small or too large for its bits is clamped, and then every later field is packed
 * as its smallest (or largest) value too; a time inside a bucket but not at its start (which only
 * range bounds have: stored keys are truncated) packs as its bucket with every code bit set; that keeps the prefix monotone: {@code a < b} implies
 * {@code prefix(a) <= prefix(b)} (unsigned). Keys that differ only beyond the packed fields, or
 * in clamped ones, tie, which costs a full comparison, never a wrong answer. With time-ordered
 * ingestion and low-cardinality leading dimensions, most search steps are decided on-heap.
 */
public final class RowKeyCodec implements OakSerializer<RowKey>, OakComparator<RowKey> {

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /** Milliseconds the time field of the prefix covers: 2^44, from 1970 to 2527. */
    private static final long TIME_SPAN_MS = 1L << 44;
    /** The fewest bits a dimension code gets in the prefix. */
    private static final int MIN_DIM_BITS = 10;

    private final int dimensions;
    private final boolean withSeq;
    private final int size;
    private final long unitMillis;
    private final int timeBits;
    private final int prefixDims;
    private final int dimBits;

    /**
     * A codec for millisecond keys ({@link Granularity#MILLISECOND}).
     *
     * @param dimensions number of dimension codes in every key
     * @param withSeq whether keys carry the sequence number (plain indexes)
     */
    public RowKeyCodec(int dimensions, boolean withSeq) {
        this(dimensions, withSeq, Granularity.MILLISECOND);
    }

    /**
     * @param dimensions number of dimension codes in every key
     * @param withSeq whether keys carry the sequence number (plain indexes)
     * @param granularity the time unit of the keys (sizes the time field of the prefix)
     */
    public RowKeyCodec(int dimensions, boolean withSeq, Granularity granularity) {
        if (dimensions < 1) {
            throw new IllegalArgumentException("keys need at least one dimension: " + dimensions);
        }
        this.dimensions = dimensions;
        this.withSeq = withSeq;
        this.size = 8 + 4 * dimensions + (withSeq ? 8 : 0);
        this.unitMillis = granularity.millis();
        this.timeBits = 64 - Long.numberOfLeadingZeros((TIME_SPAN_MS - 1) / unitMillis);
        int rest = 64 - timeBits;
        this.prefixDims = Math.max(1, Math.min(dimensions, rest / MIN_DIM_BITS));
        this.dimBits = rest / prefixDims;
    }

    /** @return the size of every serialized key, in bytes */
    public int keyBytes() {
        return size;
    }

    @Override
    public void serialize(RowKey key, OakScopedWriteBuffer target) {
        checkShape(key);
        MemorySegment s = target.writableSegment();
        s.set(LONG, 0, key.time() ^ Long.MIN_VALUE);
        for (int i = 0; i < dimensions; i++) {
            s.set(INT, 8 + 4L * i, key.dim(i) ^ Integer.MIN_VALUE);
        }
        if (withSeq) {
            s.set(LONG, 8 + 4L * dimensions, key.seq() ^ Long.MIN_VALUE);
        }
    }

    @Override
    public RowKey deserialize(OakScopedReadBuffer source) {
        int[] dims = new int[dimensions];
        for (int i = 0; i < dimensions; i++) {
            dims[i] = source.getInt(8 + 4 * i) ^ Integer.MIN_VALUE;
        }
        long seq = withSeq ? source.getLong(8 + 4 * dimensions) ^ Long.MIN_VALUE : 0L;
        return new RowKey(source.getLong(0) ^ Long.MIN_VALUE, dims, seq);
    }

    @Override
    public int calculateSize(RowKey key) {
        return size;
    }

    @Override
    public int compareKeys(RowKey a, RowKey b) {
        return a.compareTo(b);
    }

    @Override
    public int compareSerializedKeys(OakScopedReadBuffer a, OakScopedReadBuffer b) {
        MemorySegment sa = a.segment();
        MemorySegment sb = b.segment();
        long i = sa.mismatch(sb);
        if (i < 0) {
            return 0;
        }
        if (i == sa.byteSize() || i == sb.byteSize()) {
            return Long.compare(sa.byteSize(), sb.byteSize());
        }
        return Integer.compare(Byte.toUnsignedInt(sa.get(ValueLayout.JAVA_BYTE, i)),
                Byte.toUnsignedInt(sb.get(ValueLayout.JAVA_BYTE, i)));
    }

    @Override
    public int compareKeyAndSerializedKey(RowKey key, OakScopedReadBuffer s) {
        int c = Long.compare(key.time(), s.getLong(0) ^ Long.MIN_VALUE);
        if (c != 0) {
            return c;
        }
        int n = Math.min(key.dimensionCount(), dimensions);
        for (int i = 0; i < n; i++) {
            c = Integer.compare(key.dim(i), s.getInt(8 + 4 * i) ^ Integer.MIN_VALUE);
            if (c != 0) {
                return c;
            }
        }
        c = Integer.compare(key.dimensionCount(), dimensions);
        if (c != 0) {
            return c;
        }
        return withSeq ? Long.compare(key.seq(), s.getLong(8 + 4 * dimensions) ^ Long.MIN_VALUE)
                : Long.compare(key.seq(), 0L);
    }

    @Override
    public long keyPrefix(RowKey key) {
        return pack(key.time(), key, null);
    }

    @Override
    public long serializedKeyPrefix(OakScopedReadBuffer s) {
        return pack(s.getLong(0) ^ Long.MIN_VALUE, null, s);
    }

    /** Packs the prefix of a key object ({@code key}) or of a serialized key ({@code s}). */
    private long pack(long time, RowKey key, OakScopedReadBuffer s) {
        if (time < 0) {
            return 0L;                          // before 1970: the smallest prefix, whatever the codes
        }
        if (time >= TIME_SPAN_MS) {
            return -1L;                         // after 2527: the largest (unsigned)
        }
        long p = time / unitMillis;
        int used = timeBits;
        if (p * unitMillis != time) {
            // inside a bucket, not at its start (a range bound): after every key of the bucket
            return p << (64 - used) | (-1L >>> used);
        }
        long max = (1L << dimBits) - 1;
        for (int i = 0; i < prefixDims; i++) {
            long u = (long) (key != null ? key.dim(i) : s.getInt(8 + 4 * i) ^ Integer.MIN_VALUE) + 1;
            if (u < 0) {
                return p << (64 - used);        // clamped low: this field and the rest all zeros
            }
            p = p << dimBits | Math.min(u, max);
            used += dimBits;
            if (u > max) {                      // clamped high: the rest all ones
                return used == 64 ? p : p << (64 - used) | (-1L >>> used);
            }
        }
        return used == 64 ? p : p << (64 - used);
    }

    private void checkShape(RowKey key) {
        if (key.dimensionCount() != dimensions) {
            throw new IllegalArgumentException("key has " + key.dimensionCount() + " dimension codes, the index "
                    + dimensions);
        }
        if (!withSeq && key.seq() != 0) {
            throw new IllegalArgumentException("rollup keys carry no sequence number: " + key);
        }
    }
}
