package io.outbox.relay;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock that moves only when a test says so. Thread-safe. */
final class MutableClock extends Clock {

    private final AtomicLong millis;

    MutableClock() {
        this(1_700_000_000_000L);
    }

    MutableClock(long startMillis) {
        this.millis = new AtomicLong(startMillis);
    }

    void advance(Duration by) {
        millis.addAndGet(by.toMillis());
    }

    @Override
    public long millis() {
        return millis.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("a test clock has one zone");
    }
}
