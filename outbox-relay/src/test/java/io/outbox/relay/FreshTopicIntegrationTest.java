package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.relay.kafka.KafkaTransactions;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * K8: the first batch into a topic created a moment ago. The broker's metadata names the leader of a
 * new partition before the broker acts as its leader, so the first produce request can fail with
 * NOT_LEADER_OR_FOLLOWER while the requests pipelined behind it land: the broker, holding no
 * producer state for the partition yet, accepts a first sequence above 0. The failed request's
 * records are then refused as out of order until {@code delivery.timeout.ms}, and a retry would
 * write them after the records that followed them. Each round here creates a topic and publishes
 * at once, with records large enough for several producer batches per partition.
 */
class FreshTopicIntegrationTest {

    @RegisterExtension
    static final KafkaBroker KAFKA = new KafkaBroker();

    private static final int ROUNDS = 5;
    private static final int PARTITIONS = 4;
    private static final int PER_KEY = 150;
    private static final String VALUE = "v".repeat(1024);

    /** Short timeouts, so a stuck partition shows as a failure within this test's wait. */
    private static Map<String, Object> producerConfig() {
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("bootstrap.servers", KAFKA.broker().bootstrapServers());
        config.put("delivery.timeout.ms", 15_000);
        config.put("request.timeout.ms", 10_000);
        return config;
    }

    private static List<OutboxMessage> keyed(String topic, List<String> keys) {
        StringSerializer s = new StringSerializer();
        List<OutboxMessage> batch = new ArrayList<>();
        for (int i = 0; i < PER_KEY; i++) {
            for (String key : keys) {
                batch.add(OutboxMessage.create(topic, key, VALUE, s, s, List.<OutboxHeader>of(), PARTITIONS, null,
                        Clock.systemUTC()));
            }
        }
        return batch;
    }

    @Test
    void k8_aKeyedBatchIntoANewTopicIsAcknowledgedWholeAndLandsOnceInOrder() throws Exception {
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producerConfig()).build()) {
            for (int round = 0; round < ROUNDS; round++) {
                String topic = "fresh-keyed-" + round + "-" + UUID.randomUUID();
                KAFKA.broker().createTopic(topic, PARTITIONS);
                List<OutboxMessage> batch = keyed(topic, List.of("a", "b", "c", "d", "e", "f"));

                PublishResult result = publisher.publish(batch).get(60, TimeUnit.SECONDS);

                assertThat(result.failed()).as("round %d: %s", round, result.firstError()).isFalse();
                assertThat(result.acknowledged()).isEqualTo(batch.size());
                assertLandedOnceInBatchOrder(topic, batch);
            }
        }
    }

    @Test
    void k8_aKeyedBatchIntoATopicTheBrokerAutoCreatesIsAcknowledgedWholeAndLandsOnceInOrder() throws Exception {
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producerConfig()).build()) {
            for (int round = 0; round < ROUNDS; round++) {
                String topic = "fresh-auto-" + round + "-" + UUID.randomUUID(); // created by the first metadata request
                List<OutboxMessage> batch = keyed(topic, List.of("a", "b", "c", "d", "e", "f"));

                PublishResult result = publisher.publish(batch).get(60, TimeUnit.SECONDS);

                assertThat(result.failed()).as("round %d: %s", round, result.firstError()).isFalse();
                assertLandedOnceInBatchOrder(topic, batch);
            }
        }
    }

    @Test
    void k8_aBatchNamingPartitionsOfANewTopicIsAcknowledgedWholeAndLandsOnceInOrder() throws Exception {
        StringSerializer s = new StringSerializer();
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producerConfig()).build()) {
            for (int round = 0; round < ROUNDS; round++) {
                String topic = "fresh-partition-" + round + "-" + UUID.randomUUID();
                KAFKA.broker().createTopic(topic, PARTITIONS);
                List<OutboxMessage> batch = new ArrayList<>();
                for (int i = 0; i < PER_KEY * PARTITIONS; i++) {
                    batch.add(OutboxMessage.create(topic, null, VALUE, s, s, List.<OutboxHeader>of(), PARTITIONS,
                            i % PARTITIONS, Clock.systemUTC()));
                }

                PublishResult result = publisher.publish(batch).get(60, TimeUnit.SECONDS);

                assertThat(result.failed()).as("round %d: %s", round, result.firstError()).isFalse();
                assertLandedOnceInBatchOrder(topic, batch);
            }
        }
    }

    @Test
    void k8_aTransactionIntoANewTopicCommitsWhole() throws Exception {
        for (int round = 0; round < ROUNDS; round++) {
            String topic = "fresh-transactional-" + round + "-" + UUID.randomUUID();
            KAFKA.broker().createTopic(topic, 1);
            StringSerializer s = new StringSerializer();
            List<OutboxMessage> batch = new ArrayList<>();
            for (int i = 0; i < PER_KEY * 2; i++) {
                batch.add(OutboxMessage.create(topic, "k" + (i % 5), VALUE, s, s, List.<OutboxHeader>of(), 1, null,
                        Clock.systemUTC()));
            }
            try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producerConfig())
                    .transactions(KafkaTransactions.builder("fresh-" + UUID.randomUUID()).build()).build()) {
                publisher.bucketsAcquired(Set.of(0));

                PublishResult result = publisher.publish(batch).get(60, TimeUnit.SECONDS);

                assertThat(result.failed()).as("round %d: %s", round, result.firstError()).isFalse();
            }
            assertThat(TopicReader.messageIds(KAFKA.broker().bootstrapServers(), topic, "read_uncommitted"))
                    .as("round %d: nothing aborted, nothing twice", round)
                    .containsExactlyElementsOf(batch.stream().map(OutboxMessage::messageId).toList());
        }
    }

    /** Every message exactly once, and each partition's records in the batch's order. */
    private static void assertLandedOnceInBatchOrder(String topic, List<OutboxMessage> batch) {
        List<ConsumerRecord<byte[], byte[]>> records = TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic);
        assertThat(records).extracting(TopicReader::messageId).as("each message once")
                .containsExactlyInAnyOrderElementsOf(batch.stream().map(OutboxMessage::messageId).toList());
        Map<UUID, Integer> position = new LinkedHashMap<>();
        for (int i = 0; i < batch.size(); i++) {
            position.put(batch.get(i).messageId(), i);
        }
        for (int partition : records.stream().map(ConsumerRecord::partition).distinct().toList()) {
            List<Integer> order = records.stream().filter(r -> r.partition() == partition)
                    .map(r -> position.get(TopicReader.messageId(r))).toList();
            assertThat(order).as("partition %d in batch order", partition).isSorted();
        }
    }
}
