package io.outbox.spi;

import io.outbox.spi.support.LeasePlan;
import java.util.List;
import java.util.Optional;

/**
 * Where outbox messages wait between the writer's commit and the broker's acknowledgement, and
 * where relays coordinate bucket leases. Four methods, nothing relational in them: any database
 * with an atomic conditional write and an ordered read per bucket can implement it.
 *
 * <p>The enqueue side is not part of this interface: each store offers a helper that writes
 * messages inside the caller's own transaction (rule E4).
 *
 * <p>Contract, by rule id (docs/contract-rules.md lists them all; {@code outbox-tck} tests
 * each):
 * <ul>
 *   <li>S1 {@link #nextBatch} returns at most {@code maxCount} pending messages of the bucket,
 *       oldest (enqueue order) first, and at most {@code maxBytes} of message bytes (key, value
 *       and encoded headers, {@link io.outbox.spi.support.BatchBytes}), except that the oldest
 *       message is always returned, alone when it alone is over the budget.</li>
 *   <li>S2 {@link #markPublished} deletes exactly the given prefix of the previous batch, found by
 *       the handles of its {@link Pending} entries, idempotently, and nothing else.</li>
 *   <li>S3 {@link #bucketsWithPending} is exact and ascending, one round trip where possible.</li>
 *   <li>S4 {@link #acquireBucketLeases} records a heartbeat and brings the relay to its fair share;
 *       S4b claims are planned, not raced; S5 no bucket is ever held by two relays with unexpired
 *       leases; S6 a relay that stops calling loses its buckets after the lease duration; S7
 *       shares converge and then stay put. Use {@link LeasePlan}.</li>
 *   <li>S8 rows in buckets outside {@code [0, bucketCount)} make {@link #acquireBucketLeases}
 *       throw {@link OutboxMisconfigurationException}.</li>
 *   <li>S9 rows leave the store only through {@link #markPublished}: no TTL, no expiry.</li>
 *   <li>S10 every field round-trips exactly; the store states its largest payload and its
 *       enqueue helper refuses larger messages with nothing written.</li>
 *   <li>S11 all lease time comes from an injected {@link java.time.Clock}; expiries and
 *       heartbeats are stored as epoch milliseconds.</li>
 *   <li>S12 an instance is thread-safe: the relay calls it from more than one thread, and one
 *       store may serve several relays in a process.</li>
 *   <li>S13 liveness by observed change: a peer's heartbeat or lease counts as expired only once
 *       its stored value stayed unchanged for a lease duration of the observer's own clock;
 *       claims are conditional on the value observed.</li>
 * </ul>
 *
 * <p>Errors: {@link OutboxMisconfigurationException} is fatal (the relay stops, rule R6); any
 * other runtime exception is treated as transient and retried with backoff (R3). Implementations
 * should let driver exceptions propagate rather than wrap them in a checked type.
 *
 * <p>Optional capabilities, each reached through an accessor that is empty unless the store
 * returns the object that implements it: a helper of its own (override the accessor), or the
 * store itself (implement the capability's {@code Self} interface, such as
 * {@link LeaseRenewal.Self}, whose default accessor returns the store):
 * <ul>
 *   <li>C1 {@link #leaseRenewal()}: {@link LeaseRenewal}, renew leases during a long publish.</li>
 *   <li>C2 {@link #pendingMetrics()}: {@link PendingMetrics}, the whole store's backlog.</li>
 *   <li>C3 {@link #leaseRelease()}: {@link LeaseRelease}, give leases back on a graceful stop.</li>
 *   <li>C4 {@link #deadLetters()}: {@link DeadLetters}, move, list, replay and purge dead
 *       letters.</li>
 *   <li>C5 {@link #readAhead()}: {@link ReadAhead}, read a bucket's next batch while the one
 *       before it is published.</li>
 *   <li>C6 {@link #leaseView()}: {@link LeaseView}, the fleet's leases and heartbeats as stored,
 *       for operators.</li>
 * </ul>
 * A store that wraps another (to time or count its calls) forwards the accessors too, wrapping
 * what they return where it wraps those calls. A store that owns resources (a pool, a client)
 * implements {@link CloseableOutboxStore}, the type {@link OutboxStores#open} returns.
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
     * The oldest pending messages of a bucket, in enqueue order, within a count and a byte budget
     * (S1), each with this store's handle of its row.
     *
     * <p>The batch is the longest prefix of the bucket's pending messages that holds at most
     * {@code maxCount} messages and at most {@code maxBytes} message bytes as
     * {@link io.outbox.spi.support.BatchBytes} counts them (serialized key + serialized value +
     * encoded headers), except that the first message is always returned, alone when it alone is
     * over the budget. The budget bounds the relay's memory: a store must not hold more than
     * about {@code maxBytes} of message data for the call either, so it reads row by row and stops
     * at the budget (a cursor with a batch size, pages) or bounds the rows in its query; it never
     * pulls {@code maxCount} rows into memory and trims them afterwards.
     *
     * @param bucket the bucket, {@code >= 0}
     * @param maxCount the most messages to return, {@code >= 1}
     * @param maxBytes the most message bytes to return, {@code >= 1}; {@link Long#MAX_VALUE}
     *     for no byte bound
     * @return at most {@code maxCount} entries within the budget, oldest first, immutable; empty
     *     when none pending
     * @throws IllegalArgumentException if {@code bucket < 0}, {@code maxCount < 1} or
     *     {@code maxBytes < 1}
     * @throws CorruptMessageException for the first row that cannot be decoded, naming its bucket and
     *     message id and carrying the rows ahead of it (R12); the relay counts it against that row
     * @throws RuntimeException on a database error; the relay retries
     */
    List<Pending> nextBatch(int bucket, int maxCount, long maxBytes);

    /**
     * {@link #nextBatch(int, int, long)} without a byte bound ({@code maxBytes}
     * {@link Long#MAX_VALUE}), for tools and tests that read a few messages. A store implements the
     * three-argument method and leaves this one alone; the relay always passes its budget.
     *
     * @param bucket the bucket, {@code >= 0}
     * @param maxCount the most messages to return, {@code >= 1}
     * @return as {@link #nextBatch(int, int, long)}
     * @throws IllegalArgumentException if {@code bucket < 0} or {@code maxCount < 1}
     */
    default List<Pending> nextBatch(int bucket, int maxCount) {
        return nextBatch(bucket, maxCount, Long.MAX_VALUE);
    }

    /**
     * Deletes messages the broker acknowledged (S2). {@code published} is a contiguous prefix of
     * the list the previous {@link #nextBatch} call for this bucket returned, the same entries
     * (with {@link ReadAhead} (C5): of a list read for the bucket and not deleted yet, possibly
     * older than the latest). Deletes exactly those rows, found by their handles, and never
     * others; calling it again with the same entries is a no-op.
     *
     * @param bucket the bucket the messages were read from
     * @param published the acknowledged prefix; not null, may be empty
     * @throws IllegalArgumentException if an entry was not read by this store or belongs to
     *     another bucket; nothing is deleted then
     * @throws RuntimeException on a database error; the relay retries, and since deletion is
     *     idempotent a retry after a partial delete is safe
     */
    void markPublished(int bucket, List<Pending> published);

    /**
     * Capability C1, lease renewal during a publish.
     *
     * @return the store's {@link LeaseRenewal}; empty by default, when the store has none
     */
    default Optional<LeaseRenewal> leaseRenewal() {
        return Optional.empty();
    }

    /**
     * Capability C2, the whole store's backlog.
     *
     * @return the store's {@link PendingMetrics}; empty by default, when the store has none
     */
    default Optional<PendingMetrics> pendingMetrics() {
        return Optional.empty();
    }

    /**
     * Capability C3, giving a relay's leases back on a graceful stop.
     *
     * @return the store's {@link LeaseRelease}; empty by default, when the store has none
     */
    default Optional<LeaseRelease> leaseRelease() {
        return Optional.empty();
    }

    /**
     * Capability C4, the store's dead letters.
     *
     * @return the store's {@link DeadLetters}; empty by default, when the store has none
     */
    default Optional<DeadLetters> deadLetters() {
        return Optional.empty();
    }

    /**
     * Capability C5, reading a bucket's next batch while the one before it is still pending.
     *
     * @return the store's {@link ReadAhead}; empty by default, when the store has none
     */
    default Optional<ReadAhead> readAhead() {
        return Optional.empty();
    }

    /**
     * Capability C6, the fleet's leases and heartbeats as stored.
     *
     * @return the store's {@link LeaseView}; empty by default, when the store has none
     */
    default Optional<LeaseView> leaseView() {
        return Optional.empty();
    }
}
