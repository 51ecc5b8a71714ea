package io.outbox.notify.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.notify.NotificationTransport;
import io.outbox.notify.NotificationTransports;
import io.outbox.notify.OutboxNotifier;
import io.outbox.relay.OutboxRelay;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.testing.DeadConnectionScenario;
import io.outbox.relay.testing.FreezingProxy;
import io.outbox.relay.testing.NotifyFixture;
import io.outbox.store.jdbc.JdbcOutboxTransactions;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.Driver;

/**
 * The PostgreSQL transport against the real PostgreSQL of this machine, with relays publishing to
 * an in-process Kafka broker. Relays poll once a minute here, so a message that arrives within
 * seconds was fetched because of a hint, not found by polling.
 */
class PostgresNotificationTransportTest {

    /** Where slf4j-simple writes this module's test logs (set in the pom). */
    private static final Path LOG = Path.of(System.getProperty("org.slf4j.simpleLogger.logFile",
            "target/notify-postgres-test.log"));

    private static EmbeddedKafkaBroker broker;
    private NotifyFixture fixture;
    private String channel;

    @BeforeAll
    static void startBroker() {
        broker = EmbeddedKafkaBroker.start();
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    @BeforeEach
    void setUp() {
        fixture = new NotifyFixture(broker);
        channel = fixture.prefix + "hints";
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    private Map<String, String> settings() {
        return Map.of(PostgresTransportSettings.URL, NotifyFixture.URL, PostgresTransportSettings.USER,
                NotifyFixture.USER, PostgresTransportSettings.CHANNEL, channel);
    }

    private PostgresNotificationTransport transport() {
        return fixture.closeLater((PostgresNotificationTransport) NotificationTransports.open("postgres", settings()));
    }

    /** This test's log lines of the transport at a level containing a text. */
    private List<String> logLines(String level, String text) throws Exception {
        return DeadConnectionScenario.logLines(LOG, "PostgresNotificationTransport", channel, level, text);
    }

    private static RelayOptions slowPolling(String id) {
        return RelayOptions.builder().relayId(id).bucketCount(NotifyFixture.BUCKETS)
                .pollInterval(Duration.ofMinutes(1)).leaseDuration(Duration.ofSeconds(15))
                .leaseRenewInterval(Duration.ofMillis(300)).build();
    }

    /** Writes messages in one transaction through the JDBC helper and the notifier. */
    private List<UUID> write(OutboxNotifier notifier, int... buckets) throws Exception {
        List<OutboxMessage> messages = IntStream.of(buckets).mapToObj(b -> NotifyFixture.message(fixture.topic, b))
                .toList();
        try (Connection c = fixture.connection()) {
            JdbcOutboxTransactions.of(fixture.writerStore.writer(), notifier).run(c, outbox -> {
                outbox.enqueue(messages);
                return null;
            });
        }
        return messages.stream().map(OutboxMessage::messageId).toList();
    }

    private OutboxRelay listeningRelay(String id, NotificationTransport transport, NotifyFixture.CountingStore store) {
        OutboxRelay relay = fixture.relay(store, slowPolling(id));
        fixture.closeLater(OutboxNotifier.builder().transport(transport).relay(relay).build());
        await().atMost(Duration.ofSeconds(20)).until(() -> relay.ownedBuckets().size() == NotifyFixture.BUCKETS);
        return relay;
    }

    @Test
    void n5_aCommitWakesARelayOfAnotherNotifierAtOnceAndARollbackSendsNothing() throws Exception {
        List<int[]> heard = new CopyOnWriteArrayList<>();
        PostgresNotificationTransport listenOnly = transport();
        listenOnly.listen(heard::add);
        NotifyFixture.CountingStore store = fixture.relayStore();
        listeningRelay("relay-a", transport(), store);
        OutboxNotifier writer = fixture.closeLater(OutboxNotifier.builder().transport(transport()).build());
        Thread.sleep(500); // both listeners are up

        List<UUID> rolledBack = new ArrayList<>();
        try (Connection c = fixture.connection()) {
            JdbcOutboxTransactions.of(fixture.writerStore.writer(), writer).run(c, outbox -> {
                OutboxMessage m = NotifyFixture.message(fixture.topic, 3);
                rolledBack.add(m.messageId());
                outbox.enqueue(m);
                throw new IllegalStateException("business rule broken: roll back");
            });
        } catch (IllegalStateException expected) {
            // rolled back
        }
        Thread.sleep(1_000);
        assertThat(heard).as("N1/N5: a rolled-back transaction's NOTIFY is never delivered").isEmpty();

        List<UUID> committed = write(writer, 3, 5);
        await().atMost(Duration.ofSeconds(10)).until(() -> fixture.consumed.keySet().containsAll(committed));
        await().atMost(Duration.ofSeconds(5)).until(() -> heard.size() == 1);
        assertThat(heard.get(0)).containsExactly(3, 5);
        assertThat(fixture.consumed).doesNotContainKeys(rolledBack.toArray(UUID[]::new));
    }

    @Test
    void n4_theListeningConnectionKilledWithPgTerminateBackendReconnectsAndNothingIsLost() throws Exception {
        PostgresNotificationTransport relaySide = transport();
        NotifyFixture.CountingStore store = fixture.relayStore();
        listeningRelay("relay-a", relaySide, store);
        OutboxNotifier writer = fixture.closeLater(OutboxNotifier.builder().transport(transport()).build());
        Thread.sleep(500);
        List<UUID> ids = new ArrayList<>(write(writer, 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> fixture.consumed.keySet().containsAll(ids));

        int killed;
        try (Connection c = fixture.connection();
             PreparedStatement kill = c.prepareStatement("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                     + " WHERE application_name = ?")) {
            kill.setString(1, "outbox-notify-" + relaySide.origin());
            try (ResultSet rs = kill.executeQuery()) {
                rs.next();
                killed = rs.getInt(1);
            }
        }
        assertThat(killed).as("the relay's listening connection was found and terminated").isEqualTo(1);
        ids.addAll(write(writer, 2)); // may be sent while nobody listens: polling or the reconnect finds it
        await().atMost(Duration.ofSeconds(20)).until(() -> relaySide.reconnects() == 1);
        List<UUID> after = write(writer, 4, 6);
        ids.addAll(after);
        await().atMost(Duration.ofSeconds(30)).until(() -> fixture.consumed.keySet().containsAll(ids));
        assertThat(fixture.duplicates.get()).isZero();
    }

    /**
     * N6: the relay's listening connection goes through a proxy of the test's own, which the test
     * freezes (no byte forwarded either way, no socket closed: no FIN, no RST). The round trip
     * between waits notices within the liveness timeout (2 s here) and the relay, polling once a
     * minute, is told; once the proxy forwards again the transport listens again, the commit made
     * meanwhile (its NOTIFY went to the frozen session) goes out with the wake-up that follows, and
     * the next commit wakes the relay at once. One WARN for the loss and one INFO for the recovery,
     * whatever the failed reconnect attempts.
     */
    @Test
    void n6_aFrozenListeningConnectionIsNoticedWithinTheLivenessTimeout_thenReconnectsAndWakesTheRelay()
            throws Exception {
        Duration liveness = Duration.ofSeconds(2);
        Properties server = Driver.parseURL(NotifyFixture.URL, null);
        FreezingProxy proxy = fixture.closeLater(new FreezingProxy(server.getProperty("PGHOST"),
                Integer.parseInt(server.getProperty("PGPORT"))));
        Map<String, String> throughProxy = new HashMap<>(settings());
        throughProxy.put(PostgresTransportSettings.URL, "jdbc:postgresql://127.0.0.1:" + proxy.port() + "/"
                + server.getProperty("PGDBNAME"));
        throughProxy.put(PostgresTransportSettings.LIVENESS_TIMEOUT_MS, String.valueOf(liveness.toMillis()));
        PostgresNotificationTransport relaySide = fixture.closeLater(
                (PostgresNotificationTransport) NotificationTransports.open("postgres", throughProxy));
        OutboxRelay relay = listeningRelay("relay-n6", relaySide, fixture.relayStore());
        OutboxNotifier writer = fixture.closeLater(OutboxNotifier.builder().transport(transport()).build());
        await().atMost(Duration.ofSeconds(20)).until(() -> relaySide.state().connected());

        DeadConnectionScenario.run(fixture, proxy, relaySide, relay, liveness, bucket -> write(writer, bucket));

        assertThat(relaySide.reconnects()).isEqualTo(1);
        assertThat(logLines("WARN", "")).as("one WARN for the loss").hasSize(1).first().asString()
                .contains("notification listener connection lost", "no answer within liveness.timeout.ms=2000");
        assertThat(logLines("INFO", "notification listener is back")).as("one INFO for the recovery").hasSize(1);
    }

    @Test
    void n2_hintsForBucketsOwnedElsewhereCostNoStoreCall_ownedAndUnknownOnesDo() throws Exception {
        NotifyFixture.CountingStore storeA = fixture.relayStore();
        NotifyFixture.CountingStore storeB = fixture.relayStore();
        OutboxRelay a = fixture.relay(storeA, slowPolling("relay-a"));
        OutboxRelay b = fixture.relay(storeB, slowPolling("relay-b"));
        fixture.closeLater(OutboxNotifier.builder().transport(transport()).relay(a).build());
        await().atMost(Duration.ofSeconds(30)).until(() -> a.ownedBuckets().size() == NotifyFixture.BUCKETS / 2
                && b.ownedBuckets().size() == NotifyFixture.BUCKETS / 2);
        Thread.sleep(1_000); // the gained buckets' discovery is over
        PostgresNotificationTransport sender = transport();
        int[] elsewhere = b.ownedBuckets().stream().mapToInt(Integer::intValue).toArray();

        int before = storeA.hintCalls();
        for (int i = 0; i < 20; i++) {
            sender.publish(elsewhere);
        }
        Thread.sleep(1_500);
        assertThat(storeA.hintCalls()).as("N2: hints for buckets owned elsewhere are ignored without a store call")
                .isEqualTo(before);

        sender.publish(new int[] {a.ownedBuckets().get(0)});
        await().atMost(Duration.ofSeconds(5)).until(() -> storeA.nextBatch.get() > 0 && storeA.hintCalls() > before);
        int pendingBefore = storeA.pending.get();
        sender.publish(new int[] {-1});
        await().atMost(Duration.ofSeconds(5)).until(() -> storeA.pending.get() > pendingBefore);
    }

    @Test
    void n2_duplicateReorderedAndUnknownHintsPublishEveryMessageOnceInOrder() throws Exception {
        NotifyFixture.CountingStore store = fixture.relayStore();
        listeningRelay("relay-a", transport(), store);
        PostgresNotificationTransport sender = transport();
        Thread.sleep(500);
        List<UUID> ids = new ArrayList<>();
        // written without a notification, then hinted out of order, repeatedly, and as unknown
        for (int round = 0; round < 3; round++) {
            List<OutboxMessage> messages = List.of(NotifyFixture.message(fixture.topic, 6),
                    NotifyFixture.message(fixture.topic, 2), NotifyFixture.message(fixture.topic, 6));
            try (Connection c = fixture.connection()) {
                c.setAutoCommit(false);
                fixture.writerStore.writer().enqueue(c, messages);
                c.commit();
            }
            messages.forEach(m -> ids.add(m.messageId()));
            sender.publish(new int[] {6});
            sender.publish(new int[] {2, 2});
            sender.publish(new int[] {6, 2, 6});
            sender.publish(new int[] {-1});
            sender.publish(new int[] {6});
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> fixture.consumed.keySet().containsAll(ids));
        Thread.sleep(500);
        assertThat(fixture.duplicates.get()).as("repeated hints publish nothing twice").isZero();
        assertThat(fixture.consumed).hasSize(ids.size());
    }

    @Test
    void n5_payloadsStayWithinPostgresLimitEvenForEveryBucket() throws Exception {
        List<int[]> heard = new CopyOnWriteArrayList<>();
        transport().listen(heard::add);
        Thread.sleep(500);
        int[] every = IntStream.range(0, 65_536).filter(i -> i % 2 == 0).toArray(); // no ranges to compress
        transport().publish(every);
        await().atMost(Duration.ofSeconds(5)).until(() -> heard.size() == 1);
        assertThat(heard.get(0)).as("too long for one NOTIFY: sent as the unknown bucket").containsExactly(-1);
    }
}
