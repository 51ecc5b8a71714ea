package io.outbox.tck;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A controllable clock for the kit: it stands still until a test moves it, forwards or back.
 * Stores under test must take every lease time from the clock they are given (rule S11), so the
 * kit decides exactly when a lease expires and runs fast and deterministically.
 *
 * <p>Millisecond resolution. Thread-safe: many simulated relays share one instance.
 */
public final class TckClock extends Clock {

    private final AtomicLong millis;
    /** Milliseconds every read moves the clock on after it returned; 0 for a clock that stands still. */
    private volatile long tickPerRead;

    /**
     * Creates a clock standing at an instant.
     *
     * @param start the initial time; not null; truncated to milliseconds
     */
    public TckClock(Instant start) {
        this.millis = new AtomicLong(start.toEpochMilli());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    /**
     * This clock ignores zones; the same clock is returned.
     *
     * @param zone ignored
     * @return this clock
     */
    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis());
    }

    @Override
    public long millis() {
        long tick = tickPerRead;
        return tick == 0 ? millis.get() : millis.getAndAdd(tick);
    }

    /**
     * Makes every later read return the time and then move the clock on by {@code tickMillis}: a
     * store call that reads the clock twice sees time pass between the reads, as a call that was
     * descheduled or waited on its database does. 0 stops the ticking.
     *
     * @param tickMillis milliseconds per read, {@code >= 0}
     */
    void tickOnEveryRead(long tickMillis) {
        if (tickMillis < 0) {
            throw new IllegalArgumentException("tickMillis must be >= 0 but was " + tickMillis);
        }
        tickPerRead = tickMillis;
    }

    /**
     * Moves the clock forward (or back, for a negative duration).
     *
     * @param duration how far; not null
     * @return the new time, epoch milliseconds
     */
    public long advance(Duration duration) {
        return millis.addAndGet(duration.toMillis());
    }

    /**
     * Moves the clock forward (or back) by milliseconds.
     *
     * @param deltaMillis how far, in milliseconds
     * @return the new time, epoch milliseconds
     */
    public long advanceMillis(long deltaMillis) {
        return millis.addAndGet(deltaMillis);
    }

    /**
     * Sets the clock.
     *
     * @param epochMillis the new time, epoch milliseconds
     */
    public void setMillis(long epochMillis) {
        millis.set(epochMillis);
    }

    @Override
    public String toString() {
        return "TckClock[" + instant() + "]";
    }
}
