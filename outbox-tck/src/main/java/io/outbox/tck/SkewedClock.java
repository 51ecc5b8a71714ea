package io.outbox.tck;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;

/**
 * A relay's own clock in the kit: the test's {@link TckClock} plus an offset that a test may
 * change mid-run (a clock set forward or back). It runs at the same rate as the base clock, as
 * rule S13 assumes. Thread-safe.
 */
final class SkewedClock extends Clock {
    private final TckClock base;
    private volatile long offsetMillis;

    SkewedClock(TckClock base, long offsetMillis) {
        this.base = Objects.requireNonNull(base, "base must not be null");
        this.offsetMillis = offsetMillis;
    }

    /** Moves this clock by {@code deltaMillis} (negative: back) without moving the base clock. */
    void jump(long deltaMillis) {
        offsetMillis += deltaMillis;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public long millis() {
        return base.millis() + offsetMillis;
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis());
    }

    @Override
    public String toString() {
        return "SkewedClock[" + offsetMillis + " ms from " + base + "]";
    }
}
