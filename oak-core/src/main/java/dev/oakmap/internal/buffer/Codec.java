package dev.oakmap.internal.buffer;

import dev.oakmap.OakScopedReadBuffer;
import dev.oakmap.OakSerializationException;
import dev.oakmap.OakSerializer;

import java.lang.foreign.MemorySegment;

/**
 * Runs user serializers against off-heap windows, turning their failures into
 * {@link OakSerializationException}s. The window passed to {@code serialize} is exactly the
 * promised size, so an overrun is caught before it touches a neighbour.
 */
public final class Codec {
    private Codec() {}

    /** @return the size the serializer promises for {@code object}, checked to be in range */
    public static <T> int sizeOf(OakSerializer<T> serializer, T object, int max) {
        int size;
        try {
            size = serializer.calculateSize(object);
        } catch (RuntimeException e) {
            throw new OakSerializationException("calculateSize threw: " + e, e);
        }
        if (size < 0 || size > max) {
            throw new OakSerializationException("calculateSize returned " + size + ", outside [0, " + max + "]", null);
        }
        return size;
    }

    /**
     * Serializes {@code object} into the window {@code [base, base + length)} of {@code segment},
     * zeroed first: reused memory keeps the bytes of a removed key or value, and a serializer that
     * writes fewer bytes than {@code calculateSize} said (fixed-size slots, say) would otherwise
     * store some of them as part of the new key or value, where comparisons and views see them.
     */
    public static <T> void write(OakSerializer<T> serializer, T object, MemorySegment segment, long base, int length) {
        SliceBuffer buffer = new SliceBuffer(segment, base, length, true);
        try {
            segment.asSlice(base, length).fill((byte) 0); // in the try: memory freed meanwhile is reported alike
            serializer.serialize(object, buffer);
        } catch (IndexOutOfBoundsException e) {
            throw new OakSerializationException("serializer wrote beyond the " + length
                    + " bytes that calculateSize promised", e);
        } catch (RuntimeException e) {
            throw freedUnder(segment) ? memoryGone(e) : new OakSerializationException("serializer threw: " + e, e);
        } finally {
            buffer.close();
        }
    }

    /**
     * Serializes {@code object} into a new heap array, as {@link #write} does off-heap (its
     * failures reported alike), for comparisons of serialized forms outside the map's memory.
     *
     * @param max the longest serialized form accepted
     * @return a segment over the array, exactly the serialized size
     */
    public static <T> MemorySegment toHeap(OakSerializer<T> serializer, T object, int max) {
        int size = sizeOf(serializer, object, max);
        MemorySegment bytes = MemorySegment.ofArray(new byte[size]);
        write(serializer, object, bytes, 0, size);
        return bytes;
    }

    /**
     * Deserializes the window {@code [base, base + length)} of {@code segment}.
     *
     * @throws OakSerializationException if the serializer returns null
     */
    public static <T> T read(OakSerializer<T> serializer, MemorySegment segment, long base, int length) {
        SliceBuffer buffer = new SliceBuffer(segment, base, length, false);
        try {
            return deserialize(serializer, buffer);
        } catch (RuntimeException e) {
            throw freedUnder(segment) ? memoryGone(e) : e;
        } finally {
            buffer.close();
        }
    }

    /**
     * Runs {@code deserialize} on a buffer the caller has opened. A map holds no null keys or
     * values, so a serializer that returns null is broken: left alone, a present mapping would
     * look absent to {@code get} and {@code compute} and present to {@code containsKey}.
     *
     * @throws OakSerializationException if the serializer returns null
     */
    public static <T> T deserialize(OakSerializer<T> serializer, OakScopedReadBuffer buffer) {
        T object = serializer.deserialize(buffer);
        if (object == null) {
            throw new OakSerializationException("deserialize returned null (a map holds no null keys or values)", null);
        }
        return object;
    }

    /**
     * Whether {@code e} may come from the memory itself going away while the serializer ran (the
     * map was closed by another thread, which closes its blocks' arenas): then the failure is not
     * the serializer's fault, whatever it wrapped the arena's exception in.
     */
    private static boolean freedUnder(MemorySegment segment) {
        return !segment.scope().isAlive();
    }

    /**
     * @return the failure as a plain {@link IllegalStateException}, the type callers translate into
     *     {@link dev.oakmap.OakClosedException} when the map is closed
     */
    private static IllegalStateException memoryGone(RuntimeException e) {
        return e instanceof IllegalStateException ise ? ise : new IllegalStateException("off-heap memory freed during (de)serialization", e);
    }
}
