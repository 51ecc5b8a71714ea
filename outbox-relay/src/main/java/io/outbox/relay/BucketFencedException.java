package io.outbox.relay;


/**
 * A publish of a bucket refused because this relay no longer owns the bucket's broker-side
 * identity (rule K6): in the transactional mode of
 * {@link io.outbox.relay.kafka.KafkaOutboxPublisher}, a newer producer of the bucket's
 * {@code transactional.id} ran {@code initTransactions()} (another relay acquired the bucket), so
 * the broker fenced this one ({@code ProducerFencedException},
 * {@code InvalidProducerEpochException}), or the relay never reported the bucket acquired.
 *
 * <p>A publisher returns it as the {@link PublishResult#firstError()} of a result that
 * acknowledges nothing. The relay reads it as a lost lease: it deletes nothing of the batch, drops
 * the bucket without backing off, and publishes it again only after the store grants the lease
 * anew (which re-creates the producer and fences the other owner in turn).
 */
public final class BucketFencedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int bucket;

    /**
     * @param bucket the bucket whose producer was fenced, {@code >= 0}
     * @param message what happened, naming the bucket and its {@code transactional.id}
     * @param cause the broker's error, or null
     */
    public BucketFencedException(int bucket, String message, Throwable cause) {
        super(message, cause);
        this.bucket = bucket;
    }

    /**
     * The bucket whose producer was fenced.
     *
     * @return the bucket, {@code >= 0}
     */
    public int bucket() {
        return bucket;
    }
}
