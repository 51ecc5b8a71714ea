package io.outbox.relay.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.OutboxRelay;
import io.outbox.relay.RelayOptions;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.tck.InMemoryOutboxStore;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The transactional mode's settings (K5): validated with errors that name the key and the value. */
class KafkaTransactionsTest {

    private static Map<String, Object> settings(Object... pairs) {
        Map<String, Object> config = new HashMap<>();
        config.put("bootstrap.servers", "127.0.0.1:9");
        for (int i = 0; i < pairs.length; i += 2) {
            config.put((String) pairs[i], pairs[i + 1]);
        }
        return config;
    }

    @Test
    void k5_theModeIsReadFromProducerSettings() {
        assertThat(KafkaTransactions.fromProducerConfig(settings())).isEmpty();
        assertThat(KafkaTransactions.fromProducerConfig(settings("transactions", "false"))).isEmpty();
        KafkaTransactions on = KafkaTransactions.fromProducerConfig(settings("transactions", "true",
                "transactional.id.prefix", "orders-outbox", "transactions.max.buckets", "16")).orElseThrow();
        assertThat(on.transactionalIdPrefix()).isEqualTo("orders-outbox");
        assertThat(on.maxBuckets()).isEqualTo(16);
        assertThat(on.transactionalId(7)).isEqualTo("orders-outbox-7");
        assertThat(KafkaTransactions.builder("p").build().maxBuckets()).isEqualTo(KafkaTransactions.DEFAULT_MAX_BUCKETS);
    }

    @Test
    void k5_invalidSettingsAreRefusedNamingTheKeyAndTheValue() {
        assertThatThrownBy(() -> KafkaTransactions.fromProducerConfig(settings("transactions", "yes")))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("transactions='yes'");
        assertThatThrownBy(() -> KafkaTransactions.fromProducerConfig(settings("transactional.id.prefix", "p")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("transactional.id.prefix='p' has no effect without transactions=true");
        assertThatThrownBy(() -> KafkaTransactions.fromProducerConfig(settings("transactions", "true")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("transactional.id.prefix is required");
        assertThatThrownBy(() -> KafkaTransactions.fromProducerConfig(settings("transactions", "true",
                "transactional.id.prefix", "p", "transactional.id", "mine")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("transactional.id='mine'");
        assertThatThrownBy(() -> KafkaTransactions.fromProducerConfig(settings("transactions", "true",
                "transactional.id.prefix", "p", "transactions.max.buckets", "many")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("transactions.max.buckets='many'");
        assertThatThrownBy(() -> KafkaTransactions.builder("p").maxBuckets(0))
                .hasMessageContaining("transactions.max.buckets=0");
        assertThatThrownBy(() -> KafkaTransactions.builder("p").maxBuckets(1025))
                .hasMessageContaining("transactions.max.buckets=1025");
        assertThatThrownBy(() -> KafkaTransactions.builder(" ")).hasMessageContaining("transactional.id.prefix=' '");
        assertThatThrownBy(() -> KafkaTransactions.builder("a b")).hasMessageContaining("transactional.id.prefix='a b'");
        assertThatThrownBy(() -> KafkaTransactions.builder(null)).hasMessageContaining("transactional.id.prefix=null");
    }

    @Test
    void k5_aRelayOfMoreBucketsThanTheBoundOrASecondRelayIsRefused() {
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(settings("transactions", "true",
                "transactional.id.prefix", "bounded", "transactions.max.buckets", "4")).build()) {
            assertThat(publisher.isTransactional()).isTrue();
            assertThatThrownBy(() -> new OutboxRelay(store, publisher,
                    RelayOptions.builder().relayId("r").bucketCount(8).build()))
                    .isInstanceOf(OutboxMisconfigurationException.class)
                    .hasMessageContaining("bucket.count=8").hasMessageContaining("transactions.max.buckets=4");
            try (OutboxRelay first = new OutboxRelay(store, publisher, RelayOptions.builder().relayId("r").bucketCount(4)
                    .build())) {
                assertThat(first.options().bucketCount()).isEqualTo(4);
                assertThatThrownBy(() -> new OutboxRelay(store, publisher,
                        RelayOptions.builder().relayId("s").bucketCount(4).build()))
                        .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("serves one relay");
            }
        }
    }

    @Test
    void k5_effectiveSettingsShowThePerBucketTransactionalId() {
        Map<String, Object> effective = KafkaOutboxPublisher.effectiveConfig(settings("transactions", "true",
                "transactional.id.prefix", "orders"));
        assertThat(effective).containsEntry("transactional.id", "orders-<bucket>").doesNotContainKey("transactions")
                .doesNotContainKey("transactional.id.prefix").containsEntry("acks", "all");
        try (KafkaOutboxPublisher plain = KafkaOutboxPublisher.builder(settings()).build()) {
            assertThat(plain.isTransactional()).isFalse();
        }
    }
}
