package io.outbox.relay;

import io.outbox.OutboxMessage;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Sends batches of outbox messages to a broker; the relay's only view of the transport.
 * {@link io.outbox.relay.kafka.KafkaOutboxPublisher} is the Kafka implementation; plug in another
 * to publish elsewhere or with other producer semantics.
 *
 * <p>Contract (rules R2, K3):
 * <ul>
 *   <li>{@link #publish} submits the records in batch order, starts every send before waiting on
 *       any, and returns a future that completes once every record is acknowledged or failed,
 *       never before: when it completes, nothing of the batch is still in flight.</li>
 *   <li>The result counts the leading acknowledged records and names the first error. The relay
 *       deletes exactly that prefix; a wrong count loses messages (too high) or duplicates them
 *       (too low).</li>
 *   <li>The future completes within a bound the implementation documents (for Kafka,
 *       {@code max.block.ms} plus {@code delivery.timeout.ms}). While it is pending the relay
 *       renews its leases when the store can (R5); without that, the bound must fit the relay's
 *       {@link RelayOptions#maxPublishDuration()}.</li>
 *   <li>A failure to send (broker down, message too large) completes the future with a
 *       {@link PublishResult#failure} rather than exceptionally; an exceptional future or a thrown
 *       exception counts as "nothing acknowledged".</li>
 * </ul>
 * The relay calls {@link #publish} from its store threads, for several buckets at once (one call
 * per bucket, from several threads, each started before the others complete); implementations are
 * thread-safe. A publisher may block inside {@code publish} (the relay still renews leases
 * meanwhile), but then it holds one of the relay's {@link RelayOptions#storeConcurrency()} store
 * threads. The future may complete on any thread; the relay does no store work on it.
 *
 * <p>The relay never closes its publisher: whoever created it closes it after the relay.
 */
public interface OutboxPublisher extends AutoCloseable {

    /**
     * Publishes a batch, in order.
     *
     * @param batch the messages of one bucket, oldest first; not null, not empty, not modified
     * @return a future of the result; completes when no record of the batch is in flight any more
     */
    CompletableFuture<PublishResult> publish(List<OutboxMessage> batch);

    // ---- bucket ownership hooks (rules K5, K6); the defaults do nothing. A publisher that wraps
    // another must forward all three, or a transactional publisher behind it never gets a bucket. ----

    /**
     * Checks, when a relay is built on this publisher, that it can serve a relay of that many
     * buckets; a relay may come to own every bucket once its peers are gone. The default accepts
     * any count.
     *
     * @param bucketCount the relay's {@link RelayOptions#bucketCount()}, {@code >= 1}
     * @throws io.outbox.spi.OutboxMisconfigurationException if this publisher cannot serve that
     *     many buckets, naming the bound and the option that sets it
     */
    default void checkBucketCount(int bucketCount) {
    }

    /**
     * Called by the relay after it acquired leases on these buckets and before it publishes any of
     * them. A publisher that fences by bucket (the transactional mode of
     * {@link io.outbox.relay.kafka.KafkaOutboxPublisher}, rule K5) takes over the buckets'
     * broker-side identity here. Called from the relay's loop thread; may block briefly; must not
     * throw (a failure to prepare a bucket should surface from the bucket's next {@link #publish}).
     *
     * @param buckets the buckets gained, not empty, not modified
     */
    default void bucketsAcquired(Set<Integer> buckets) {
    }

    /**
     * Called by the relay after it gave up or lost the leases on these buckets; it publishes none
     * of them again unless it reports them acquired again. A publish of such a bucket may still
     * be in flight (rule R9); the publisher lets it end. Called from the loop or the renewal
     * thread; must not throw.
     *
     * @param buckets the buckets released or lost, not empty, not modified
     */
    default void bucketsReleased(Set<Integer> buckets) {
    }

    /** Releases the publisher's resources; the default does nothing. */
    @Override
    default void close() {
    }
}
