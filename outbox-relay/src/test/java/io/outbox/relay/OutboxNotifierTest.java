package io.outbox.relay;

import static io.outbox.relay.TestMessages.keyFor;
import static io.outbox.relay.TestMessages.messages;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.notify.OutboxNotifier;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.tck.InMemoryOutboxStore;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The notifier's local side (N1, N2, R8): a relay in the same process, publishing to a real
 * in-process broker, is woken by a commit's bucket hints long before its poll (one minute here).
 */
class OutboxNotifierTest {

    @RegisterExtension
    static final KafkaBroker KAFKA = new KafkaBroker();

    private static final int BUCKETS = 4;
    private final InMemoryOutboxStore memory = InMemoryOutboxStore.builder().clock(Clock.systemUTC()).build();
    private final TestStore.Renewing store = new TestStore.Renewing(memory);
    private KafkaOutboxPublisher publisher;
    private OutboxRelay relay;
    private OutboxNotifier notifier;

    @AfterEach
    void close() {
        if (notifier != null) {
            notifier.close();
        }
        if (relay != null) {
            relay.close();
        }
        if (publisher != null) {
            publisher.close();
        }
    }

    private OutboxRelay startRelay() {
        publisher = KafkaOutboxPublisher.builder(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                KAFKA.broker().bootstrapServers())).build();
        relay = new OutboxRelay(store, publisher, RelayOptions.builder().relayId("local").bucketCount(BUCKETS)
                .pollInterval(Duration.ofMinutes(1)).build());
        relay.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> relay.ownedBuckets().size() == BUCKETS);
        return relay;
    }

    @Test
    void r8_aCommitsBucketsWakeTheLocalRelayAtOnce_unknownRunsDiscovery_othersAreIgnored() throws Exception {
        String topic = "notifier-local";
        KAFKA.broker().createTopic(topic, BUCKETS);
        startRelay();
        notifier = OutboxNotifier.builder().relay(relay).build();
        Thread.sleep(500); // the first discovery is over
        int fetches = store.nextBatchCalls.get();
        int discoveries = store.pendingCalls.get();

        List<OutboxMessage> batch = messages(topic, keyFor(2, BUCKETS), 3, BUCKETS, Clock.systemUTC());
        memory.enqueue(batch);
        notifier.committed(new int[] {2, 2});
        await().atMost(Duration.ofSeconds(10)).until(() -> store.pending() == 0);
        assertThat(store.pendingCalls.get()).as("an exact hint fetches the bucket without a discovery query")
                .isEqualTo(discoveries);
        assertThat(store.nextBatchCalls.get()).isGreaterThan(fetches);

        memory.enqueue(messages(topic, keyFor(1, BUCKETS), 2, BUCKETS, Clock.systemUTC()));
        notifier.committed(new int[] {-1});
        await().atMost(Duration.ofSeconds(10)).until(() -> store.pending() == 0);
        assertThat(store.pendingCalls.get()).as("-1 runs discovery").isGreaterThan(discoveries);

        notifier.committed(new int[] {BUCKETS, 99});
        assertThat(notifier.stats().ignored()).as("ids outside the relay's bucket range are ignored").isEqualTo(2);
        assertThat(TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic)).hasSize(5);
    }

    @Test
    void optionsAreCheckedNamingTheBadValue() {
        assertThatThrownBy(() -> OutboxNotifier.builder().bufferBuckets(0)).hasMessageContaining("0");
        assertThatThrownBy(() -> OutboxNotifier.builder().errorBackoff(Duration.ZERO))
                .hasMessageContaining("errorBackoff");
        assertThatThrownBy(() -> OutboxNotifier.builder().errorBackoff(Duration.ofSeconds(5))
                .maxErrorBackoff(Duration.ofSeconds(1)).build()).hasMessageContaining("maxErrorBackoff");
    }
}
