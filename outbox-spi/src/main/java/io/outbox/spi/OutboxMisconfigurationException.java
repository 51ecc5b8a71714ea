package io.outbox.spi;

/**
 * A configuration error that retrying cannot fix: writers and relays disagree on the bucket
 * count (S8), a required option is missing (R5), a store name or setting is unknown. The relay
 * stops when it meets one (R6) and the standalone relay exits non-zero; every other exception is
 * treated as transient and retried.
 */
public class OutboxMisconfigurationException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what is misconfigured, naming the setting and the bad value; not null
     */
    public OutboxMisconfigurationException(String message) {
        super(message);
    }

    /**
     * Creates the exception with a cause.
     *
     * @param message what is misconfigured, naming the setting and the bad value; not null
     * @param cause the underlying error; may be null
     */
    public OutboxMisconfigurationException(String message, Throwable cause) {
        super(message, cause);
    }
}
