package io.outbox;

import java.time.Duration;

/**
 * The retention side of a consumer inbox (rule I2): every store's inbox ({@code JdbcInbox},
 * {@code MongoInbox}, {@code DynamoDbInbox}) implements it, so one scheduled job can clean any of
 * them.
 *
 * <p>A marker records that a consumer has processed a message id. It is deleted only by this
 * cleanup, and only once it is older than {@link #retention()}: its {@code seenAt} (epoch
 * milliseconds from the inbox's clock) is strictly before {@code now - retention}. A repeat that
 * arrives after its marker was deleted is accepted as a first delivery again, so size the window
 * above the longest time a repeat can take to arrive (see docs/inbox.md).
 *
 * <p>The inbox never deletes markers on its own: the application schedules {@link #deleteExpired()}
 * (a {@code ScheduledExecutorService}, a cron job, Spring's {@code @Scheduled}). Implementations are
 * thread-safe; concurrent cleanups are harmless (a marker is deleted once, the other call counts
 * nothing for it).
 */
public interface InboxRetention {

    /**
     * How long a marker is kept at least.
     *
     * @return the retention window; positive
     */
    Duration retention();

    /**
     * The most markers one batch of {@link #deleteExpiredBatch()} deletes.
     *
     * @return the batch size, {@code >= 1}
     */
    int cleanupBatchSize();

    /**
     * Deletes at most {@link #cleanupBatchSize()} markers older than the retention window, in one
     * short write of its own (a transaction or a batch request of its own, never the caller's).
     *
     * @return how many markers it deleted, {@code 0..cleanupBatchSize()}
     * @throws RuntimeException the store's own database error (for example
     *     {@code JdbcOutboxException}); markers deleted before it stay deleted
     */
    int deleteExpiredBatch();

    /**
     * Deletes every marker older than the retention window as of the start of the call, in
     * batches of at most {@link #cleanupBatchSize()} markers, each a short write of its own, until
     * none is left. The cutoff is fixed at the start, so markers recorded while it runs are never
     * touched and the call ends.
     *
     * @return how many markers it deleted in all
     * @throws RuntimeException the store's own database error; batches done before it stay done
     */
    long deleteExpired();
}
