package io.outbox.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox.OutboxMessage;
import io.outbox.relay.OutboxPublisher;
import io.outbox.relay.OutboxRelay;
import io.outbox.relay.PublishResult;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.spi.CloseableOutboxStore;
import io.outbox.spi.OutboxStores;
import io.outbox.store.dynamodb.DynamoDbOutboxStore;
import io.outbox.store.mongodb.MongoOutboxStore;
import io.outbox.store.jdbc.JdbcOutboxStore;
import java.util.stream.Collectors;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The connector on real Kafka Connect clusters: a broker process, the PostgreSQL server and the
 * emulators {@code scripts/test.sh} provides, the connector installed as a plugin directory, its
 * configuration the JSON of docs/kafka-connect.md. First three distributed worker processes with
 * exactly-once support (two at first, one killed with SIGKILL, one joining); then, on the same
 * broker, three without it (the same kill and join) beside a standalone relay, which then also run
 * the connector on the DynamoDB and MongoDB emulators.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class ConnectClusterIT {

    private static final String POSTGRES_URL = env("OUTBOX_TEST_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/test");
    private static final String POSTGRES_USER = env("OUTBOX_TEST_POSTGRES_USER", "postgres");
    private static final String POSTGRES_PASSWORD = env("OUTBOX_TEST_POSTGRES_PASSWORD", "unused");
    private static final StringSerializer STRING = new StringSerializer();
    private static final String HEADER = "x-outbox-message-id";
    /** The standalone relay's message-id header in the run without exactly-once support: tells its records apart. */
    private static final String RELAY_HEADER = "x-standalone-relay-message-id";
    private static final int ALO_MESSAGES = 20_000;
    /** The "task number" of a lease owner that is not a task of the connector: the standalone relay. */
    private static final int STANDALONE = -1;
    private static final int EMULATOR_MESSAGES = 3_000;
    /** Messages a second a gated writer enqueues after its release. */
    private static final int PACED_RATE = 4_000;
    private static final int BUCKETS = 12;
    private static final int MESSAGES = 100_000;
    private static final int KEYS = 1_000;
    private static final int PER_TRANSACTION = 500;

    @TempDir
    static Path dir;
    private static ConnectCluster cluster;
    private static ConnectCluster atLeastOnce;
    private static HikariDataSource dataSource;
    private static String prefix;

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    @BeforeAll
    static void startCluster() throws Exception {
        prefix = "kc" + UUID.randomUUID().toString().replace("-", "").substring(0, 10) + "_";
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(POSTGRES_URL);
        config.setUsername(POSTGRES_USER);
        config.setPassword(POSTGRES_PASSWORD);
        config.setMaximumPoolSize(3);
        dataSource = new HikariDataSource(config);
        store(prefix).createSchema();
        cluster = new ConnectCluster(dir, "outbox-it-" + prefix, Map.of(
                "exactly.once.source.support", "enabled",
                "scheduled.rebalance.max.delay.ms", "5000",
                "producer.transaction.timeout.ms", "15000"));
        cluster.startBroker();
        ConnectCluster.Worker a = cluster.startWorker("worker-a");
        ConnectCluster.Worker b = cluster.startWorker("worker-b");
        cluster.awaitWorker(a);
        cluster.awaitWorker(b);
    }

    @AfterAll
    static void stopCluster() throws Exception {
        if (atLeastOnce != null) {
            atLeastOnce.close();
        }
        if (cluster != null) {
            cluster.close();
        }
        if (dataSource != null) {
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                for (String table : List.of("messages", "leases", "relays", "messages_dead", "messages_failing")) {
                    s.execute("DROP TABLE IF EXISTS " + prefix + table);
                    s.execute("DROP TABLE IF EXISTS " + prefix + "alo_" + table);
                }
            } finally {
                dataSource.close();
            }
        }
    }

    private static JdbcOutboxStore store(String tablePrefix) {
        return JdbcOutboxStore.builder(dataSource).tablePrefix(tablePrefix).build();
    }

    /** The JSON of docs/kafka-connect.md with this test's database, table prefix and shorter leases. */
    private static ObjectNode connectorConfig(String topicSuffix) throws Exception {
        Path docs = Path.of("").toAbsolutePath();
        while (!Files.exists(docs.resolve("docs/kafka-connect.md"))) {
            docs = docs.getParent();
        }
        String page = Files.readString(docs.resolve("docs/kafka-connect.md"), StandardCharsets.UTF_8);
        Matcher json = Pattern.compile("<!-- connector-config:[^\n]*-->\n```json\n(.*?)```", Pattern.DOTALL)
                .matcher(page);
        assertThat(json.find()).as("docs/kafka-connect.md has the connector-config JSON").isTrue();
        ObjectNode config = (ObjectNode) ConnectCluster.JSON.readTree(json.group(1));
        config.put("store.url", POSTGRES_URL);
        config.put("store.user", POSTGRES_USER);
        config.put("store.password", POSTGRES_PASSWORD);
        config.put("store.table.prefix", prefix);
        config.put("relay.lease.duration.ms", "6000");
        config.put("relay.lease.renew.interval.ms", "2000");
        config.put("relay.poll.interval.ms", "200");
        config.put("relay.error.backoff.ms", "200");
        config.put("relay.error.backoff.max.ms", "2000");
        assertThat(config.get("relay.bucket.count").asInt()).isEqualTo(BUCKETS);
        return config;
    }

    @Test
    @Order(1)
    void x1_validateEndpointNamesEachBadSetting() throws Exception {
        ObjectNode config = connectorConfig("validate");
        config.put("name", "validate");
        config.put("relay.lease.renew.interval.ms", "9000");
        config.put("relay.lease.duration.ms", "5000");
        config.put("relay.batch.size", "0");
        config.put("store.url", "not-a-jdbc-url");
        config.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        config.remove("transaction.boundary");
        ConnectCluster.Worker worker = cluster.workers().get(0);
        HttpResponse<String> response = cluster.put(worker,
                "/connector-plugins/OutboxSourceConnector/config/validate", config);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        Map<String, List<String>> errors = errorsBySetting(ConnectCluster.JSON.readTree(response.body()));
        assertThat(errors).containsKeys("relay.batch.size", "store.url", "value.converter", "transaction.boundary");
        assertThat(errors.get("relay.batch.size").toString()).contains("relay.batch.size");
        assertThat(errors.get("value.converter").toString()).contains("ByteArrayConverter");

        config = connectorConfig("validate");
        config.put("name", "validate");
        config.put("relay.lease.renew.interval.ms", "9000");
        config.put("relay.lease.duration.ms", "5000");
        errors = errorsBySetting(ConnectCluster.JSON.readTree(cluster.put(worker,
                "/connector-plugins/OutboxSourceConnector/config/validate", config).body()));
        assertThat(errors).containsOnlyKeys("relay.lease.renew.interval.ms");
        assertThat(errors.get("relay.lease.renew.interval.ms").toString())
                .contains("relay.lease.renew.interval.ms (9000) must be less than relay.lease.duration.ms (5000)");

        config.remove("name"); // PUT /connectors/<name>/config takes the name from the path
        HttpResponse<String> refused = cluster.put(worker, "/connectors/refused/config", config);
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(400);
        assertThat(refused.body()).contains("relay.lease.renew.interval.ms");
    }

    private static Map<String, List<String>> errorsBySetting(JsonNode validation) {
        Map<String, List<String>> errors = new TreeMap<>();
        for (JsonNode config : validation.get("configs")) {
            JsonNode value = config.get("value");
            if (value != null && value.get("errors").size() > 0) {
                List<String> messages = new ArrayList<>();
                value.get("errors").forEach(e -> messages.add(e.asText()));
                errors.put(value.get("name").asText(), messages);
            }
        }
        return errors;
    }

    @Test
    @Order(2)
    void x1_x2_x3_exactlyOnce_100kMessages_workerKilledAndJoined_nothingLostKeysInOrder() throws Exception {
        long started = System.nanoTime();
        String topic = "orders-" + prefix.replace("_", "");
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", cluster.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(topic, BUCKETS, (short) 1))).all().get();
        }
        List<OutboxMessage> shapes = shapedMessages(topic);
        enqueue(prefix, shapes);
        ObjectNode config = connectorConfig(topic);
        ConnectCluster.Worker a = cluster.workers().get(0);
        HttpResponse<String> created = cluster.put(a, "/connectors/outbox/config", config);
        assertThat(created.statusCode()).as(created.body()).isIn(200, 201);

        Writer writer = Writer.start(topic, prefix, MESSAGES);
        writer.awaitEnqueued(MESSAGES / 3);
        ConnectCluster.Worker b = cluster.workers().get(1);
        await("the three tasks running").atMost(Duration.ofMinutes(1)).ignoreExceptions()
                .until(() -> cluster.taskWorkers(b, "outbox").size() == 3);
        Map<Integer, String> before = cluster.taskWorkers(b, "outbox");
        awaitFairShares(prefix, Map.of(0, 4L, 1, 4L, 2, 4L));
        ConnectCluster.Worker victim = taskZeroWorker(before, a, b);
        ConnectCluster.Worker survivor = victim == a ? b : a;
        writer.release();
        writer.awaitEnqueued(MESSAGES / 2); // the kill falls while messages keep coming and the tasks publish them
        long killedAt = System.nanoTime();
        long pendingAtKill = pending(prefix);
        int enqueuedAtKill = writer.enqueued().get();
        victim.process().destroyForcibly(); // SIGKILL: no shutdown hook, no lease given back, transactions left open
        ConnectCluster.Worker c = cluster.startWorker("worker-c");
        cluster.awaitWorker(c);
        writer.awaitAll();

        await("every message deleted from the outbox").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1))
                .until(() -> pending(prefix) == 0);
        long drained = System.nanoTime();
        Map<Integer, String> tasks = awaitTasksOffTheKilledWorker(cluster, survivor, "outbox", victim);

        Delivery committed = consume(topic, "read_committed", MESSAGES + shapes.size(), record -> { });
        Delivery everything = consume(topic, "read_uncommitted", MESSAGES + shapes.size(), record -> { });
        assertThat(committed.firstDeliveries()).as("nothing lost").hasSize(MESSAGES + shapes.size());
        assertThat(committed.outOfOrderKeys()).as("keys whose first deliveries are out of order").isEmpty();
        checkShapes(committed, shapes);

        System.out.printf("ConnectClusterIT: %,d messages (+%d shaped), %d buckets, tasks.max=3, 1 worker SIGKILLed "
                        + "after %,d enqueued (%,d pending) and 1 joined; drained in %.1f s from the connector's creation, "
                        + "%.1f s after the kill; read_committed records %,d (repeats %,d); read_uncommitted "
                        + "records %,d (%,d from aborted transactions); tasks before the kill %s, killed %s, at the end %s; "
                        + "load %s%n",
                MESSAGES, shapes.size(), BUCKETS, enqueuedAtKill, pendingAtKill, (drained - started) / 1e9,
                (drained - killedAt) / 1e9, committed.records(), committed.records() - committed.firstDeliveries().size(),
                everything.records(), everything.records() - committed.records(), before,
                victim.name() + " :" + victim.port(), tasks, Files.readString(Path.of("/proc/loadavg")).trim());
        assertThat(before.values()).as("the killed worker ran a task").anyMatch(w -> w.endsWith(":" + victim.port()));
        awaitFairShares(prefix, Map.of(0, 4L, 1, 4L, 2, 4L));
    }

    /**
     * Waits until Connect runs all three tasks again, none on the killed worker (until Connect notices the death,
     * its status still shows the killed worker's tasks running), and returns their workers.
     */
    private static Map<Integer, String> awaitTasksOffTheKilledWorker(ConnectCluster workers, ConnectCluster.Worker live,
            String connector, ConnectCluster.Worker killed) {
        await("every task running again, none on the killed worker").atMost(Duration.ofMinutes(1))
                .pollInterval(Duration.ofMillis(500)).ignoreExceptions().until(() -> {
                    Map<Integer, String> tasks = workers.taskWorkers(live, connector);
                    return tasks.size() == 3 && tasks.values().stream().noneMatch(w -> w.endsWith(":" + killed.port()));
                });
        try {
            return workers.taskWorkers(live, connector);
        } catch (Exception e) {
            throw new AssertionError("the status of " + connector, e);
        }
    }

    /** The worker running task 0, the one to kill: a kill that hits no task would prove nothing. */
    private static ConnectCluster.Worker taskZeroWorker(Map<Integer, String> tasks, ConnectCluster.Worker a,
            ConnectCluster.Worker b) {
        return tasks.containsKey(0) && tasks.get(0).endsWith(":" + b.port()) ? b : a;
    }

    /**
     * Without exactly-once support (X1, X3): a second Connect cluster on the same broker with
     * {@code exactly.once.source.support=disabled}, the connector without {@code exactly.once.support}
     * and {@code transaction.boundary}, and a standalone {@link OutboxRelay} on the same store and
     * buckets. The writer enqueues 20,000 messages while the worker running task 0 is killed and
     * another joins. Nothing is lost, each key's first deliveries come in order, and no task sends
     * a record of a bucket while the standalone relay has a batch of that bucket in flight: the
     * relay stamps its records with a header name of its own, and its publisher records each
     * batch's interval; a task's record carries the time its producer sent it (CreateTime).
     */
    @Test
    @Order(3)
    void x1_x3_atLeastOnce_workerKilledAndJoined_standaloneRelayBeside_nothingLostNoBucketSharedAtOnce()
            throws Exception {
        cluster.stopWorkers(); // the exactly-once group is done; its tasks would only compete for the CPU
        long started = System.nanoTime();
        String tablePrefix = prefix + "alo_";
        store(tablePrefix).createSchema();
        String topic = "orders-alo-" + prefix.replace("_", "");
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", cluster.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(topic, BUCKETS, (short) 1))).all().get();
        }
        atLeastOnce = cluster.onSameBroker("outbox-it-alo-" + prefix, Map.of(
                "exactly.once.source.support", "disabled",
                "scheduled.rebalance.max.delay.ms", "5000"));
        ConnectCluster.Worker d = atLeastOnce.startWorker("worker-d");
        ConnectCluster.Worker e = atLeastOnce.startWorker("worker-e");
        atLeastOnce.awaitWorker(d);
        atLeastOnce.awaitWorker(e);
        ObjectNode config = connectorConfig(topic);
        config.remove(List.of("exactly.once.support", "transaction.boundary"));
        config.put("store.table.prefix", tablePrefix);
        HttpResponse<String> created = atLeastOnce.put(d, "/connectors/outbox-alo/config", config);
        assertThat(created.statusCode()).as(created.body()).isIn(200, 201);

        RecordingPublisher relayPublisher = new RecordingPublisher(KafkaOutboxPublisher.builder(
                Map.of("bootstrap.servers", cluster.bootstrapServers())).messageIdHeader(RELAY_HEADER).build());
        RelayOptions options = RelayOptions.builder().relayId("standalone-" + prefix).bucketCount(BUCKETS)
                .leaseDuration(Duration.ofMillis(6000)).leaseRenewInterval(Duration.ofMillis(2000))
                .pollInterval(Duration.ofMillis(200)).errorBackoff(Duration.ofMillis(200)).build();
        Writer writer = Writer.start(topic, tablePrefix, ALO_MESSAGES);
        try (relayPublisher; OutboxRelay relay = OutboxRelay.builder(store(tablePrefix), relayPublisher)
                .options(options).build()) {
            await("the three tasks running").atMost(Duration.ofMinutes(1)).ignoreExceptions()
                    .until(() -> atLeastOnce.taskWorkers(e, "outbox-alo").size() == 3);
            relay.start();
            writer.awaitEnqueued(ALO_MESSAGES / 3);
            // The tasks may drain the first third alone; the rest comes once the relay holds its share.
            awaitFairShares(tablePrefix, Map.of(STANDALONE, 3L, 0, 3L, 1, 3L, 2, 3L));
            Map<Integer, String> before = atLeastOnce.taskWorkers(e, "outbox-alo");
            ConnectCluster.Worker victim = taskZeroWorker(before, d, e);
            ConnectCluster.Worker survivor = victim == d ? e : d;
            writer.release();
            writer.awaitEnqueued(ALO_MESSAGES / 2);
            victim.process().destroyForcibly();
            ConnectCluster.Worker f = atLeastOnce.startWorker("worker-f");
            atLeastOnce.awaitWorker(f);
            writer.awaitAll();
            await("every message deleted from the outbox").atMost(Duration.ofMinutes(3))
                    .pollInterval(Duration.ofSeconds(1)).until(() -> pending(tablePrefix) == 0);
            awaitTasksOffTheKilledWorker(atLeastOnce, survivor, "outbox-alo", victim);
        }
        long drained = System.nanoTime();

        List<ConsumerRecord<byte[], byte[]>> taskRecords = new ArrayList<>();
        Delivery delivery = consume(topic, "read_uncommitted", ALO_MESSAGES, record -> {
            if (record.headers().lastHeader(HEADER) != null) {
                taskRecords.add(record);
            }
        });
        assertThat(delivery.firstDeliveries()).as("nothing lost").hasSize(ALO_MESSAGES);
        assertThat(delivery.outOfOrderKeys()).as("keys whose first deliveries are out of order").isEmpty();
        List<RecordingPublisher.InFlight> relayBatches = relayPublisher.batches();
        assertThat(relayBatches).as("the standalone relay published batches").isNotEmpty();
        assertThat(taskRecords).as("the tasks published records").isNotEmpty();
        List<String> overlaps = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> record : taskRecords) {
            for (RecordingPublisher.InFlight batch : relayBatches) {
                if (batch.bucket() == record.partition() && batch.startMillis() < record.timestamp()
                        && record.timestamp() < batch.endMillis()) {
                    overlaps.add("bucket " + batch.bucket() + ": a task's record at " + record.timestamp()
                            + " during the relay's batch " + batch);
                }
            }
        }
        assertThat(overlaps).as("task records sent while the relay had a batch of their bucket in flight").isEmpty();
        System.out.printf("ConnectClusterIT without exactly-once support: %,d messages, %d buckets, tasks.max=3 and a "
                        + "standalone relay, 1 worker SIGKILLed and 1 joined; drained in %.1f s; records %,d (repeats %,d), "
                        + "%,d by the tasks, %,d by the relay in %,d batches; load %s%n",
                ALO_MESSAGES, BUCKETS, (drained - started) / 1e9, delivery.records(),
                delivery.records() - delivery.firstDeliveries().size(), taskRecords.size(),
                delivery.records() - taskRecords.size(), relayBatches.size(),
                Files.readString(Path.of("/proc/loadavg")).trim());
    }

    /**
     * X2, X3 on the DynamoDB emulator (dynoxide; an emulator test, not a real DynamoDB): the
     * connector on the at-least-once cluster, three tasks, a few thousand messages enqueued while
     * it runs; every message arrives, each key's first deliveries in order.
     */
    @Test
    @Order(4)
    void x2_x3_emulator_dynoxide_connectorDeliversEveryMessageKeysInOrder() throws Exception {
        String endpoint = requiredEnv("OUTBOX_TEST_DYNAMODB_ENDPOINT", "the dynoxide DynamoDB emulator");
        String tables = prefix.replace("_", "");
        Map<String, String> settings = Map.of("endpoint", endpoint, "region", "us-east-1", "access.key.id", "test",
                "secret.access.key", "test", "messages.table", tables + "-messages",
                "coordination.table", tables + "-coordination", "create.tables", "true");
        // One TransactWriteItems per 100 messages, DynamoDB's bound on a transaction's items.
        emulatorRun("dynamodb", settings, 3, 100, store -> ((DynamoDbOutboxStore) store).writer()::enqueue);
    }

    /**
     * X2, X3 on the MongoDB emulator (jongodb; an emulator test, not a real MongoDB): one task,
     * because jongodb's conditional updates are not atomic across connections (leases would race),
     * a few thousand messages; every message arrives, each key's first deliveries in order.
     * jongodb can bring back a document deleted while a transaction ran, so repeats are allowed.
     */
    @Test
    @Order(5)
    void x2_x3_emulator_jongodb_connectorDeliversEveryMessageKeysInOrder() throws Exception {
        String uri = requiredEnv("OUTBOX_TEST_JONGODB_URI", "the jongodb MongoDB emulator");
        Map<String, String> settings = Map.of("connection.string", uri, "database", "outbox_connect_it",
                "collection.prefix", prefix);
        emulatorRun("mongodb", settings, 1, PER_TRANSACTION, store -> ((MongoOutboxStore) store).writer()::enqueue);
    }

    private static String requiredEnv(String variable, String what) {
        String value = System.getenv(variable);
        assertThat(value).as(variable + " is not set: this test runs against " + what + "; run it with "
                + "`bash scripts/test.sh` (it starts the emulator and exports " + variable + ")").isNotBlank();
        return value.trim();
    }

    /**
     * Creates the connector on {@code storeName} with {@code settings} (its store.* keys) on a live
     * worker of the at-least-once cluster, enqueues {@link #EMULATOR_MESSAGES} messages on 100 keys
     * while it runs, waits until the store has nothing pending and checks what a consumer reads.
     */
    private static void emulatorRun(String storeName, Map<String, String> settings, int tasks, int perTransaction,
            Function<CloseableOutboxStore, Enqueue> writer) throws Exception {
        assertThat(atLeastOnce).as("the at-least-once cluster of the test before").isNotNull();
        ConnectCluster.Worker worker = atLeastOnce.workers().stream().filter(w -> w.process().isAlive())
                .findFirst().orElseThrow();
        long started = System.nanoTime();
        String topic = "orders-" + storeName + "-" + prefix.replace("_", "");
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", cluster.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(topic, BUCKETS, (short) 1))).all().get();
        }
        String connector = "outbox-" + storeName;
        try (CloseableOutboxStore store = OutboxStores.open(storeName, settings)) {
            ObjectNode config = connectorConfig(topic);
            List<String> jdbcKeys = new ArrayList<>();
            config.fieldNames().forEachRemaining(k -> {
                if (k.startsWith("store.")) {
                    jdbcKeys.add(k);
                }
            });
            config.remove(jdbcKeys);
            config.remove(List.of("exactly.once.support", "transaction.boundary"));
            config.put("store", storeName);
            config.put("tasks.max", Integer.toString(tasks));
            settings.forEach((k, v) -> config.put("store." + k, v));
            HttpResponse<String> created = atLeastOnce.put(worker, "/connectors/" + connector + "/config", config);
            assertThat(created.statusCode()).as(created.body()).isIn(200, 201);
            Writer.start(topic, EMULATOR_MESSAGES, 100, perTransaction, EMULATOR_MESSAGES, writer.apply(store)).awaitAll();
            List<Integer> all = new ArrayList<>();
            for (int b = 0; b < BUCKETS; b++) {
                all.add(b);
            }
            await("every message deleted from the " + storeName + " store").atMost(Duration.ofMinutes(2))
                    .pollInterval(Duration.ofMillis(500)).until(() -> store.bucketsWithPending(all).isEmpty());
        } finally {
            atLeastOnce.delete(worker, "/connectors/" + connector);
        }
        long drained = System.nanoTime();
        Delivery delivery = consume(topic, "read_uncommitted", EMULATOR_MESSAGES, record -> { });
        assertThat(delivery.firstDeliveries()).as("nothing lost").hasSize(EMULATOR_MESSAGES);
        assertThat(delivery.outOfOrderKeys()).as("keys whose first deliveries are out of order").isEmpty();
        System.out.printf("ConnectClusterIT on the %s emulator: %,d messages, tasks.max=%d, drained in %.1f s; "
                        + "records %,d (repeats %,d); load %s%n", storeName, EMULATOR_MESSAGES, tasks,
                (drained - started) / 1e9, delivery.records(), delivery.records() - delivery.firstDeliveries().size(),
                Files.readString(Path.of("/proc/loadavg")).trim());
    }

    /** How a writer stores one transaction's messages. */
    @FunctionalInterface
    private interface Enqueue {
        void enqueue(List<OutboxMessage> messages) throws Exception;
    }

    /**
     * Enqueues {@code messages} on {@code keys} keys, each value {@code <key>:<sequence>}, {@code perTransaction} at a
     * time, from a thread of its own. With a gate, it stops after {@code gate} messages until {@link #release()}, then
     * writes the rest at {@link #PACED_RATE} messages a second, so that a worker killed at the release dies while
     * messages keep coming (unpaced, a fast machine drains the whole outbox before the kill, which then proves nothing).
     */
    private record Writer(Thread thread, AtomicInteger enqueued, AtomicReference<Throwable> error, int messages,
            CountDownLatch go) {

        /** A gated writer on the test's PostgreSQL tables. */
        static Writer start(String topic, String tablePrefix, int messages) {
            return start(topic, messages, KEYS, PER_TRANSACTION, messages / 3,
                    batch -> ConnectClusterIT.enqueue(tablePrefix, batch));
        }

        static Writer start(String topic, int messages, int keys, int perTransaction, int gate, Enqueue store) {
            AtomicInteger enqueued = new AtomicInteger();
            AtomicReference<Throwable> error = new AtomicReference<>();
            CountDownLatch go = new CountDownLatch(1);
            Thread thread = new Thread(() -> {
                try {
                    int[] sequence = new int[keys];
                    long releasedAt = 0;
                    for (int sent = 0; sent < messages; sent += perTransaction) {
                        if (sent >= gate) {
                            if (releasedAt == 0) {
                                assertThat(go.await(3, TimeUnit.MINUTES)).as("the writer released").isTrue();
                                releasedAt = System.nanoTime();
                            }
                            long due = releasedAt + (long) ((sent - gate) * 1e9 / PACED_RATE);
                            LockSupport.parkNanos(due - System.nanoTime());
                        }
                        List<OutboxMessage> batch = new ArrayList<>(perTransaction);
                        for (int i = sent; i < Math.min(messages, sent + perTransaction); i++) {
                            int key = Math.floorMod(i * 7919, keys);
                            batch.add(OutboxMessage.create(topic, "key-" + key, key + ":" + sequence[key]++, STRING,
                                    STRING, BUCKETS));
                        }
                        store.enqueue(batch);
                        enqueued.addAndGet(batch.size());
                    }
                } catch (Throwable t) {
                    error.set(t);
                }
            }, "outbox-it-writer");
            thread.start();
            return new Writer(thread, enqueued, error, messages, go);
        }

        /** Lets a gated writer write the rest. */
        void release() {
            go.countDown();
        }

        void awaitEnqueued(int count) {
            await(count + " messages enqueued").atMost(Duration.ofMinutes(2))
                    .until(() -> enqueued.get() >= count || error.get() != null);
        }

        void awaitAll() throws InterruptedException {
            thread.join(Duration.ofMinutes(3).toMillis());
            assertThat(error.get()).isNull();
            assertThat(enqueued.get()).isEqualTo(messages);
        }
    }

    /** The standalone relay's publisher, noting when each batch was in flight (from the call to its result). */
    private static final class RecordingPublisher implements OutboxPublisher {

        record InFlight(int bucket, long startMillis, long endMillis) {
        }

        private final OutboxPublisher delegate;
        private final List<InFlight> batches = new CopyOnWriteArrayList<>();

        RecordingPublisher(OutboxPublisher delegate) {
            this.delegate = delegate;
        }

        List<InFlight> batches() {
            return List.copyOf(batches);
        }

        @Override
        public CompletableFuture<PublishResult> publish(List<OutboxMessage> batch) {
            long start = System.currentTimeMillis();
            return delegate.publish(batch).whenComplete((result, error) ->
                    batches.add(new InFlight(batch.get(0).bucket(), start, System.currentTimeMillis())));
        }

        @Override
        public void checkBucketCount(int bucketCount) {
            delegate.checkBucketCount(bucketCount);
        }

        @Override
        public void bucketsAcquired(Set<Integer> buckets) {
            delegate.bucketsAcquired(buckets);
        }

        @Override
        public void bucketsReleased(Set<Integer> buckets) {
            delegate.bucketsReleased(buckets);
        }

        @Override
        public void close() {
            delegate.close();
        }
    }

    /**
     * X1: every bucket is held by a live task of the connector (or the standalone relay, counted
     * as {@link #STANDALONE}), each its fair share; the store's plan does not move a fairly held
     * bucket back to its task's range (S7).
     */
    private static void awaitFairShares(String tablePrefix, Map<Integer, Long> expected) {
        await("fair shares among the live tasks").atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofSeconds(1))
                .untilAsserted(() -> {
                    Map<Integer, Long> shares = taskByBucket(tablePrefix).values().stream()
                            .collect(Collectors.groupingBy(t -> t, TreeMap::new, Collectors.counting()));
                    assertThat(shares).isEqualTo(expected);
                });
    }

    private static Map<Integer, Integer> taskByBucket(String tablePrefix) throws Exception {
        Pattern taskOf = Pattern.compile("-(\\d{5})-[0-9a-f]{8}$");
        Map<Integer, Integer> taskByBucket = new TreeMap<>();
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT bucket, owner FROM " + tablePrefix + "leases WHERE expires_at > "
                     + System.currentTimeMillis())) {
            while (r.next()) {
                String owner = r.getString(2);
                Matcher m = owner == null ? null : taskOf.matcher(owner);
                taskByBucket.put(r.getInt(1), m != null && m.find() ? Integer.parseInt(m.group(1)) : STANDALONE);
            }
        }
        return taskByBucket;
    }

    /** Messages of every shape rule X2 names: explicit partition, null key, null value, repeated and null headers. */
    private static List<OutboxMessage> shapedMessages(String topic) {
        List<Header> headers = List.of(new RecordHeader("trace", "t1".getBytes(StandardCharsets.UTF_8)),
                new RecordHeader("trace", "t2".getBytes(StandardCharsets.UTF_8)), new RecordHeader("empty", null));
        return List.of(
                OutboxMessage.create(topic, "shaped-1", "v1", STRING, STRING, headers, BUCKETS, 5),
                OutboxMessage.create(topic, null, "v2", STRING, STRING, headers, BUCKETS, null),
                OutboxMessage.create(topic, "shaped-3", null, STRING, STRING, List.of(), BUCKETS, null));
    }

    private static void checkShapes(Delivery delivery, List<OutboxMessage> shapes) {
        for (OutboxMessage message : shapes) {
            ConsumerRecord<byte[], byte[]> record = delivery.firstDeliveries().get(message.messageId().toString());
            assertThat(record).as("record of %s", message).isNotNull();
            assertThat(record.key()).isEqualTo(message.key());
            assertThat(record.value()).isEqualTo(message.value());
            if (message.partition() != null) {
                assertThat(record.partition()).isEqualTo(message.partition());
            } else if (message.key() != null) {
                assertThat(record.partition()).isEqualTo(Utils.toPositive(Utils.murmur2(message.key())) % BUCKETS);
            }
            List<String> expected = new ArrayList<>();
            message.headers().forEach(h -> expected.add(h.key() + "=" + (h.value() == null ? null : new String(h.value(),
                    StandardCharsets.UTF_8))));
            expected.add(HEADER + "=" + message.messageId());
            List<String> actual = new ArrayList<>();
            for (Header h : record.headers()) {
                actual.add(h.key() + "=" + (h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8)));
            }
            assertThat(actual).isEqualTo(expected);
        }
    }

    private static void enqueue(String tablePrefix, List<OutboxMessage> messages) throws Exception {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            store(tablePrefix).writer().enqueue(c, messages);
            c.commit();
        }
    }

    private static long pending(String tablePrefix) throws Exception {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT count(*) FROM " + tablePrefix + "messages")) {
            r.next();
            return r.getLong(1);
        }
    }

    /** What a consumer read: every record, the first delivery of each message id, and per-key order. */
    record Delivery(long records, Map<String, ConsumerRecord<byte[], byte[]>> firstDeliveries, Set<String> outOfOrderKeys) {
    }

    /** Reads the topic from the start until {@code expected} message ids arrived; {@code each} sees every record. */
    private static Delivery consume(String topic, String isolation, int expected,
            java.util.function.Consumer<ConsumerRecord<byte[], byte[]>> each) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        Map<String, ConsumerRecord<byte[], byte[]>> first = new LinkedHashMap<>();
        Map<String, Integer> lastSequence = new HashMap<>();
        Set<String> outOfOrder = new TreeSet<>();
        long records = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (int p = 0; p < BUCKETS; p++) {
                partitions.add(new TopicPartition(topic, p));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
            while (System.nanoTime() < deadline && (first.size() < expected || !atEnd(consumer, end))) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    records++;
                    each.accept(record);
                    Header idHeader = record.headers().lastHeader(HEADER);
                    idHeader = idHeader != null ? idHeader : record.headers().lastHeader(RELAY_HEADER);
                    String id = new String(idHeader.value(), StandardCharsets.UTF_8);
                    if (first.putIfAbsent(id, record) == null && record.value() != null && record.key() != null) {
                        String[] keyAndSequence = new String(record.value(), StandardCharsets.UTF_8).split(":");
                        if (keyAndSequence.length == 2) {
                            int sequence = Integer.parseInt(keyAndSequence[1]);
                            Integer previous = lastSequence.put(keyAndSequence[0], sequence);
                            if (previous != null && previous >= sequence) {
                                outOfOrder.add(keyAndSequence[0]);
                            }
                        }
                    }
                }
                end = first.size() >= expected ? consumer.endOffsets(partitions) : end;
            }
        }
        return new Delivery(records, first, outOfOrder);
    }

    private static boolean atEnd(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (consumer.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }
}
