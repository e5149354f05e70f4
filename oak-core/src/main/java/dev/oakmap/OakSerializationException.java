package dev.oakmap;

/**
 * Thrown when a user {@link OakSerializer} misbehaves: it wrote past the size that its
 * {@link OakSerializer#calculateSize(Object)} promised, returned a negative or too large size,
 * threw while sizing or serializing, or deserialized to {@code null}.
 * The operation that hit it has no visible effect and no neighbouring data is touched, since
 * every write goes through a bounds-checked view of exactly the promised size.
 */
public class OakSerializationException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with a message and the failure behind it.
     *
     * @param message what went wrong
     * @param cause the failure raised while serializing, or {@code null}
     */
    public OakSerializationException(String message, Throwable cause) {
        super(message, cause);
    }
}
