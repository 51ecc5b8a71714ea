package io.outbox.relay.kafka;

import io.outbox.relay.FailureKind;
import org.apache.kafka.common.InvalidRecordException;

/**
 * A message names a partition its topic does not have, by the producer's metadata (refreshed
 * every {@code metadata.max.age.ms}, and whenever the producer meets a metadata error). A
 * message-specific failure (rule R12, {@link FailureKind#MESSAGE}): counted against the message;
 * if the topic gains the partition before the message is given up on, it goes through.
 */
public class PartitionNotInTopicException extends InvalidRecordException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message names the message, the partition, the topic and its partition count; not null
     */
    public PartitionNotInTopicException(String message) {
        super(message);
    }
}
