package io.outbox.relay.internal;

import java.util.BitSet;

/**
 * The relay's own view of its bucket leases (rules R1, R5, R9). A lease counts from the clock
 * reading taken before the store call that granted or renewed it, and is gone once its age
 * reaches the lease duration, whatever the store says later. Every held bucket shares one
 * confirmation time, since one call confirms them all.
 *
 * <p>Thread-safe (synchronized): the loop thread acquires, the renewal thread renews, store threads
 * check leases before a publish and a delete. Every change bumps a
 * generation, so a renewal answer that arrives after the table was cleared or reacquired is
 * discarded instead of resurrecting stale leases.
 *
 * <p>Bucket sets are {@link BitSet}s (one bit per bucket, 8 KiB at 65,536 buckets), so every
 * operation is linear in the bucket count at worst, never quadratic. Sets handed out are copies.
 */
final class LeaseTable {

    /** The buckets held and the generation they were read at. */
    record Snapshot(long generation, BitSet buckets) {
    }

    private final long leaseMillis;
    private final long renewMillis;
    private final long publishNeedsMillis;
    private final BitSet held = new BitSet();
    private long confirmedAt;
    private long acquiredAt;
    private boolean forced = true;
    /** When an early acquisition is due (R11), epoch ms; {@code Long.MAX_VALUE} for none. */
    private long soonAt = Long.MAX_VALUE;
    private long generation;
    /**
     * Bumped whenever a held bucket may have had another owner since: it left the held set, or the
     * leases aged out before an acquisition confirmed them again. A batch read ahead is used only
     * while this is unchanged since it was read.
     */
    private long breaks;

    /**
     * @param leaseMillis the lease duration
     * @param renewMillis the renew and rebalance interval
     * @param publishNeedsMillis how much lease a publish needs left before it may start
     */
    LeaseTable(long leaseMillis, long renewMillis, long publishNeedsMillis) {
        this.leaseMillis = leaseMillis;
        this.renewMillis = renewMillis;
        this.publishNeedsMillis = publishNeedsMillis;
    }

    /**
     * Records an acquisition that started at {@code startedAt} and returned {@code owned}.
     *
     * @return the buckets held before it whose leases had run out when it started (R1); empty when none
     */
    synchronized BitSet acquired(BitSet owned, long startedAt) {
        BitSet given = (BitSet) held.clone();
        given.andNot(owned);
        boolean agedOut = startedAt - confirmedAt >= leaseMillis;
        BitSet expired = agedOut ? (BitSet) held.clone() : new BitSet();
        if (!given.isEmpty() || agedOut) {
            breaks++;
        }
        held.clear();
        held.or(owned);
        confirmedAt = startedAt;
        acquiredAt = startedAt;
        forced = false;
        soonAt = Long.MAX_VALUE;
        generation++;
        return expired;
    }

    /**
     * Records a renewal of {@code requested} that started at {@code startedAt} and confirmed
     * {@code stillHeld}.
     *
     * @return the buckets lost; empty when nothing was lost or the answer was stale (the table
     *     changed while the call ran)
     */
    synchronized BitSet renewed(Snapshot requested, BitSet stillHeld, long startedAt) {
        if (requested.generation() != generation) {
            return new BitSet();
        }
        BitSet lost = (BitSet) requested.buckets().clone();
        lost.andNot(stillHeld);
        BitSet before = (BitSet) held.clone();
        held.and(requested.buckets());
        held.andNot(lost);
        if (!held.equals(before)) {
            breaks++;
        }
        confirmedAt = startedAt;
        generation++;
        return lost;
    }

    /**
     * Forgets one bucket's lease (K6: fenced by a newer owner). The next regular acquisition may
     * grant it again; it is not forced, so a bucket fenced over and over costs one store call per
     * renew interval, not a loop.
     */
    synchronized void drop(int bucket) {
        held.clear(bucket);
        breaks++;
        generation++;
    }

    /** Forgets every lease (R3) and makes the next acquisition due at once. */
    synchronized void clear() {
        held.clear();
        breaks++;
        forced = true;
        generation++;
    }

    /**
     * A count that changes whenever the lease of some held bucket may have been broken (given up,
     * lost, dropped, aged out); while it stays the same, every bucket held at both readings was
     * held without a break in between (R1, for batches read ahead).
     */
    synchronized long breaks() {
        return breaks;
    }

    /** Makes the next acquisition due at once. */
    synchronized void forceAcquire() {
        forced = true;
    }

    /**
     * Makes the next acquisition due {@code spacingMillis} after the last one began (at once if
     * that has passed), unless one is due earlier: an early rebalance that stays rate-limited.
     */
    synchronized void acquireSoon(long spacingMillis) {
        soonAt = Math.min(soonAt, acquiredAt + spacingMillis);
    }

    /**
     * Whether to acquire now: forced, a renew interval since the last acquisition (rebalancing
     * runs even while renewals keep the leases fresh), an early acquisition due, or too little
     * lease left for a publish.
     */
    synchronized boolean acquireDue(long now) {
        return forced || now - acquiredAt >= renewMillis || now >= soonAt
                || (!held.isEmpty() && confirmedAt + leaseMillis - now < publishNeedsMillis);
    }

    /** Milliseconds until a renew interval has passed since the last acquisition; 0 when forced. */
    synchronized long millisUntilAcquire(long now) {
        return forced ? 0 : Math.max(0, Math.min(acquiredAt + renewMillis, soonAt) - now);
    }

    /** Whether the held leases were confirmed a renew interval ago or more (R5). */
    synchronized boolean renewalDue(long now) {
        return !held.isEmpty() && now - confirmedAt >= renewMillis;
    }

    /** The buckets the last call reported, whatever their age; for {@code LeaseRequest.heldBuckets}. */
    synchronized BitSet lastReported() {
        return (BitSet) held.clone();
    }

    /** Whether the last call reported no bucket. */
    synchronized boolean isEmpty() {
        return held.isEmpty();
    }

    /** The buckets held whose lease is younger than the lease duration (R1). */
    synchronized BitSet usable(long now) {
        return now - confirmedAt < leaseMillis ? (BitSet) held.clone() : new BitSet();
    }

    /** The usable buckets, if a publish that starts now fits in their lease (R5); else none. */
    synchronized BitSet publishable(long now) {
        return canStartPublish(now) ? (BitSet) held.clone() : new BitSet();
    }

    synchronized Snapshot snapshot(long now) {
        return new Snapshot(generation, usable(now));
    }

    /** Whether a bucket is held and its lease younger than the lease duration (R1). */
    synchronized boolean isHeld(int bucket, long now) {
        return held.get(bucket) && now - confirmedAt < leaseMillis;
    }

    /** Whether a publish of the bucket may start now: held, with enough lease left (R1, R5). */
    synchronized boolean canStartPublish(int bucket, long now) {
        return held.get(bucket) && canStartPublish(now);
    }

    /** How long the held leases have left, in milliseconds; negative when expired. */
    synchronized long remainingMillis(long now) {
        return confirmedAt + leaseMillis - now;
    }

    private boolean canStartPublish(long now) {
        return confirmedAt + leaseMillis - now >= publishNeedsMillis;
    }
}
