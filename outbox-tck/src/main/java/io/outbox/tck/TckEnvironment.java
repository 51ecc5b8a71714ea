package io.outbox.tck;

import java.time.Duration;
import java.util.Objects;

/**
 * The kit's knobs, so that a slow backend tunes one object instead of the tests. Override
 * {@link OutboxStoreTck#environment()} to change them. Lease time is simulated by a
 * {@link TckClock}, so {@link #leaseDuration()} is not wall-clock time.
 *
 * @param bucketCount the bucket count most tests use, {@code >= 2}
 * @param leaseDuration the lease duration the simulated relays request (simulated time), at least
 *     10 ms
 * @param contentionRelays how many relays, each with its own store instance, race in the
 *     exclusivity test (S5), {@code >= 2}
 * @param contentionRounds how many acquire rounds each of them makes, {@code >= 40}
 * @param orderingMessages how many messages the ordering test (S1) enqueues, {@code >= 10}
 * @param concurrencyTimeout the wall-clock limit for a multi-threaded test; not null, positive
 * @param callTimeout the wall-clock limit for one call into the store or the fixture: a call that
 *     takes longer fails the test's rule, naming the call; not null, positive
 */
public record TckEnvironment(int bucketCount, Duration leaseDuration, int contentionRelays, int contentionRounds,
                             int orderingMessages, Duration concurrencyTimeout, Duration callTimeout) {

    /**
     * Validates the knobs.
     *
     * @param bucketCount the bucket count
     * @param leaseDuration the simulated lease duration
     * @param contentionRelays relays in the exclusivity test
     * @param contentionRounds rounds per relay in the exclusivity test
     * @param orderingMessages messages in the ordering test
     * @param concurrencyTimeout wall-clock limit for multi-threaded tests
     * @param callTimeout wall-clock limit for one call into the store or the fixture
     * @throws IllegalArgumentException naming the knob and the bad value
     */
    public TckEnvironment {
        require(bucketCount >= 2, "bucketCount must be >= 2 but was " + bucketCount);
        Objects.requireNonNull(leaseDuration, "leaseDuration must not be null");
        require(leaseDuration.toMillis() >= 10, "leaseDuration must be at least 10 ms but was " + leaseDuration);
        require(contentionRelays >= 2, "contentionRelays must be >= 2 but was " + contentionRelays);
        require(contentionRounds >= 40, "contentionRounds must be >= 40 but was " + contentionRounds);
        require(orderingMessages >= 10, "orderingMessages must be >= 10 but was " + orderingMessages);
        Objects.requireNonNull(concurrencyTimeout, "concurrencyTimeout must not be null");
        require(!concurrencyTimeout.isNegative() && !concurrencyTimeout.isZero(),
                "concurrencyTimeout must be positive but was " + concurrencyTimeout);
        Objects.requireNonNull(callTimeout, "callTimeout must not be null");
        require(!callTimeout.isNegative() && !callTimeout.isZero(), "callTimeout must be positive but was " + callTimeout);
    }

    /**
     * The defaults: 8 buckets, 30 s simulated leases, 6 relays racing for 200 rounds each, 300
     * ordered messages, 120 s for a multi-threaded test, 10 s for one call.
     *
     * @return the default environment
     */
    public static TckEnvironment defaults() {
        return new TckEnvironment(8, Duration.ofSeconds(30), 6, 200, 300, Duration.ofSeconds(120), Duration.ofSeconds(10));
    }

    /**
     * The same environment with other contention settings, for a slow backend.
     *
     * @param relays relays racing in the exclusivity test, {@code >= 2}
     * @param rounds rounds per relay, {@code >= 40}
     * @return a new environment
     */
    public TckEnvironment withContention(int relays, int rounds) {
        return new TckEnvironment(bucketCount, leaseDuration, relays, rounds, orderingMessages, concurrencyTimeout,
                callTimeout);
    }

    /**
     * The same environment with another wall-clock limit for multi-threaded tests.
     *
     * @param timeout the limit; positive
     * @return a new environment
     */
    public TckEnvironment withConcurrencyTimeout(Duration timeout) {
        return new TckEnvironment(bucketCount, leaseDuration, contentionRelays, contentionRounds, orderingMessages,
                timeout, callTimeout);
    }

    /**
     * The same environment with another wall-clock limit for one call into the store or the fixture:
     * raise it for a backend whose single calls are slow, lower it to fail a blocking store sooner.
     *
     * @param timeout the limit; positive
     * @return a new environment
     */
    public TckEnvironment withCallTimeout(Duration timeout) {
        return new TckEnvironment(bucketCount, leaseDuration, contentionRelays, contentionRounds, orderingMessages,
                concurrencyTimeout, timeout);
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
