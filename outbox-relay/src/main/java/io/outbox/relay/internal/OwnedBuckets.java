package io.outbox.relay.internal;

import io.outbox.relay.OutboxPublisher;
import io.outbox.relay.RelayListener;
import java.util.BitSet;
import java.util.Set;
import org.slf4j.Logger;

/**
 * The owned buckets as last announced, and the announcement of each change: logged, passed to the
 * publisher (K5: a transactional publisher follows the leases with its per-bucket producers) and to
 * the listener. Called from the loop thread (acquisitions, a fenced bucket, a store error, the
 * stop) and the renewal thread (leases lost during a publish); synchronized, so changes are
 * announced one at a time and in order.
 */
final class OwnedBuckets {

    private static final Logger LOG = RelayLog.LOG;

    private final OutboxPublisher publisher;
    private final RelayListener listener;
    private final String relayId;
    /** Guarded by this. */
    private BitSet announced = new BitSet();

    OwnedBuckets(OutboxPublisher publisher, RelayListener listener, String relayId) {
        this.publisher = publisher;
        this.listener = listener;
        this.relayId = relayId;
    }

    /** Logs and reports a change of owned buckets; returns whether any bucket was gained. */
    synchronized boolean announce(BitSet owned) {
        if (owned.equals(announced)) {
            return false;
        }
        BitSet gained = (BitSet) owned.clone();
        gained.andNot(announced);
        BitSet lost = (BitSet) announced.clone();
        lost.andNot(owned);
        announced = (BitSet) owned.clone();
        LOG.info("owned buckets changed relayId={} count={} buckets={} gained={} lost={}", relayId,
                owned.cardinality(), BucketSets.describe(owned), BucketSets.describe(gained),
                BucketSets.describe(lost));
        tellPublisher(lost, gained);
        listener.onOwnedBucketsChanged(BucketSets.toList(owned));
        return !gained.isEmpty();
    }

    /** Reports leases that ran out or were found taken (R1, R5) to the listener. */
    void expired(BitSet buckets) {
        listener.onLeasesExpired(BucketSets.toList(buckets));
    }

    /** K5: the publisher follows the leases (per-bucket producers in the transactional mode). */
    private void tellPublisher(BitSet lost, BitSet gained) {
        try {
            if (!lost.isEmpty()) {
                publisher.bucketsReleased(Set.copyOf(BucketSets.toList(lost)));
            }
            if (!gained.isEmpty()) {
                publisher.bucketsAcquired(Set.copyOf(BucketSets.toList(gained)));
            }
        } catch (RuntimeException e) {
            LOG.warn("the publisher failed to follow a change of owned buckets relayId={} error={}", relayId,
                    LogText.oneLine(e.toString()));
        }
    }
}
