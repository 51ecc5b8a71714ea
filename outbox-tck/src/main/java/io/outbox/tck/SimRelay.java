package io.outbox.tck;

import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxStore;
import java.util.List;

/**
 * A simulated relay of the kit: an id, its own store instance, and what it held after its last
 * call (the {@link LeaseRequest#heldBuckets()} of its next one). Not thread-safe: one thread
 * drives one relay.
 */
final class SimRelay {
    final String id;
    final OutboxStore store;
    private final TckEnvironment env;
    List<Integer> held = List.of();

    SimRelay(String id, OutboxStore store, TckEnvironment env) {
        this.id = id;
        this.store = store;
        this.env = env;
    }

    /** One acquire; checks the answer's shape (a violation of S4 otherwise) and remembers it. */
    List<Integer> acquire() {
        List<Integer> owned = store.acquireBucketLeases(new LeaseRequest(id, env.bucketCount(), env.leaseDuration(), held));
        for (int i = 0; i < owned.size(); i++) {
            int b = owned.get(i);
            if (b < 0 || b >= env.bucketCount() || (i > 0 && b <= owned.get(i - 1))) {
                throw new RuleViolation(RuleViolation.S4, "acquireBucketLeases returned " + owned + " to " + id
                        + ": buckets must be ascending, distinct and in [0, " + env.bucketCount() + ")");
            }
        }
        held = owned;
        return held;
    }

    /** One renewal (C1) of what the relay holds; does not change {@link #held}. */
    List<Integer> renew() {
        return store.leaseRenewal().orElseThrow().renewBucketLeases(
                new LeaseRequest(id, env.bucketCount(), env.leaseDuration(), held));
    }
}
