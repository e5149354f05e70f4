package dev.oakmap.internal.memory;

/**
 * Packing of an off-heap slice address into one {@code long}, so that on-heap metadata is
 * primitive arrays rather than objects.
 *
 * <pre>
 *  63          52 51                      27 26                       0
 * +--------------+--------------------------+--------------------------+
 * | block id (12)| offset / 4 (25)          | aux (27)                 |
 * +--------------+--------------------------+--------------------------+
 * </pre>
 *
 * Block ids start at 1, so a valid reference is never {@link #NULL} (0). Offsets are 4-byte
 * aligned (the allocation granule: a slice wastes at most 3 bytes to padding), which bounds a
 * block at {@link #MAX_BLOCK_SIZE}. A slice header whose 8-byte state word must be aligned for
 * atomic access places it by the slice's start ({@code SliceManager}). The aux field holds a
 * key's length, or a slice's version (see the managers in {@code dev.oakmap.internal.reclaim}).
 */
public final class Refs {
    private Refs() {}

    /** The allocation granule: slice offsets and sizes are multiples of it. */
    public static final int GRANULE = 4;

    /** The reference that points nowhere. */
    public static final long NULL = 0L;

    static final int AUX_BITS = 27;
    static final int OFFSET_BITS = 25;
    static final int BLOCK_BITS = 12;

    /** Largest value of the aux field. */
    public static final int MAX_AUX = (1 << AUX_BITS) - 1;
    /** Largest block id; ids run from 1 to this. */
    public static final int MAX_BLOCK_ID = (1 << BLOCK_BITS) - 1;
    /** Largest block size, in bytes. */
    public static final long MAX_BLOCK_SIZE = (1L << OFFSET_BITS) * GRANULE;

    /** Builds a reference; {@code offset} must be 4-aligned and all fields in range. */
    public static long encode(int blockId, long offset, int aux) {
        assert blockId > 0 && blockId <= MAX_BLOCK_ID : blockId;
        assert (offset & (GRANULE - 1)) == 0 && offset >= 0 && offset < MAX_BLOCK_SIZE : offset;
        assert aux >= 0 && aux <= MAX_AUX : aux;
        return ((long) blockId << (OFFSET_BITS + AUX_BITS))
                | ((offset >>> 2) << AUX_BITS)
                | aux;
    }

    /** @return the block id of {@code ref} */
    public static int blockId(long ref) {
        return (int) (ref >>> (OFFSET_BITS + AUX_BITS));
    }

    /** @return the byte offset of {@code ref} inside its block */
    public static long offset(long ref) {
        return ((ref >>> AUX_BITS) & ((1L << OFFSET_BITS) - 1)) << 2;
    }

    /**
     * @return where {@code ref} lies, as one number ordered by block and then by offset: for two
     *     slices of one block, the difference is their distance in bytes; slices of different
     *     blocks are at least {@link #MAX_BLOCK_SIZE} apart
     */
    public static long location(long ref) {
        return (ref >>> AUX_BITS) << 2;
    }

    /** @return the aux field of {@code ref} */
    public static int aux(long ref) {
        return (int) (ref & MAX_AUX);
    }

    /** @return {@code ref} with its aux field replaced */
    public static long withAux(long ref, int aux) {
        assert aux >= 0 && aux <= MAX_AUX : aux;
        return (ref & ~(long) MAX_AUX) | aux;
    }

    /** Rounds a size up to the allocation granule, {@link #GRANULE} bytes. */
    public static long alignGranule(long size) {
        return (size + GRANULE - 1) & -GRANULE;
    }
}
