package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.relay.kafka.KafkaTransactions;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Rule R13 against a real broker that checks logins (SASL/PLAIN on its client listener), ACLs
 * (KRaft's StandardAuthorizer) and caps transactions at 30 s: a refusal no retry heals stops the
 * relay before the broker's first acknowledged record, naming the cause; after it, the relay
 * reports it ({@link OutboxRelay#refusal()}), keeps running, retries, and delivers once the
 * refusal is lifted.
 */
class RefusalIntegrationTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int BUCKETS = 2;
    private static final String ADMIN_PASSWORD = "admin-secret";
    private static final String ALICE_PASSWORD = "alice-secret";
    private static EmbeddedKafkaBroker broker;

    @BeforeAll
    static void startBroker() {
        broker = EmbeddedKafkaBroker.builder()
                .saslPlainWithAcls("admin", Map.of("admin", ADMIN_PASSWORD, "alice", ALICE_PASSWORD))
                .brokerProperty("transaction.max.timeout.ms", "30000")
                .start();
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    private static String jaas(String user, String password) {
        return EmbeddedKafkaBroker.plainLogin(user, password);
    }

    /** A producer logging in as the user, with short timeouts. */
    private static Map<String, Object> producer(String user, String password, Object... extra) {
        Map<String, Object> config = new HashMap<>(broker.adminConfig());
        config.put("sasl.jaas.config", jaas(user, password));
        config.put("max.block.ms", 3_000);
        config.put("request.timeout.ms", 3_000);
        config.put("delivery.timeout.ms", 6_000);
        for (int i = 0; i < extra.length; i += 2) {
            config.put((String) extra[i], extra[i + 1]);
        }
        return config;
    }

    private static RelayOptions options(String relayId) {
        return RelayOptions.builder().relayId(relayId).bucketCount(BUCKETS).batchSize(10)
                .pollInterval(Duration.ofMillis(100)).errorBackoff(Duration.ofMillis(200))
                .maxErrorBackoff(Duration.ofMillis(500)).build();
    }

    private static List<UUID> enqueue(InMemoryOutboxStore store, String topic, int count) {
        StringSerializer s = new StringSerializer();
        List<OutboxMessage> batch = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            batch.add(OutboxMessage.create(topic, "key-" + i, "value-" + i, s, s, BUCKETS));
        }
        store.enqueue(batch);
        return batch.stream().map(OutboxMessage::messageId).toList();
    }

    private static long pending(InMemoryOutboxStore store) {
        return store.pendingMetrics(Duration.ofSeconds(1)).pendingCount();
    }

    /** Runs a relay over one pending message until it stops; returns what it stopped on. */
    private static Throwable stopsOn(String relayId, KafkaOutboxPublisher publisher, String topic) {
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        enqueue(store, topic, 1);
        try (publisher; OutboxRelay relay = new OutboxRelay(store, publisher, options(relayId))) {
            relay.start();
            await().atMost(WAIT).until(() -> relay.termination().isDone());
            assertThat(pending(store)).as("nothing was deleted").isEqualTo(1);
            Throwable cause = null;
            try {
                relay.termination().join();
            } catch (CompletionException e) {
                cause = e.getCause();
            }
            assertThat(cause).as("the relay stopped on a misconfiguration (R6)")
                    .isInstanceOf(OutboxMisconfigurationException.class);
            return cause;
        }
    }

    @Test
    void r13_aTransactionTimeoutAboveTheBrokersMaximumStopsTheRelayBeforeAGoodStart() {
        String topic = "txn-timeout";
        broker.createTopic(topic, BUCKETS);
        KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producer("admin", ADMIN_PASSWORD,
                "transaction.timeout.ms", 60_000)).transactions(KafkaTransactions.builder("r13-txn").build()).build();

        Throwable cause = stopsOn("txn-timeout", publisher, topic);

        assertThat(cause).hasMessageContaining("`transaction.timeout.ms` is above the broker's "
                + "`transaction.max.timeout.ms`").hasMessageContaining("The transaction timeout is larger");
    }

    @Test
    void r13_aWrongSaslPasswordStopsTheRelayBeforeAGoodStart() {
        String topic = "sasl-wrong-password";
        broker.createTopic(topic, BUCKETS);
        KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producer("alice", "not-" + ALICE_PASSWORD))
                .build();

        Throwable cause = stopsOn("sasl-wrong-password", publisher, topic);

        assertThat(cause).hasMessageContaining("SaslAuthenticationException").hasMessageContaining("sasl.jaas.config")
                .hasMessageNotContaining(ALICE_PASSWORD);
    }

    @Test
    void r13_anAclThatDeniesTheTopicStopsTheRelayBeforeAGoodStart() {
        String topic = "acl-denied";
        broker.createTopic(topic, BUCKETS);
        KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producer("alice", ALICE_PASSWORD)).build();

        Throwable cause = stopsOn("acl-denied", publisher, topic);

        assertThat(cause).hasMessageContaining("TopicAuthorizationException").hasMessageContaining("WRITE");
    }

    @Test
    void r13_anAclRevokedAfterAGoodStartIsReportedAndRetriedUntilItIsBack() throws Exception {
        String topic = "acl-revoked";
        broker.createTopic(topic, BUCKETS);
        List<AclBinding> acls = List.of(aclFor(topic, AclOperation.WRITE), aclFor(topic, AclOperation.DESCRIBE));
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producer("alice", ALICE_PASSWORD)).build();
             OutboxRelay relay = new OutboxRelay(store, publisher, options("acl-revoked"))) {
            broker.grant(acls);
            List<UUID> first = enqueue(store, topic, 3);
            relay.start();
            await().atMost(WAIT).until(() -> pending(store) == 0);

            broker.revoke(new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC, topic, PatternType.LITERAL),
                    AccessControlEntryFilter.ANY));
            List<UUID> second = enqueue(store, topic, 3);
            relay.wakeUp();
            await().atMost(WAIT).until(() -> relay.refusal().isPresent());
            Refusal refusal = relay.refusal().orElseThrow();
            assertThat(refusal.side()).isEqualTo("Kafka");
            assertThat(refusal.error()).contains("TopicAuthorizationException");
            assertThat(refusal.row().kind()).isEqualTo(FailureKind.FATAL);
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(12))
                    .until(() -> relay.isRunning() && pending(store) == second.size());

            broker.grant(acls);
            await().atMost(WAIT).until(() -> pending(store) == 0);
            assertThat(relay.refusal()).as("cleared by the acknowledged records").isEmpty();
            assertThat(relay.isRunning()).isTrue();
            List<UUID> all = new ArrayList<>(first);
            all.addAll(second);
            Map<String, Object> reader = broker.adminConfig();
            assertThat(TopicReader.readAll(reader, topic).stream().map(TopicReader::messageId).toList())
                    .containsAll(all);
        }
    }

    private static AclBinding aclFor(String topic, AclOperation operation) {
        return new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
                new AccessControlEntry("User:alice", "*", operation, AclPermissionType.ALLOW));
    }
}
