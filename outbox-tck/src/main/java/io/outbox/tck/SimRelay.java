package io.outbox.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.spi.LeaseRenewal;
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

    /** One acquire; checks the answer's shape (S4) and remembers it. */
    List<Integer> acquire() {
        held = store.acquireBucketLeases(new LeaseRequest(id, env.bucketCount(), env.leaseDuration(), held));
        assertThat(held).as("S4: buckets returned to %s must be ascending, distinct and in range", id)
                .isSorted().doesNotHaveDuplicates()
                .allSatisfy(b -> assertThat(b).isBetween(0, env.bucketCount() - 1));
        return held;
    }

    /** One renewal (C1) of what the relay holds; does not change {@link #held}. */
    List<Integer> renew() {
        return ((LeaseRenewal) store).renewBucketLeases(
                new LeaseRequest(id, env.bucketCount(), env.leaseDuration(), held));
    }
}
