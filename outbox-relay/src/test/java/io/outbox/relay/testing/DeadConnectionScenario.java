package io.outbox.relay.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.notify.NotificationTransport;
import io.outbox.relay.OutboxRelay;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

/**
 * Rule N6 as each notification transport's test checks it: a relay that polls once a minute
 * listens through a {@link FreezingProxy}; the proxy freezes the connection (no FIN, no RST), the
 * transport must notice within a small multiple of its liveness timeout and tell the relay, a
 * commit made meanwhile loses its hint, and once the proxy forwards again the transport listens
 * again, the wake-up that follows publishes that commit, and the next commit wakes the relay at
 * once. The measured times are printed and returned.
 */
public final class DeadConnectionScenario {

    /** A commit of one message to a bucket through the writer's notifier; returns its ids. */
    @FunctionalInterface
    public interface Commit {
        /**
         * @param bucket the bucket written
         * @return the ids of the messages written
         * @throws Exception if the write failed
         */
        List<UUID> to(int bucket) throws Exception;
    }

    /**
     * What the scenario measured, in milliseconds.
     *
     * @param noticedMs from the freeze to the transport reporting its connection down
     * @param connectionsByThaw connections the proxy accepted up to the thaw, the first included
     * @param reconnectedMs from the thaw to the transport listening again
     * @param resyncMs from the thaw to the arrival of the message committed while frozen
     * @param wakeMs from a commit after the recovery to the arrival of its message
     */
    public record Timings(long noticedMs, int connectionsByThaw, long reconnectedMs, long resyncMs, long wakeMs) {
    }

    private DeadConnectionScenario() {
    }

    /**
     * Runs the scenario on a relay that listens on the transport (through the proxy) and owns
     * every bucket, and asserts the bounds.
     *
     * @param fixture the fixture whose consumer records the arrivals
     * @param proxy the proxy the relay's transport connects through
     * @param relaySide the relay's transport, listening
     * @param relay the relay, polling far less often than the scenario lasts
     * @param liveness the transport's liveness timeout
     * @param commit writes one message to a bucket, notifying through a transport of its own
     * @return the measured times
     * @throws Exception if a commit failed
     */
    public static Timings run(NotifyFixture fixture, FreezingProxy proxy, NotificationTransport relaySide,
                              OutboxRelay relay, Duration liveness, Commit commit) throws Exception {
        Duration poll = relay.options().pollInterval();
        assertThat(poll).as("a wake-up must not be mistaken for a poll").isGreaterThanOrEqualTo(Duration.ofMinutes(1));
        List<UUID> first = commit.to(1);
        await().atMost(Duration.ofSeconds(10)).until(() -> fixture.consumed.keySet().containsAll(first));
        await().during(liveness.multipliedBy(2)).atMost(liveness.multipliedBy(2).plusSeconds(10))
                .until(() -> relaySide.state().connected()); // a live connection is never taken for dead

        long frozenAt = System.nanoTime();
        proxy.freeze();
        await().pollInterval(Duration.ofMillis(10)).atMost(liveness.multipliedBy(5))
                .until(() -> !relaySide.state().connected());
        long noticedMs = millisSince(frozenAt);
        assertThat(relay.notificationState().connected()).as("the relay is told (health, metrics)").isFalse();
        List<UUID> whileFrozen = commit.to(2); // its hint never reaches the relay
        await().during(liveness.multipliedBy(2)).atMost(liveness.multipliedBy(2).plusSeconds(10))
                .until(() -> !fixture.consumed.containsKey(whileFrozen.get(0)));
        int connections = proxy.accepted();

        long thawedAt = System.nanoTime();
        proxy.thaw();
        await().pollInterval(Duration.ofMillis(10)).atMost(Duration.ofSeconds(20))
                .until(() -> relaySide.state().connected());
        long reconnectedMs = millisSince(thawedAt);
        await().atMost(Duration.ofSeconds(10)).until(() -> fixture.consumed.keySet().containsAll(whileFrozen));
        long resyncMs = (fixture.consumed.get(whileFrozen.get(0)) - thawedAt) / 1_000_000;
        long committedAt = System.nanoTime();
        List<UUID> after = commit.to(3);
        await().atMost(Duration.ofSeconds(10)).until(() -> fixture.consumed.keySet().containsAll(after));
        long wakeMs = (fixture.consumed.get(after.get(0)) - committedAt) / 1_000_000;
        Timings timings = new Timings(noticedMs, connections, reconnectedMs, resyncMs, wakeMs);
        System.out.printf("N6 %s: liveness.timeout.ms=%d; frozen connection noticed after %d ms; %d connections "
                + "through the proxy by the thaw; listening again %d ms after the thaw; the commit made while frozen "
                + "published %d ms after the thaw; the next commit published %d ms after it (poll interval %d ms)%n",
                relaySide.name(), liveness.toMillis(), noticedMs, connections, reconnectedMs, resyncMs, wakeMs,
                poll.toMillis());

        assertThat(noticedMs).as("N6: noticed within a small multiple of the liveness timeout")
                .isLessThan(liveness.multipliedBy(3).toMillis());
        assertThat(connections).as("reconnect attempts while frozen").isGreaterThan(1);
        assertThat(wakeMs).as("a commit after the recovery wakes the relay, long before its poll")
                .isLessThan(poll.toMillis() / 6);
        assertThat(relay.notificationState().connected()).isTrue();
        assertThat(fixture.duplicates.get()).isZero();
        return timings;
    }

    /**
     * The lines of a test log (slf4j-simple's file) from a logger, at a level, about a channel,
     * containing a text.
     *
     * @param log the log file
     * @param logger the logger's simple class name
     * @param channel the channel the lines name ({@code channel=...})
     * @param level {@code WARN}, {@code INFO}, ...
     * @param text a text the line contains; empty for any
     * @return the lines, in order
     * @throws IOException if the log cannot be read
     */
    public static List<String> logLines(Path log, String logger, String channel, String level, String text)
            throws IOException {
        return Files.readAllLines(log).stream()
                .filter(line -> line.contains(level) && line.contains("channel=" + channel) && line.contains(logger)
                        && line.contains(text))
                .toList();
    }

    private static long millisSince(long nanoTime) {
        return (System.nanoTime() - nanoTime) / 1_000_000;
    }
}
