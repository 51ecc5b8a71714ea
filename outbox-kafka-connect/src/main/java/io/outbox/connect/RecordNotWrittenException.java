package io.outbox.connect;

import java.util.UUID;
import org.apache.kafka.common.InvalidRecordException;

/**
 * Connect reported a record without metadata ({@code SourceTask.commitRecord(record, null)}): it
 * was not written to Kafka, because a transformation or predicate dropped it (a filter) or its send
 * failed under {@code errors.tolerance=all}. Its message is not deleted (rule X3). A failure of the
 * message itself (rule R12, {@link io.outbox.relay.FailureKind#MESSAGE}): counted against it, and
 * {@code relay.poison.policy} decides whether its bucket waits behind it or moves it to the store's
 * dead letters after {@code relay.poison.max.attempts} attempts.
 */
public final class RecordNotWrittenException extends InvalidRecordException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception for a message.
     *
     * @param messageId the message's id; not null
     * @param bucket its bucket
     */
    public RecordNotWrittenException(UUID messageId, int bucket) {
        super("Connect did not write the record of message " + messageId + " (bucket " + bucket
                + "): a transformation or predicate dropped it, or its send failed under errors.tolerance=all; "
                + "the message stays pending");
    }
}
