package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxBucket;
import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.spi.Pending;
import io.outbox.spi.support.StoredMessages;
import io.outbox.tck.InMemoryOutboxStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The relay and the Kafka publisher against a real single-node broker running in this JVM. */
class KafkaRelayIntegrationTest {

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final StringSerializer STRING = new StringSerializer();
    @RegisterExtension
    static final KafkaBroker KAFKA = new KafkaBroker();

    private static RelayOptions.Builder options(String relayId, int buckets) {
        return RelayOptions.builder().relayId(relayId).bucketCount(buckets).pollInterval(Duration.ofMillis(100))
                .errorBackoff(Duration.ofMillis(200)).maxErrorBackoff(Duration.ofMillis(200))
                .closeTimeout(Duration.ofSeconds(30));
    }

    private static Map<String, Object> producerConfig(Object... extra) {
        Map<String, Object> config = KAFKA.broker().adminConfig();
        for (int i = 0; i < extra.length; i += 2) {
            config.put((String) extra[i], extra[i + 1]);
        }
        return config;
    }

    private static OutboxMessage message(String topic, String key, String value, List<OutboxHeader> headers,
                                         int buckets, Integer partition, Clock clock) {
        return OutboxMessage.create(topic, key, value, STRING, STRING, headers, buckets, partition, clock);
    }

    @Test
    void k2_k4_recordsArriveWithKeyValueHeadersPartitionAndTheMessageId() {
        String topic = "fidelity";
        int buckets = 4;
        KAFKA.broker().createTopic(topic, buckets);
        Clock past = Clock.fixed(Instant.parse("2001-01-01T00:00:00Z"), ZoneOffset.UTC);
        List<OutboxHeader> headers = List.of(OutboxHeader.ofUtf8("h1", "a"), OutboxHeader.of("h1", null),
                OutboxHeader.of("h2", new byte[0]));
        List<OutboxMessage> sent = new ArrayList<>(List.of(
                message(topic, "alpha", "v1", headers, buckets, null, past),
                message(topic, "beta", null, List.of(), buckets, null, past),
                message(topic, "", "empty key", List.of(), buckets, null, past),
                message(topic, null, "no key", headers, buckets, null, past),
                message(topic, "gamma", "explicit partition", List.of(), buckets, 3, past)));
        for (int i = 0; i < 40; i++) {
            sent.add(message(topic, "key-" + i, "value-" + i, List.of(), buckets, null, past));
        }
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        store.enqueue(sent);
        Instant start = Instant.now();

        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producerConfig()).build();
             OutboxRelay relay = new OutboxRelay(store, publisher, options("fidelity", buckets).build())) {
            relay.start();
            await().atMost(WAIT).until(() -> store.pendingMetrics(Duration.ofSeconds(1)).pendingCount() == 0);
        }

        Map<UUID, ConsumerRecord<byte[], byte[]>> received = TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic)
                .stream().collect(Collectors.toMap(TopicReader::messageId, Function.identity()));
        assertThat(received).hasSize(sent.size());
        for (OutboxMessage m : sent) {
            ConsumerRecord<byte[], byte[]> r = received.get(m.messageId());
            assertThat(r.key()).as("key of %s", m).isEqualTo(m.key());
            assertThat(r.value()).as("value of %s", m).isEqualTo(m.value());
            List<String> expectedHeaders = new ArrayList<>(m.headers().stream().map(KafkaRelayIntegrationTest::show).toList());
            expectedHeaders.add("x-outbox-message-id=" + m.messageId());
            assertThat(Arrays.stream(r.headers().toArray()).map(KafkaRelayIntegrationTest::show))
                    .as("headers of %s", m).containsExactlyElementsOf(expectedHeaders);
            if (m.partition() != null) {
                assertThat(r.partition()).isEqualTo(m.partition());
            } else if (m.key() != null) {
                assertThat(r.partition()).as("bucket == partition for keyed %s", m).isEqualTo(m.bucket())
                        .isEqualTo(OutboxBucket.forKey(m.key(), buckets));
            }
            assertThat(r.timestamp()).as("the send time, not createdAt").isGreaterThanOrEqualTo(start.toEpochMilli() - 1000);
        }
    }

    private static String show(Header h) {
        return h.key() + "=" + (h.value() == null ? "null" : new String(h.value(), StandardCharsets.UTF_8));
    }

    /**
     * Rows 1, 2, 3 share a key; row 1 is larger than the producer's max.request.size. Kafka takes
     * rows 2 and 3 on the first attempt, but the acknowledged prefix is empty, so nothing is deleted
     * and the relay retries. Once row 1 is repaired (same message id, smaller value) the batch
     * goes through. After the first failure the bucket sends row 1 alone (R12), so a consumer sees
     * "2, 3" once however many attempts fail, then "1", then "2, 3" once more; dropping repeats by
     * message id leaves 2, 3, 1: not enqueue order.
     */
    @Test
    void r2_k3_r12_aTooLargeFirstRowKeepsTheWholeBatchIsSentAloneAndTheConsumerSeesTwoThreeOneTwoThree() {
        String topic = "too-large";
        KAFKA.broker().createTopic(topic, 1);
        Clock clock = Clock.systemUTC();
        OutboxMessage row1 = message(topic, "order-1", "x".repeat(20_000), List.of(), 4, null, clock);
        OutboxMessage row2 = message(topic, "order-1", "row 2", List.of(), 4, null, clock);
        OutboxMessage row3 = message(topic, "order-1", "row 3", List.of(), 4, null, clock);
        RepairingStore store = new RepairingStore(InMemoryOutboxStore.builder().build(), row1.messageId(), "row 1, repaired");
        store.delegate.enqueue(row1, row2, row3);
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        RelayListener listener = new RelayListener() {
            @Override
            public void onPublishFailed(int bucket, int acknowledged, Throwable error) {
                failures.add(error);
            }
        };

        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producerConfig("max.request.size", 10_000)).build();
             OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options("too-large", 4).build())
                     .listener(listener).build()) {
            relay.start();
            await().atMost(WAIT).until(() -> failures.size() >= 3);
            assertThat(failures).allMatch(e -> e instanceof RecordTooLargeException);
            assertThat(store.pending()).as("rows 2 and 3 stay although Kafka accepted them").isEqualTo(3);
            assertThat(store.deleted).isEmpty();
            assertThat(relay.isRunning()).isTrue();

            store.repair();
            await().atMost(WAIT).until(() -> store.pending() == 0);
        }

        int attempts = failures.size();
        Map<UUID, Integer> row = Map.of(row1.messageId(), 1, row2.messageId(), 2, row3.messageId(), 3);
        List<ConsumerRecord<byte[], byte[]>> records = TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic);
        List<Integer> seen = records.stream().map(r -> row.get(TopicReader.messageId(r))).toList();
        assertThat(attempts).isGreaterThanOrEqualTo(3);
        assertThat(seen).as("after %s failed attempts, rows 2 and 3 were not re-sent with each", attempts)
                .containsExactly(2, 3, 1, 2, 3);
        assertThat(new ArrayList<>(new LinkedHashSet<>(seen))).as("after dropping repeats").containsExactly(2, 3, 1);
        assertThat(new String(records.get(2).value(), StandardCharsets.UTF_8))
                .isEqualTo("row 1, repaired");
    }

    /**
     * A store whose row can be "repaired" in place, like an UPDATE of its value column: after
     * {@link #repair()} it returns the row with the same id, position and headers but a new value.
     */
    static final class RepairingStore extends TestStore.Renewing {
        private final UUID id;
        private final byte[] repairedValue;
        private volatile boolean repaired;

        RepairingStore(InMemoryOutboxStore delegate, UUID id, String repairedValue) {
            super(delegate);
            this.id = id;
            this.repairedValue = repairedValue.getBytes(StandardCharsets.UTF_8);
        }

        void repair() {
            repaired = true;
        }

        @Override
        public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
            List<Pending> batch = super.nextBatch(bucket, maxCount, maxBytes);
            return repaired ? batch.stream().map(p -> p.message().messageId().equals(id) ? withNewValue(p) : p)
                    .toList() : batch;
        }

        /** The same row, with its handle, holding the new value. */
        private Pending withNewValue(Pending row) {
            OutboxMessage m = row.message();
            return new Pending(StoredMessages.rebuild(m.messageId(), m.bucket(), m.topic(), m.key(),
                    repairedValue.clone(), m.headers(), m.partition(), m.createdAt()), row.handle());
        }
    }

}
