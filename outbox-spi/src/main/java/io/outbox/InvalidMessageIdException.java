package io.outbox;

/**
 * A consumed Kafka record whose message-id header is absent, has a null value, or does not hold
 * a UUID in its canonical text form: thrown by {@link MessageIdReader} under its default policy,
 * because such a record cannot be deduplicated (rule I1). The message names the record (topic,
 * partition, offset), the header and what was wrong, never the record's key or value.
 */
public class InvalidMessageIdException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** What is wrong with the header. */
    public enum Problem {
        /** The record has no header of that name. */
        MISSING,
        /** The last header of that name has a null value. */
        NULL_VALUE,
        /** The value is not a UUID's 36-character text form {@code 8-4-4-4-12} hex digits. */
        MALFORMED
    }

    private final transient Problem problem;
    private final String topic;
    private final int partition;
    private final long offset;

    /**
     * Creates the exception.
     *
     * @param message the full text; not null
     * @param problem what is wrong; not null
     * @param topic the record's topic
     * @param partition the record's partition
     * @param offset the record's offset
     */
    public InvalidMessageIdException(String message, Problem problem, String topic, int partition, long offset) {
        super(message);
        this.problem = problem;
        this.topic = topic;
        this.partition = partition;
        this.offset = offset;
    }

    /**
     * What is wrong with the header.
     *
     * @return the problem; never null
     */
    public Problem problem() {
        return problem;
    }

    /**
     * The record's topic.
     *
     * @return the topic
     */
    public String topic() {
        return topic;
    }

    /**
     * The record's partition.
     *
     * @return the partition
     */
    public int partition() {
        return partition;
    }

    /**
     * The record's offset.
     *
     * @return the offset
     */
    public long offset() {
        return offset;
    }
}
