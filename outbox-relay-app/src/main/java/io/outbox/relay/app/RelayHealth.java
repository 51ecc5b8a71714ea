package io.outbox.relay.app;

import io.outbox.relay.RelayListener;
import io.outbox.relay.internal.BrokerProbe;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.common.errors.RetriableException;

/**
 * Readiness of the standalone relay (rule H1), from what the relay reports: not ready before the
 * first successful lease round, while the store or the broker has been unreachable longer than a
 * threshold (the broker's reachability also from a periodic check, {@link BrokerProbe}, so an idle
 * relay notices it too), or after a fatal error. Thread-safe: the relay's threads report, the HTTP threads ask.
 */
final class RelayHealth implements RelayListener, BrokerProbe.Listener {

    /**
     * What {@code /health/ready} says.
     *
     * @param ready whether the relay is ready
     * @param reason why, in a few words; not null
     */
    record Readiness(boolean ready, String reason) {
    }

    private final Clock clock;
    private final Duration threshold;
    private boolean leaseRoundDone;
    private long storeDownSince = -1;
    private long brokerDownSince = -1;
    private String lastStoreError;
    private String lastBrokerError;
    private String fatal;
    /** When a broker last answered (a check or an acknowledged record), epoch ms; the start until then. */
    private long lastBrokerContact;
    /** Whether the last periodic check ({@link BrokerProbe}) found no broker. */
    private boolean brokerSilent;
    private String lastSilence;

    /**
     * Creates the health of one relay.
     *
     * @param clock the clock the threshold is measured with; not null
     * @param threshold how long the store or the broker may be unreachable; positive
     */
    RelayHealth(Clock clock, Duration threshold) {
        this.clock = clock;
        this.threshold = threshold;
        this.lastBrokerContact = clock.millis();
    }

    /**
     * Whether the relay is ready now.
     *
     * @return the answer and its reason
     */
    synchronized Readiness readiness() {
        if (fatal != null) {
            return new Readiness(false, "stopped on a fatal error: " + fatal);
        }
        long now = clock.millis();
        if (storeDownSince >= 0 && now - storeDownSince >= threshold.toMillis()) {
            return new Readiness(false, "store unreachable for " + (now - storeDownSince) + " ms: " + lastStoreError);
        }
        if (brokerDownSince >= 0 && now - brokerDownSince >= threshold.toMillis()) {
            return new Readiness(false, "broker unreachable for " + (now - brokerDownSince) + " ms: "
                    + lastBrokerError);
        }
        if (brokerSilent && now - lastBrokerContact >= threshold.toMillis()) {
            return new Readiness(false, "broker unreachable for " + (now - lastBrokerContact) + " ms (no answer to "
                    + "the periodic check since the last contact): " + lastSilence);
        }
        if (!leaseRoundDone) {
            return new Readiness(false, "no successful lease round yet");
        }
        return new Readiness(true, "lease rounds succeed");
    }

    @Override
    public synchronized void onLeaseRound(List<Integer> ownedBuckets) {
        leaseRoundDone = true;
        storeDownSince = -1;
    }

    @Override
    public synchronized void onStoreError(Throwable error) {
        if (storeDownSince < 0) {
            storeDownSince = clock.millis();
        }
        lastStoreError = error.getClass().getName();
    }

    @Override
    public synchronized void onPublished(int bucket, int count) {
        brokerDownSince = -1;
        brokerAnswered();
    }

    /** A broker answered the periodic check ({@link BrokerProbe}); any thread. */
    @Override
    public synchronized void brokerAnswered() {
        lastBrokerContact = clock.millis();
        brokerSilent = false;
    }

    /**
     * No broker answered the periodic check ({@link BrokerProbe}); any thread. Readiness turns
     * 503 once the last contact is older than the threshold.
     *
     * @param error what the check met, in a few words; not null
     */
    @Override
    public synchronized void brokerSilent(String error) {
        brokerSilent = true;
        lastSilence = error;
    }

    @Override
    public synchronized void onPublishFailed(int bucket, int acknowledged, Throwable error) {
        if (acknowledged > 0) {
            brokerDownSince = -1;
        } else if (error instanceof RetriableException && brokerDownSince < 0) {
            brokerDownSince = clock.millis();
            lastBrokerError = error.getClass().getName();
        }
    }

    @Override
    public synchronized void onTerminated(Throwable fatalError) {
        if (fatalError != null) {
            fatal = fatalError.getClass().getName();
        }
    }

    /**
     * Marks a fatal error the runner met outside the relay (an invalid store configuration).
     *
     * @param error the error's kind; not null
     */
    synchronized void fatal(String error) {
        fatal = error;
    }
}
