package io.outbox.store.jdbc;

import java.sql.SQLException;

/**
 * A database error met by {@link JdbcOutboxStore}, unchecked because the store SPI's methods
 * declare no checked exceptions. The cause is the driver's {@link SQLException}. The relay treats
 * it as transient and retries with backoff (rule R3); the store has already retried lock
 * conflicts (deadlocks, serialization failures) of its lease statements a few times itself.
 */
public class JdbcOutboxException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what the store was doing, naming the table; not null
     * @param cause the driver's exception; not null
     */
    public JdbcOutboxException(String message, SQLException cause) {
        super(message + ": " + cause.getMessage(), cause);
    }

    /**
     * The driver's exception.
     *
     * @return the cause
     */
    @Override
    public synchronized SQLException getCause() {
        return (SQLException) super.getCause();
    }
}
