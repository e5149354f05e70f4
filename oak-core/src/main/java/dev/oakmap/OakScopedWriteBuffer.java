package dev.oakmap;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A writable view of a value (or of a key being serialized) valid only inside the callback that
 * received it. While a compute callback runs, its value is locked against other writers and
 * readers never observe a partial update: the whole callback is applied atomically, or, if it
 * throws, not at all (its writes are undone).
 *
 * <p>Writes are absolute, bounds-checked and big-endian; writing outside {@link #capacity()}
 * throws {@link IndexOutOfBoundsException} and touches nothing.
 */
public interface OakScopedWriteBuffer extends OakScopedReadBuffer {

    /**
     * Writes a byte at {@code index}.
     *
     * @param index the offset of the byte in this slice
     * @param value the byte to write
     * @return this buffer
     * @throws IndexOutOfBoundsException if {@code index} is negative or not less than {@link #capacity()}
     */
    OakScopedWriteBuffer put(int index, byte value);

    /**
     * Writes a big-endian char, in two bytes, at {@code index}.
     *
     * @param index the offset of the first byte in this slice
     * @param value the char to write
     * @return this buffer
     * @throws IndexOutOfBoundsException if {@code index} is negative or {@code index + 2 > capacity()}
     */
    OakScopedWriteBuffer putChar(int index, char value);

    /**
     * Writes a big-endian short, in two bytes, at {@code index}.
     *
     * @param index the offset of the first byte in this slice
     * @param value the short to write
     * @return this buffer
     * @throws IndexOutOfBoundsException if {@code index} is negative or {@code index + 2 > capacity()}
     */
    OakScopedWriteBuffer putShort(int index, short value);

    /**
     * Writes a big-endian int, in four bytes, at {@code index}.
     *
     * @param index the offset of the first byte in this slice
     * @param value the int to write
     * @return this buffer
     * @throws IndexOutOfBoundsException if {@code index} is negative or {@code index + 4 > capacity()}
     */
    OakScopedWriteBuffer putInt(int index, int value);

    /**
     * Writes a big-endian long, in eight bytes, at {@code index}.
     *
     * @param index the offset of the first byte in this slice
     * @param value the long to write
     * @return this buffer
     * @throws IndexOutOfBoundsException if {@code index} is negative or {@code index + 8 > capacity()}
     */
    OakScopedWriteBuffer putLong(int index, long value);

    /**
     * Writes a big-endian float, in four bytes, at {@code index}.
     *
     * @param index the offset of the first byte in this slice
     * @param value the float to write
     * @return this buffer
     * @throws IndexOutOfBoundsException if {@code index} is negative or {@code index + 4 > capacity()}
     */
    OakScopedWriteBuffer putFloat(int index, float value);

    /**
     * Writes a big-endian double, in eight bytes, at {@code index}.
     *
     * @param index the offset of the first byte in this slice
     * @param value the double to write
     * @return this buffer
     * @throws IndexOutOfBoundsException if {@code index} is negative or {@code index + 8 > capacity()}
     */
    OakScopedWriteBuffer putDouble(int index, double value);

    /**
     * Copies {@code src[offset..offset+length)} to this slice starting at {@code index}.
     *
     * @param index the offset in this slice where the first byte is written
     * @param src the array to copy from
     * @param offset the position in {@code src} of the first byte to copy
     * @param length the number of bytes to copy
     * @return this buffer
     * @throws IndexOutOfBoundsException if either range is out of bounds (or {@code length} is negative)
     * @throws NullPointerException if {@code src} is null
     */
    OakScopedWriteBuffer putBytes(int index, byte[] src, int offset, int length);

    /**
     * A writable {@link MemorySegment} over exactly this slice, valid only inside the callback.
     * Do not rely on its alignment (an off-heap slice is aligned to 4 bytes only, and a segment
     * over a {@code byte[]} to 1): read and write multi-byte values with unaligned layouts, such
     * as {@link java.lang.foreign.ValueLayout#JAVA_LONG_UNALIGNED}; an aligned layout may throw.
     *
     * <p>Inside an in-place compute, asking for this segment costs a copy of the whole value (the
     * compute's undo journal must be able to restore anything written through it); for a large
     * value of which the computer writes a part, ask for {@link #writableSegment(int, int)}.
     *
     * @return a segment of {@link #capacity()} bytes
     */
    MemorySegment writableSegment();

    /**
     * A writable {@link MemorySegment} over {@code length} bytes of this slice from {@code index},
     * valid only inside the callback, with the alignment caveat of {@link #writableSegment()}.
     * Inside an in-place compute it costs a copy of that range only.
     *
     * @param index the offset in this slice where the segment starts
     * @param length the size of the segment, in bytes
     * @return a segment of {@code length} bytes
     * @throws IndexOutOfBoundsException if the range is not inside the slice
     */
    default MemorySegment writableSegment(int index, int length) {
        Objects.checkFromIndexSize(index, length, capacity());
        return writableSegment().asSlice(index, length);
    }
}
