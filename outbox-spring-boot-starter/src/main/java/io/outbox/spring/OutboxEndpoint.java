package io.outbox.spring;

import io.outbox.MessageIds;
import io.outbox.relay.OutboxRelay;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.internal.Redactor;
import io.outbox.spi.DeadLetter;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.LeaseTable;
import io.outbox.spi.LeaseView;
import io.outbox.spi.OutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.stream.IntStream;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * The {@code outbox} Actuator endpoint, once exposed: {@code GET /actuator/outbox} gives the relay's
 * state and the pending messages per bucket; with a store that keeps dead letters (capability C4),
 * {@code GET /actuator/outbox/dead-letters} lists them (the first {@value #DEAD_LETTER_PAGE}, by id)
 * and {@code POST /actuator/outbox/{messageId}} replays one into its bucket;
 * {@code GET /actuator/outbox/leases} shows the fleet's leases as the store holds them (capability
 * C6); {@code POST /actuator/outbox/relay/drain} and {@code POST /actuator/outbox/relay/resume} drain
 * and resume this application's relay (rule H3). The write operations are Actuator write operations:
 * they answer once the endpoint is exposed over HTTP and its access allows writes
 * ({@code management.endpoint.outbox.access}), and belong behind Spring Security like any. Thread-safe.
 */
@Endpoint(id = "outbox")
public final class OutboxEndpoint {

    /** The most pending messages counted per bucket; a bucket holding more shows this number and {@code capped}. */
    public static final int PENDING_COUNT_CAP = 1000;

    /** The most dead letters {@link #deadLetters(String)} lists. */
    public static final int DEAD_LETTER_PAGE = 100;

    /** The section of {@link #section(String)} that lists dead letters. */
    public static final String DEAD_LETTERS = "dead-letters";

    /** The section of {@link #section(String)} that shows the fleet's leases. */
    public static final String LEASES = "leases";

    /** The first selector of {@link #relay(String, String)}. */
    public static final String RELAY = "relay";

    private final OutboxStore store;
    private final OutboxRelay relay;
    private final OutboxRelayMonitor monitor;
    private final int bucketCount;
    private final Duration leaseDuration;

    /**
     * An endpoint; relays count as alive while their heartbeat is younger than the relay's lease
     * duration, or {@link RelayOptions#DEFAULT_LEASE_DURATION} without a relay.
     *
     * @param store the store; not null
     * @param relay the relay, or null when this application runs none
     * @param monitor what the relay reported, or null
     * @param bucketCount {@code outbox.bucket-count}
     */
    public OutboxEndpoint(OutboxStore store, OutboxRelay relay, OutboxRelayMonitor monitor, int bucketCount) {
        this(store, relay, monitor, bucketCount,
                relay == null ? RelayOptions.DEFAULT_LEASE_DURATION : relay.options().leaseDuration());
    }

    /**
     * An endpoint.
     *
     * @param store the store; not null
     * @param relay the relay, or null when this application runs none
     * @param monitor what the relay reported, or null
     * @param bucketCount {@code outbox.bucket-count}
     * @param leaseDuration the fleet's lease duration ({@code outbox.relay.lease-duration}): a relay
     *     counts as alive while its heartbeat is younger; positive
     * @throws IllegalArgumentException if {@code leaseDuration} is not positive, naming it
     */
    public OutboxEndpoint(OutboxStore store, OutboxRelay relay, OutboxRelayMonitor monitor, int bucketCount,
                          Duration leaseDuration) {
        this.store = Objects.requireNonNull(store, "store must not be null");
        this.relay = relay;
        this.monitor = monitor;
        this.bucketCount = OutboxRelaySettings.bucketCount(bucketCount);
        Objects.requireNonNull(leaseDuration, "leaseDuration must not be null");
        if (leaseDuration.isZero() || leaseDuration.isNegative()) {
            throw new IllegalArgumentException("leaseDuration must be positive but was " + leaseDuration);
        }
        this.leaseDuration = leaseDuration;
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
     * One dead letter, without its bytes. Stored text is served as stored (JSON escapes it), with
     * the credentials of URLs and of {@code password=}-like assignments hidden.
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
     * One section of the endpoint: {@code GET /actuator/outbox/dead-letters}
     * ({@link #deadLetters(String)}) or {@code GET /actuator/outbox/leases} ({@link #leases()}).
     *
     * @param section {@value #DEAD_LETTERS} or {@value #LEASES}
     * @return the section's answer
     * @throws InvalidEndpointRequestException (HTTP 400) for another section, or when the store lacks
     *     the section's capability
     */
    @ReadOperation
    public Object section(@Selector String section) {
        return LEASES.equals(section) ? leases() : deadLetters(section);
    }

    /**
     * Lists the first {@value #DEAD_LETTER_PAGE} dead letters, ordered by message id (C4).
     *
     * @param section must be {@value #DEAD_LETTERS}
     * @return the dead letters, without their bytes
     * @throws InvalidEndpointRequestException (HTTP 400) for another section, or when the store keeps
     *     no dead letters
     */
    public List<DeadLetterSummary> deadLetters(String section) {
        if (!DEAD_LETTERS.equals(section)) {
            throw new InvalidEndpointRequestException("unknown outbox section '" + section + "'; the endpoint has "
                    + DEAD_LETTERS + " and " + LEASES, "unknown section");
        }
        return deadLetterStore().deadLetters(null, DEAD_LETTER_PAGE).stream()
                .map(OutboxEndpoint::summary).toList();
    }

    /**
     * A relay's heartbeat as the store holds it.
     *
     * @param relayId the relay's id
     * @param lastHeartbeat its last heartbeat
     * @param heartbeatAgeMs the heartbeat's age at the read, by the store's clock
     * @param alive whether the heartbeat is younger than the lease duration
     */
    public record RelayHeartbeat(String relayId, Instant lastHeartbeat, long heartbeatAgeMs, boolean alive) {
    }

    /**
     * A bucket's lease as the store holds it.
     *
     * @param bucket the bucket
     * @param owner the relay that last held it, or null when free
     * @param expiresAt when the lease expires, or null for a lease never taken
     * @param expiresInMs the time left at the read, by the store's clock; negative once expired
     * @param held whether an owner holds it unexpired
     */
    public record BucketLeaseView(int bucket, String owner, Instant expiresAt, long expiresInMs, boolean held) {
    }

    /**
     * The fleet's leases (C6) and this application's relay.
     *
     * @param relayId this application's relay id, or null without a relay
     * @param ownedBuckets the buckets this application's relay leases, ascending
     * @param draining whether this application's relay drains (H3)
     * @param readAt when the store read the leases, by its clock
     * @param relaysAlive how many relays are alive
     * @param relays every relay's heartbeat, by relay id
     * @param buckets every bucket's lease, ascending
     */
    public record Leases(String relayId, List<Integer> ownedBuckets, boolean draining, Instant readAt,
                         int relaysAlive, List<RelayHeartbeat> relays, List<BucketLeaseView> buckets) {
    }

    /**
     * The fleet's leases as the store holds them: every bucket's owner and expiry and every relay's
     * heartbeat (capability C6, {@link LeaseView}); one read, nothing written.
     *
     * @return the leases
     * @throws InvalidEndpointRequestException (HTTP 400) when the store cannot show its leases
     */
    public Leases leases() {
        LeaseTable table = store.leaseView().orElseThrow(() -> new InvalidEndpointRequestException("the outbox store "
                + store.getClass().getSimpleName() + " cannot show its leases (capability C6)", "no lease view"))
                .leaseTable(bucketCount);
        long now = table.readAtMillis();
        List<RelayHeartbeat> relays = table.heartbeats().entrySet().stream().map(e -> new RelayHeartbeat(e.getKey(),
                Instant.ofEpochMilli(e.getValue()), now - e.getValue(), now - e.getValue() < leaseDuration.toMillis()))
                .toList();
        List<BucketLeaseView> buckets = table.leases().stream().map(l -> new BucketLeaseView(l.bucket(), l.owner(),
                l.expiresAtMillis() == 0 ? null : Instant.ofEpochMilli(l.expiresAtMillis()), l.expiresAtMillis() - now,
                l.owner() != null && !l.isClaimable(now))).toList();
        return new Leases(relay == null ? null : relay.relayId(), relay == null ? List.of() : relay.ownedBuckets(),
                relay != null && relay.isDraining(), Instant.ofEpochMilli(now),
                (int) relays.stream().filter(RelayHeartbeat::alive).count(), relays, buckets);
    }

    /**
     * Drains or resumes this application's relay (rule H3): {@code POST /actuator/outbox/relay/drain}
     * gives its leases back once its publishes in flight end and takes none until
     * {@code POST /actuator/outbox/relay/resume}; peers take its buckets at their next lease round.
     *
     * @param section must be {@value #RELAY}
     * @param action {@code drain} or {@code resume}
     * @return {@code relayId} and {@code draining}, as the relay now stands
     * @throws InvalidEndpointRequestException (HTTP 400) for another section or action, naming it, or
     *     when this application runs no relay
     */
    @WriteOperation
    public Map<String, Object> relay(@Selector String section, @Selector String action) {
        if (!RELAY.equals(section) || !("drain".equals(action) || "resume".equals(action))) {
            throw new InvalidEndpointRequestException("unknown outbox operation '" + section + "/" + action
                    + "'; the endpoint has " + RELAY + "/drain and " + RELAY + "/resume", "unknown operation");
        }
        if (relay == null) {
            throw new InvalidEndpointRequestException("this application runs no outbox relay (outbox.relay.enabled="
                    + "false): nothing to " + action, "no relay");
        }
        if ("drain".equals(action)) {
            relay.drain();
        } else {
            relay.resume();
        }
        return Map.of("relayId", relay.relayId(), "draining", relay.isDraining());
    }

    /**
     * Replays a dead letter into its bucket, after what is pending there now, with the same id and
     * bytes (C4).
     *
     * @param messageId the dead letter's message id, a UUID in its canonical form
     *     ({@code 8-4-4-4-12} hex digits, either case; {@link MessageIds})
     * @return {@code replayed}: true when replayed, false when there is no dead letter with that id
     * @throws InvalidEndpointRequestException (HTTP 400) when the id is not a canonical UUID (the lax
     *     {@code 1-1-1-1-1} of {@link UUID#fromString} included), naming it, or the store keeps no dead
     *     letters
     */
    @WriteOperation
    public Map<String, Object> replay(@Selector String messageId) {
        UUID id;
        try {
            id = MessageIds.parse(messageId);
        } catch (IllegalArgumentException e) {
            throw new InvalidEndpointRequestException(e.getMessage(), "not a message id");
        }
        return Map.of("messageId", id.toString(), "replayed", deadLetterStore().replayDeadLetter(id));
    }

    private DeadLetters deadLetterStore() {
        return store.deadLetters().orElseThrow(() -> new InvalidEndpointRequestException("the outbox store "
                + store.getClass().getSimpleName() + " keeps no dead letters (capability C4)", "no dead letters"));
    }

    private static DeadLetterSummary summary(DeadLetter d) {
        Redactor redactor = Redactor.patternsOnly();
        return new DeadLetterSummary(d.messageId(), d.bucket(), redactor.redact(d.topic()), d.createdAt(),
                redactor.redact(d.failure().reason()), redactor.redact(d.failure().causeClass()),
                d.failure().attempts(), d.deadLetteredAt());
    }
}
