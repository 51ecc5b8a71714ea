package io.outbox.relay.internal;

import io.outbox.relay.RelayOptions;
import io.outbox.spi.LeaseRenewal;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStore;
import java.time.Clock;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;

/**
 * The two store calls that change the {@link LeaseTable}: acquire, on the loop thread (rules R1,
 * R11, S4), and renew, on the renewal thread ({@code outbox-relay-<relayId>-renewal}) while a
 * publish is in flight, when the store has capability C1 (R5). One lock is held around each call,
 * so the store never sees them overlap and a renewal's answer is recorded against the table it
 * was asked for; the table itself is synchronized for its other readers (store threads, callers of
 * {@code ownedBuckets()}).
 *
 * <p>Fields: {@link #renewRetryAt} belongs to the renewal thread; {@link #renewalFatal} is written
 * by the renewal thread and read by the loop thread.
 */
final class LeaseKeeper {

    private static final Logger LOG = RelayLog.LOG;

    /**
     * What an acquisition changed.
     *
     * @param held the buckets held before it
     * @param busyHeld the held buckets with a task running, which the store was asked to keep (R11)
     * @param owned the buckets owned after it
     */
    record Acquisition(BitSet held, BitSet busyHeld, BitSet owned) {
    }

    private final OutboxStore store;
    /** The store's renewal (C1); null when it has none. */
    private final LeaseRenewal renewal;
    private final LeaseTable table;
    private final OwnedBuckets owned;
    private final Clock clock;
    private final RelayOptions options;
    private final ReentrantLock calls = new ReentrantLock();
    /** Renewal thread only: no renewal before this time after a failed one (epoch ms). */
    private long renewRetryAt = Long.MIN_VALUE;
    /** A misconfiguration the renewal met (R6): set once by the renewal thread, thrown by the loop thread. */
    private final AtomicReference<RuntimeException> renewalFatal = new AtomicReference<>();

    LeaseKeeper(OutboxStore store, LeaseTable table, OwnedBuckets owned, Clock clock, RelayOptions options) {
        this.store = store;
        this.renewal = store.leaseRenewal().orElse(null);
        this.table = table;
        this.owned = owned;
        this.clock = clock;
        this.options = options;
    }

    /**
     * Loop thread: acquires the fair share (S4), telling the store which held buckets are busy so
     * it keeps them (R11). The lease's age counts from before the call (R1).
     *
     * @param busy the buckets with a task running
     */
    Acquisition acquire(BitSet busy) {
        calls.lock();
        try {
            BitSet held = table.lastReported();
            BitSet busyHeld = (BitSet) held.clone();
            busyHeld.and(busy);
            long startedAt = clock.millis(); // R1: the lease's age counts from before the call
            BitSet granted = checked(store.acquireBucketLeases(new LeaseRequest(options.relayId(),
                    options.bucketCount(), options.leaseDuration(), BucketSets.toList(held),
                    BucketSets.toList(busyHeld))), "acquireBucketLeases");
            BitSet expired = table.acquired(granted, startedAt);
            if (!expired.isEmpty()) {
                LOG.warn("leases ran out before this acquisition confirmed them relayId={} buckets={}",
                        options.relayId(), BucketSets.describe(expired));
                owned.expired(expired);
            }
            return new Acquisition(held, busyHeld, granted);
        } finally {
            calls.unlock();
        }
    }

    /**
     * Renewal thread (R5): renews the held leases when a renew interval passed since they were
     * confirmed. A lost lease is announced at once: that bucket gets no further publish. A
     * misconfiguration is handed to the loop thread ({@link #renewalFatal()}); any other failure
     * is logged and retried after {@link RelayOptions#errorBackoff()}, while the leases age.
     */
    void renewIfDue() {
        try {
            long now = clock.millis();
            if (now < renewRetryAt || !table.renewalDue(now)) {
                return;
            }
            BitSet lost;
            calls.lock();
            try {
                LeaseTable.Snapshot held = table.snapshot(clock.millis());
                if (held.buckets().isEmpty()) {
                    return;
                }
                long startedAt = clock.millis();
                List<Integer> stillHeld = renewal.renewBucketLeases(new LeaseRequest(options.relayId(),
                        options.bucketCount(), options.leaseDuration(), BucketSets.toList(held.buckets())));
                lost = table.renewed(held, stillHeld == null ? new BitSet() : checked(stillHeld, "renewBucketLeases"),
                        startedAt);
            } finally {
                calls.unlock();
            }
            if (lost.isEmpty()) {
                LOG.debug("renewed leases during a publish relayId={}", options.relayId());
            } else {
                LOG.warn("leases lost during a publish; those buckets get no further publish relayId={} buckets={}",
                        options.relayId(), BucketSets.describe(lost));
                owned.expired(lost);
                owned.announce(table.lastReported());
            }
        } catch (OutboxMisconfigurationException e) {
            renewalFatal.compareAndSet(null, e);
        } catch (RuntimeException e) {
            renewRetryAt = clock.millis() + options.errorBackoff().toMillis();
            LOG.warn("lease renewal failed; leases age out unless a later renewal succeeds relayId={} error={}",
                    options.relayId(), LogText.oneLine(e.toString()));
        }
    }

    /** Whether the store renews leases (C1). */
    boolean renews() {
        return renewal != null;
    }

    /** Loop thread: the misconfiguration the renewal met, or null. */
    RuntimeException renewalFatal() {
        return renewalFatal.get();
    }

    private BitSet checked(List<Integer> buckets, String call) {
        return BucketSets.fromStore(buckets, options.bucketCount(), call);
    }
}
