package io.outbox.relay.internal;

import io.outbox.relay.BrokerUnreachableException;
import io.outbox.relay.ErrorTable;
import io.outbox.relay.FailureKind;
import io.outbox.relay.PoisonPolicy;
import io.outbox.relay.PublishResult;
import io.outbox.relay.Refusal;
import io.outbox.relay.RelayOptions;
import io.outbox.spi.OutboxMisconfigurationException;
import java.time.Duration;
import org.slf4j.Logger;

/**
 * What the relay's loop makes of failures: the first failure of a pass and whether it is fatal
 * (R6), whether a refusal no retry heals stops the relay (before the first good contact with its
 * side) or is reported once and retried (R13), and the log lines of store errors and of the stop.
 * Run by the loop thread only; {@link Refusals} carries what other threads read.
 */
final class LoopFailures {

    private static final Logger LOG = RelayLog.LOG;

    private final String relayId;
    private final Refusals refusals;
    /** The first failure since the last backoff; a misconfiguration or an Error wins over others. */
    private Throwable failure;
    /** R13: a lease round completed, so a store refusal is no longer fatal. */
    private boolean storeStarted;
    /** R13: the broker acknowledged a record, so a Kafka refusal is no longer fatal. */
    private boolean brokerStarted;

    LoopFailures(String relayId, Refusals refusals) {
        this.relayId = relayId;
        this.refusals = refusals;
    }

    /** Whether a failure is noted and not yet taken. */
    boolean noted() {
        return failure != null;
    }

    /** Notes a failure; a misconfiguration or an Error wins over an earlier failure of another kind. */
    void note(Throwable e) {
        if (failure == null || rank(e) > rank(failure)) {
            failure = e;
        }
    }

    private static int rank(Throwable e) {
        return errorIn(e) != null ? 2 : e instanceof OutboxMisconfigurationException ? 1 : 0;
    }

    /**
     * The {@link Error} that is {@code e} or one of its causes, else null. A driver may wrap one (the
     * PostgreSQL driver reports an {@link OutOfMemoryError} while reading rows as an SQLException);
     * either way the process's state is in doubt and retrying would only repeat it with every lease
     * dropped, so the relay stops on it as on any other fatal error (R6, R12).
     */
    static Error errorIn(Throwable e) {
        Throwable t = e;
        for (int depth = 0; t != null && depth < 32; depth++) {
            if (t instanceof Error error) {
                return error;
            }
            t = t.getCause() == t ? null : t.getCause();
        }
        return null;
    }

    /** Takes the noted failure; throws it when it is fatal (R6), else returns it for a backoff. */
    RuntimeException take() {
        Throwable taken = failure;
        failure = null;
        if (taken instanceof Error error) {
            throw error;
        }
        if (errorIn(taken) != null) {
            throw (RuntimeException) taken; // fatal: caused by an Error
        }
        if (taken instanceof OutboxMisconfigurationException fatal) {
            throw fatal;
        }
        return (RuntimeException) taken;
    }

    /**
     * R13: a lease round completed; from now on a store refusal is reported and retried. The start
     * is settled when the relay owns no bucket: it has nothing to publish.
     *
     * @param ownsNone whether the round left the relay without a bucket
     */
    void storeSucceeded(boolean ownsNone) {
        if (!storeStarted) {
            storeStarted = true;
            refusals.firstLeaseRound().complete(null);
        }
        if (ownsNone) {
            settled();
        }
        ended(refusals.succeeded(Refusals.STORE));
    }

    /** R13: a look at the owned buckets; with nothing pending the start is settled. */
    void discovered(boolean pending) {
        if (!pending) {
            settled();
        }
    }

    /** R13: the broker acknowledged a record; from now on a Kafka refusal is reported and retried. */
    void brokerSucceeded() {
        brokerStarted = true;
        settled();
        ended(refusals.succeeded(Refusals.KAFKA));
    }

    /** R13: the start is settled; a no-op before the first lease round or once done. */
    private void settled() {
        if (storeStarted) {
            refusals.startSettled().complete(null);
        }
    }

    private void ended(Refusal refusal) {
        if (refusal != null) {
            LOG.info("the {} refusal ended: calls succeed again (R13) relayId={} refusedSince={}", refusal.side(),
                    relayId, refusal.since());
        }
    }

    /**
     * R13: the error table's row of a Kafka refusal no retry heals; null for other errors. A failure
     * that does not stop the relay settles its start.
     *
     * @throws OutboxMisconfigurationException for a refusal before the broker's first
     *     acknowledgement: the relay stops on it (R6)
     */
    ErrorTable.Row kafkaRefusal(Throwable error) {
        ErrorTable.Row row = refusalRow(error);
        if (row != null && row.stops(brokerStarted)) {
            throw refusedAtStart("the Kafka broker", "it acknowledged a record", row, error);
        }
        settled(); // the broker answered the first publish with a failure the relay retries
        return row;
    }

    /**
     * R13: the error table's row of a store refusal no retry heals; null for other errors.
     *
     * @throws OutboxMisconfigurationException for a refusal before the first lease round: the relay
     *     stops on it (R6)
     */
    ErrorTable.Row storeRefusal(Throwable error) {
        ErrorTable.Row row = refusalRow(error);
        if (row != null && row.stops(storeStarted)) {
            throw refusedAtStart("the store", "its first lease round", row, error);
        }
        return row;
    }

    private static ErrorTable.Row refusalRow(Throwable error) {
        return error instanceof OutboxMisconfigurationException ? null : ErrorTable.refusal(error).orElse(null);
    }

    private static OutboxMisconfigurationException refusedAtStart(String who, String goodContact, ErrorTable.Row row,
                                                                  Throwable error) {
        return new OutboxMisconfigurationException(who + " refused the relay before " + goodContact + ", for a "
                + "reason no retry heals (R13): " + row.meaning() + "; error: " + LogText.oneLine(String.valueOf(error)),
                error);
    }

    /** Notes an unreachable cluster, when the error says so; true if it did. */
    private boolean unreachable(Throwable error) {
        int depth = 0;
        for (Throwable t = error; t != null && depth < 16; t = t.getCause() == t ? null : t.getCause(), depth++) {
            if (t instanceof BrokerUnreachableException e) {
                refusals.unreachable(e);
                return true;
            }
        }
        return false;
    }

    /**
     * R3, R12, R13: the log line of a failed publish the bucket retries, the {@code failures}-th in a
     * row: one ERROR line when a refusal begins (DEBUG while it lasts), a WARN for a message's own
     * failure when its guard says so, DEBUG for an unreachable cluster (the publisher logs that at a
     * bounded rate), else a WARN.
     */
    void logPublishFailure(TaskOutcome outcome, ErrorTable.Row refusal, int failures, long delayMillis,
                           PoisonPolicy policy) {
        int bucket = outcome.bucket();
        PublishResult result = outcome.result();
        HeadFailures.Handled handled = outcome.failure();
        PoisonGuard.Verdict verdict = handled == null ? null : handled.verdict();
        String error = LogText.oneLine(String.valueOf(result.firstError()));
        if (refusal != null) {
            if (refusals.refused(Refusals.KAFKA, refusal, error)) {
                LOG.error("the Kafka broker refuses the producer for a reason no retry heals; retrying, as it may be "
                        + "restored (R13) relayId={} bucket={} count={} failures={} backoff.ms={} cause={} error={}",
                        relayId, bucket, outcome.batchSize(), failures, delayMillis, refusal.meaning(), error);
            } else {
                LOG.debug("the Kafka broker still refuses the producer relayId={} bucket={} failures={} backoff.ms={} "
                        + "error={}", relayId, bucket, failures, delayMillis, error);
            }
        } else if (handled != null && handled.conflict() != null) {
            LOG.warn("cannot move a message to the dead letters: another dead letter holds its id; its bucket "
                    + "waits behind it relayId={} bucket={} messageId={} attempts={} backoff.ms={} error={} "
                    + "conflict={}", relayId, bucket, verdict.messageId(), verdict.attempts(), delayMillis, error,
                    LogText.oneLine(handled.conflict().getMessage()));
        } else if (verdict != null && verdict.kind() == FailureKind.MESSAGE) {
            if (verdict.warn()) {
                LOG.warn("message failed for a reason of its own; its bucket waits behind it (poison.policy={}) "
                        + "relayId={} bucket={} messageId={} attempts={} backoff.ms={} error={}",
                        policy.configName(), relayId, bucket, verdict.messageId(), verdict.attempts(),
                        delayMillis, error);
            }
        } else if (unreachable(result.firstError())) {
            LOG.debug("publish failed: no broker reachable relayId={} bucket={} count={} failures={} backoff.ms={} "
                    + "error={}", relayId, bucket, outcome.batchSize(), failures, delayMillis, error);
        } else {
            LOG.warn("publish failed; retrying from the first unacknowledged message relayId={} bucket={} "
                    + "count={} acknowledged={} messageId={} failures={} backoff.ms={} error={}", relayId, bucket,
                    outcome.batchSize(), result.acknowledged(), verdict == null ? null : verdict.messageId(), failures,
                    delayMillis, error);
        }
    }

    /**
     * R5 for a store without lease renewal: a publish over its budget may have outlived its lease.
     *
     * @throws OutboxMisconfigurationException when the publish took longer than {@code budget}
     */
    static void checkPublishBudget(TaskOutcome outcome, Duration budget) {
        long took = outcome.publishMillis();
        if (took > budget.toMillis()) {
            throw new OutboxMisconfigurationException("publishing " + outcome.batchSize() + " messages of bucket "
                    + outcome.bucket() + " took " + took + " ms, more than "
                    + RelayOptions.MAX_PUBLISH_DURATION_MS_CONFIG + " (" + budget.toMillis() + "); the store cannot "
                    + "renew leases, so the lease may have ended during the publish. Raise "
                    + RelayOptions.MAX_PUBLISH_DURATION_MS_CONFIG + " and " + RelayOptions.LEASE_DURATION_MS_CONFIG
                    + ", or bound the publisher more tightly (Kafka: max.block.ms + delivery.timeout.ms)");
        }
    }

    /** R3, R13: the log line of a failed store call, the {@code failures}-th in a row. */
    void logStoreError(RuntimeException e, ErrorTable.Row refusal, int failures, long delayMillis) {
        if (refusal != null) {
            String error = LogText.oneLine(e.toString());
            if (refusals.refused(Refusals.STORE, refusal, error)) {
                LOG.error("the store refuses the relay for a reason no retry heals; dropping leases and retrying, as "
                        + "it may be restored (R13) relayId={} failures={} backoff.ms={} cause={} error={}", relayId,
                        failures, delayMillis, refusal.meaning(), error);
            } else {
                LOG.debug("the store still refuses the relay relayId={} failures={} backoff.ms={} error={}", relayId,
                        failures, delayMillis, error);
            }
        } else if (failures == 1) {
            LOG.warn("store call failed; dropping leases and retrying relayId={} failures={} backoff.ms={}", relayId,
                    failures, delayMillis, e);
        } else {
            LOG.warn("store call failed; dropping leases and retrying relayId={} failures={} backoff.ms={} error={}",
                    relayId, failures, delayMillis, LogText.oneLine(e.toString()));
        }
    }

    /** The stop's log line: INFO for a graceful stop, else one ERROR line that says what to fix (R6). */
    void logStop(Throwable fatal, RelayOptions options) {
        if (fatal == null) {
            LOG.info("relay stopped relayId={}", relayId);
        } else if (errorIn(fatal) instanceof OutOfMemoryError) {
            // Fatal rather than a store error: retrying would drop every lease each round and deliver
            // nothing. The orchestrator restarts the process; these are the knobs that decide the memory.
            LOG.error("relay stopped: out of memory relayId={} maxHeapBytes={} {}={} {}={} prefetch={}; lower {} "
                    + "or {}, or raise the heap (-Xmx), then restart error={}", relayId, Runtime.getRuntime().maxMemory(),
                    RelayOptions.BATCH_MAX_BYTES_CONFIG, options.batchMaxBytes(), RelayOptions.BATCH_SIZE_CONFIG,
                    options.batchSize(), options.prefetch(), RelayOptions.BATCH_MAX_BYTES_CONFIG,
                    RelayOptions.BATCH_SIZE_CONFIG, LogText.oneLine(fatal.toString()), fatal);
        } else if (fatal instanceof OutboxMisconfigurationException) {
            // R6: the message says what to fix; a stack trace would only bury it.
            LOG.error("relay stopped on a misconfiguration relayId={} error={}", relayId,
                    LogText.oneLine(fatal.getMessage()));
        } else {
            LOG.error("relay stopped on a fatal error relayId={} error={}", relayId, LogText.oneLine(fatal.toString()),
                    fatal);
        }
    }
}
