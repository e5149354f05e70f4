package dev.oakmap;

import java.util.ConcurrentModificationException;

/**
 * Thrown when a zero-copy view is read after the mapping it viewed was removed (or its value
 * replaced by a different slice). The view never returns bytes of a value that now belongs to
 * someone else: every later read through the same view throws this exception again.
 */
public class DeletedMemoryAccessException extends ConcurrentModificationException {
    private static final long serialVersionUID = 1L;

    /** Creates the exception with a message saying the viewed value was removed. */
    public DeletedMemoryAccessException() {
        super("the value viewed by this buffer was removed from the map");
    }

    /**
     * Creates the exception with the given message.
     *
     * @param message the detail message
     */
    public DeletedMemoryAccessException(String message) {
        super(message);
    }
}
