package io.outbox.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox.OutboxMessage;
import io.outbox.relay.OutboxRelay;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.store.jdbc.JdbcOutboxStore;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The throughput line of docs/kafka-connect.md: how fast the connector drains a PostgreSQL outbox
 * beside the standalone relay on the same broker, machine and messages, each as a fraction of a
 * plain idempotent producer sending the same records. Not part of the build (the name does not
 * match failsafe's includes); run it with {@code scripts/connect-bench.sh}.
 *
 * <p>Each drain starts on a full outbox of {@link #MESSAGES} messages and is timed from the first
 * delete to the last (so the connector's task start-up is left out); the pending count is read
 * every 100 ms.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class ConnectThroughputBench {

    private static final StringSerializer STRING = new StringSerializer();
    private static final int MESSAGES = Integer.getInteger("bench.messages", 50_000);
    private static final int BUCKETS = 12;
    private static final int KEYS = 1_000;

    @TempDir
    Path dir;

    @Test
    void drainRates_connectorBesideRelay_asFractionsOfAPlainProducer() throws Exception {
        String prefix = "kb" + UUID.randomUUID().toString().replace("-", "").substring(0, 10) + "_";
        HikariConfig hikari = new HikariConfig();
        hikari.setJdbcUrl(env("OUTBOX_TEST_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/test"));
        hikari.setUsername(env("OUTBOX_TEST_POSTGRES_USER", "postgres"));
        hikari.setPassword(env("OUTBOX_TEST_POSTGRES_PASSWORD", "unused"));
        hikari.setMaximumPoolSize(3);
        try (HikariDataSource dataSource = new HikariDataSource(hikari);
             ConnectCluster broker = new ConnectCluster(dir, "outbox-bench-" + prefix, Map.of())) {
            String bootstrap = broker.startBroker();
            producerRate(bootstrap, topic(bootstrap, "warm-up")); // the first run pays for class loading and JIT
            double producer = producerRate(bootstrap, topic(bootstrap, "plain"));

            String relayPrefix = prefix + "relay_";
            JdbcOutboxStore relayStore = store(dataSource, relayPrefix);
            enqueue(dataSource, relayStore, topic(bootstrap, "relay"));
            RelayOptions options = RelayOptions.builder().relayId("bench-relay").bucketCount(BUCKETS)
                    .pollInterval(Duration.ofMillis(200)).build();
            double relay;
            try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers", bootstrap))
                    .build();
                 OutboxRelay running = OutboxRelay.builder(relayStore, publisher).options(options).build()) {
                running.start();
                relay = drainRate(dataSource, relayPrefix);
            }

            double atLeastOnce = connectorRate(broker.onSameBroker("outbox-bench-alo-" + prefix,
                    Map.of("exactly.once.source.support", "disabled")), dataSource, prefix + "alo_", false);
            double exactlyOnce = connectorRate(broker.onSameBroker("outbox-bench-eos-" + prefix,
                    Map.of("exactly.once.source.support", "enabled")), dataSource, prefix + "eos_", true);

            System.out.printf("ConnectThroughputBench: %,d messages on %,d keys, %d buckets, PostgreSQL store, one broker "
                            + "process; plain idempotent producer %,.0f msg/s; standalone relay (one, defaults) %,.0f msg/s "
                            + "(%.2f of the producer); connector, 3 tasks on one worker, at least once %,.0f msg/s (%.2f), "
                            + "exactly once %,.0f msg/s (%.2f); load %s%n",
                    MESSAGES, KEYS, BUCKETS, producer, relay, relay / producer, atLeastOnce, atLeastOnce / producer,
                    exactlyOnce, exactlyOnce / producer, Files.readString(Path.of("/proc/loadavg")).trim());
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                for (String mode : List.of("relay_", "alo_", "eos_")) {
                    for (String table : List.of("messages", "leases", "relays", "messages_dead", "messages_failing")) {
                        s.execute("DROP TABLE IF EXISTS " + prefix + mode + table);
                    }
                }
            }
        }
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    private static String topic(String bootstrap, String name) throws Exception {
        String topic = "bench-" + name + "-" + UUID.randomUUID().toString().substring(0, 8);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, BUCKETS, (short) 1))).all().get();
        }
        return topic;
    }

    private static List<OutboxMessage> messages(String topic) {
        List<OutboxMessage> messages = new ArrayList<>(MESSAGES);
        int[] sequence = new int[KEYS];
        for (int i = 0; i < MESSAGES; i++) {
            int key = Math.floorMod(i * 7919, KEYS);
            messages.add(OutboxMessage.create(topic, "key-" + key, key + ":" + sequence[key]++, STRING, STRING, BUCKETS));
        }
        return messages;
    }

    /**
     * The same records the relay sends (key, value, message-id header), from one producer with K1's
     * settings. As the relay does (rule K8), one record goes to each new partition alone first: a
     * burst into a just-created partition is refused in part. Every send must succeed.
     */
    private static double producerRate(String bootstrap, String topic) throws Exception {
        List<OutboxMessage> messages = messages(topic);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap,
                "acks", "all", "enable.idempotence", "true"), new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int p = 0; p < BUCKETS; p++) {
                producer.send(new ProducerRecord<>(topic, p, null, new byte[0])).get();
            }
            AtomicInteger failed = new AtomicInteger();
            long start = System.nanoTime();
            for (OutboxMessage m : messages) {
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, null, m.key(), m.value());
                record.headers().add(new RecordHeader(KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER,
                        m.messageId().toString().getBytes(StandardCharsets.UTF_8)));
                producer.send(record, (metadata, error) -> {
                    if (error != null) {
                        failed.incrementAndGet();
                    }
                });
            }
            producer.flush();
            double rate = MESSAGES / ((System.nanoTime() - start) / 1e9);
            assertThat(failed.get()).as("failed sends of the plain producer").isZero();
            return rate;
        }
    }

    private static JdbcOutboxStore store(HikariDataSource dataSource, String tablePrefix) {
        JdbcOutboxStore store = JdbcOutboxStore.builder(dataSource).tablePrefix(tablePrefix).build();
        store.createSchema();
        return store;
    }

    private static void enqueue(HikariDataSource dataSource, JdbcOutboxStore store, String topic) throws Exception {
        List<OutboxMessage> messages = messages(topic);
        for (int i = 0; i < messages.size(); i += 1_000) {
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(false);
                store.writer().enqueue(c, messages.subList(i, Math.min(messages.size(), i + 1_000)));
                c.commit();
            }
        }
    }

    private static long pending(HikariDataSource dataSource, String tablePrefix) throws Exception {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT count(*) FROM " + tablePrefix + "messages")) {
            r.next();
            return r.getLong(1);
        }
    }

    /** Messages per second from the first delete seen to an empty outbox. */
    private static double drainRate(HikariDataSource dataSource, String tablePrefix) throws Exception {
        long[] first = new long[2]; // nanoTime, pending at the first delete seen
        await("the first delete").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(100)).until(() -> {
            long pending = pending(dataSource, tablePrefix);
            first[0] = System.nanoTime();
            first[1] = pending;
            return pending < MESSAGES;
        });
        await("an empty outbox").atMost(Duration.ofMinutes(10)).pollInterval(Duration.ofMillis(100))
                .until(() -> pending(dataSource, tablePrefix) == 0);
        return first[1] / ((System.nanoTime() - first[0]) / 1e9);
    }

    private static double connectorRate(ConnectCluster workers, HikariDataSource dataSource, String tablePrefix,
            boolean exactlyOnce) throws Exception {
        try (workers) {
            ConnectCluster.Worker worker = workers.startWorker("bench-" + tablePrefix.substring(tablePrefix.length() - 4,
                    tablePrefix.length() - 1));
            workers.awaitWorker(worker);
            JdbcOutboxStore store = store(dataSource, tablePrefix);
            String topic = topic(workers.bootstrapServers(), tablePrefix.replace("_", ""));
            enqueue(dataSource, store, topic);
            ObjectNode config = ConnectCluster.JSON.createObjectNode();
            config.put("connector.class", OutboxSourceConnector.class.getName());
            config.put("tasks.max", "3");
            for (String converter : List.of("key.converter", "value.converter", "header.converter")) {
                config.put(converter, "org.apache.kafka.connect.converters.ByteArrayConverter");
            }
            if (exactlyOnce) {
                config.put("exactly.once.support", "required");
                config.put("transaction.boundary", "connector");
            }
            config.put("store", "jdbc");
            config.put("store.url", env("OUTBOX_TEST_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/test"));
            config.put("store.user", env("OUTBOX_TEST_POSTGRES_USER", "postgres"));
            config.put("store.password", env("OUTBOX_TEST_POSTGRES_PASSWORD", "unused"));
            config.put("store.table.prefix", tablePrefix);
            config.put("relay.bucket.count", Integer.toString(BUCKETS));
            config.put("relay.poll.interval.ms", "200");
            HttpResponse<String> created = workers.put(worker, "/connectors/bench/config", config);
            assertThat(created.statusCode()).as(created.body()).isIn(200, 201);
            return drainRate(dataSource, tablePrefix);
        }
    }
}
