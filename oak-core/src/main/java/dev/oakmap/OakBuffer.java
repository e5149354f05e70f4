package dev.oakmap;

/**
 * Read access to a slice of off-heap bytes: a serialized key or value.
 *
 * <p>All accesses are absolute (there is no position), bounds-checked against {@link #capacity()}
 * and big-endian, like a {@link java.nio.ByteBuffer} in its default order. An index outside the
 * slice throws {@link IndexOutOfBoundsException}; nothing outside the slice is ever read.
 *
 * <p>Whether an instance may be kept after the call that handed it out depends on its subtype:
 * scoped buffers ({@link OakScopedReadBuffer}) are valid only inside the callback that received
 * them, unscoped ones ({@link OakUnscopedBuffer}) stay valid while their mapping exists. The
 * other exceptions a read may throw (use outside the scope, a removed mapping, a closed map) are
 * described there.
 */
public interface OakBuffer {

    /**
     * Returns the size of this slice.
     *
     * @return the number of bytes in this slice
     */
    int capacity();

    /**
     * Reads one byte.
     *
     * @param index the offset of the byte in this slice
     * @return the byte at {@code index}
     * @throws IndexOutOfBoundsException if {@code index} is negative or not less than {@link #capacity()}
     */
    byte get(int index);

    /**
     * Reads a char from two bytes.
     *
     * @param index the offset of the first byte in this slice
     * @return the big-endian char at {@code index}
     * @throws IndexOutOfBoundsException if {@code index} is negative or {@code index + 2 > capacity()}
     */
    char getChar(int index);

    /**
     * Reads a short from two bytes.
     *
     * @param index the offset of the first byte in this slice
     * @return the big-endian short at {@code index}
     * @throws IndexOutOfBoundsException if {@code index} is negative or {@code index + 2 > capacity()}
     */
    short getShort(int index);

    /**
     * Reads an int from four bytes.
     *
     * @param index the offset of the first byte in this slice
     * @return the big-endian int at {@code index}
     * @throws IndexOutOfBoundsException if {@code index} is negative or {@code index + 4 > capacity()}
     */
    int getInt(int index);

    /**
     * Reads a long from eight bytes.
     *
     * @param index the offset of the first byte in this slice
     * @return the big-endian long at {@code index}
     * @throws IndexOutOfBoundsException if {@code index} is negative or {@code index + 8 > capacity()}
     */
    long getLong(int index);

    /**
     * Reads a float from four bytes.
     *
     * @param index the offset of the first byte in this slice
     * @return the big-endian float at {@code index}
     * @throws IndexOutOfBoundsException if {@code index} is negative or {@code index + 4 > capacity()}
     */
    float getFloat(int index);

    /**
     * Reads a double from eight bytes.
     *
     * @param index the offset of the first byte in this slice
     * @return the big-endian double at {@code index}
     * @throws IndexOutOfBoundsException if {@code index} is negative or {@code index + 8 > capacity()}
     */
    double getDouble(int index);

    /**
     * Copies {@code length} bytes starting at {@code index} into {@code dst[offset..offset+length)}.
     *
     * @param index the offset in this slice of the first byte to copy
     * @param dst the array to copy into
     * @param offset the position in {@code dst} of the first byte copied
     * @param length the number of bytes to copy
     * @throws IndexOutOfBoundsException if either range is out of bounds (or {@code length} is negative)
     * @throws NullPointerException if {@code dst} is null
     */
    void getBytes(int index, byte[] dst, int offset, int length);
}
