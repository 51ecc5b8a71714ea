package io.outbox.relay;

import io.outbox.spi.CorruptHeadersException;
import io.outbox.spi.CorruptMessageException;
import io.outbox.spi.OutboxMisconfigurationException;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;

/**
 * What a failure says about retrying, in the manner of Kafka's {@code RetriableException}
 * (rule R12). {@link #classify(Throwable)} sorts a publish error or a store error of one row.
 *
 * <ul>
 *   <li>{@link #RETRIABLE}: the broker or the network (broker unavailable, timeouts, not enough
 *       replicas, leader changes, and every error not listed below). Never counted against a
 *       message; the bucket backs off and retries.</li>
 *   <li>{@link #MESSAGE}: the message itself can never be published as it is:
 *       {@link RecordTooLargeException}, {@link RecordBatchTooLargeException},
 *       {@link InvalidTopicException}, {@link InvalidRecordException} (which includes a partition
 *       the topic does not have, {@link PartitionNotInTopicException}), or a row the store cannot
 *       decode ({@link CorruptMessageException}, {@link CorruptHeadersException}). Counted per
 *       message; {@link PoisonPolicy} decides what happens after.</li>
 *   <li>{@link #STORE}: a store call failed (the store is down): the whole loop backs off (R3).
 *       {@link #classify} never returns it; it is the kind of every exception from a store call
 *       other than a row's data error and a misconfiguration.</li>
 *   <li>{@link #FATAL}: {@link OutboxMisconfigurationException} or an {@link Error}: the relay
 *       stops (R6).</li>
 * </ul>
 * The cause chain is searched, so a Kafka exception wrapped by another counts as itself.
 */
public enum FailureKind {
    /** Retrying can help; never counted against a message. */
    RETRIABLE,
    /** The message cannot be published as it is; counted against it. */
    MESSAGE,
    /** A store call failed; the whole loop backs off. */
    STORE,
    /** A misconfiguration or an Error; the relay stops. */
    FATAL;

    /**
     * Classifies a publish failure or a store's report of one bad row.
     *
     * @param error the failure; null is {@link #RETRIABLE}
     * @return {@link #FATAL}, {@link #MESSAGE} or {@link #RETRIABLE}; never {@link #STORE}
     */
    public static FailureKind classify(Throwable error) {
        int depth = 0;
        for (Throwable t = error; t != null && depth < 16; t = t.getCause(), depth++) {
            if (t instanceof OutboxMisconfigurationException || t instanceof Error) {
                return FATAL;
            }
            if (t instanceof RecordTooLargeException || t instanceof RecordBatchTooLargeException
                    || t instanceof InvalidTopicException || t instanceof InvalidRecordException
                    || t instanceof CorruptMessageException || t instanceof CorruptHeadersException) {
                return MESSAGE;
            }
        }
        return RETRIABLE;
    }
}
