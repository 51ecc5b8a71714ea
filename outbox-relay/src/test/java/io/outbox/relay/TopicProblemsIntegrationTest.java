package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.OutboxMessage;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.relay.kafka.KafkaTransactions;
import io.outbox.relay.kafka.PartitionNotInTopicException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Topic problems of one message on a real broker: K3 (the leading acknowledged records count,
 * whatever a later record's topic does), R12 (a topic or partition problem of message k is a
 * message-permanent failure of message k alone) and a topic whose partition count changes while
 * the publisher runs.
 */
class TopicProblemsIntegrationTest {

    @RegisterExtension
    static final KafkaBroker KAFKA = new KafkaBroker();

    private static OutboxMessage message(String topic, String key) {
        StringSerializer s = new StringSerializer();
        return OutboxMessage.create(topic, key, "value-" + key, s, s, List.of(), 8, null, Clock.systemUTC());
    }

    private KafkaOutboxPublisher publisher() {
        return KafkaOutboxPublisher.builder(Map.of("bootstrap.servers", KAFKA.broker().bootstrapServers(),
                "max.block.ms", 3000, "metadata.max.age.ms", 500)).build();
    }

    @Test
    void k3_anUncreatableTopicAtPositionKFailsMessageKAloneAndTheMessagesBeforeItAreDeliveredOnce()
            throws Exception {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String existing = "orders.k3" + suffix;
        String colliding = "orders_k3" + suffix; // collides with the existing one: Kafka refuses to create it
        KAFKA.broker().createTopic(existing, 1);
        List<OutboxMessage> batch = List.of(message(existing, "a"), message(existing, "b"),
                message(colliding, "c"), message(existing, "d"));

        PublishResult result;
        try (KafkaOutboxPublisher publisher = publisher()) {
            result = publisher.publish(batch).get(60, TimeUnit.SECONDS);
        }

        assertThat(result.acknowledged()).as("the two messages before the bad topic").isEqualTo(2);
        assertThat(FailureKind.classify(result.firstError())).as("%s", result.firstError())
                .isEqualTo(FailureKind.MESSAGE);
        assertThat(TopicReader.readAll(KAFKA.broker().bootstrapServers(), existing))
                .extracting(TopicReader::messageId).as("delivered once each, in order; the one after is sent too")
                .containsExactly(batch.get(0).messageId(), batch.get(1).messageId(), batch.get(3).messageId());
    }

    /** One bucket's messages (the transactional mode takes a batch of one bucket). */
    private static OutboxMessage oneBucket(String topic, String key, Integer partition) {
        StringSerializer s = new StringSerializer();
        return OutboxMessage.create(topic, key, "value-" + key, s, s, List.of(), 1, partition, Clock.systemUTC());
    }

    private KafkaOutboxPublisher transactionalPublisher(String prefix) {
        KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers",
                        KAFKA.broker().bootstrapServers(), "max.block.ms", 3000, "metadata.max.age.ms", 500))
                .transactions(KafkaTransactions.builder(prefix + UUID.randomUUID()).build()).build();
        publisher.bucketsAcquired(Set.of(0));
        return publisher;
    }

    /**
     * K3, K6, R12 in the transactional mode: the topic problem is found before the transaction
     * begins, and the transaction holds the messages before it; nothing after it is sent.
     */
    @Test
    void k3_k6_inTheTransactionalModeAnUncreatableTopicAtPositionKFailsMessageKAndTheMessagesBeforeItAreCommittedOnce()
            throws Exception {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String existing = "tx.k3" + suffix;
        String colliding = "tx_k3" + suffix;
        KAFKA.broker().createTopic(existing, 1);
        List<OutboxMessage> batch = List.of(oneBucket(existing, "a", null), oneBucket(existing, "b", null),
                oneBucket(colliding, "c", null), oneBucket(existing, "d", null));

        PublishResult result;
        try (KafkaOutboxPublisher publisher = transactionalPublisher("tx-k3-")) {
            result = publisher.publish(batch).get(60, TimeUnit.SECONDS);
        }

        assertThat(result.acknowledged()).as("the two messages before the bad topic").isEqualTo(2);
        assertThat(result.firstError()).as("%s", result.firstError())
                .isInstanceOf(org.apache.kafka.common.errors.InvalidTopicException.class)
                .hasMessageContaining("topic '" + colliding + "' cannot be created");
        assertThat(FailureKind.classify(result.firstError())).isEqualTo(FailureKind.MESSAGE);
        assertThat(TopicReader.messageIds(KAFKA.broker().bootstrapServers(), existing, "read_committed"))
                .as("committed once each, in order; none after the bad one")
                .containsExactly(batch.get(0).messageId(), batch.get(1).messageId());
        // read_uncommitted also returns the records of aborted transactions: the fourth was never sent,
        // and the two before the bad topic were sent once, in the one transaction that committed
        assertThat(TopicReader.messageIds(KAFKA.broker().bootstrapServers(), existing, "read_uncommitted"))
                .as("every record written to the log, aborted ones included")
                .containsExactly(batch.get(0).messageId(), batch.get(1).messageId());
    }

    /** R12 in the transactional mode: a partition the topic lacks at position k fails message k alone. */
    @Test
    void r12_k6_inTheTransactionalModeAPartitionTheTopicLacksAtPositionKFailsMessageKAlone() throws Exception {
        String topic = "tx-small-" + UUID.randomUUID();
        KAFKA.broker().createTopic(topic, 2);
        OutboxMessage missing = oneBucket(topic, "x", 5);
        List<OutboxMessage> batch = List.of(oneBucket(topic, "a", 1), oneBucket(topic, "b", 0), missing,
                oneBucket(topic, "d", 1));

        PublishResult result;
        try (KafkaOutboxPublisher publisher = transactionalPublisher("tx-r12-")) {
            result = publisher.publish(batch).get(60, TimeUnit.SECONDS);
        }

        assertThat(result.acknowledged()).isEqualTo(2);
        assertThat(result.firstError()).isInstanceOf(PartitionNotInTopicException.class)
                .hasMessageContaining(missing.messageId().toString());
        assertThat(TopicReader.messageIds(KAFKA.broker().bootstrapServers(), topic, "read_committed"))
                .containsExactlyInAnyOrder(batch.get(0).messageId(), batch.get(1).messageId());
        // aborted records included: the message after the missing partition was never sent
        assertThat(TopicReader.messageIds(KAFKA.broker().bootstrapServers(), topic, "read_uncommitted"))
                .as("every record written to the log, aborted ones included")
                .containsExactlyInAnyOrder(batch.get(0).messageId(), batch.get(1).messageId());
    }

    /**
     * R12, K6: the broker refuses a record over the topic's {@code max.message.bytes}, and with it
     * every record of its producer batch, the ones before it too; in both modes the result still
     * acknowledges the two messages before it and fails the large one, and the transactional mode
     * commits the two once.
     */
    @Test
    void r12_k6_aRecordOverTheTopicsMaxMessageBytesAtPositionKFailsMessageKAloneInBothModes() throws Exception {
        for (boolean transactional : new boolean[] {false, true}) {
            String topic = "small-records-" + transactional + "-" + UUID.randomUUID();
            try (Admin admin = Admin.create(KAFKA.broker().adminConfig())) {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1)
                        .configs(Map.of("max.message.bytes", "2000")))).all().get(30, TimeUnit.SECONDS);
            }
            StringSerializer s = new StringSerializer();
            OutboxMessage large = OutboxMessage.create(topic, "c", "x".repeat(5000), s, s, List.of(), 1, null,
                    Clock.systemUTC());
            List<OutboxMessage> batch = List.of(oneBucket(topic, "a", null), oneBucket(topic, "b", null), large,
                    oneBucket(topic, "d", null));

            PublishResult result;
            try (KafkaOutboxPublisher publisher = transactional ? transactionalPublisher("tx-large-") : publisher()) {
                result = publisher.publish(batch).get(60, TimeUnit.SECONDS);
            }

            assertThat(result.acknowledged()).as("transactional=%s: %s", transactional, result.firstError())
                    .isEqualTo(2);
            assertThat(result.firstError()).isInstanceOf(org.apache.kafka.common.errors.RecordTooLargeException.class);
            assertThat(TopicReader.messageIds(KAFKA.broker().bootstrapServers(), topic, "read_committed"))
                    .as("transactional=%s", transactional)
                    .startsWith(batch.get(0).messageId(), batch.get(1).messageId())
                    .doesNotHaveDuplicates().doesNotContain(large.messageId());
        }
    }

    @Test
    void k3_aTopicRecreatedWithAnotherPartitionCountIsLoggedOnceAtErrorNamingTheTopicAndBothCounts()
            throws Exception {
        String topic = "recreated-" + UUID.randomUUID();
        try (KafkaOutboxPublisher publisher = publisher()) {
            assertRecreationLoggedOnce(publisher, topic, t -> message(t, "a"), true);
        }
    }

    @Test
    void k3_aTopicDeletedWhileRunningIsRecreatedByTheBrokersAutoCreationWithNumPartitionsAndLoggedOnce()
            throws Exception {
        String topic = "auto-recreated-" + UUID.randomUUID();
        int partitions;
        try (KafkaOutboxPublisher publisher = publisher()) {
            partitions = assertRecreationLoggedOnce(publisher, topic, t -> message(t, "a"), false);
        }
        assertThat(partitions).as("the broker's num.partitions (1 by default)").isEqualTo(1);
    }

    @Test
    void k5_inTheTransactionalModeAPartitionCountChangeIsLoggedOnceToo() throws Exception {
        String topic = "tx-recreated-" + UUID.randomUUID();
        StringSerializer s = new StringSerializer();
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers",
                        KAFKA.broker().bootstrapServers(), "max.block.ms", 3000, "metadata.max.age.ms", 500))
                .transactions(KafkaTransactions.builder("tx-recreated").build()).build()) {
            publisher.bucketsAcquired(Set.of(0));
            assertRecreationLoggedOnce(publisher, topic, t -> OutboxMessage.create(t, "a", "value", s, s, List.of(),
                    1, null, Clock.systemUTC()), true);
        }
    }

    /**
     * Creates the topic with 2 partitions, publishes, deletes it and has it re-created (with 5
     * partitions by hand, or by the broker's auto-creation when the producer's metadata refresh
     * asks for it first, as it does in production), then publishes until the change is logged and
     * three times more.
     *
     * @return the partition count the topic has now
     */
    private static int assertRecreationLoggedOnce(KafkaOutboxPublisher publisher, String topic,
                                                  java.util.function.Function<String, OutboxMessage> message,
                                                  boolean byHand) throws Exception {
        KAFKA.broker().createTopic(topic, 2);
        PrintStream stderr = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        int[] count = new int[1];
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try (Admin admin = Admin.create(KAFKA.broker().adminConfig())) {
            assertThat(publisher.publish(List.of(message.apply(topic))).get(60, TimeUnit.SECONDS).acknowledged())
                    .isEqualTo(1);

            admin.deleteTopics(Set.of(topic)).all().get(30, TimeUnit.SECONDS);
            Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                    .ignoreExceptions().until(() -> {
                        if (byHand) {
                            try {
                                admin.createTopics(List.of(new NewTopic(topic, 5, (short) 1))).all()
                                        .get(10, TimeUnit.SECONDS);
                            } catch (java.util.concurrent.ExecutionException e) {
                                // exists already: read what it has
                            }
                        } else {
                            publisher.publish(List.of(message.apply(topic))).get(60, TimeUnit.SECONDS);
                        }
                        count[0] = admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS)
                                .get(topic).partitions().size();
                        return count[0] != 2;
                    });
            Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
                publisher.publish(List.of(message.apply(topic))).get(60, TimeUnit.SECONDS);
                return captured.toString(StandardCharsets.UTF_8).contains("partition count changed");
            });
            for (int i = 0; i < 3; i++) {
                publisher.publish(List.of(message.apply(topic))).get(60, TimeUnit.SECONDS);
            }
        } finally {
            System.setErr(stderr);
        }

        String log = captured.toString(StandardCharsets.UTF_8);
        List<String> errors = log.lines().filter(l -> l.contains(" ERROR ") && l.contains(topic)).toList();
        assertThat(errors).as(log).hasSize(1);
        assertThat(errors.get(0)).contains("ERROR KafkaOutboxPublisher - partition count changed from 2 to " + count[0],
                "topic='" + topic + "'");
        return count[0];
    }

    private static OutboxMessage toPartition(String topic, String key, int partition) {
        StringSerializer s = new StringSerializer();
        return OutboxMessage.create(topic, key, "value-" + key, s, s, List.of(), 8, partition, Clock.systemUTC());
    }

    /**
     * R12: the partition check refreshes the metadata before it counts a refused partition against
     * the message. The producer caches a topic's metadata for {@code metadata.max.age.ms} (5 min
     * here, Kafka's default); a partition added in that time is sent, not refused.
     */
    @Test
    void r12_aPartitionAddedAfterTheProducerCachedTheTopicIsSentNotRefused() throws Exception {
        String topic = "grown-" + UUID.randomUUID();
        KAFKA.broker().createTopic(topic, 2);
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers",
                KAFKA.broker().bootstrapServers(), "max.block.ms", 10_000, "metadata.max.age.ms", 300_000)).build();
             Admin admin = Admin.create(KAFKA.broker().adminConfig())) {
            assertThat(publisher.publish(List.of(toPartition(topic, "a", 0))).get(60, TimeUnit.SECONDS).acknowledged())
                    .as("the first message, which makes the producer cache 2 partitions").isEqualTo(1);
            admin.createPartitions(Map.of(topic, org.apache.kafka.clients.admin.NewPartitions.increaseTo(4))).all()
                    .get(30, TimeUnit.SECONDS);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> admin.describeTopics(Set.of(topic))
                    .allTopicNames().get().get(topic).partitions().size() == 4);

            OutboxMessage third = toPartition(topic, "b", 3);
            PublishResult result = publisher.publish(List.of(third)).get(60, TimeUnit.SECONDS);

            assertThat(result.firstError()).as("the error for partition 3 of a topic grown to 4").isNull();
            assertThat(result.acknowledged()).isEqualTo(1);
            assertThat(TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic))
                    .extracting(TopicReader::messageId).contains(third.messageId());
        }
    }

    /** R12: a partition the topic still does not have after the refresh is the message's own failure. */
    @Test
    void r12_aPartitionTheTopicDoesNotHaveAfterARefreshIsMessagePermanent() throws Exception {
        String topic = "small-" + UUID.randomUUID();
        KAFKA.broker().createTopic(topic, 2);
        try (KafkaOutboxPublisher publisher = publisher()) {
            OutboxMessage missing = toPartition(topic, "x", 5);
            PublishResult result = publisher.publish(List.of(toPartition(topic, "a", 1), missing))
                    .get(60, TimeUnit.SECONDS);

            assertThat(result.acknowledged()).isEqualTo(1);
            assertThat(result.firstError()).isInstanceOf(PartitionNotInTopicException.class)
                    .hasMessageContaining(missing.messageId().toString())
                    .hasMessageContaining("partition 5 of topic '" + topic + "', which has 2 partitions after a "
                            + "metadata refresh");
            assertThat(FailureKind.classify(result.firstError())).isEqualTo(FailureKind.MESSAGE);
        }
    }
}
