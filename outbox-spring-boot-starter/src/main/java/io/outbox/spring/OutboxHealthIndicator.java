package io.outbox.spring;

import io.outbox.notify.NotificationTransport;
import io.outbox.relay.OutboxRelay;
import io.outbox.relay.Refusal;
import io.outbox.relay.internal.Redactor;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.PendingMetrics;
import io.outbox.spi.PendingSnapshot;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The outbox's health ({@code /actuator/health/outbox}). Details: {@code relayRunning},
 * {@code relayId}, {@code ownedBuckets}, {@code stalledBuckets} (bucket to failures in a row and
 * the last error), {@code notifications} when a notification transport wakes the relay
 * ({@code transport}, {@code connected}, {@code since}: connected since, or down since, ISO-8601;
 * rule N6), and, when the store reports its backlog (capability C2), {@code pending} and
 * {@code oldestPendingAge} (ISO-8601) against {@code outbox.health.oldest-pending-threshold}.
 *
 * <p>DOWN when the relay should run and does not (never started, stopped, or stopped on a fatal
 * error, rule R6, which is shown as {@code fatalError}), while a refusal no retry heals lasts after a
 * good start (rule R13: {@code refusal} with {@code side}, {@code cause}, {@code error} and
 * {@code since}; the relay retries meanwhile), while no broker of the bootstrap servers answers
 * ({@code brokerUnreachable}, naming them and the time since the last contact: the relay's last
 * publish found none, or, also while the relay has nothing to publish, no broker answered the periodic
 * check for {@code outbox.health.broker-unreachable-threshold}), or when the oldest
 * pending message is older than the threshold; UP otherwise, also while buckets are stalled (a publish failure is retried,
 * rule R3: the age threshold is what says it lasts too long) and while the notification transport
 * is down (the relay polls meanwhile, rule N4). Without a relay (write-only service)
 * only the backlog counts. A failed backlog query is DOWN with the error. Thread-safe; each call
 * runs one backlog query with a timeout of 5 seconds.
 */
public final class OutboxHealthIndicator implements HealthIndicator {

    /** The timeout of the backlog query behind each health check. */
    public static final Duration QUERY_TIMEOUT = Duration.ofSeconds(5);

    private final OutboxStore store;
    private final OutboxRelay relay;
    private final OutboxRelayMonitor monitor;
    private final Duration threshold;
    private final Clock clock;
    private final OutboxBrokerCheck brokerCheck;

    /**
     * A health indicator.
     *
     * @param store the store; not null
     * @param relay the relay, or null when this application runs none
     * @param monitor what the relay reported, or null when it runs none
     * @param threshold the oldest pending age above which the health is DOWN; not null, positive
     * @param clock the clock ages are measured with; not null
     * @throws IllegalArgumentException naming the property if the threshold is not positive
     */
    public OutboxHealthIndicator(OutboxStore store, OutboxRelay relay, OutboxRelayMonitor monitor,
                                 Duration threshold, Clock clock) {
        this(store, relay, monitor, threshold, clock, null);
    }

    /**
     * A health indicator that also asks the periodic broker check.
     *
     * @param store the store; not null
     * @param relay the relay, or null when this application runs none
     * @param monitor what the relay reported, or null when it runs none
     * @param threshold the oldest pending age above which the health is DOWN; not null, positive
     * @param clock the clock ages are measured with; not null
     * @param brokerCheck whether a broker answered the periodic check, or null without one
     * @throws IllegalArgumentException naming the property if the threshold is not positive
     */
    OutboxHealthIndicator(OutboxStore store, OutboxRelay relay, OutboxRelayMonitor monitor,
                          Duration threshold, Clock clock, OutboxBrokerCheck brokerCheck) {
        this.brokerCheck = brokerCheck;
        this.store = Objects.requireNonNull(store, "store must not be null");
        this.relay = relay;
        this.monitor = monitor;
        Objects.requireNonNull(threshold, "threshold must not be null");
        if (threshold.isNegative() || threshold.isZero()) {
            throw new IllegalArgumentException("Invalid outbox configuration: outbox.health.oldest-pending-threshold "
                    + "must be positive but was " + threshold);
        }
        this.threshold = threshold;
        this.clock = Objects.requireNonNull(clock, "clock must not be null");
    }

    @Override
    public Health health() {
        Health.Builder health = Health.up();
        if (relay != null) {
            boolean running = relay.isRunning();
            health.withDetail("relayRunning", running).withDetail("relayId", relay.relayId());
            if (!running) {
                health.down();
            }
            String unreachable = relay.brokerUnreachable().map(Throwable::getMessage)
                    .or(() -> brokerCheck == null ? Optional.empty() : brokerCheck.unreachable()).orElse(null);
            if (unreachable != null) {
                health.down().withDetail("brokerUnreachable", Redactor.patternsOnly().redact(unreachable));
            }
            Refusal refusal = relay.refusal().orElse(null);
            if (refusal != null) {
                // R13: a login, grant or ACL refused after a good start; the relay retries meanwhile.
                health.down().withDetail("refusal", Map.of("side", refusal.side(), "cause", refusal.row().meaning(),
                        "error", Redactor.patternsOnly().redact(refusal.error()), "since", refusal.since().toString()));
            }
            if (monitor != null) {
                health.withDetail("ownedBuckets", monitor.ownedBuckets())
                        .withDetail("stalledBuckets", monitor.stalledBuckets());
                if (monitor.fatalError() != null) {
                    health.withDetail("fatalError", Redactor.patternsOnly().redact(monitor.fatalError().toString()));
                }
            }
            NotificationTransport.State notifications = relay.notificationState();
            if (notifications != null) {
                health.withDetail("notifications", Map.of("transport", notifications.transport(),
                        "connected", notifications.connected(), "since", notifications.since().toString()));
            }
        } else {
            health.withDetail("relayRunning", false).withDetail("relayEnabled", false);
        }
        PendingMetrics backlog = store.pendingMetrics().orElse(null);
        if (backlog != null) {
            try {
                PendingSnapshot snapshot = backlog.pendingMetrics(QUERY_TIMEOUT);
                health.withDetail("pending", snapshot.pendingCount());
                Duration age = snapshot.oldestCreatedAt() == null ? Duration.ZERO
                        : Duration.between(snapshot.oldestCreatedAt(), clock.instant());
                if (age.isNegative()) {
                    age = Duration.ZERO;
                }
                health.withDetail("oldestPendingAge", age.toString())
                        .withDetail("oldestPendingThreshold", threshold.toString());
                if (age.compareTo(threshold) > 0) {
                    health.down();
                }
            } catch (RuntimeException e) {
                health.down(e);
            }
        }
        return health.build();
    }
}
