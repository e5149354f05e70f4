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
     *
     * @param object the object to serialize
     * @param target where to write it; valid only during the call
     */
    void serialize(T object, OakScopedWriteBuffer target);

    /**
     * Reads an object back from its serialized form. It must not return {@code null}: the map
     * reports a null result as an {@link OakSerializationException}.
     *
     * @param source the serialized form; valid only during the call
     * @return the object that {@code source} holds
     */
    T deserialize(OakScopedReadBuffer source);

    /**
     * Computes the size of the serialized form of an object. The map reports a negative size as an
     * {@link OakSerializationException}; a serialized form must also fit, with the slice's header,
     * in one off-heap block of the largest size (128 MiB).
     *
     * @param object the object to measure
     * @return the exact number of bytes {@link #serialize} writes for {@code object} (≥ 0)
     */
    int calculateSize(T object);
}
