package dev.oakmap;

/**
 * Converts objects to and from their off-heap form. An implementation must be thread-safe and
 * deterministic: the same object always serializes to the same bytes, of exactly the size that
 * {@link #calculateSize(Object)} reports.
 *
 * @param <T> the type of serialized objects
 */
public interface OakSerializer<T> {

    /**
     * Writes {@code object} into {@code target}, whose capacity is exactly
     * {@code calculateSize(object)} bytes. Writing beyond it throws, and the map reports the
     * failure as an {@link OakSerializationException} without storing anything. The target
     * starts zeroed: bytes left unwritten are stored, and compared, as zeros.
     */
    void serialize(T object, OakScopedWriteBuffer target);

    /** Reads an object back from its serialized form. */
    T deserialize(OakScopedReadBuffer source);

    /** @return the exact number of bytes {@link #serialize} writes for {@code object} (≥ 0) */
    int calculateSize(T object);
}
