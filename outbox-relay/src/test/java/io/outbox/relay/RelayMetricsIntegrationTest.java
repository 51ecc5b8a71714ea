package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.outbox.OutboxMessage;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.spi.PendingMetrics;
import io.outbox.tck.InMemoryOutboxStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Rules O3 and O4 on a real broker: every meter of {@link RelayMeter} moves as the reference page
 * says in a relay run, tags carry no key, id or payload, and only the bucket-0 owner samples the
 * backlog when asked to.
 */
class RelayMetricsIntegrationTest {

    private static final List<Tag> COMMON = List.of(Tag.of("outbox", "orders"));
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int BUCKETS = 4;
    @RegisterExtension
    static final KafkaBroker KAFKA = new KafkaBroker();

    /**
     * Acknowledged counts, failures by type, dead letters, histograms filled, time in outbox
     * (messages created 5 s before the relay's clock), polls, wake-ups, backlog with its flag,
     * takeovers at start, up and bucket count; tags hold no key, message id, relay id or payload;
     * Prometheus shows each meter under the name {@link RelayMeter#prometheusName()} declares.
     */
    @Test
    void o3_everyMeterMovesInARelayRunOnABrokerAndTagsCarryNoIdsKeysOrPayloads() {
        String topic = "metrics-run";
        KAFKA.broker().createTopic(topic, BUCKETS);
        MutableClock clock = new MutableClock(System.currentTimeMillis());
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        List<OutboxMessage> good = new ArrayList<>();
        for (int bucket = 0; bucket < BUCKETS; bucket++) {
            good.addAll(TestMessages.messages(topic, TestMessages.keyFor(bucket, BUCKETS), 10, BUCKETS, clock));
        }
        OutboxMessage tooLarge = TestMessages.message(topic, TestMessages.keyFor(1, BUCKETS), "x".repeat(5_000),
                BUCKETS, clock);
        store.enqueue(List.of(tooLarge));
        store.enqueue(good);
        clock.advance(Duration.ofSeconds(5));
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        RelayOptions options = RelayOptions.builder().relayId("metrics-relay-7").bucketCount(BUCKETS)
                .pollInterval(Duration.ofMillis(50)).errorBackoff(Duration.ofMillis(10))
                .maxErrorBackoff(Duration.ofMillis(20)).poisonPolicy(PoisonPolicy.DEAD_LETTER).poisonMaxAttempts(2)
                .build();
        MicrometerRelayMetrics metrics = new MicrometerRelayMetrics(registry, COMMON, store, Duration.ofMillis(50));
        KafkaOutboxPublisher kafka = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers",
                KAFKA.broker().bootstrapServers(), "max.request.size", 2_000)).build();
        OutboxRelay relay = OutboxRelay.builder(store, kafka).options(options).clock(clock).listener(metrics).build();
        try {
            relay.start();
            await().atMost(WAIT).until(() -> count(registry, RelayMeter.PUBLISHED) == good.size());
            await().atMost(WAIT).until(() -> count(registry, RelayMeter.DEAD_LETTERED) == 1);
            assertThat(registry.get(RelayMeter.PUBLISH_FAILURES.meterName()).tag("type", "message").counter()
                    .count()).as("the too large message's failures, type message").isEqualTo(2);
            assertThat(registry.get(RelayMeter.PUBLISH_FAILURES.meterName()).tag("type", "retriable").counter()
                    .count()).isZero();
            assertThat(registry.get(RelayMeter.MESSAGE_FAILURES.meterName())
                    .tag("cause", "org.apache.kafka.common.errors.RecordTooLargeException").counter().count())
                    .isEqualTo(2);

            var inOutbox = registry.get(RelayMeter.TIME_IN_OUTBOX.meterName()).timer();
            assertThat(inOutbox.count()).as("one time in outbox per acknowledged message").isEqualTo(good.size());
            assertThat(inOutbox.totalTime(TimeUnit.MILLISECONDS)).as("each message waited 5 s by the relay's clock")
                    .isGreaterThanOrEqualTo(good.size() * 5_000.0);
            assertThat(registry.get(RelayMeter.PUBLISH_DURATION.meterName()).timer().count())
                    .as("one per publisher answer: batches and the failed attempts").isGreaterThanOrEqualTo(3);
            assertThat(registry.get(RelayMeter.CYCLE_DURATION.meterName()).timer().count()).isPositive();
            assertThat(registry.get(RelayMeter.POLLS.meterName()).tag("found", "true").counter().count()).isPositive();
            assertThat(value(registry, RelayMeter.UP)).isEqualTo(1);
            assertThat(value(registry, RelayMeter.BUCKETS)).isEqualTo(BUCKETS);
            assertThat(value(registry, RelayMeter.OWNED_BUCKETS)).isEqualTo(BUCKETS);
            assertThat(count(registry, RelayMeter.LEASE_TAKEOVERS)).as("every bucket gained at the start")
                    .isEqualTo(BUCKETS);
            assertThat(count(registry, RelayMeter.LEASE_EXPIRATIONS)).isZero();
            assertThat(count(registry, RelayMeter.FENCED)).isZero();
            await().atMost(WAIT).until(() -> value(registry, RelayMeter.PENDING_MESSAGES) == 0);
            assertThat(value(registry, RelayMeter.PENDING_AVAILABLE)).isEqualTo(1);
            assertThat(value(registry, RelayMeter.PENDING_OLDEST_AGE)).isZero();
            assertThat(count(registry, RelayMeter.WAKE_UPS)).isZero();
            relay.wakeUp();
            relay.wakeUp(List.of(2));
            assertThat(count(registry, RelayMeter.WAKE_UPS)).isEqualTo(2);

            String scrape = registry.scrape();
            for (RelayMeter meter : RelayMeter.values()) {
                if (!meter.meterName().startsWith("outbox.notify")) {
                    for (String series : meter.prometheusSeries()) {
                        assertThat(scrape).as("the scrape shows %s as %s", meter, series).contains("\n" + series + "{");
                    }
                }
            }
            Set<String> forbidden = new HashSet<>();
            forbidden.add(options.relayId());
            Stream.concat(good.stream(), Stream.of(tooLarge)).forEach(m -> {
                forbidden.add(m.messageId().toString());
                forbidden.add(new String(m.key(), StandardCharsets.UTF_8));
                forbidden.add(new String(m.value(), StandardCharsets.UTF_8));
            });
            Set<String> declared = Stream.of(RelayMeter.values()).map(RelayMeter::meterName).collect(Collectors.toSet());
            for (Meter meter : registry.getMeters()) {
                String name = meter.getId().getName();
                assertThat(declared).as("every meter is declared in RelayMeter").contains(name);
                RelayMeter declaredMeter = Stream.of(RelayMeter.values()).filter(m -> m.meterName().equals(name))
                        .findFirst().orElseThrow();
                for (Tag tag : meter.getId().getTags()) {
                    assertThat(Stream.concat(declaredMeter.tagKeys().stream(), Stream.of("outbox")))
                            .as("tag keys of %s", name).contains(tag.getKey());
                    assertThat(forbidden).as("tag %s of %s", tag, name).doesNotContain(tag.getValue());
                    forbidden.stream().filter(f -> f.length() >= 4).forEach(f -> assertThat(tag.getValue())
                            .as("tag %s of %s", tag, name).doesNotContain(f));
                }
            }
            assertThat(store.deadLetters().orElseThrow().deadLetter(tooLarge.messageId())).isPresent();
            relay.close();
            assertThat(value(registry, RelayMeter.UP)).as("0 once the relay stopped").isZero();
            assertThat(value(registry, RelayMeter.OWNED_BUCKETS)).isZero();
        } finally {
            relay.close();
            kafka.close();
            metrics.close();
        }
        assertThat(registry.getMeters()).as("close removes the meters").isEmpty();
    }

    /**
     * Lease expirations after a stall: the relay's clock jumps a lease duration ahead (a loop
     * that stalled that long), so the next acquisition finds every held lease run out (R1) and
     * counts each bucket; the relay then goes on publishing.
     */
    @Test
    void o3_r1_leaseExpirationsAreCountedAfterAStall() {
        String topic = "metrics-stall";
        KAFKA.broker().createTopic(topic, BUCKETS);
        MutableClock clock = new MutableClock(System.currentTimeMillis());
        TestStore store = new TestStore(InMemoryOutboxStore.builder().build());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RelayOptions options = RelayOptions.builder().relayId("stalling").bucketCount(BUCKETS)
                .pollInterval(Duration.ofMillis(50)).leaseDuration(Duration.ofSeconds(10))
                .leaseRenewInterval(Duration.ofSeconds(3)).maxPublishDuration(Duration.ofSeconds(2)).build();
        try (MicrometerRelayMetrics metrics = new MicrometerRelayMetrics(registry, COMMON);
             KafkaOutboxPublisher kafka = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers",
                     KAFKA.broker().bootstrapServers())).build();
             OutboxRelay relay = OutboxRelay.builder(store, kafka).options(options).clock(clock).listener(metrics)
                     .build()) {
            relay.start();
            await().atMost(WAIT).until(() -> value(registry, RelayMeter.OWNED_BUCKETS) == BUCKETS);
            store.delegate.enqueue(TestMessages.messages(topic, "before", 5, BUCKETS, clock));
            relay.wakeUp();
            await().atMost(WAIT).until(() -> count(registry, RelayMeter.PUBLISHED) == 5);
            assertThat(count(registry, RelayMeter.LEASE_EXPIRATIONS)).isZero();

            clock.advance(options.leaseDuration());
            relay.wakeUp();
            await().atMost(WAIT).until(() -> count(registry, RelayMeter.LEASE_EXPIRATIONS) == BUCKETS);

            store.delegate.enqueue(TestMessages.messages(topic, "after", 5, BUCKETS, clock));
            relay.wakeUp();
            await().atMost(WAIT).until(() -> count(registry, RelayMeter.PUBLISHED) == 10);
            assertThat(count(registry, RelayMeter.LEASE_EXPIRATIONS)).as("one stall, counted once per bucket")
                    .isEqualTo(BUCKETS);
        }
    }

    /**
     * Buckets no live relay owns: two relays (one registry each, as two processes) share the
     * buckets; one dies without giving its leases back. The fleet's unowned buckets
     * ({@code max(buckets) - sum(owned)} over the live relays) rise to the dead relay's share, then
     * fall to 0 once the survivor takes them over after their leases expire (S6, R14), and the
     * survivor counts them as takeovers.
     */
    @Test
    void o3_s6_unownedBucketsRiseWhenARelayDiesAndFallWhenItsLeasesAreTakenOver() {
        InMemoryOutboxStore shared = InMemoryOutboxStore.builder().build();
        Fleet fleet = new Fleet(shared, "metrics-kill", false);
        try (fleet) {
            double survivorTakeovers = count(fleet.registries.get(0), RelayMeter.LEASE_TAKEOVERS);
            double share = fleet.owned(1);

            fleet.kill(1);
            assertThat(fleet.unowned(false)).as("the dead relay's share, right after its death").isEqualTo(share);
            await().atMost(fleet.leaseDuration.multipliedBy(2).plusSeconds(5))
                    .until(() -> fleet.unowned(false) == 0);
            assertThat(count(fleet.registries.get(0), RelayMeter.LEASE_TAKEOVERS) - survivorTakeovers)
                    .as("the survivor's takeovers").isEqualTo(share);
            for (int bucket = 0; bucket < fleet.bucketCount; bucket++) {
                shared.enqueue(TestMessages.message(fleet.topic, TestMessages.keyFor(bucket, fleet.bucketCount), "v",
                        fleet.bucketCount, Clock.systemUTC()));
            }
            await().atMost(WAIT).until(() -> count(fleet.registries.get(0), RelayMeter.PUBLISHED)
                    == fleet.bucketCount);
        }
    }

    /**
     * O4: with {@link RelayOptions#backlogSampledByBucketZeroOwner()}, only the relay
     * that owns bucket 0 queries the store's backlog; the other reports it unavailable (NaN), not 0.
     */
    @Test
    void o4_onlyTheBucketZeroOwnerSamplesTheBacklog() {
        InMemoryOutboxStore shared = InMemoryOutboxStore.builder().build();
        Fleet fleet = new Fleet(shared, "metrics-sampling", true);
        try (fleet) {
            int owner = fleet.relays.get(0).ownedBuckets().contains(0) ? 0 : 1;
            int other = 1 - owner;
            int before = fleet.samples.get(other).get();
            await().atMost(WAIT).until(() -> fleet.samples.get(owner).get() >= 3);
            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(11))
                    .until(() -> fleet.samples.get(other).get() == before);
            assertThat(value(fleet.registries.get(owner), RelayMeter.PENDING_AVAILABLE)).isEqualTo(1);
            assertThat(value(fleet.registries.get(owner), RelayMeter.PENDING_MESSAGES)).isZero();
            assertThat(value(fleet.registries.get(other), RelayMeter.PENDING_AVAILABLE)).isZero();
            assertThat(value(fleet.registries.get(other), RelayMeter.PENDING_MESSAGES)).isNaN();
        }
    }

    /** Two relays on one store without lease release (C3), each with its own registry. */
    private static final class Fleet implements AutoCloseable {
        final Duration leaseDuration = Duration.ofSeconds(3);
        final List<OutboxRelay> relays = new ArrayList<>();
        final List<MicrometerRelayMetrics> metrics = new ArrayList<>();
        final List<MeterRegistry> registries = new ArrayList<>();
        final List<AtomicInteger> samples = new ArrayList<>();
        final List<KafkaOutboxPublisher> publishers = new ArrayList<>();
        final Set<Integer> dead = new HashSet<>();
        final int bucketCount = BUCKETS * 2;
        final String topic;

        /** Starts both relays and waits until they share the buckets. */
        Fleet(InMemoryOutboxStore shared, String topic, boolean bucketZeroOwnerOnly) {
            this.topic = topic;
            KAFKA.broker().createTopic(topic, bucketCount);
            for (String id : List.of("fleet-a", "fleet-b")) {
                AtomicInteger calls = new AtomicInteger();
                PendingMetrics counting = timeout -> {
                    calls.incrementAndGet();
                    return shared.pendingMetrics(timeout);
                };
                SimpleMeterRegistry registry = new SimpleMeterRegistry();
                MicrometerRelayMetrics m = new MicrometerRelayMetrics(registry, COMMON, counting,
                        Duration.ofMillis(100));
                KafkaOutboxPublisher kafka = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers",
                        KAFKA.broker().bootstrapServers())).build();
                RelayOptions options = RelayOptions.builder().relayId(id).bucketCount(bucketCount)
                        .pollInterval(Duration.ofMillis(50)).leaseDuration(leaseDuration)
                        .leaseRenewInterval(Duration.ofMillis(500)).maxPublishDuration(Duration.ofSeconds(1))
                        .backlogSampledByBucketZeroOwner(bucketZeroOwnerOnly).build();
                OutboxRelay relay = OutboxRelay.builder(new TestStore(shared), kafka).options(options).listener(m)
                        .build();
                samples.add(calls);
                registries.add(registry);
                metrics.add(m);
                publishers.add(kafka);
                relays.add(relay);
                relay.start();
            }
            await().atMost(WAIT).until(() -> owned(0) > 0 && owned(1) > 0 && unowned(true) == 0);
        }

        double owned(int relay) {
            return value(registries.get(relay), RelayMeter.OWNED_BUCKETS);
        }

        /** What the fleet's recording rule computes, over the live relays' registries. */
        double unowned(boolean all) {
            double buckets = 0;
            double owned = 0;
            for (int i = 0; i < registries.size(); i++) {
                if (all || !dead.contains(i)) {
                    buckets = Math.max(buckets, value(registries.get(i), RelayMeter.BUCKETS));
                    owned += value(registries.get(i), RelayMeter.OWNED_BUCKETS);
                }
            }
            return buckets - owned;
        }

        /** The relay's process dies: it stops without giving its leases back, and its meters go. */
        void kill(int relay) {
            dead.add(relay);
            relays.get(relay).close(); // the store has no C3: the leases stay until they expire
            metrics.get(relay).close();
        }

        @Override
        public void close() {
            relays.forEach(OutboxRelay::close);
            metrics.forEach(MicrometerRelayMetrics::close);
            publishers.forEach(KafkaOutboxPublisher::close);
        }
    }

    private static double count(MeterRegistry registry, RelayMeter meter) {
        return registry.get(meter.meterName()).counters().stream().mapToDouble(c -> c.count()).sum();
    }

    private static double value(MeterRegistry registry, RelayMeter meter) {
        return registry.get(meter.meterName()).gauge().value();
    }
}
