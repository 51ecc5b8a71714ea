package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.tck.InMemoryOutboxStore;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * A publish that finds no broker of the bootstrap servers reachable fails with a
 * {@link BrokerUnreachableException} naming them and the time since the last contact;
 * {@link OutboxRelay#brokerUnreachable()} reports it until a record is acknowledged, which happens
 * as soon as a broker listens there (R7).
 */
class UnreachableBrokerIntegrationTest {

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    @Test
    void r7_anUnreachableBootstrapIsNamedAndReportedUntilABrokerAnswers() throws Exception {
        int port = freePort();
        String bootstrap = "127.0.0.1:" + port;
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        StringSerializer s = new StringSerializer();
        store.enqueue(List.of(OutboxMessage.create("unreachable", "k", "v", s, s, 2)));
        RelayOptions options = RelayOptions.builder().relayId("unreachable").bucketCount(2)
                .pollInterval(Duration.ofMillis(100)).errorBackoff(Duration.ofMillis(100))
                .maxErrorBackoff(Duration.ofMillis(500)).build();
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers", bootstrap,
                "max.block.ms", 1_000)).build();
             OutboxRelay relay = new OutboxRelay(store, publisher, options)) {
            relay.start();
            await().atMost(Duration.ofSeconds(60)).until(() -> relay.brokerUnreachable().isPresent());
            assertThat(relay.brokerUnreachable().orElseThrow()).hasMessageContaining("bootstrap.servers=" + bootstrap)
                    .hasMessageContaining("no successful contact since the publisher started");
            assertThat(FailureKind.classify(relay.brokerUnreachable().orElseThrow())).isEqualTo(FailureKind.RETRIABLE);

            try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().port(port).start()) {
                assertThat(broker.bootstrapServers()).isEqualTo(bootstrap);
                await().atMost(Duration.ofSeconds(90))
                        .until(() -> store.pendingMetrics(Duration.ofSeconds(1)).pendingCount() == 0);
                assertThat(relay.brokerUnreachable()).as("cleared by the acknowledged record").isEmpty();
                assertThat(relay.isRunning()).isTrue();
            }
        }
    }
}
