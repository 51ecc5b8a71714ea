package io.outbox.relay;

import static io.outbox.relay.TestMessages.keyFor;
import static io.outbox.relay.TestMessages.message;

import io.outbox.tck.InMemoryOutboxStore;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The "one slow publish" figures of the project's baselines (rule R11): in-memory store, 2
 * buckets, renew interval 1 s, poll interval 100 ms; bucket 1's first publish takes 15 s, every
 * other publish is instant; one message per bucket is enqueued every 100 ms for 18 s; a second
 * relay joins at 2 s. Prints how long bucket 0's messages waited and when the joining relay first
 * owned a bucket. Asserts nothing. Run it with
 *
 * <pre>
 * mvn -B -ntp -o -pl outbox-relay -am verify -Drelay.test.excludedGroups= -Dgroups=benchmark \
 *     -Dtest=SlowPublishBenchmark -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 */
@Tag("benchmark")
class SlowPublishBenchmark {

    @Test
    void oneSlowPublishOfFifteenSeconds() throws Exception {
        int buckets = 2;
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().clock(Clock.systemUTC()).build();
        HeldPublisher publisher = new HeldPublisher();
        publisher.hold(1);
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        long start = System.nanoTime();
        long joinerFirstBucketMs = -1;
        try (OutboxRelay a = relay(store, publisher, "relay-a", buckets);
             OutboxRelay b = relay(store, publisher, "relay-b", buckets)) {
            a.start();
            boolean scheduled = false;
            boolean joined = false;
            while (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(18)) {
                store.enqueue(message("t", keyFor(0, buckets), "v", buckets, Clock.systemUTC()),
                        message("t", keyFor(1, buckets), "v", buckets, Clock.systemUTC()));
                if (!scheduled && publisher.isHeld(1)) {
                    timer.schedule(() -> publisher.release(1), 15, TimeUnit.SECONDS);
                    scheduled = true;
                }
                long elapsedMs = (System.nanoTime() - start) / 1_000_000;
                if (!joined && elapsedMs >= 2_000) {
                    b.start();
                    joined = true;
                }
                if (joined && joinerFirstBucketMs < 0 && !b.ownedBuckets().isEmpty()) {
                    joinerFirstBucketMs = elapsedMs;
                }
                Thread.sleep(100);
            }
        } finally {
            timer.shutdownNow();
            publisher.release(1);
        }
        long max = publisher.acked().stream().filter(m -> m.bucket() == 0)
                .mapToLong(HeldPublisher.Acked::waitMillis).max().orElse(-1);
        long over = publisher.acked().stream().filter(m -> m.bucket() == 0 && m.waitMillis() > 1_000).count();
        long total = publisher.acked().stream().filter(m -> m.bucket() == 0).count();
        System.out.printf("one slow publish (15 s, bucket 1): bucket 0 waited up to %.1f s (%d of %d over 1 s); "
                + "a relay joining at 2 s owned its first bucket at %s%n", max / 1000.0, over, total,
                joinerFirstBucketMs < 0 ? "never (within 18 s)" : String.format("%.1f s", joinerFirstBucketMs / 1000.0));
    }

    private static OutboxRelay relay(InMemoryOutboxStore store, HeldPublisher publisher, String id, int buckets) {
        return OutboxRelay.builder(store, publisher.forRelay(id)).options(RelayOptions.builder().relayId(id)
                .bucketCount(buckets).pollInterval(Duration.ofMillis(100)).leaseRenewInterval(Duration.ofSeconds(1))
                .closeTimeout(Duration.ofSeconds(1)).build()).build();
    }
}
