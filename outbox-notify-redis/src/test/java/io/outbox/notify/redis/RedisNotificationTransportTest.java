package io.outbox.notify.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.embedded.EmbeddedKafkaBroker;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Redis transport against a redis-server of the test's own (Redis 7 on this machine), the
 * real PostgreSQL of this machine for the outbox, and an in-process Kafka broker.
 */
class RedisNotificationTransportTest {

    /** Where slf4j-simple writes this module's test logs (set in the pom). */
    private static final Path LOG = Path.of(System.getProperty("org.slf4j.simpleLogger.logFile",
            "target/notify-redis-test.log"));

    /** The shared Redis of this machine (scripts/test.sh starts it when its port is closed). */
    private static final String SHARED_URI = System.getenv().getOrDefault("OUTBOX_TEST_REDIS_URI",
            "redis://127.0.0.1:6379");

    private static EmbeddedKafkaBroker broker;
    private static RedisServer redis;
    private NotifyFixture fixture;
    private String channel;

    @BeforeAll
    static void start() throws Exception {
        broker = EmbeddedKafkaBroker.start();
        redis = new RedisServer();
    }

    @AfterAll
    static void stop() throws Exception {
        redis.close();
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

    /** A transport on the test's own redis-server, which the outage test stops and starts. */
    private RedisNotificationTransport transport() {
        return transport(redis.uri());
    }

    private RedisNotificationTransport transport(String uri) {
        return transport(uri, RedisTransportSettings.DEFAULT_LIVENESS_TIMEOUT);
    }

    private RedisNotificationTransport transport(String uri, Duration liveness) {
        return fixture.closeLater((RedisNotificationTransport) NotificationTransports.open("redis", Map.of(
                RedisTransportSettings.URI, uri, RedisTransportSettings.CHANNEL, channel,
                RedisTransportSettings.RECONNECT_MAX_DELAY_MS, "500", RedisTransportSettings.COMMAND_TIMEOUT_MS, "500",
                RedisTransportSettings.LIVENESS_TIMEOUT_MS, String.valueOf(liveness.toMillis()))));
    }

    /** This test's log lines of the transport at a level containing a text. */
    private List<String> logLines(String level, String text) throws Exception {
        return DeadConnectionScenario.logLines(LOG, "RedisNotificationTransport", channel, level, text);
    }

    private List<UUID> write(OutboxNotifier notifier, int... buckets) throws Exception {
        List<OutboxMessage> messages = new ArrayList<>();
        for (int b : buckets) {
            messages.add(NotifyFixture.message(fixture.topic, b));
        }
        try (Connection c = fixture.connection()) {
            JdbcOutboxTransactions.of(fixture.writerStore.writer(), notifier).run(c, outbox -> {
                outbox.enqueue(messages);
                return null;
            });
        }
        return messages.stream().map(OutboxMessage::messageId).toList();
    }

    /**
     * Writes messages one at a time, each after the previous one was consumed; returns how long
     * that took and how many discovery queries the relay ran meanwhile.
     */
    private long[] writeOneByOne(OutboxNotifier writer, NotifyFixture.CountingStore store, int count,
                                 List<UUID> all) throws Exception {
        int discoveriesBefore = store.pending.get();
        long started = System.nanoTime();
        for (int i = 0; i < count; i++) {
            List<UUID> ids = write(writer, i % NotifyFixture.BUCKETS);
            all.addAll(ids);
            await().atMost(Duration.ofSeconds(30)).until(() -> fixture.consumed.keySet().containsAll(ids));
        }
        return new long[] {(System.nanoTime() - started) / 1_000_000, store.pending.get() - discoveriesBefore};
    }

    @Test
    void n4_redisStoppedMidRun_relaysPollWithOneWarn_reconnect_andNothingIsLost() throws Exception {
        Duration poll = Duration.ofSeconds(3);
        NotifyFixture.CountingStore store = fixture.relayStore();
        OutboxRelay relay = fixture.relay(store, RelayOptions.builder().relayId("relay-a")
                .bucketCount(NotifyFixture.BUCKETS).pollInterval(poll).build());
        RedisNotificationTransport relaySide = transport();
        fixture.closeLater(OutboxNotifier.builder().transport(relaySide).relay(relay).build());
        RedisNotificationTransport writerSide = transport();
        OutboxNotifier writer = fixture.closeLater(OutboxNotifier.builder().transport(writerSide)
                .errorBackoff(Duration.ofMillis(100)).maxErrorBackoff(Duration.ofMillis(200)).build());
        await().atMost(Duration.ofSeconds(20)).until(() -> relaySide.isListening()
                && relay.ownedBuckets().size() == NotifyFixture.BUCKETS);
        List<UUID> all = new ArrayList<>();
        writeOneByOne(writer, store, NotifyFixture.BUCKETS, all); // warm-up: producer metadata, connections

        long[] before = writeOneByOne(writer, store, 8, all);
        System.out.println("with hints: 8 messages one by one took " + before[0] + " ms, discoveries " + before[1]);
        assertThat(before[1]).as("with hints, the relay fetches hinted buckets without discovery queries")
                .isLessThan(4);
        assertThat(before[0]).as("8 messages one after another, each woken by its hint, within one poll interval")
                .isLessThan(poll.toMillis());

        redis.stop();
        await().atMost(Duration.ofSeconds(10)).until(() -> !relaySide.isListening());
        List<UUID> duringOutage = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            duringOutage.addAll(write(writer, i)); // commits go on; their hints cannot be sent
        }
        all.addAll(duringOutage);
        await().atMost(Duration.ofSeconds(20)).until(() -> fixture.consumed.keySet().containsAll(duringOutage));
        assertThat(writer.stats().dropped()).as("failed sends are dropped and counted").isPositive();

        redis.start();
        await().atMost(Duration.ofSeconds(20)).until(relaySide::isListening);
        await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> {
            writerSide.publish(new int[] {0});
            return true;
        });
        long[] after = writeOneByOne(writer, store, 8, all);
        System.out.println("after the outage: 8 messages one by one took " + after[0] + " ms, discoveries " + after[1]);
        assertThat(after[0]).as("after Redis is back, hints wake the relay again: 8 messages within one poll")
                .isLessThan(poll.toMillis());

        Thread.sleep(300);
        assertThat(fixture.consumed.keySet()).containsAll(all);
        assertThat(fixture.duplicates.get()).isZero();
        List<String> warnings = logLines("WARN", "");
        assertThat(warnings).as("one WARN for the outage from the relay's subscription").hasSize(1);
        assertThat(warnings.get(0)).contains("notification subscription lost");
        assertThat(relaySide.disconnects()).isEqualTo(1);
    }

    /**
     * N6: the relay's subscription goes through a proxy of the test's own, which the test freezes
     * (no byte forwarded either way, no socket closed: no FIN, no RST). The transport notices within
     * the liveness timeout (2 s here) and the relay, polling once a minute, is told; once the proxy
     * forwards again Lettuce reconnects and subscribes again, the commit made meanwhile (its hint
     * lost) goes out with the wake-up that follows, and the next commit wakes the relay at once. One
     * WARN for the loss and one INFO for the recovery, whatever the failed reconnect attempts.
     */
    @Test
    void n6_aFrozenSubscriptionIsNoticedWithinTheLivenessTimeout_thenReconnectsAndWakesTheRelay() throws Exception {
        Duration liveness = Duration.ofSeconds(2);
        FreezingProxy proxy = fixture.closeLater(new FreezingProxy("127.0.0.1", redis.port()));
        OutboxRelay relay = fixture.relay(fixture.relayStore(), RelayOptions.builder().relayId("relay-n6")
                .bucketCount(NotifyFixture.BUCKETS).pollInterval(Duration.ofMinutes(1)).build());
        RedisNotificationTransport relaySide = transport("redis://127.0.0.1:" + proxy.port(), liveness);
        fixture.closeLater(OutboxNotifier.builder().transport(relaySide).relay(relay).build());
        OutboxNotifier writer = fixture.closeLater(OutboxNotifier.builder().transport(transport(redis.uri())).build());
        await().atMost(Duration.ofSeconds(20)).until(() -> relaySide.isListening()
                && relay.ownedBuckets().size() == NotifyFixture.BUCKETS);

        DeadConnectionScenario.run(fixture, proxy, relaySide, relay, liveness, bucket -> write(writer, bucket));

        assertThat(relaySide.disconnects()).isEqualTo(1);
        assertThat(logLines("WARN", "")).as("one WARN for the loss").hasSize(1).first().asString()
                .contains("notification subscription lost", "no answer for liveness.timeout.ms=2000");
        assertThat(logLines("INFO", "notification subscription is back")).as("one INFO for the recovery").hasSize(1);
    }

    @Test
    void n3_selfEchoIsDropped_everyOtherSubscriberHearsEachBroadcast() throws Exception {
        List<int[]> self = new CopyOnWriteArrayList<>();
        List<int[]> other1 = new CopyOnWriteArrayList<>();
        List<int[]> other2 = new CopyOnWriteArrayList<>();
        RedisNotificationTransport sender = transport(SHARED_URI);
        sender.listen(self::add);
        RedisNotificationTransport a = transport(SHARED_URI);
        a.listen(other1::add);
        RedisNotificationTransport b = transport(SHARED_URI);
        b.listen(other2::add);
        await().atMost(Duration.ofSeconds(10)).until(() -> sender.isListening() && a.isListening() && b.isListening());
        sender.publish(new int[] {7, 1, 2, 3, 7});
        sender.publish(new int[] {-1});
        await().atMost(Duration.ofSeconds(5)).until(() -> other1.size() == 2 && other2.size() == 2);
        assertThat(other1.get(0)).containsExactly(1, 2, 3, 7);
        assertThat(other1.get(1)).containsExactly(-1);
        assertThat(other2.get(0)).containsExactly(1, 2, 3, 7);
        Thread.sleep(300);
        assertThat(self).as("N3: a transport never hears its own broadcasts").isEmpty();
    }

    @Test
    void n1_aRolledBackTransactionSendsNoHint_aCommittedOneDoes() throws Exception {
        List<int[]> heard = new CopyOnWriteArrayList<>();
        RedisNotificationTransport listener = transport(SHARED_URI);
        listener.listen(heard::add);
        OutboxNotifier writer = fixture.closeLater(OutboxNotifier.builder().transport(transport(SHARED_URI)).build());
        await().atMost(Duration.ofSeconds(10)).until(listener::isListening);
        try (Connection c = fixture.connection()) {
            JdbcOutboxTransactions.of(fixture.writerStore.writer(), writer).run(c, outbox -> {
                outbox.enqueue(NotifyFixture.message(fixture.topic, 4));
                throw new IllegalStateException("roll back");
            });
        } catch (IllegalStateException expected) {
            // rolled back
        }
        Thread.sleep(1_000);
        assertThat(heard).as("N1: a rollback notifies nothing").isEmpty();
        assertThat(writer.stats().sent()).isZero();
        write(writer, 4, 4, 5);
        await().atMost(Duration.ofSeconds(5)).until(() -> heard.size() == 1);
        assertThat(heard.get(0)).containsExactly(4, 5);
    }

    @Test
    void n4_aTransportStartedWhileRedisIsDownSubscribesOnceRedisIsUp() throws Exception {
        redis.stop();
        List<int[]> heard = new CopyOnWriteArrayList<>();
        RedisNotificationTransport late = transport();
        late.listen(heard::add);
        Thread.sleep(1_000);
        assertThat(late.isListening()).isFalse();
        redis.start();
        await().atMost(Duration.ofSeconds(20)).until(late::isListening);
        RedisNotificationTransport sender = transport();
        await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> {
            sender.publish(new int[] {3});
            return !heard.isEmpty();
        });
        assertThat(heard.get(0)).containsExactly(3);
    }
}
