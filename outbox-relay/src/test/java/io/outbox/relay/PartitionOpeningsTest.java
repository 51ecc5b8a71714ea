package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxBucket;
import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
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

    /** Sends on another thread with a minute's deadline; the future completes when {@link PartitionOpenings#send} returns. */
    private CompletableFuture<Void> sendAsync(String value) {
        return sendAsync(value, Duration.ofMinutes(1));
    }

    private CompletableFuture<Void> sendAsync(String value, Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        return CompletableFuture.runAsync(() -> {
            try {
                openings.send(producer, P0, record(value), (m, e) -> { }, deadline);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void k8_thePartitionsFirstRecordIsAloneUntilAcknowledgedAndTheNextWaitsForIt() throws Exception {
        CompletableFuture<Void> first = sendAsync("first");
        await().atMost(Duration.ofSeconds(5)).until(() -> producer.history().size() == 1);
        CompletableFuture<Void> second = sendAsync("second");

        Thread.sleep(200); // the second has had time to be sent, were it not held
        assertThat(producer.history()).as("only the opening record is sent").hasSize(1);
        assertThat(first).isNotDone();
        assertThat(openings.isOpen(P0)).isFalse();

        producer.completeNext();

        first.get(5, TimeUnit.SECONDS);
        second.get(5, TimeUnit.SECONDS);
        assertThat(openings.isOpen(P0)).isTrue();
        assertThat(producer.history()).extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                .containsExactly("first", "second");
        sendAsync("third").get(5, TimeUnit.SECONDS); // not acknowledged: an open partition's record does not wait
        assertThat(producer.history()).hasSize(3);
    }

    @Test
    void k8_aWaitEndsAtTheDeadlineAndTheRecordIsSentThen() throws Exception {
        CompletableFuture<Void> first = sendAsync("first", Duration.ofMillis(300));
        await().atMost(Duration.ofSeconds(5)).until(() -> producer.history().size() == 1);
        first.get(5, TimeUnit.SECONDS); // unacknowledged, past its deadline
        assertThat(openings.isOpen(P0)).isFalse();

        sendAsync("second", Duration.ofMillis(300)).get(5, TimeUnit.SECONDS);

        assertThat(producer.history()).as("sent once the wait ran out").hasSize(2);
        producer.completeNext();
        assertThat(openings.isOpen(P0)).as("the opening record's acknowledgement opens it still").isTrue();
    }

    @Test
    void k8_aFailedOpeningLeavesThePartitionClosedAndTheNextRecordOpensItAgain() throws Exception {
        CompletableFuture<Void> first = sendAsync("first");
        await().atMost(Duration.ofSeconds(5)).until(() -> producer.history().size() == 1);

        producer.errorNext(new NotLeaderOrFollowerException("not yet"));

        first.get(5, TimeUnit.SECONDS);
        assertThat(openings.isOpen(P0)).isFalse();
        CompletableFuture<Void> second = sendAsync("second");
        await().atMost(Duration.ofSeconds(5)).until(() -> producer.history().size() == 2);
        assertThat(second).as("the second record is the new opening: alone until acknowledged").isNotDone();
        producer.completeNext();
        second.get(5, TimeUnit.SECONDS);
        assertThat(openings.isOpen(P0)).isTrue();
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
