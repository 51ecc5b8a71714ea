package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.spi.LeaseRelease;
import io.outbox.spi.LeaseRenewal;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.Pending;
import io.outbox.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Three relays share one store; one dies mid-run without giving up its leases. The other two take
 * its buckets over once the leases expire (S6) and nothing is lost; what the dead relay had
 * fetched but not deleted is published again, and only that.
 */
class RelayTakeoverIntegrationTest {

    private static final String TOPIC = "takeover";
    private static final int BUCKETS = 8;
    private static final int MESSAGES = 20_000;
    private static final int KEYS = 200;
    private static final int BATCH_SIZE = 100;
    private static final Duration WAIT = Duration.ofSeconds(120);
    @RegisterExtension
    static final KafkaBroker KAFKA = new KafkaBroker();

    @Test
    void r1_s6_aKilledRelaysBucketsAreTakenOverWithoutLossAndWithBoundedDuplicates() throws Exception {
        KAFKA.broker().createTopic(TOPIC, BUCKETS);
        InMemoryOutboxStore shared = InMemoryOutboxStore.builder().build();
        List<KillableStore> stores = new ArrayList<>();
        List<KafkaOutboxPublisher> publishers = new ArrayList<>();
        List<OutboxRelay> relays = new ArrayList<>();
        for (String id : List.of("relay-a", "relay-b", "relay-c")) {
            KillableStore store = new KillableStore(shared);
            KafkaOutboxPublisher kafka = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers", KAFKA.broker().bootstrapServers(),
                    "linger.ms", 5)).build();
            RelayOptions options = RelayOptions.builder().relayId(id).bucketCount(BUCKETS).batchSize(BATCH_SIZE)
                    .pollInterval(Duration.ofMillis(50)).leaseDuration(Duration.ofSeconds(3))
                    .leaseRenewInterval(Duration.ofSeconds(1)).errorBackoff(Duration.ofMillis(100))
                    .maxErrorBackoff(Duration.ofMillis(500)).closeTimeout(Duration.ofSeconds(10)).build();
            stores.add(store);
            publishers.add(kafka);
            relays.add(new OutboxRelay(store, store.publisher(kafka), options));
        }
        KillableStore victim = stores.get(0);
        Map<String, List<UUID>> enqueuedByKey = new HashMap<>();
        AtomicInteger enqueued = new AtomicInteger();
        try {
            relays.forEach(OutboxRelay::start);
            // The fleet shares the buckets 3, 3, 2 before the writer starts.
            await().atMost(WAIT).until(() -> relays.stream().allMatch(r -> r.ownedBuckets().size() >= 2)
                    && relays.stream().mapToInt(r -> r.ownedBuckets().size()).sum() == BUCKETS);
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> write(shared, enqueuedByKey, enqueued));

            // Kill relay-a once it has published part of the stream.
            await().atMost(WAIT).until(() -> enqueued.get() >= MESSAGES / 3 && victim.deletedCount() > 1_000);
            List<Integer> victimBuckets = relays.get(0).ownedBuckets();
            Set<UUID> outstanding = victim.kill();
            assertThat(victimBuckets).as("the killed relay's share").hasSizeBetween(2, 3);

            writer.get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
            await().atMost(WAIT).until(() -> shared.pendingMetrics(Duration.ofSeconds(1)).pendingCount() == 0);
            assertThat(relays.get(1).ownedBuckets().size() + relays.get(2).ownedBuckets().size())
                    .as("the survivors own every bucket").isEqualTo(BUCKETS);

            List<ConsumerRecord<byte[], byte[]>> records = TopicReader.readAll(KAFKA.broker().bootstrapServers(), TOPIC);
            List<UUID> ids = records.stream().map(TopicReader::messageId).toList();
            Set<UUID> all = enqueuedByKey.values().stream().flatMap(List::stream).collect(Collectors.toSet());
            assertThat(new HashSet<>(ids)).as("every message arrived at least once").isEqualTo(all);

            Map<String, List<UUID>> firstSeenByKey = new HashMap<>();
            Set<UUID> seen = new HashSet<>();
            Set<UUID> repeated = new LinkedHashSet<>();
            for (ConsumerRecord<byte[], byte[]> r : records) {
                UUID id = TopicReader.messageId(r);
                if (seen.add(id)) {
                    firstSeenByKey.computeIfAbsent(new String(r.key(), java.nio.charset.StandardCharsets.UTF_8), k -> new ArrayList<>()).add(id);
                } else {
                    repeated.add(id);
                }
            }
            assertThat(firstSeenByKey).as("per-key order after dropping repeats").isEqualTo(enqueuedByKey);
            int duplicates = ids.size() - all.size();
            assertThat(outstanding.size()).as("what the killed relay had fetched but not deleted")
                    .isLessThanOrEqualTo(BATCH_SIZE * victimBuckets.size());
            assertThat(repeated).as("only the killed relay's outstanding messages repeat").isSubsetOf(outstanding);
            assertThat(duplicates).isLessThanOrEqualTo(outstanding.size());
            System.err.printf("takeover: killed relay owned %s, had %d outstanding; %d records, %d duplicates%n",
                    victimBuckets, outstanding.size(), ids.size(), duplicates);
        } finally {
            relays.forEach(OutboxRelay::close);
            publishers.forEach(KafkaOutboxPublisher::close);
        }
    }

    /** Enqueues the messages in small transactions, round robin over the keys, like a busy service. */
    private static void write(InMemoryOutboxStore store, Map<String, List<UUID>> byKey, AtomicInteger enqueued) {
        StringSerializer s = new StringSerializer();
        List<OutboxMessage> chunk = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++) {
            String key = "key-" + (i % KEYS);
            OutboxMessage m = OutboxMessage.create(TOPIC, key, key + ":" + i, s, s, BUCKETS);
            synchronized (byKey) {
                byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(m.messageId());
            }
            chunk.add(m);
            if (chunk.size() == 100) {
                store.enqueue(chunk);
                enqueued.addAndGet(chunk.size());
                chunk.clear();
                pause();
            }
        }
    }

    private static void pause() {
        try {
            Thread.sleep(5); // pace the writer so the relays run while it writes
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * One relay's view of the shared store. {@link #kill()} makes it behave like a crashed
     * process: from then on its store calls fail (so it neither deletes nor gives up its leases),
     * and its publisher sends nothing more. Records its publisher already handed to Kafka still
     * land, as they would after a real crash.
     */
    static final class KillableStore implements LeaseRenewal.Self, LeaseRelease.Self {
        private final InMemoryOutboxStore delegate;
        private final Set<UUID> outstanding = new HashSet<>();
        private final AtomicInteger deleted = new AtomicInteger();
        private volatile boolean killed;

        KillableStore(InMemoryOutboxStore delegate) {
            this.delegate = delegate;
        }

        synchronized Set<UUID> kill() {
            killed = true;
            return Set.copyOf(outstanding);
        }

        int deletedCount() {
            return deleted.get();
        }

        OutboxPublisher publisher(OutboxPublisher kafka) {
            return batch -> killed
                    ? CompletableFuture.completedFuture(PublishResult.failure(0, new IllegalStateException("killed")))
                    : kafka.publish(batch);
        }

        private void requireAlive() {
            if (killed) {
                throw new IllegalStateException("this relay's process is dead");
            }
        }

        @Override
        public List<Integer> acquireBucketLeases(LeaseRequest request) {
            requireAlive();
            return delegate.acquireBucketLeases(request);
        }

        @Override
        public List<Integer> renewBucketLeases(LeaseRequest request) {
            requireAlive();
            return delegate.renewBucketLeases(request);
        }

        @Override
        public void releaseBucketLeases(String relayId) {
            requireAlive();
            delegate.releaseBucketLeases(relayId);
        }

        @Override
        public List<Integer> bucketsWithPending(List<Integer> buckets) {
            requireAlive();
            return delegate.bucketsWithPending(buckets);
        }

        @Override
        public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
            requireAlive();
            List<Pending> batch = delegate.nextBatch(bucket, maxCount, maxBytes);
            synchronized (this) {
                requireAlive();
                batch.forEach(p -> outstanding.add(p.message().messageId()));
            }
            return batch;
        }

        @Override
        public synchronized void markPublished(int bucket, List<Pending> published) {
            requireAlive();
            delegate.markPublished(bucket, published);
            published.forEach(p -> outstanding.remove(p.message().messageId()));
            deleted.addAndGet(published.size());
        }
    }
}
