package io.outbox.relay;

import io.outbox.OutboxMessage;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Sends batches of outbox messages to a broker; the relay's only view of the transport.
 * {@link KafkaOutboxPublisher} is the Kafka implementation; plug in another to publish elsewhere
 * or with other producer semantics.
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

    /** Releases the publisher's resources; the default does nothing. */
    @Override
    default void close() {
    }
}
