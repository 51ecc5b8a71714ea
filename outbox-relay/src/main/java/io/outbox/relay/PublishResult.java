package io.outbox.relay;

import java.util.Objects;

/**
 * The outcome of publishing one batch (rules R2, K3): how many records at the head of the batch
 * the broker acknowledged, and why the next one was not.
 *
 * <p>The relay deletes exactly the first {@code acknowledged} messages of the batch and keeps the
 * rest for a retry from the head. Records after the first failure may have reached the broker
 * too; they are not counted, because deleting them would break the bucket's order.
 *
 * @param acknowledged the number of leading records the broker acknowledged, {@code >= 0}
 * @param firstError why record {@code acknowledged} was not acknowledged; null when every record
 *     of the batch was
 */
public record PublishResult(int acknowledged, Throwable firstError) {

    /**
     * Validates the count.
     *
     * @param acknowledged the leading acknowledged records
     * @param firstError the first error, or null
     * @throws IllegalArgumentException if {@code acknowledged < 0}
     */
    public PublishResult {
        if (acknowledged < 0) {
            throw new IllegalArgumentException("acknowledged must be >= 0 but was " + acknowledged);
        }
    }

    /**
     * Every record of a batch acknowledged.
     *
     * @param batchSize the number of records in the batch, {@code >= 0}
     * @return a result without error
     */
    public static PublishResult success(int batchSize) {
        return new PublishResult(batchSize, null);
    }

    /**
     * A prefix acknowledged, then a failure.
     *
     * @param acknowledged the leading acknowledged records, {@code >= 0}
     * @param error why the next record was not acknowledged; not null
     * @return the result
     */
    public static PublishResult failure(int acknowledged, Throwable error) {
        return new PublishResult(acknowledged, Objects.requireNonNull(error, "error must not be null"));
    }

    /**
     * Whether a record was left unacknowledged.
     *
     * @return true when {@link #firstError()} is not null
     */
    public boolean failed() {
        return firstError != null;
    }
}
