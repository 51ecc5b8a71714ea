package io.outbox.spi;

import io.outbox.OutboxHeader;
import io.outbox.spi.support.OutboxHeaderCodec;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * A message a relay gave up on, as a store's dead letters keep it (capability C4): the message's
 * stored bytes exactly as they were pending, and why it was moved.
 *
 * <p>The headers are kept as their stored blob ({@link OutboxHeaderCodec} version 1), not
 * decoded: a message moved because its blob was corrupt is still listed, shown and purged;
 * {@link #decodedHeaders()} decodes on demand. Byte arrays are copied in and out; equality
 * compares them by content.
 *
 * @param messageId the message's id; not null
 * @param bucket its bucket, {@code >= 0}
 * @param topic its topic as stored; not null
 * @param key the serialized key; null for none; copied
 * @param value the serialized value; null for a tombstone; copied
 * @param headers the stored header blob; not null; copied
 * @param partition the explicit partition, or null
 * @param createdAt the message's creation time; not null
 * @param failure why it was moved; not null
 * @param deadLetteredAt when the store moved it, by the store's clock; not null
 */
public record DeadLetter(UUID messageId, int bucket, String topic, byte[] key, byte[] value, byte[] headers,
                         Integer partition, Instant createdAt, DeadLetterFailure failure, Instant deadLetteredAt) {

    /**
     * Validates and copies the fields.
     *
     * @param messageId see the record component
     * @param bucket see the record component
     * @param topic see the record component
     * @param key see the record component
     * @param value see the record component
     * @param headers see the record component
     * @param partition see the record component
     * @param createdAt see the record component
     * @param failure see the record component
     * @param deadLetteredAt see the record component
     * @throws NullPointerException if a non-nullable field is null
     * @throws IllegalArgumentException if {@code bucket < 0}
     */
    public DeadLetter {
        Objects.requireNonNull(messageId, "messageId must not be null");
        if (bucket < 0) {
            throw new IllegalArgumentException("bucket must be >= 0 but was " + bucket);
        }
        Objects.requireNonNull(topic, "topic must not be null");
        key = key == null ? null : key.clone();
        value = value == null ? null : value.clone();
        headers = Objects.requireNonNull(headers, "headers must not be null").clone();
        Objects.requireNonNull(createdAt, "createdAt must not be null");
        Objects.requireNonNull(failure, "failure must not be null");
        Objects.requireNonNull(deadLetteredAt, "deadLetteredAt must not be null");
    }

    /**
     * The serialized key.
     *
     * @return a copy, or null
     */
    @Override
    public byte[] key() {
        return key == null ? null : key.clone();
    }

    /**
     * The serialized value.
     *
     * @return a copy, or null
     */
    @Override
    public byte[] value() {
        return value == null ? null : value.clone();
    }

    /**
     * The stored header blob.
     *
     * @return a copy
     */
    @Override
    public byte[] headers() {
        return headers.clone();
    }

    /**
     * The headers, decoded.
     *
     * @return the headers in order, immutable
     * @throws CorruptHeadersException if the blob cannot be decoded (often why it was moved)
     */
    public List<OutboxHeader> decodedHeaders() {
        return OutboxHeaderCodec.decode(headers);
    }

    /**
     * Whether this dead letter holds the given record: the same topic, key, value, header blob and
     * partition (the message id, the creation time and the failure are not compared). A store
     * uses it to tell a repeat of a dead-lettered message from a different message with the same
     * id ({@link DeadLetters#moveToDeadLetters}).
     *
     * @param topic the other record's topic; not null
     * @param key its serialized key, or null
     * @param value its serialized value, or null
     * @param headers its stored header blob; not null
     * @param partition its explicit partition, or null
     * @return true when all five are equal (byte arrays by content)
     */
    public boolean sameRecord(String topic, byte[] key, byte[] value, byte[] headers, Integer partition) {
        return this.topic.equals(topic) && Arrays.equals(this.key, key)
                && Arrays.equals(this.value, value) && Arrays.equals(this.headers, headers)
                && Objects.equals(this.partition, partition);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DeadLetter d && messageId.equals(d.messageId) && bucket == d.bucket
                && topic.equals(d.topic) && Arrays.equals(key, d.key)
                && Arrays.equals(value, d.value) && Arrays.equals(headers, d.headers)
                && Objects.equals(partition, d.partition) && createdAt.equals(d.createdAt)
                && failure.equals(d.failure) && deadLetteredAt.equals(d.deadLetteredAt);
    }

    @Override
    public int hashCode() {
        return Objects.hash(messageId, bucket, topic, Arrays.hashCode(key), Arrays.hashCode(value),
                Arrays.hashCode(headers), partition, createdAt, failure, deadLetteredAt);
    }

    /** Names the message and the failure; never shows key, value or headers. */
    @Override
    public String toString() {
        return "DeadLetter[messageId=" + messageId + ", bucket=" + bucket + ", topic=" + topic + ", createdAt="
                + createdAt + ", failure=" + failure + ", deadLetteredAt=" + deadLetteredAt + "]";
    }
}
