package io.outbox.relay.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.relay.BrokerUnreachableException;
import io.outbox.relay.FailureKind;
import io.outbox.relay.PublishResult;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.support.StoredMessages;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RoundRobinPartitioner;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

class KafkaOutboxPublisherTest {

    private static final Clock CLOCK = Clock.systemUTC();
    private final MockProducer<byte[], byte[]> producer =
            new MockProducer<>(false, null, new ByteArraySerializer(), new ByteArraySerializer());

    private static OutboxMessage message(String key, Integer partition, List<OutboxHeader> headers) {
        StringSerializer s = new StringSerializer();
        return OutboxMessage.create("orders", key, "value-" + key, s, s, headers, 8, partition, CLOCK);
    }

    @Test
    void k1_enforcesTheSafeProducerSettingsAndNamesEveryOverride() {
        Map<String, Object> user = new HashMap<>();
        user.put("bootstrap.servers", "127.0.0.1:9092");
        user.put("acks", "0");
        user.put("enable.idempotence", false);
        user.put("key.serializer", StringSerializer.class);
        user.put("value.serializer", StringSerializer.class.getName());
        user.put("max.in.flight.requests.per.connection", 10);
        user.put("partitioner.class", RoundRobinPartitioner.class);
        user.put("partitioner.ignore.keys", "true");
        user.put("transactional.id", "tx-1");
        user.put("linger.ms", 7);

        ProducerSettings settings = ProducerSettings.enforce(user);

        assertThat(settings.config()).containsEntry("acks", "all").containsEntry("enable.idempotence", "true")
                .containsEntry("key.serializer", ByteArraySerializer.class.getName())
                .containsEntry("value.serializer", ByteArraySerializer.class.getName())
                .containsEntry("max.in.flight.requests.per.connection", "5")
                .containsEntry("partitioner.ignore.keys", "false")
                .doesNotContainKeys("partitioner.class", "transactional.id")
                .containsEntry("linger.ms", 7).containsEntry("max.block.ms", 10_000L);
        assertThat(settings.overrides()).hasSize(8).anySatisfy(o -> assertThat(o).startsWith("acks=0 replaced with all"))
                .anySatisfy(o -> assertThat(o).startsWith("partitioner.class=" + RoundRobinPartitioner.class.getName()
                        + " removed"))
                .anySatisfy(o -> assertThat(o).startsWith("max.in.flight.requests.per.connection=10 replaced with 5"));
    }

    @Test
    void k1_eachOverriddenUserSettingIsLoggedAtWarn() {
        PrintStream stderr = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers", "127.0.0.1:9",
                "acks", "0", "partitioner.class", RoundRobinPartitioner.class.getName())).build()) {
            assertThat(publisher.messageIdHeader()).isEqualTo("x-outbox-message-id");
        } finally {
            System.setErr(stderr);
        }

        String log = captured.toString(StandardCharsets.UTF_8);
        assertThat(log).contains("WARN KafkaOutboxPublisher - Kafka producer setting overridden: acks=0 replaced "
                + "with all").contains("WARN KafkaOutboxPublisher - Kafka producer setting overridden: "
                + "partitioner.class=" + RoundRobinPartitioner.class.getName() + " removed");
    }

    @Test
    void k1_keepsSettingsThatAlreadyMeetTheRules() {
        ProducerSettings settings = ProducerSettings.enforce(Map.of("acks", "-1", "enable.idempotence", "TRUE",
                "max.in.flight.requests.per.connection", "3", "max.block.ms", "500"));

        assertThat(settings.overrides()).isEmpty();
        assertThat(settings.config()).containsEntry("acks", "-1").containsEntry("max.in.flight.requests.per.connection", "3")
                .containsEntry("max.block.ms", "500");
        assertThat(KafkaOutboxPublisher.effectiveConfig(Map.of())).containsEntry("acks", "all");
    }

    @Test
    void k1_invalidSettingsFailAtConstructionNamingTheSetting() {
        assertThatThrownBy(() -> KafkaOutboxPublisher.builder(Map.of("bootstrap.servers", "127.0.0.1:9092",
                "linger.ms", "soon")).build())
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("linger.ms")
                .hasMessageContaining("soon");
        assertThatThrownBy(() -> KafkaOutboxPublisher.builder(Map.of("linger.ms", 5)).build())
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("bootstrap.servers");
    }

    @Test
    void k2_stampsTheMessageIdAfterTheMessagesOwnHeaders() throws Exception {
        List<OutboxHeader> own = List.of(OutboxHeader.ofUtf8("trace", "t-1"), OutboxHeader.of("trace", null),
                OutboxHeader.ofUtf8("kind", "created"));
        OutboxMessage m = message("alpha", null, own);
        KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producer).messageIdHeader("x-outbox-message-id").build();

        CompletableFuture<PublishResult> result = publisher.publish(List.of(m));
        producer.completeNext();

        assertThat(result.get(5, TimeUnit.SECONDS)).isEqualTo(PublishResult.success(1));
        Header[] headers = producer.history().get(0).headers().toArray();
        assertThat(headers).extracting(Header::key).containsExactly("trace", "trace", "kind", "x-outbox-message-id");
        assertThat(headers[1].value()).isNull();
        assertThat(new String(headers[3].value(), StandardCharsets.UTF_8)).isEqualTo(m.messageId().toString());
    }

    /**
     * The record preparation reads the message's bytes once: the record's key and value are the
     * arrays the message holds (as a store rebuilt it from its driver's), not copies.
     */
    @Test
    void theRecordSendsTheMessagesOwnKeyAndValueArrays() throws Exception {
        OutboxMessage m = message("alpha", null, List.of());
        KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producer).messageIdHeader("id").build();

        CompletableFuture<PublishResult> result = publisher.publish(List.of(m));
        producer.completeNext();

        assertThat(result.get(5, TimeUnit.SECONDS)).isEqualTo(PublishResult.success(1));
        ProducerRecord<byte[], byte[]> sent = producer.history().get(0);
        assertThat(sent.key()).isSameAs(StoredMessages.key(m));
        assertThat(sent.value()).isSameAs(StoredMessages.value(m));
    }

    @Test
    void k3_startsEverySendBeforeWaitingAndReportsTheAcknowledgedPrefixAndTheFirstError() throws Exception {
        List<OutboxMessage> batch = List.of(message("a", null, List.of()), message("b", null, List.of()),
                message("c", null, List.of()), message("d", null, List.of()));
        KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producer).messageIdHeader("id").build();

        CompletableFuture<PublishResult> result = publisher.publish(batch);

        assertThat(producer.history()).as("every send started before any completed").hasSize(4);
        assertThat(result).isNotDone();
        RecordTooLargeException tooLarge = new RecordTooLargeException("record b is too large");
        producer.completeNext();
        producer.errorNext(tooLarge);
        producer.completeNext();
        assertThat(result).as("not complete while a record is still in flight").isNotDone();
        producer.completeNext();

        assertThat(result.get(5, TimeUnit.SECONDS)).isEqualTo(PublishResult.failure(1, tooLarge));
    }

    @Test
    void k3_aFailureOfTheFirstRecordAcknowledgesNothingEvenIfLaterOnesLand() throws Exception {
        KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producer).messageIdHeader("id").build();

        CompletableFuture<PublishResult> result = publisher.publish(List.of(message("a", null, List.of()),
                message("a", null, List.of())));
        TimeoutException timeout = new TimeoutException("expired");
        producer.errorNext(timeout);
        producer.completeNext();

        assertThat(result.get(5, TimeUnit.SECONDS)).isEqualTo(PublishResult.failure(0, timeout));
    }

    @Test
    void k4_honoursAnExplicitPartitionAndLeavesTheTimestampToTheProducer() {
        KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producer).messageIdHeader("id").build();

        publisher.publish(List.of(message("a", 6, List.of()), message("b", null, List.of())));

        List<ProducerRecord<byte[], byte[]>> sent = producer.history();
        assertThat(sent).extracting(ProducerRecord::partition).containsExactly(6, null);
        assertThat(sent).extracting(ProducerRecord::timestamp).containsOnlyNulls();
        assertThat(sent).extracting(ProducerRecord::topic).containsOnly("orders");
        assertThat(new String(sent.get(1).key(), StandardCharsets.UTF_8)).isEqualTo("b");
        assertThat(new String(sent.get(1).value(), StandardCharsets.UTF_8)).isEqualTo("value-b");
    }

    @Test
    void k2_aMessagesOwnHeaderOfTheIdNameIsReplacedByTheRelays() throws Exception {
        OutboxMessage m = message("alpha", null, List.of(OutboxHeader.ofUtf8("x-outbox-message-id", "forged"),
                OutboxHeader.ofUtf8("trace", "t-1")));
        KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producer).messageIdHeader("x-outbox-message-id").build();

        CompletableFuture<PublishResult> result = publisher.publish(List.of(m));
        producer.completeNext();

        assertThat(result.get(5, TimeUnit.SECONDS)).isEqualTo(PublishResult.success(1));
        Header[] headers = producer.history().get(0).headers().toArray();
        assertThat(headers).extracting(Header::key).containsExactly("trace", "x-outbox-message-id");
        assertThat(new String(headers[1].value(), StandardCharsets.UTF_8)).isEqualTo(m.messageId().toString());
    }

    @Test
    void k4_aPartitionTheTopicDoesNotHaveFailsAtOnceInsteadOfBlocking() throws Exception {
        Node node = new Node(1, "localhost", 9092);
        List<PartitionInfo> partitions = java.util.stream.IntStream.range(0, 4)
                .mapToObj(p -> new PartitionInfo("orders", p, node, new Node[] {node}, new Node[] {node})).toList();
        MockProducer<byte[], byte[]> fourPartitions = new MockProducer<>(
                new Cluster("c", List.of(node), partitions, java.util.Set.of(), java.util.Set.of()), false, null,
                new ByteArraySerializer(), new ByteArraySerializer());
        KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(fourPartitions).messageIdHeader("id").build();
        OutboxMessage missing = message("b", 6, List.of());

        CompletableFuture<PublishResult> result = publisher.publish(List.of(message("a", 1, List.of()), missing,
                message("c", 3, List.of())));

        assertThat(fourPartitions.history()).as("only the records with an existing partition were sent")
                .extracting(ProducerRecord::partition).containsExactly(1, 3);
        fourPartitions.completeNext();
        fourPartitions.completeNext();
        PublishResult outcome = result.get(5, TimeUnit.SECONDS);
        assertThat(outcome.acknowledged()).isEqualTo(1);
        assertThat(outcome.firstError()).isInstanceOf(PartitionNotInTopicException.class)
                .hasMessageContaining(missing.messageId().toString())
                .hasMessageContaining("partition 6 of topic 'orders', which has 4 partitions");
    }

    private static MockProducer<byte[], byte[]> producerSeeing(int partitionCount) {
        Node node = new Node(1, "localhost", 9092);
        List<PartitionInfo> partitions = java.util.stream.IntStream.range(0, partitionCount)
                .mapToObj(p -> new PartitionInfo("orders", p, node, new Node[] {node}, new Node[] {node})).toList();
        return new MockProducer<>(new Cluster("c", List.of(node), partitions, java.util.Set.of(), java.util.Set.of()),
                false, null, new ByteArraySerializer(), new ByteArraySerializer());
    }

    @Test
    void r12_aPartitionMissingFromTheCachedMetadataIsSentWhenTheRefreshHasIt() throws Exception {
        Node node = new Node(1, "localhost", 9092);
        List<PartitionInfo> eight = java.util.stream.IntStream.range(0, 8)
                .mapToObj(p -> new PartitionInfo("orders", p, node, new Node[] {node}, new Node[] {node})).toList();
        // The cluster has 8 partitions; the producer's cached metadata still says 4.
        MockProducer<byte[], byte[]> cached = new MockProducer<>(new Cluster("c", List.of(node), eight,
                java.util.Set.of(), java.util.Set.of()), false, null, new ByteArraySerializer(), new ByteArraySerializer()) {
            @Override
            public synchronized List<PartitionInfo> partitionsFor(String topic) {
                return super.partitionsFor(topic).subList(0, 4);
            }
        };
        List<String> refreshed = new java.util.concurrent.CopyOnWriteArrayList<>();
        KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(cached).messageIdHeader("id")
                .partitionRefresh(topic -> {
                    refreshed.add(topic);
                    return 8;
                }).build();

        CompletableFuture<PublishResult> result = publisher.publish(List.of(message("b", 6, List.of())));

        assertThat(refreshed).as("topics refreshed").containsExactly("orders");
        assertThat(cached.history()).extracting(ProducerRecord::partition).containsExactly(6);
        cached.completeNext();
        assertThat(result.get(5, TimeUnit.SECONDS).acknowledged()).isEqualTo(1);
    }

    @Test
    void r12_aPartitionIsCountedAgainstTheMessageOnlyAfterARefreshConfirmsIt() throws Exception {
        KafkaOutboxPublisher confirmed = KafkaOutboxPublisher.builder(producerSeeing(4)).messageIdHeader("id")
                .partitionRefresh(topic -> 4).build();
        PublishResult refused = confirmed.publish(List.of(message("b", 6, List.of()))).get(5, TimeUnit.SECONDS);
        assertThat(refused.firstError()).isInstanceOf(PartitionNotInTopicException.class)
                .hasMessageContaining("which has 4 partitions after a metadata refresh");
        assertThat(FailureKind.classify(refused.firstError())).isEqualTo(FailureKind.MESSAGE);

        KafkaOutboxPublisher unanswered = KafkaOutboxPublisher.builder(producerSeeing(4)).messageIdHeader("id")
                .partitionRefresh(topic -> {
                    throw new TimeoutException("no answer");
                }).build();
        PublishResult failed = unanswered.publish(List.of(message("b", 6, List.of()))).get(5, TimeUnit.SECONDS);
        assertThat(failed.firstError()).isInstanceOf(TimeoutException.class)
                .hasMessageContaining("refreshing it failed");
        assertThat(FailureKind.classify(failed.firstError())).as("a refresh that failed is never counted")
                .isEqualTo(FailureKind.RETRIABLE);
    }

    @Test
    void r7_anUnreachableBrokerIsAFailedResultNotAnException() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(Map.of(
                "bootstrap.servers", "127.0.0.1:" + closedPort, "max.block.ms", 300)).messageIdHeader("id").build()) {

            PublishResult result = publisher.publish(List.of(message("a", null, List.of())))
                    .get(30, TimeUnit.SECONDS);

            assertThat(result.acknowledged()).isZero();
            assertThat(result.firstError()).isInstanceOf(BrokerUnreachableException.class)
                    .isInstanceOf(RetriableException.class)
                    .hasMessageContaining("bootstrap.servers=127.0.0.1:" + closedPort)
                    .hasCauseInstanceOf(TimeoutException.class);
        }
    }

    @Test
    void aClosedPublisherFailsEveryBatchAndLeavesAGivenProducerOpen() throws Exception {
        KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producer).messageIdHeader("id").build();
        publisher.close();

        PublishResult result = publisher.publish(List.of(message("a", null, List.of()))).get(5, TimeUnit.SECONDS);

        assertThat(result.firstError()).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(producer.closed()).isFalse();
    }
}
