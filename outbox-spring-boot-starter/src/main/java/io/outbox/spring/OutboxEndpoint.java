package io.outbox.spring;

import io.outbox.relay.OutboxRelay;
import io.outbox.spi.OutboxStore;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.IntStream;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import io.outbox.spi.DeadLetter;
import io.outbox.spi.DeadLetters;
import java.time.Instant;
import java.util.UUID;

/**
 * The {@code outbox} Actuator endpoint, once exposed: {@code GET /actuator/outbox} gives the relay's
 * state and the pending messages per bucket; with a store that keeps dead letters (capability C4),
 * {@code GET /actuator/outbox/dead-letters} lists them (the first {@value #DEAD_LETTER_PAGE}, by id)
 * and {@code POST /actuator/outbox/{messageId}} replays one into its bucket. Thread-safe.
 */
@Endpoint(id = "outbox")
public final class OutboxEndpoint {

    /** The most pending messages counted per bucket; a bucket holding more shows this number and {@code capped}. */
    public static final int PENDING_COUNT_CAP = 1000;

    /** The most dead letters {@link #deadLetters(String)} lists. */
    public static final int DEAD_LETTER_PAGE = 100;

    /** The selector of {@link #deadLetters(String)}. */
    public static final String DEAD_LETTERS = "dead-letters";

    private final OutboxStore store;
    private final OutboxRelay relay;
    private final OutboxRelayMonitor monitor;
    private final int bucketCount;

    /**
     * An endpoint.
     *
     * @param store the store; not null
     * @param relay the relay, or null when this application runs none
     * @param monitor what the relay reported, or null
     * @param bucketCount {@code outbox.bucket-count}
     */
    public OutboxEndpoint(OutboxStore store, OutboxRelay relay, OutboxRelayMonitor monitor, int bucketCount) {
        this.store = Objects.requireNonNull(store, "store must not be null");
        this.relay = relay;
        this.monitor = monitor;
        this.bucketCount = OutboxRelaySettings.bucketCount(bucketCount);
    }

    /**
     * The pending messages of one bucket, counted up to a cap.
     *
     * @param count pending messages, at most {@link #PENDING_COUNT_CAP}
     * @param capped true when the bucket holds at least {@link #PENDING_COUNT_CAP}
     */
    public record BucketPending(int count, boolean capped) {
    }

    /**
     * The endpoint's answer.
     *
     * @param relayRunning whether a relay runs in this application
     * @param relayId its id, or null without a relay
     * @param bucketCount the configured bucket count
     * @param ownedBuckets the buckets it leases, ascending
     * @param stalledBuckets buckets whose publishes failed since their last success
     * @param pending pending messages per bucket that has any, ascending by bucket
     */
    public record Report(boolean relayRunning, String relayId, int bucketCount, List<Integer> ownedBuckets,
                         Map<Integer, OutboxRelayMonitor.Stall> stalledBuckets, Map<Integer, BucketPending> pending) {
    }

    /**
     * Reads the state: one store call to find the buckets with pending messages, then one batch read
     * (at most {@link #PENDING_COUNT_CAP} rows) per such bucket.
     *
     * @return the report
     */
    @ReadOperation
    public Report outbox() {
        List<Integer> all = IntStream.range(0, bucketCount).boxed().toList();
        Map<Integer, BucketPending> pending = new LinkedHashMap<>();
        for (int bucket : store.bucketsWithPending(all)) {
            int count = store.nextBatch(bucket, PENDING_COUNT_CAP).size();
            pending.put(bucket, new BucketPending(count, count >= PENDING_COUNT_CAP));
        }
        return new Report(relay != null && relay.isRunning(), relay == null ? null : relay.relayId(), bucketCount,
                monitor == null ? List.of() : monitor.ownedBuckets(),
                monitor == null ? Map.of() : monitor.stalledBuckets(), pending);
    }

    /**
     * One dead letter, without its bytes.
     *
     * @param messageId the message id
     * @param bucket its bucket
     * @param topic its topic
     * @param createdAt when it was enqueued
     * @param reason the last failure's message
     * @param causeClass the last failure's exception class
     * @param attempts the message-specific failures counted
     * @param deadLetteredAt when it was moved
     */
    public record DeadLetterSummary(UUID messageId, int bucket, String topic, Instant createdAt, String reason,
                                    String causeClass, int attempts, Instant deadLetteredAt) {
    }

    /**
     * Lists the first {@value #DEAD_LETTER_PAGE} dead letters, ordered by message id (C4).
     *
     * @param section must be {@value #DEAD_LETTERS}
     * @return the dead letters, without their bytes
     * @throws InvalidEndpointRequestException (HTTP 400) for another section, or when the store keeps
     *     no dead letters
     */
    @ReadOperation
    public List<DeadLetterSummary> deadLetters(@Selector String section) {
        if (!DEAD_LETTERS.equals(section)) {
            throw new InvalidEndpointRequestException("unknown outbox section '" + section + "'; the endpoint has "
                    + DEAD_LETTERS, "unknown section");
        }
        return deadLetterStore().deadLetters(null, DEAD_LETTER_PAGE).stream()
                .map(OutboxEndpoint::summary).toList();
    }

    /**
     * Replays a dead letter into its bucket, after what is pending there now, with the same id and
     * bytes (C4).
     *
     * @param messageId the dead letter's message id
     * @return {@code replayed}: true when replayed, false when there is no dead letter with that id
     * @throws InvalidEndpointRequestException (HTTP 400) when the id is not a UUID or the store keeps
     *     no dead letters
     */
    @WriteOperation
    public Map<String, Object> replay(@Selector String messageId) {
        UUID id;
        try {
            id = UUID.fromString(messageId);
        } catch (IllegalArgumentException e) {
            throw new InvalidEndpointRequestException("not a message id: '" + messageId + "'", "not a UUID");
        }
        return Map.of("messageId", id.toString(), "replayed", deadLetterStore().replayDeadLetter(id));
    }

    private DeadLetters deadLetterStore() {
        if (store instanceof DeadLetters deadLetters) {
            return deadLetters;
        }
        throw new InvalidEndpointRequestException("the outbox store " + store.getClass().getSimpleName()
                + " keeps no dead letters (capability C4)", "no dead letters");
    }

    private static DeadLetterSummary summary(DeadLetter d) {
        return new DeadLetterSummary(d.messageId(), d.bucket(), d.topic(), d.createdAt(), d.failure().reason(),
                d.failure().causeClass(), d.failure().attempts(), d.deadLetteredAt());
    }
}
