package io.outbox.relay.internal;

import io.outbox.relay.BrokerUnreachableException;
import io.outbox.relay.OutboxPublisher;
import io.outbox.relay.PoisonPolicy;
import io.outbox.relay.Refusal;
import io.outbox.relay.RelayListener;
import io.outbox.relay.RelayOptions;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStore;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The engine behind {@link io.outbox.relay.OutboxRelay}, which owns the threads that run it; a
 * facade that builds the parts and says which thread calls what, after Kafka's producer internals:
 * <ul>
 *   <li>{@link RelayLoop}, run by the loop thread ({@link #run()}): scheduling, acquisitions,
 *       bookkeeping, listener calls (R1, R3, R4, R8, R11, R12);</li>
 *   <li>{@link BucketTask}s on the store threads of {@link StoreWork}: one bucket's read, publish
 *       and delete each (R1, R2, R9, R12, C5), handing the loop one {@link TaskOutcome} each;</li>
 *   <li>{@link LeaseKeeper}, whose renewals run on the renewal thread ({@link #renewIfDue()},
 *       R5) while the loop acquires; {@link LeaseTable}, {@link PoisonGuard},
 *       {@link OwnedBuckets} and {@link WakeSignal} are the synchronized state they share;</li>
 *   <li>any thread: {@link #wakeUp()}, {@link #ownedBuckets()}, {@link #stop()}; the closing
 *       thread: {@link #terminated()}.</li>
 * </ul>
 * Unsupported internal API; {@link io.outbox.relay.OutboxRelay} is the supported one.
 */
public final class RelayEngine {

    private final WakeSignal wake = new WakeSignal();
    private final LeaseTable leases;
    private final LeaseKeeper keeper;
    private final StoreWork work;
    private final RelayLoop loop;
    private final Termination termination;
    private final Clock clock;
    private final Refusals refusals;

    /**
     * The engine of one relay; {@link io.outbox.relay.OutboxRelay} checks the options against the
     * store first.
     *
     * @param store where messages wait
     * @param publisher how they are sent
     * @param options the settings
     * @param clock lease time (R1)
     * @param listener told what happens; must not throw (a {@link Listeners} fan-out)
     * @throws OutboxMisconfigurationException if the poison policy {@code dead-letter} meets a store
     *     without dead letters (C4)
     */
    public RelayEngine(OutboxStore store, OutboxPublisher publisher, RelayOptions options, Clock clock,
                       RelayListener listener) {
        DeadLetters deadLetters = store.deadLetters().orElse(null);
        if (options.poisonPolicy() == PoisonPolicy.DEAD_LETTER && deadLetters == null) {
            throw new OutboxMisconfigurationException("relay option " + RelayOptions.POISON_POLICY_CONFIG
                    + "=dead-letter needs a store with dead letters, but " + store.getClass().getName()
                    + " has none (capability C4: its deadLetters() is empty); use " + RelayOptions.POISON_POLICY_CONFIG
                    + "=block or a store that has them");
        }
        this.clock = clock;
        PoisonGuard poison = new PoisonGuard(options.poisonPolicy(), options.poisonMaxAttempts(), options.relayId(),
                clock);
        long renewMillis = options.leaseRenewInterval().toMillis();
        boolean renews = store.leaseRenewal().isPresent();
        // R5: with renewal a publish needs one renew interval of lease left; without, its whole budget too.
        long publishNeedsMillis = renewMillis + (renews ? 0 : options.maxPublishDuration().toMillis());
        this.leases = new LeaseTable(options.leaseDuration().toMillis(), renewMillis, publishNeedsMillis);
        OwnedBuckets owned = new OwnedBuckets(publisher, listener, options.relayId());
        this.keeper = new LeaseKeeper(store, leases, owned, clock, options);
        this.work = new StoreWork(store, options.prefetch() ? store.readAhead().orElse(null) : null, publisher, leases,
                poison, new HeadFailures(poison, deadLetters, leases, clock, options.relayId()), clock, options, wake);
        this.termination = new Termination(listener);
        this.refusals = new Refusals(clock);
        this.loop = new RelayLoop(store, work, keeper, owned, wake, termination, listener, options, clock,
                publishNeedsMillis, refusals);
    }

    /**
     * The loop thread's body; returns when the relay stopped.
     */
    public void run() {
        loop.run();
    }

    /**
     * The renewal thread's body, called every few milliseconds: renews the leases while a publish
     * is in flight, once a renew interval passed (R5).
     */
    public void renewIfDue() {
        if (work.publishing()) {
            keeper.renewIfDue();
        }
    }

    /**
     * Whether the store renews leases (C1), so a renewal thread should call {@link #renewIfDue()}.
     *
     * @return true with C1
     */
    public boolean hasRenewal() {
        return keeper.renews();
    }

    /**
     * How many passes the loop has made; for benchmarks.
     *
     * @return the count
     */
    public long cycles() {
        return loop.cycles();
    }

    /**
     * Completes when the engine stopped; exceptionally with a fatal error.
     *
     * @return the engine's own future
     */
    public CompletableFuture<Void> termination() {
        return termination.future();
    }

    /**
     * The buckets leased now, by the engine's clock (R1).
     *
     * @return ascending, immutable
     */
    public List<Integer> ownedBuckets() {
        return BucketSets.toList(leases.usable(clock.millis()));
    }

    /**
     * The refusal after a good start that lasts now (R13).
     *
     * @return the store's if both sides refuse; null if none
     */
    public Refusal refusal() {
        return refusals.current();
    }

    /**
     * The last publish failure that found no broker reachable since the last acknowledged record.
     *
     * @return the error, or null
     */
    public BrokerUnreachableException brokerUnreachable() {
        return refusals.unreachable();
    }

    /**
     * Completes at the first lease round that succeeded; never completes if the engine stops before.
     *
     * @return the engine's own future
     */
    public CompletableFuture<Void> firstLeaseRound() {
        return refusals.firstLeaseRound();
    }

    /**
     * Completes once the start is settled (R13): see {@link io.outbox.relay.OutboxRelay#startSettled()};
     * never completes if the engine stops before.
     *
     * @return the engine's own future
     */
    public CompletableFuture<Void> startSettled() {
        return refusals.startSettled();
    }

    /** Ends an idle wait and asks for a discovery of every owned bucket (R8). */
    public void wakeUp() {
        wake.wakeUp();
    }

    /**
     * Ends an idle wait and asks for these buckets (R8).
     *
     * @param buckets checked bucket ids
     */
    public void wakeUp(int[] buckets) {
        wake.wakeUp(buckets);
    }

    /**
     * Starts or ends a drain (H3).
     *
     * @param on true to drain, false to resume
     */
    public void drain(boolean on) {
        loop.drain(on);
    }

    /** @return whether a drain was asked for and not ended */
    public boolean draining() {
        return loop.draining();
    }

    /** Ends waits; the loop starts no new task, lets the started ones finish, then stops (R9). */
    public void stop() {
        wake.stop();
    }

    /**
     * The closing thread, after the loop thread ended or did not end in time: completes the stop of
     * a relay that never ran, or abandons the tasks still running, which then delete nothing more.
     */
    public void terminated() {
        work.abandon();
        termination.report(null);
    }
}
