package io.outbox.relay.internal;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Capped exponential backoff (rule R3): the first failure in a row waits up to {@code baseMillis},
 * each further one up to twice as long, never more than {@code capMillis}; the relay draws each
 * wait with full jitter ({@link #jitteredDelayMillis}, R12). Immutable; the loop thread and the
 * notifier's sender thread each use their own.
 *
 * @param baseMillis the first wait, {@code >= 1}
 * @param capMillis the longest wait, {@code >= baseMillis}
 */
public record Backoff(long baseMillis, long capMillis) {

    /**
     * The wait after {@code failuresInARow} failures.
     *
     * @param failuresInARow failures since the last success, {@code >= 1}
     * @return {@code min(cap, base * 2^(failuresInARow - 1))} milliseconds; 0 when no failure
     */
    public long delayMillis(int failuresInARow) {
        if (failuresInARow <= 0) {
            return 0;
        }
        int doublings = Math.min(failuresInARow - 1, 62);
        long delay = baseMillis;
        for (int i = 0; i < doublings && delay < capMillis; i++) {
            delay *= 2;
        }
        return Math.min(delay, capMillis);
    }

    /**
     * The wait after {@code failuresInARow} failures with full jitter (rule R12): uniformly random
     * in {@code [0, delayMillis(failuresInARow)]}, so that relays failing together do not retry
     * in lockstep.
     *
     * @param failuresInARow failures since the last success, {@code >= 1}
     * @return the jittered wait in milliseconds; 0 when no failure
     */
    public long jitteredDelayMillis(int failuresInARow) {
        long cap = delayMillis(failuresInARow);
        return cap <= 0 ? 0 : ThreadLocalRandom.current().nextLong(cap + 1);
    }
}
