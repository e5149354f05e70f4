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
 * them, unscoped ones ({@link OakUnscopedBuffer}) stay valid while their mapping exists.
 */
public interface OakBuffer {

    /** @return the number of bytes in this slice */
    int capacity();

    /** @return the byte at {@code index} */
    byte get(int index);

    /** @return the big-endian char at {@code index} */
    char getChar(int index);

    /** @return the big-endian short at {@code index} */
    short getShort(int index);

    /** @return the big-endian int at {@code index} */
    int getInt(int index);

    /** @return the big-endian long at {@code index} */
    long getLong(int index);

    /** @return the big-endian float at {@code index} */
    float getFloat(int index);

    /** @return the big-endian double at {@code index} */
    double getDouble(int index);

    /**
     * Copies {@code length} bytes starting at {@code index} into {@code dst[offset..offset+length)}.
     *
     * @throws IndexOutOfBoundsException if either range is out of bounds
     */
    void getBytes(int index, byte[] dst, int offset, int length);
}
