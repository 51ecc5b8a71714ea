package io.outbox.spi;

import io.outbox.OutboxMessage;
import io.outbox.spi.support.LeasePlan;
import java.util.List;

/**
 * Where outbox messages wait between the writer's commit and the broker's acknowledgement, and
 * where relays coordinate bucket leases. Four methods, nothing relational in them: any database
 * with an atomic conditional write and an ordered read per bucket can implement it.
 *
 * <p>The enqueue side is not part of this interface: each store offers a helper that writes
 * messages inside the caller's own transaction (rule E4).
 *
 * <p>Contract, by rule id (the README's "Contract rules" lists them all; {@code outbox-tck} tests
 * each):
 * <ul>
 *   <li>S1 {@link #nextBatch} returns at most {@code maxCount} pending messages of the bucket,
 *       oldest (enqueue order) first.</li>
 *   <li>S2 {@link #markPublished} deletes exactly the given prefix of the previous batch.</li>
 *   <li>S3 {@link #bucketsWithPending} is exact and ascending, one round trip where possible.</li>
 *   <li>S4, S4b, S5, S6, S7 {@link #acquireBucketLeases}: heartbeat, fair share, quiet planned
 *       claims, exclusivity, takeover after expiry, convergence and stability. Use
 *       {@link LeasePlan}.</li>
 *   <li>S8 rows in buckets outside {@code [0, bucketCount)} make {@link #acquireBucketLeases}
 *       throw {@link OutboxMisconfigurationException}.</li>
 *   <li>S9 rows leave the store only through {@link #markPublished}: no TTL, no expiry.</li>
 *   <li>S10 every field round-trips exactly; the store states its largest payload and its
 *       enqueue helper refuses larger messages with nothing written.</li>
 *   <li>S11 all lease time comes from an injected {@link java.time.Clock}; expiries and
 *       heartbeats are stored as epoch milliseconds.</li>
 *   <li>S12 an instance is thread-safe: the relay calls it from more than one thread, and one
 *       store may serve several relays in a process.</li>
 * </ul>
 *
 * <p>Errors: {@link OutboxMisconfigurationException} is fatal (the relay stops, rule R6); any
 * other runtime exception is treated as transient and retried with backoff (R3). Implementations
 * should let driver exceptions propagate rather than wrap them in a checked type.
 *
 * <p>A store may also implement {@link LeaseRenewal} (C1), {@link PendingMetrics} (C2),
 * {@link LeaseRelease} (C3), {@link DeadLetters} (C4) and {@link ReadAhead} (C5). A store that owns resources (a pool, a
 * client) implements
 * {@link CloseableOutboxStore}, the type {@link OutboxStores#open} returns.
 */
public interface OutboxStore {

    /**
     * Records the relay's heartbeat and brings its bucket leases to its fair share (S4): keeps its
     * own leases up to the share, releases the excess, claims free or expired buckets up to the
     * deficit with atomic conditional writes, planned so that relays seeing the same membership
     * never write the same lease (S4b). Never grants a bucket to two relays with unexpired leases
     * (S5). See {@link LeasePlan} for the algorithm every store shares.
     *
     * <p>The relay treats the returned buckets as its own until {@code leaseDuration} after the
     * moment it made this call (R1).
     *
     * <p>R11: buckets in {@link LeaseRequest#busyBuckets()} that the caller still holds are kept,
     * even above its share ({@link LeasePlan} does it), so a relay never loses a lease to a
     * rebalance while it publishes the bucket.
     *
     * @param request the relay id, bucket count, lease duration, the buckets held after the
     *     last successful call and those of them being published; not null
     * @return the buckets this relay owns after the call, read back from the store, ascending,
     *     immutable; possibly empty
     * @throws OutboxMisconfigurationException if pending message rows (or sequence counters a
     *     writer left) exist in a bucket outside {@code [0, bucketCount)} (S8): a writer and the
     *     relay disagree on the bucket count. Lease rows outside the range (left by relays
     *     configured with more buckets) are not an error; they are ignored and never returned.
     * @throws RuntimeException on a database error; transient, the relay retries
     */
    List<Integer> acquireBucketLeases(LeaseRequest request);

    /**
     * Which of the given buckets hold pending messages (S3).
     *
     * @param buckets the buckets to probe; not null, each {@code >= 0}; may be empty and may
     *     repeat a bucket
     * @return exactly those of {@code buckets} that hold at least one pending message, ascending,
     *     each once, immutable
     * @throws RuntimeException on a database error; transient
     */
    List<Integer> bucketsWithPending(List<Integer> buckets);

    /**
     * The oldest pending messages of a bucket, in enqueue order (S1).
     *
     * @param bucket the bucket, {@code >= 0}
     * @param maxCount the most messages to return, {@code >= 1}
     * @return at most {@code maxCount} messages, oldest first, immutable; empty when none pending.
     *     A store may return a subclass of {@link OutboxMessage} carrying its native id.
     * @throws IllegalArgumentException if {@code bucket < 0} or {@code maxCount < 1}
     * @throws CorruptMessageException for the first row that cannot be decoded, naming its bucket and
     *     message id and carrying the rows ahead of it (R12); the relay counts it against that row
     * @throws RuntimeException on a database error; the relay retries
     */
    List<OutboxMessage> nextBatch(int bucket, int maxCount);

    /**
     * Deletes messages the broker acknowledged (S2). {@code published} is a contiguous prefix of
     * the list the previous {@link #nextBatch} call for this bucket returned, the same instances
     * (with {@link ReadAhead} (C5): of a list read for the bucket and not deleted yet, possibly
     * older than the latest).
     * Deletes exactly those rows and never others; calling it again with the same messages is a
     * no-op.
     *
     * @param bucket the bucket the messages were read from
     * @param published the acknowledged prefix; not null, may be empty
     * @throws RuntimeException on a database error; the relay retries, and since deletion is
     *     idempotent a retry after a partial delete is safe
     */
    void markPublished(int bucket, List<OutboxMessage> published);
}
