package io.outbox.spi.support;

import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import java.util.function.LongToIntFunction;

/**
 * Argument checks every store's inbox shares (rules I1, I2), so that a consumer name or a
 * retention setting means the same on every backend. Stateless.
 */
public final class InboxArguments {

    /** The longest consumer name, in characters. */
    public static final int MAX_CONSUMER_NAME_LENGTH = 100;

    /** The largest cleanup batch, in markers. */
    public static final int MAX_CLEANUP_BATCH_SIZE = 10_000;

    /** The default cleanup batch, in markers. */
    public static final int DEFAULT_CLEANUP_BATCH_SIZE = 1_000;

    /** The default retention window: 7 days. */
    public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);

    private InboxArguments() {
    }

    /**
     * Checks a consumer name: 1 to {@value #MAX_CONSUMER_NAME_LENGTH} characters, no control
     * characters, no leading or trailing white space. Names are compared exactly (case and all).
     *
     * @param consumerName the name
     * @return {@code consumerName}
     * @throws NullPointerException if it is null
     * @throws IllegalArgumentException naming the value and the rule it breaks
     */
    public static String requireConsumerName(String consumerName) {
        Objects.requireNonNull(consumerName, "consumerName must not be null");
        if (consumerName.isEmpty() || consumerName.length() > MAX_CONSUMER_NAME_LENGTH) {
            throw new IllegalArgumentException("consumerName must have 1 to " + MAX_CONSUMER_NAME_LENGTH
                    + " characters but has " + consumerName.length()
                    + (consumerName.isEmpty() ? "" : ": '" + consumerName.substring(0, 40) + "...'"));
        }
        if (consumerName.chars().anyMatch(Character::isISOControl)) {
            throw new IllegalArgumentException("consumerName '" + consumerName.replaceAll("\\p{Cntrl}", "?")
                    + "' contains a control character (shown as ?)");
        }
        if (!consumerName.strip().equals(consumerName)) {
            throw new IllegalArgumentException("consumerName '" + consumerName
                    + "' starts or ends with white space");
        }
        return consumerName;
    }

    /**
     * Checks a retention window: at least one second.
     *
     * @param retention the window
     * @return {@code retention}
     * @throws NullPointerException if it is null
     * @throws IllegalArgumentException naming the value
     */
    public static Duration requireRetention(Duration retention) {
        Objects.requireNonNull(retention, "retention must not be null");
        if (retention.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException("retention must be at least 1 s but was " + retention);
        }
        return retention;
    }

    /**
     * Checks a cleanup batch size: 1 to {@value #MAX_CLEANUP_BATCH_SIZE}.
     *
     * @param batchSize the size
     * @return {@code batchSize}
     * @throws IllegalArgumentException naming the value
     */
    public static int requireCleanupBatchSize(int batchSize) {
        if (batchSize < 1 || batchSize > MAX_CLEANUP_BATCH_SIZE) {
            throw new IllegalArgumentException("cleanupBatchSize must be between 1 and " + MAX_CLEANUP_BATCH_SIZE
                    + " but was " + batchSize);
        }
        return batchSize;
    }

    /**
     * The cutoff of a cleanup: markers whose {@code seenAt} is strictly below it are expired.
     *
     * @param nowMillis the inbox clock's time, epoch milliseconds
     * @param retention the window
     * @return {@code nowMillis - retention}, epoch milliseconds
     */
    public static long cutoffMillis(long nowMillis, Duration retention) {
        return nowMillis - retention.toMillis();
    }

    /**
     * Checks a message id.
     *
     * @param messageId the id
     * @return {@code messageId}
     * @throws NullPointerException if it is null
     */
    public static UUID requireMessageId(UUID messageId) {
        return Objects.requireNonNull(messageId, "messageId must not be null");
    }

    /**
     * The loop of {@link io.outbox.InboxRetention#deleteExpired()} (rule I2): calls
     * {@code deleteBatch} with the one cutoff until a batch deletes fewer than {@code batchSize}
     * markers, so markers recorded after the start are never touched and the loop ends.
     *
     * @param cutoffMillis the cutoff, epoch milliseconds, fixed for every batch
     * @param batchSize the most markers one batch deletes, {@code >= 1}
     * @param deleteBatch deletes at most {@code batchSize} markers older than its argument and
     *     returns how many it deleted
     * @return how many markers all batches deleted
     * @throws RuntimeException what {@code deleteBatch} throws; batches done before stay done
     */
    public static long deleteInBatches(long cutoffMillis, int batchSize, LongToIntFunction deleteBatch) {
        long total = 0;
        int deleted;
        do {
            deleted = deleteBatch.applyAsInt(cutoffMillis);
            total += deleted;
        } while (deleted >= batchSize);
        return total;
    }
}
