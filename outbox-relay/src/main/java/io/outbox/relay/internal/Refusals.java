package io.outbox.relay.internal;

import io.outbox.relay.BrokerUnreachableException;
import io.outbox.relay.ErrorTable;
import io.outbox.relay.Refusal;
import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The refusals after a good start that are current (rule R13), one per side: set by the loop
 * thread when a call to the side is refused, cleared when a call to it succeeds; read by any
 * thread through {@link io.outbox.relay.OutboxRelay#refusal()}. Also the store's first good
 * contact, for {@link io.outbox.relay.OutboxRelay#firstLeaseRound()}, the settled start, for
 * {@link io.outbox.relay.OutboxRelay#startSettled()}, and the last unreachable
 * broker, for {@link io.outbox.relay.OutboxRelay#brokerUnreachable()}.
 */
final class Refusals {

    static final String KAFKA = "Kafka";
    static final String STORE = "store";

    private final AtomicReference<Refusal> kafka = new AtomicReference<>();
    private final AtomicReference<Refusal> store = new AtomicReference<>();
    private final CompletableFuture<Void> firstLeaseRound = new CompletableFuture<>();
    private final CompletableFuture<Void> startSettled = new CompletableFuture<>();
    private final AtomicReference<BrokerUnreachableException> unreachable = new AtomicReference<>();
    private final Clock clock;

    Refusals(Clock clock) {
        this.clock = clock;
    }

    /** Records a refusal of the side, keeping the first one's time while it lasts; true if none lasted. */
    boolean refused(String side, ErrorTable.Row row, String error) {
        Refusal old = slot(side).getAndUpdate(last -> new Refusal(side, row, error,
                last == null ? clock.instant() : last.since()));
        return old == null;
    }

    /** A call to the side succeeded; returns the refusal that ended, or null. A record acknowledged ends an outage. */
    Refusal succeeded(String side) {
        if (KAFKA.equals(side)) {
            unreachable.set(null);
        }
        return slot(side).getAndSet(null);
    }

    /** A publish found no broker reachable; the last such error until a record is acknowledged. */
    void unreachable(BrokerUnreachableException error) {
        unreachable.set(error);
    }

    /** The last unreachable-broker error since the last acknowledged record; null if none. */
    BrokerUnreachableException unreachable() {
        return unreachable.get();
    }

    /** Completed by the loop thread at the first lease round that succeeded (R13: the store started). */
    CompletableFuture<Void> firstLeaseRound() {
        return firstLeaseRound;
    }

    /**
     * Completed by the loop thread once the start is settled (R13): after the first lease round,
     * nothing to publish, or the broker's first answer to a publish that did not stop the relay.
     */
    CompletableFuture<Void> startSettled() {
        return startSettled;
    }

    /** The current refusal, the store's first; null if none. */
    Refusal current() {
        Refusal s = store.get();
        return s != null ? s : kafka.get();
    }

    private AtomicReference<Refusal> slot(String side) {
        return KAFKA.equals(side) ? kafka : store;
    }
}
