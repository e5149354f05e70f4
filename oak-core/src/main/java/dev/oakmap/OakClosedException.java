package dev.oakmap;

/**
 * Thrown by every operation on an {@link OakMap}, its views, iterators and buffers once the map
 * has been {@linkplain OakMap#close() closed}, and by a {@link dev.oakmap.somar.Somar} once it has
 * been closed.
 */
public class OakClosedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** Creates the exception with a message saying the map is closed. */
    public OakClosedException() {
        super("this Oak map has been closed");
    }

    /**
     * Creates the exception with a message saying the map is closed and the failure that revealed it.
     *
     * @param cause the low-level failure that revealed the map was closed
     */
    public OakClosedException(Throwable cause) {
        super("this Oak map has been closed", cause);
    }

    /**
     * Creates the exception for something other than a map that was closed.
     *
     * @param message what was closed
     * @param cause the low-level failure that revealed it, or {@code null}
     */
    public OakClosedException(String message, Throwable cause) {
        super(message, cause);
    }
}
