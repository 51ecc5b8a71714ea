package io.outbox.relay.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxBucket;
import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.relay.FailureKind;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/** K8 on a mock producer whose sends complete only when the test says so. */
class PartitionOpeningsTest {

    private static final TopicPartition P0 = new TopicPartition("orders", 0);

    private final MockProducer<byte[], byte[]> producer =
            new MockProducer<>(false, null, new ByteArraySerializer(), new ByteArraySerializer());
    private final PartitionOpenings openings = new PartitionOpenings();

    private static ProducerRecord<byte[], byte[]> record(String value) {
        return new ProducerRecord<>("orders", 0, null, value.getBytes(StandardCharsets.UTF_8));
    }

    /** Sends on another thread with a minute's deadline; completes with what {@link PartitionOpenings#send} returned. */
    private CompletableFuture<RuntimeException> sendAsync(String value) {
        return sendAsync(value, Duration.ofMinutes(1));
    }

    private CompletableFuture<RuntimeException> sendAsync(String value, Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        return CompletableFuture.supplyAsync(() -> {
            try {
                return openings.send(producer, P0, record(value), (m, e) -> { }, deadline);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** Sends {@code opening} as the partition's opening, then "second" on another thread, which waits for it. */
    private CompletableFuture<RuntimeException> secondWaitingOn(String opening) throws Exception {
        sendAsync(opening).get(5, TimeUnit.SECONDS);
        CompletableFuture<RuntimeException> second = sendAsync("second");
        Thread.sleep(100);
        return second;
    }

    private List<String> sent() {
        return producer.history().stream().map(r -> new String(r.value(), StandardCharsets.UTF_8)).toList();
    }

    @Test
    void k8_theOpeningRecordGoesAtOnceAndTheNextWaitsForItsAcknowledgement() throws Exception {
        assertThat(sendAsync("first").get(5, TimeUnit.SECONDS)).as("sent").isNull();
        CompletableFuture<RuntimeException> second = sendAsync("second");

        Thread.sleep(200); // the second has had time to be sent, were it not held
        assertThat(sent()).as("only the opening record is sent").containsExactly("first");
        assertThat(second).isNotDone();
        assertThat(openings.isOpen(P0)).isFalse();

        producer.completeNext();

        assertThat(second.get(5, TimeUnit.SECONDS)).isNull();
        assertThat(openings.isOpen(P0)).isTrue();
        assertThat(sendAsync("third").get(5, TimeUnit.SECONDS)).as("an open partition's record does not wait")
                .isNull();
        assertThat(sent()).containsExactly("first", "second", "third");
    }

    @Test
    void k8_anOpeningThatFailsForABrokerReasonStopsTheWaitingRecordUnsent() throws Exception {
        CompletableFuture<RuntimeException> second = secondWaitingOn("first");

        producer.errorNext(new NotLeaderOrFollowerException("not yet"));

        RuntimeException stop = second.get(5, TimeUnit.SECONDS);
        assertThat(stop).isInstanceOf(org.apache.kafka.common.errors.TimeoutException.class)
                .hasMessageContaining("not sent: the first record to orders-0 failed");
        assertThat(FailureKind.classify(stop)).isEqualTo(FailureKind.RETRIABLE);
        assertThat(sent()).as("the second is not sent").containsExactly("first");
        assertThat(openings.isOpen(P0)).isFalse();
        assertThat(sendAsync("again").get(5, TimeUnit.SECONDS)).as("a later batch opens it again").isNull();
        assertThat(sent()).containsExactly("first", "again");
    }

    @Test
    void k8_anOpeningRecordRefusedForItselfLeavesThePartitionToTheNextRecord() throws Exception {
        CompletableFuture<RuntimeException> second = secondWaitingOn("too large");

        producer.errorNext(new RecordTooLargeException("too large"));

        await().atMost(Duration.ofSeconds(5)).until(() -> producer.history().size() == 2);
        assertThat(second.get(5, TimeUnit.SECONDS)).as("the second opens the partition").isNull();
        assertThat(openings.isOpen(P0)).isFalse();
        producer.completeNext();
        assertThat(openings.isOpen(P0)).isTrue();
    }

    @Test
    void k8_aWaitThatReachesTheDeadlineStopsTheRecordUnsent() throws Exception {
        sendAsync("first").get(5, TimeUnit.SECONDS);

        RuntimeException stop = sendAsync("second", Duration.ofMillis(300)).get(5, TimeUnit.SECONDS);

        assertThat(stop).hasMessageContaining("was not acknowledged in time");
        assertThat(FailureKind.classify(stop)).isEqualTo(FailureKind.RETRIABLE);
        assertThat(sent()).containsExactly("first");
        producer.completeNext();
        assertThat(openings.isOpen(P0)).as("the opening record's acknowledgement opens it still").isTrue();
    }

    @Test
    void k8_theTargetIsTheMessagesPartitionElseKafkasKeyedPlacementElseTheProducers() {
        StringSerializer s = new StringSerializer();
        OutboxMessage explicit = OutboxMessage.create("orders", "k", "v", s, s, List.<OutboxHeader>of(), 8, 5,
                Clock.systemUTC());
        OutboxMessage keyed = OutboxMessage.create("orders", "k", "v", s, s, List.<OutboxHeader>of(), 8, null,
                Clock.systemUTC());
        OutboxMessage keyless = OutboxMessage.create("orders", null, "v", s, s, List.<OutboxHeader>of(), 8, null,
                Clock.systemUTC());

        assertThat(PartitionOpenings.target(explicit, 12)).isEqualTo(new TopicPartition("orders", 5));
        assertThat(PartitionOpenings.target(keyed, 12)).isEqualTo(new TopicPartition("orders",
                OutboxBucket.forKey("k".getBytes(StandardCharsets.UTF_8), 12)));
        assertThat(PartitionOpenings.target(keyed, null)).as("partition count unknown").isNull();
        assertThat(PartitionOpenings.target(keyless, 12)).isNull();
    }
}
