package io.outbox.spi;

/**
 * Thrown when a stored header blob cannot be decoded: unknown version, truncated, trailing bytes,
 * or a name that is not valid UTF-8. The message names what is wrong and where.
 *
 * <p>A store that meets this while reading a batch has a corrupt row; retrying will not help, so
 * the relay treats it like any other store error (logs, backs off, retries) and the row stays in
 * the store until an operator repairs or removes it. Nothing is ever decoded in part.
 */
public class CorruptHeadersException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what is wrong, with the offset; not null
     */
    public CorruptHeadersException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a cause.
     *
     * @param message what is wrong, with the offset; not null
     * @param cause the underlying decoding error; may be null
     */
    public CorruptHeadersException(String message, Throwable cause) {
        super(message, cause);
    }
}
