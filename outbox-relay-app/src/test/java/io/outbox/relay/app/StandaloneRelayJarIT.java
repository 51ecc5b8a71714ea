package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox.OutboxMessage;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.spi.OutboxStoreProvider;
import io.outbox.spi.OutboxStores;
import io.outbox.store.jdbc.JdbcOutboxStore;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The executable jar as an operator runs it: a separate JVM ({@code java -jar}) configured by a
 * properties file and environment variables, against the PostgreSQL server {@code scripts/test.sh}
 * provides ({@code OUTBOX_TEST_POSTGRES_*}) and a broker in this JVM. Each test uses tables of its
 * own. Every process's whole output is checked for the secrets the tests configure.
 */
class StandaloneRelayJarIT {

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final StringSerializer STRING = new StringSerializer();
    private static final String POSTGRES_URL = env("OUTBOX_TEST_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/test");
    private static final String POSTGRES_USER = env("OUTBOX_TEST_POSTGRES_USER", "postgres");
    /** The server's password when it needs one; otherwise (trust authentication) any password is accepted. */
    private static final String POSTGRES_PASSWORD = env("OUTBOX_TEST_POSTGRES_PASSWORD",
            "pg-pw-" + UUID.randomUUID());
    private static final String JAAS_SECRET = "jaas-pw-" + UUID.randomUUID();
    private static final String TRUSTSTORE_SECRET = "truststore-pw-" + UUID.randomUUID();
    private static final String URL_SECRET = "url-pw-" + UUID.randomUUID();
    private static final List<String> SECRETS = List.of(POSTGRES_PASSWORD, JAAS_SECRET, TRUSTSTORE_SECRET, URL_SECRET);

    private static EmbeddedKafkaBroker broker;

    @TempDir
    Path dir;
    private String prefix;
    private HikariDataSource dataSource;
    private final List<RelayProcess> processes = new ArrayList<>();

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    @BeforeAll
    static void startBroker() {
        try (Connection c = DriverManager.getConnection(POSTGRES_URL, POSTGRES_USER, POSTGRES_PASSWORD)) {
            assertThat(c.isValid(5)).isTrue();
        } catch (SQLException e) {
            fail("PostgreSQL is not reachable at %s as %s (%s): run the tests with 'bash scripts/test.sh', which "
                    + "starts it, or point OUTBOX_TEST_POSTGRES_URL, _USER and _PASSWORD at a server", POSTGRES_URL,
                    POSTGRES_USER, e);
        }
        broker = EmbeddedKafkaBroker.start();
    }

    @AfterAll
    static void stopBroker() {
        if (broker != null) {
            broker.close();
        }
    }

    @BeforeEach
    void createTables() {
        prefix = "sr" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) + "_";
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(POSTGRES_URL);
        config.setUsername(POSTGRES_USER);
        config.setPassword(POSTGRES_PASSWORD);
        config.setMaximumPoolSize(4);
        dataSource = new HikariDataSource(config);
        store().createSchema();
    }

    @AfterEach
    void dropTablesAndCheckTheOutputForSecrets() throws SQLException {
        processes.forEach(RelayProcess::close);
        try {
            dropTables();
        } finally {
            dataSource.close();
        }
        for (RelayProcess process : processes) {
            String output = process.out() + process.err();
            for (String secret : SECRETS) {
                assertThat(output).as("a secret in the relay's output:\n%s", output).doesNotContain(secret);
            }
        }
    }

    private JdbcOutboxStore store() {
        return JdbcOutboxStore.builder(dataSource).tablePrefix(prefix).build();
    }

    /** A configuration file with every kind of secret, and the rest in the environment. */
    private Path configFile(String... extraLines) throws IOException {
        List<String> lines = new ArrayList<>(List.of(
                "# written by " + getClass().getSimpleName(),
                "store=jdbc",
                "store.url=" + POSTGRES_URL,
                "store.user=" + POSTGRES_USER,
                "store.table.prefix=" + prefix,
                "store.pool.size=2",
                "kafka.acks=1",
                "kafka.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                        + "username=\"relay\" password=\"" + JAAS_SECRET + "\";",
                "kafka.sasl.oauthbearer.token.endpoint.url=https://relay:" + URL_SECRET + "@idp.example/token",
                "relay.poll.interval.ms=200",
                "relay.error.backoff.ms=200",
                "relay.error.backoff.max.ms=1000"));
        for (String extra : extraLines) { // an extra line replaces the base line of its key: no key twice
            String key = extra.substring(0, Math.max(0, extra.indexOf('=')));
            lines.removeIf(line -> !key.isEmpty() && line.startsWith(key + "="));
            lines.add(extra);
        }
        Path file = dir.resolve("relay-" + UUID.randomUUID() + ".properties");
        Files.write(file, lines, StandardCharsets.UTF_8);
        return file;
    }

    private Map<String, String> environment(String relayId) {
        Map<String, String> env = new HashMap<>();
        env.put("OUTBOX_STORE_PASSWORD", POSTGRES_PASSWORD);
        env.put("OUTBOX_KAFKA_BOOTSTRAP_SERVERS", broker.bootstrapServers());
        env.put("OUTBOX_KAFKA_SSL_TRUSTSTORE_PASSWORD", TRUSTSTORE_SECRET);
        env.put("OUTBOX_RELAY_ID", relayId);
        return env;
    }

    private RelayProcess start(Map<String, String> environment, String... args) {
        RelayProcess process = RelayProcess.start(dir, environment, args);
        processes.add(process);
        return process;
    }

    private void enqueue(List<OutboxMessage> messages) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            store().writer().enqueue(c, messages);
            c.commit();
        }
    }

    private long count(String sql, Object... parameters) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement s = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                s.setObject(i + 1, parameters[i]);
            }
            try (ResultSet r = s.executeQuery()) {
                r.next();
                return r.getLong(1);
            }
        }
    }

    private static OutboxMessage message(String topic, String key, int buckets) {
        return OutboxMessage.create(topic, key, "value of " + key, STRING, STRING, buckets);
    }

    private static Set<String> messageIds(String topic, int expected) {
        return records(topic, expected).stream().map(StandaloneRelayJarIT::messageId).collect(Collectors.toSet());
    }

    /**
     * The topic's records from the beginning, in partition order: until {@code expected} distinct
     * message ids arrived, then on to the end of every partition as it stood then.
     */
    private static List<ConsumerRecord<byte[], byte[]>> records(String topic, int expected) {
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        try (KafkaConsumer<byte[], byte[]> consumer = fromTheBeginning(topic)) {
            List<TopicPartition> partitions = List.copyOf(consumer.assignment());
            long deadline = System.nanoTime() + WAIT.toNanos();
            Map<TopicPartition, Long> ends = Map.of();
            while ((ids.size() < expected || !ends.entrySet().stream().allMatch(e -> consumer.position(e.getKey())
                    >= e.getValue())) && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    records.add(record);
                    ids.add(messageId(record));
                }
                if (ids.size() >= expected && ends.isEmpty()) {
                    ends = consumer.endOffsets(partitions); // then read on to the end: repeats come after
                }
            }
        }
        return records;
    }

    /** A consumer assigned every partition of the topic, at the beginning of each. */
    private static KafkaConsumer<byte[], byte[]> fromTheBeginning(String topic) {
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> partitions = consumer.partitionsFor(topic, WAIT).stream()
                .map(p -> new TopicPartition(topic, p.partition())).toList();
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        return consumer;
    }

    private static String messageId(ConsumerRecord<byte[], byte[]> record) {
        return new String(record.headers().lastHeader("x-outbox-message-id").value(), StandardCharsets.UTF_8);
    }

    @Test
    void r9_publishesEveryMessageThenStopsOnSigtermWithExitCodeZeroAndGivesItsLeasesBack() throws Exception {
        String topic = "standalone-" + prefix.substring(0, prefix.length() - 1);
        broker.createTopic(topic, 8);
        List<OutboxMessage> messages = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            messages.add(message(topic, "key-" + i, 8));
        }
        enqueue(messages);
        String relayId = "jar-relay-" + prefix;
        Map<String, String> env = environment(relayId);
        env.put("OUTBOX_LOG_LEVEL", "DEBUG"); // the effective configuration is logged at DEBUG
        RelayProcess relay = start(env, "--config", configFile().toString());

        Set<String> published = messageIds(topic, messages.size());
        assertThat(published).as("stderr:\n%s", relay.err())
                .isEqualTo(messages.stream().map(m -> m.messageId().toString()).collect(Collectors.toSet()));
        String leases = "SELECT count(*) FROM \"" + prefix + "leases\" WHERE owner = ?";
        await().atMost(WAIT).until(() -> count("SELECT count(*) FROM \"" + prefix + "messages\"") == 0
                && count(leases, relayId) == 8);

        relay.terminate();
        assertThat(relay.exitCode()).as("stderr:\n%s", relay.err()).isEqualTo(StandaloneRelay.EXIT_OK);
        assertThat(count("SELECT count(*) FROM \"" + prefix + "leases\"")).isEqualTo(8);
        assertThat(count("SELECT count(*) FROM \"" + prefix + "leases\" WHERE owner IS NOT NULL")).isZero();
        assertThat(count("SELECT count(*) FROM \"" + prefix + "relays\" WHERE relay_id = ?", relayId)).isZero();

        String err = relay.err();
        assertThat(relay.out()).isEmpty();
        assertThat(err)
                .contains("outbox-relay 0.", "store=jdbc", "relay.id=" + relayId + "\n",
                        "store.password=[hidden]\n", "kafka.sasl.jaas.config=[hidden]\n",
                        "kafka.ssl.truststore.password=[hidden]\n",
                        "kafka.sasl.oauthbearer.token.endpoint.url=https://relay:[hidden]@idp.example/token\n",
                        "store.password <- OUTBOX_STORE_PASSWORD",
                        "Kafka producer setting overridden: acks=1 replaced with all",
                        "released bucket leases relayId=" + relayId,
                        "store closed store=jdbc",
                        "outbox-relay stopped relayId=" + relayId + " exitCode=0")
                .doesNotContain("ERROR");
    }

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private static HttpResponse<String> http(int port, String method, String path, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(20)).method(method, HttpRequest.BodyPublishers.noBody());
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static int status(int port, String path) {
        try {
            return http(port, "GET", path, null).statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    private static int freePort() throws IOException {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /**
     * H1, H2, H3 in the process: every endpoint of the HTTP surface; readiness flips to 503 when the
     * database goes away (a proxy between relay and PostgreSQL is cut) and back when it returns;
     * the metrics parse as Prometheus text; replay and drain work with the token and are refused
     * without it.
     */
    @Test
    void h1_theHttpEndpointAnswersEveryRouteAndReadinessFollowsTheDatabase() throws Exception {
        String topic = "http-" + prefix.substring(0, prefix.length() - 1);
        broker.createTopic(topic, 8);
        OutboxMessage dead = message(topic, "dead-key", 8);
        enqueue(List.of(dead));
        Instant at = Instant.now();
        assertThat(store().deadLetters().orElseThrow().moveToDeadLetters(dead.bucket(), dead.messageId(),
                new DeadLetterFailure("too large", "org.apache.kafka.common.errors.RecordTooLargeException", 3,
                        at.minusSeconds(5), at, "earlier-relay"))).isTrue();
        URI database = URI.create(POSTGRES_URL.substring("jdbc:".length()));
        String token = "token-" + UUID.randomUUID();
        int port = freePort();
        try (CuttableProxy proxy = new CuttableProxy(database.getHost(), database.getPort())) {
            String relayId = "http-relay-" + prefix;
            Map<String, String> env = environment(relayId);
            env.put("OUTBOX_HTTP_ADMIN_TOKEN", token);
            RelayProcess relay = start(env, "--config", configFile(
                    "store.url=jdbc:postgresql://127.0.0.1:" + proxy.port() + database.getPath(),
                    "http.port=" + port, "http.bind.address=127.0.0.1",
                    "http.ready.unreachable.threshold.ms=1000", "relay.lease.duration.ms=6000",
                    "relay.lease.renew.interval.ms=2000").toString());

            await().atMost(WAIT).until(() -> status(port, HttpRoute.LIVE.path()) == 200);
            await().atMost(WAIT).until(() -> status(port, HttpRoute.READY.path()) == 200);

            String metrics = http(port, "GET", HttpRoute.METRICS.path(), null).body();
            assertThat(metrics).contains("# TYPE outbox_relay_");
            for (String line : metrics.lines().filter(l -> !l.isEmpty() && !l.startsWith("#")).toList()) {
                assertThat(line).as("a Prometheus sample line").matches(
                        "[a-zA-Z_:][a-zA-Z0-9_:]*(\\{.*\\})? (-?[0-9.]+(E-?[0-9]+)?|NaN|\\+Inf|-Inf)( [0-9]+)?");
            }
            assertThat(http(port, "GET", HttpRoute.PENDING.path(), null).body()).startsWith("[");
            await().atMost(WAIT).until(() -> http(port, "GET", HttpRoute.LEASES.path(), null).body()
                    .contains("\"ownedBuckets\": [0, 1, 2, 3, 4, 5, 6, 7]"));
            assertThat(http(port, "GET", HttpRoute.DEAD_LETTERS.path(), null).body())
                    .contains(dead.messageId().toString());
            assertThat(http(port, "GET", HttpRoute.DEAD_LETTER.path(dead.messageId().toString()), null).body())
                    .contains("\"topic\": \"" + topic + "\"");

            String replay = HttpRoute.REPLAY.path(dead.messageId().toString());
            assertThat(http(port, "POST", replay, null).statusCode()).isEqualTo(401);
            assertThat(http(port, "POST", replay, "wrong").statusCode()).isEqualTo(403);
            assertThat(http(port, "POST", HttpRoute.DRAIN.path(), null).statusCode()).isEqualTo(401);
            assertThat(http(port, "POST", replay, token).statusCode()).isEqualTo(200);
            assertThat(messageIds(topic, 1)).containsExactly(dead.messageId().toString());

            String owned = "SELECT count(*) FROM \"" + prefix + "leases\" WHERE owner = ?";
            assertThat(http(port, "POST", HttpRoute.DRAIN.path(), token).statusCode()).isEqualTo(202);
            await().atMost(WAIT).until(() -> count(owned, relayId) == 0);
            await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(13))
                    .until(() -> count(owned, relayId) == 0);
            assertThat(http(port, "POST", HttpRoute.RESUME.path(), token).statusCode()).isEqualTo(202);
            await().atMost(WAIT).until(() -> count(owned, relayId) == 8);

            // A flood of requests: each is answered 200 or 503, and the relay keeps publishing meanwhile.
            List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> flood = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                flood.add(HTTP.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                        + HttpRoute.PENDING.path())).timeout(Duration.ofSeconds(60)).build(),
                        HttpResponse.BodyHandlers.ofString()));
            }
            List<OutboxMessage> during = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                during.add(message(topic, "flood-" + i, 8));
            }
            enqueue(during);
            Set<Integer> statuses = new HashSet<>();
            for (var response : flood) {
                statuses.add(response.get(60, TimeUnit.SECONDS).statusCode());
            }
            assertThat(statuses).as("answers to the flood").isSubsetOf(200, 503);
            Set<String> expected = new HashSet<>(Set.of(dead.messageId().toString()));
            during.forEach(m -> expected.add(m.messageId().toString()));
            assertThat(messageIds(topic, expected.size())).containsAll(expected);
            assertThat(status(port, HttpRoute.LIVE.path())).isEqualTo(200);

            proxy.cut();
            await().atMost(WAIT).until(() -> status(port, HttpRoute.READY.path()) == 503);
            assertThat(http(port, "GET", HttpRoute.READY.path(), null).body()).contains("store unreachable");
            assertThat(status(port, HttpRoute.LIVE.path())).isEqualTo(200);
            proxy.restore();
            await().atMost(WAIT).until(() -> status(port, HttpRoute.READY.path()) == 200);

            relay.terminate();
            assertThat(relay.exitCode()).as("stderr:\n%s", relay.err()).isEqualTo(StandaloneRelay.EXIT_OK);
            assertThat(relay.err()).contains("HTTP endpoint listening").doesNotContain(token);
        }
    }

    /**
     * R1, R5: the first lease round at the largest bucket count, 65,536, with a 64 MiB heap fits well
     * inside the default 30 s lease: the relay owns every bucket and publishes right after it, with
     * no WARN that the lease left is too short (this round took 39 s in this test, 9 s more than the
     * lease, while the lease rows were created one auto-committed insert at a time).
     */
    @Test
    void r1_theFirstLeaseRoundAt65536BucketsFitsInTheLeaseWithA64MiBHeap() throws Exception {
        int buckets = 65_536;
        String topic = "wide-" + prefix.substring(0, prefix.length() - 1);
        broker.createTopic(topic, 8);
        List<OutboxMessage> messages = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            messages.add(message(topic, "wide-" + i, buckets));
        }
        enqueue(messages);
        String relayId = "wide-" + prefix;
        RelayProcess relay = RelayProcess.start(dir, List.of("-Xmx64m"), environment(relayId), "--config",
                configFile("relay.bucket.count=" + buckets).toString());
        processes.add(relay);

        assertThat(messageIds(topic, messages.size())).as("stderr:\n%s", relay.err())
                .isEqualTo(messages.stream().map(m -> m.messageId().toString()).collect(Collectors.toSet()));
        String leases = "SELECT count(*) FROM \"" + prefix + "leases\" WHERE owner = ?";
        await().atMost(WAIT).until(() -> count(leases, relayId) == buckets);
        relay.terminate();
        assertThat(relay.exitCode()).as("stderr:\n%s", relay.err()).isEqualTo(StandaloneRelay.EXIT_OK);
        assertThat(relay.err()).as("stderr").doesNotContain("lease too short", "OutOfMemoryError", " ERROR ");
    }

    /**
     * S1, R6: 300 messages of 999,980 bytes, under the JDBC store's 1,000,000-byte limit,
     * all in one bucket, read by a relay JVM with a 256 MiB heap and the default batch.size (500) and
     * batch.max.bytes (from the heap: 4 MiB here): every message arrives, in enqueue order, with no
     * OutOfMemoryError and no store error. Before the byte budget every batch read ran out of memory
     * in the PostgreSQL driver (500 rows of about 1 MB), the error was handled as a store error that
     * dropped every lease, and none arrived.
     */
    @Test
    void s1_threeHundredMessagesOfAlmostOneMegabyteInOneBucketArriveInOrderFromARelayWithA256MiBHeap()
            throws Exception {
        int count = 300;
        int valueBytes = 999_980;
        String topic = "large-" + prefix.substring(0, prefix.length() - 1);
        broker.createTopic(topic, 8);
        List<String> expected = new ArrayList<>();
        ByteArraySerializer bytes = new ByteArraySerializer();
        for (int from = 0; from < count; from += 10) {
            List<OutboxMessage> transaction = new ArrayList<>();
            for (int i = from; i < from + 10; i++) {
                byte[] value = new byte[valueBytes];
                new Random(i).nextBytes(value);
                transaction.add(OutboxMessage.create(topic, "one-key", value, STRING, bytes, 8));
            }
            enqueue(transaction);
            transaction.forEach(m -> expected.add(m.messageId().toString()));
        }
        long started = System.nanoTime();
        RelayProcess relay = RelayProcess.start(dir, List.of("-Xmx256m"), environment("large-" + prefix), "--config",
                configFile().toString());
        processes.add(relay);

        List<String> arrived = new ArrayList<>();
        long deadline = started + Duration.ofMinutes(3).toNanos();
        try (KafkaConsumer<byte[], byte[]> consumer = fromTheBeginning(topic)) {
            while (new HashSet<>(arrived).size() < count && System.nanoTime() < deadline && relay.isAlive()) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    assertThat(record.value()).as("a record's value").hasSize(valueBytes);
                    arrived.add(messageId(record));
                }
            }
        }
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        System.out.printf("%d of %d messages of %d bytes arrived %d ms after the relay started (-Xmx256m)%n",
                new HashSet<>(arrived).size(), count, valueBytes, tookMillis);
        assertThat(arrived.stream().distinct().toList()).as("%d ms after the start; stderr:%n%s", tookMillis,
                relay.err()).isEqualTo(expected);
        java.util.regex.Matcher heap = java.util.regex.Pattern.compile(" maxHeapBytes=(\\d+) ").matcher(relay.err());
        assertThat(heap.find()).as("the start-up line names the heap; stderr:%n%s", relay.err()).isTrue();
        long budget = io.outbox.relay.RelayOptions.defaultBatchMaxBytes(Long.parseLong(heap.group(1)), 8, true);
        assertThat(budget).as("the default budget with 256 MiB of heap").isBetween(3L << 20, 4L << 20);
        assertThat(relay.err()).as("stderr").contains(" batchMaxBytes=" + budget + " ")
                .doesNotContain("OutOfMemoryError", "out of memory", "store call failed", " ERROR ");
        relay.terminate();
        assertThat(relay.exitCode()).as("stderr:\n%s", relay.err()).isEqualTo(StandaloneRelay.EXIT_OK);
    }

    /**
     * R14 with real processes: three relay JVMs on PostgreSQL (16 buckets, lease 10 s, renew 2.5 s)
     * drain a backlog while a writer keeps enqueuing. For a minute, every 5 to 10 s one of two
     * churning relays is killed with SIGKILL and a replacement under a new relay id starts at once
     * (a slot can be hit again seconds after its replacement started, so some relays die young);
     * the third relay runs throughout. The lease table, sampled every 250 ms, never shows a bucket
     * without a live owner for longer than two lease durations after its last holder's last write
     * (a relay that claims a bucket and dies before a peer took it over starts the wait again);
     * afterwards every message has arrived, and each key's first deliveries are in enqueue order.
     */
    @Test
    void r14_sigkillChurnLeavesNoBucketUnownedLongerThanTwoLeaseDurationsAndLosesNothing() throws Exception {
        int buckets = 16;
        long leaseMillis = 10_000;
        String topic = "churn-" + prefix.substring(0, prefix.length() - 1);
        broker.createTopic(topic, buckets);
        Path config = configFile("relay.bucket.count=" + buckets, "relay.lease.duration.ms=" + leaseMillis,
                "relay.lease.renew.interval.ms=2500", "relay.store.concurrency=2", "store.pool.size=4");
        KeyedWriter writer = new KeyedWriter(topic, buckets, 200);
        for (int i = 0; i < 20; i++) {
            writer.enqueue(1_000);
        }
        Map<String, RelayProcess> live = new ConcurrentHashMap<>();
        String[] slots = new String[3];
        for (int slot = 0; slot < slots.length; slot++) {
            slots[slot] = startChurning(config, slot, live);
        }
        await().atMost(WAIT).until(() -> leases().values().stream()
                .filter(lease -> lease.heldBy(live.keySet(), System.currentTimeMillis())).count() == buckets);

        UnownedSpans spans = new UnownedSpans(buckets);
        List<Exception> failures = new CopyOnWriteArrayList<>();
        ScheduledExecutorService background = Executors.newScheduledThreadPool(2);
        int kills = 0;
        List<Long> pendingAtKills = new ArrayList<>();
        long seed = System.nanoTime();
        try {
            // A scheduled task that throws stops silently: failures are collected and checked instead.
            background.scheduleWithFixedDelay(() -> failures.addAll(failureOf(() -> spans.sample(leases(),
                    live.keySet()))), 0, 250, TimeUnit.MILLISECONDS);
            background.scheduleWithFixedDelay(() -> failures.addAll(failureOf(() -> writer.enqueue(50))), 0, 125,
                    TimeUnit.MILLISECONDS);
            Random random = new Random(seed);
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < end) {
                TimeUnit.MILLISECONDS.sleep(5_000 + random.nextInt(5_001)); // the fault schedule, not a wait
                int slot = 1 + random.nextInt(2);
                pendingAtKills.add(count("SELECT count(*) FROM \"" + prefix + "messages\""));
                RelayProcess victim = live.remove(slots[slot]);
                victim.kill();
                kills++;
                slots[slot] = startChurning(config, slot, live);
            }
        } finally {
            background.shutdownNow();
            background.awaitTermination(10, TimeUnit.SECONDS);
        }
        assertThat(failures).as("sampling and writing during the churn").isEmpty();
        assertThat(spans.samples()).as("lease table samples in 60 s").isGreaterThan(120);
        await().atMost(Duration.ofMinutes(3)).until(() -> count("SELECT count(*) FROM \"" + prefix + "messages\"") == 0);

        List<ConsumerRecord<byte[], byte[]>> records = records(topic, writer.enqueued.size());
        Set<String> delivered = new HashSet<>();
        Map<String, List<Integer>> firstDeliveries = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> record : records) {
            if (delivered.add(messageId(record))) {
                String[] keyAndSequence = new String(record.value(), StandardCharsets.UTF_8).split(":");
                firstDeliveries.computeIfAbsent(keyAndSequence[0], k -> new ArrayList<>())
                        .add(Integer.parseInt(keyAndSequence[1]));
            }
        }
        System.out.printf("R14 churn (seed %d): %d SIGKILLs in 60 s (messages pending at each: %s), longest "
                + "unowned span %s; %d messages, %d records (%d repeats)%n", seed, kills, pendingAtKills, spans,
                writer.enqueued.size(), records.size(), records.size() - delivered.size());
        assertThat(spans.longestMillis()).as("R14: %s", spans).isLessThanOrEqualTo(2 * leaseMillis);
        assertThat(delivered).as("nothing lost").containsAll(writer.enqueued);
        firstDeliveries.forEach((key, sequence) -> assertThat(sequence).as("first deliveries of %s", key).isSorted());
    }

    /** Runs a task; returns its failure instead of throwing it. */
    private static List<Exception> failureOf(Runnable task) {
        try {
            task.run();
            return List.of();
        } catch (RuntimeException e) {
            return List.of(e);
        }
    }

    private String startChurning(Path config, int slot, Map<String, RelayProcess> live) {
        String relayId = "churn-" + slot + "-" + UUID.randomUUID().toString().substring(0, 8) + "-" + prefix;
        RelayProcess relay = start(environment(relayId), "--config", config.toString());
        live.put(relayId, relay);
        return relayId;
    }

    /** Bucket to lease row as stored (owner null when free; dead owners and past expiries included). */
    private Map<Integer, LeaseRow> leases() {
        Map<Integer, LeaseRow> leases = new HashMap<>();
        try (Connection c = dataSource.getConnection(); PreparedStatement s = c.prepareStatement(
                "SELECT bucket, owner, expires_at FROM \"" + prefix + "leases\"")) {
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    leases.put(r.getInt(1), new LeaseRow(r.getString(2), r.getLong(3)));
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return leases;
    }

    /** One lease row as read: owner (null when free) and expiry, epoch milliseconds. */
    private record LeaseRow(String owner, long expiresAt) {

        /** Whether a live relay holds it: the owner is alive and the expiry still ahead. */
        boolean heldBy(Set<String> live, long nowMillis) {
            return owner != null && live.contains(owner) && expiresAt > nowMillis;
        }
    }

    /** Enqueues messages over a fixed set of keys, each value {@code key:sequence}, and remembers their ids. */
    private final class KeyedWriter {
        final Set<String> enqueued = ConcurrentHashMap.newKeySet();
        private final String topic;
        private final int buckets;
        private final int[] sequences;
        private int next;

        KeyedWriter(String topic, int buckets, int keys) {
            this.topic = topic;
            this.buckets = buckets;
            this.sequences = new int[keys];
        }

        synchronized void enqueue(int count) {
            List<OutboxMessage> batch = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                int key = next++ % sequences.length;
                batch.add(OutboxMessage.create(topic, "key-" + key, "key-" + key + ":" + sequences[key]++, STRING,
                        STRING, buckets));
            }
            try {
                StandaloneRelayJarIT.this.enqueue(batch);
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
            batch.forEach(m -> enqueued.add(m.messageId().toString()));
        }
    }

    /**
     * The lease table sampled over time: how long each bucket went without a live owner. R14 bounds
     * the wait from the last write of the bucket's last holder, so a span runs from the first sample
     * that finds no live holder (a little after that write) and starts again when the row changes
     * while no live relay holds it (a relay that claimed the bucket and died before a sample saw it
     * alive wrote last); it continues when the dead holder's expiry merely passes. The longest span across holders (from
     * the last sample a live relay held the bucket) is kept too, for the report.
     */
    private static final class UnownedSpans {
        private final long[] since;
        private final long[] sinceAnyHolder;
        private final LeaseRow[] row;
        private long longest;
        private int longestBucket = -1;
        private long longestAcrossHolders;
        private int samples;

        UnownedSpans(int buckets) {
            since = new long[buckets];
            sinceAnyHolder = new long[buckets];
            row = new LeaseRow[buckets];
            Arrays.fill(since, -1);
            Arrays.fill(sinceAnyHolder, -1);
        }

        synchronized void sample(Map<Integer, LeaseRow> leases, Set<String> live) {
            samples++;
            long now = System.nanoTime();
            long nowMillis = System.currentTimeMillis();
            for (int b = 0; b < since.length; b++) {
                LeaseRow lease = leases.get(b);
                if (lease != null && lease.heldBy(live, nowMillis)) {
                    since[b] = -1;
                    sinceAnyHolder[b] = -1;
                    continue;
                }
                if (sinceAnyHolder[b] < 0) {
                    sinceAnyHolder[b] = now;
                } else {
                    longestAcrossHolders = Math.max(longestAcrossHolders, now - sinceAnyHolder[b]);
                }
                if (since[b] < 0 || !java.util.Objects.equals(lease, row[b])) {
                    since[b] = now;
                    row[b] = lease;
                } else if (now - since[b] > longest) {
                    longest = now - since[b];
                    longestBucket = b;
                }
            }
        }

        synchronized int samples() {
            return samples;
        }

        /** The longest time a bucket went without a live owner after the last write of its row. */
        synchronized long longestMillis() {
            return TimeUnit.NANOSECONDS.toMillis(longest);
        }

        @Override
        public synchronized String toString() {
            return longestMillis() + " ms per holder (bucket " + longestBucket + "), "
                    + TimeUnit.NANOSECONDS.toMillis(longestAcrossHolders) + " ms across holders";
        }
    }

    @Test
    void startupLogsOneSummaryLineAtInfoAndTheConfigurationOnlyAtDebug() throws Exception {
        String relayId = "jar-quiet-" + prefix;
        RelayProcess relay = start(environment(relayId), "--config", configFile().toString());
        await().atMost(WAIT).until(() -> relay.err().contains("relay running") || !relay.isAlive());
        relay.terminate();
        assertThat(relay.exitCode()).as("stderr:\n%s", relay.err()).isEqualTo(StandaloneRelay.EXIT_OK);

        List<String> startup = relay.err().lines().takeWhile(line -> !line.contains("relay running")).toList();
        assertThat(startup).as("stderr:\n%s", relay.err())
                .filteredOn(line -> line.contains(" starting relayId=" + relayId + " store=jdbc bucketCount=8 "))
                .singleElement().asString()
                .contains(" INFO ", "batchSize=500", "storeConcurrency=4",
                        "kafka.bootstrap.servers=" + broker.bootstrapServers(), "logged at DEBUG");
        assertThat(String.join("\n", startup)).doesNotContain("configuration:", "# relay options", "store.url=",
                "relay.batch.size=", "kafka.acks=");
        assertThat(startup).as("start-up lines at INFO:\n%s", String.join("\n", startup)).hasSizeLessThan(10);
    }

    @Test
    void r6_s8_messagesInABucketOutsideTheRangeStopTheRelayWithExitCodeThreeAndTheReason() throws Exception {
        OutboxMessage outside = message("standalone-fatal", "k", 16);
        while (outside.bucket() < 8) {
            outside = message("standalone-fatal", UUID.randomUUID().toString(), 16);
        }
        enqueue(List.of(outside));
        RelayProcess relay = start(environment("fatal-" + prefix), "-c", configFile("relay.bucket.count=8").toString());

        assertThat(relay.exitCode()).as("stderr:\n%s", relay.err()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(relay.err()).contains("relay stopped on a misconfiguration",
                "pending outbox messages in bucket(s) [" + outside.bucket() + "]", "outside [0, 8)", "exitCode=3");
        assertOneErrorLineWithoutStackTrace(relay.err());
        assertThat(count("SELECT count(*) FROM \"" + prefix + "messages\"")).isEqualTo(1);
    }

    private static void assertOneErrorLineWithoutStackTrace(String err) {
        assertThat(err.lines().filter(line -> line.contains(" ERROR ")).toList())
                .as("the misconfiguration is logged once, in one line:\n%s", err).hasSize(1);
        assertThat(err).as("no stack trace for a misconfiguration").doesNotContain("\tat ", "Caused by");
    }

    private void dropTables() throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            for (String table : List.of("messages", "leases", "relays")) {
                s.execute("DROP TABLE IF EXISTS \"" + prefix + table + "\"");
            }
        }
    }

    @Test
    void r6_absentTablesWithoutCreateSchemaExitWithCodeThreeNamingThemAndTheSetting() throws Exception {
        dropTables();
        RelayProcess relay = start(environment("absent-" + prefix), "-c", configFile().toString());

        assertThat(relay.exitCode()).as("stderr:\n%s", relay.err()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(relay.err()).contains("invalid store configuration; exiting with code 3",
                "outbox table(s) [\"" + prefix + "messages\", \"" + prefix + "leases\", \"" + prefix + "relays\"] "
                        + "do not exist", "store.create.schema=true");
        assertThat(relay.err()).doesNotContain("retrying");
        assertOneErrorLineWithoutStackTrace(relay.err());
    }

    @Test
    void r6_tablesDroppedWhileTheRelayRunsStopItWithExitCodeThreeNamingThem() throws Exception {
        RelayProcess relay = start(environment("dropped-" + prefix), "-c", configFile().toString());
        await().atMost(WAIT).until(() -> relay.err().contains("relay running") || !relay.isAlive());
        dropTables();

        assertThat(relay.exitCode()).as("stderr:\n%s", relay.err()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(relay.err()).contains("relay stopped on a misconfiguration", "does not exist",
                prefix + "messages", "dropped or renamed while the store was in use?",
                "recreate the tables with the DDL of JdbcDialect.POSTGRESQL.schemaScript(tables)", "exitCode=3");
        assertOneErrorLineWithoutStackTrace(relay.err());
        assertThat(relay.err().lines().filter(line -> line.contains(" ERROR ")).findFirst().orElseThrow())
                .as("the driver's message, which spans lines, is in the one ERROR line").contains("Position: ")
                .as("create.schema does not bring back tables dropped while running").doesNotContain("create.schema");
    }

    @Test
    void r6_aJdbcMysqlUrlFailsTheCheckWithExitCodeThreeNamingTheSchemeAndTheFix() throws Exception {
        String url = "jdbc:mysql://relay:" + URL_SECRET + "@db.invalid:3306/app";
        RelayProcess check = start(environment("mysql-" + prefix), "-c", configFile("store.url=" + url).toString(),
                "--check");

        assertThat(check.exitCode()).as("stderr:\n%s", check.err()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(check.err()).contains("store.url", "no JDBC driver on the class path accepts a jdbc:mysql: URL",
                "use jdbc:mariadb: (MariaDB Connector/J, bundled in the relay jar, talks to MySQL)")
                .doesNotContain("db.invalid");
        assertThat(check.out()).doesNotContain("configuration is valid");
    }

    @Test
    void r6_aJdbcUrlTheDriverCannotParseExitsWithThreeWithinSecondsAndCheckSaysTheSame() throws Exception {
        String url = "jdbc:mariadb://root:" + URL_SECRET + "@127.0.0.1:3306/db";
        Path file = configFile("store.url=" + url);
        long started = System.nanoTime();
        RelayProcess relay = start(environment("unparseable-" + prefix), "-c", file.toString());
        assertThat(relay.exitCode()).as("stderr:\n%s", relay.err()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(System.nanoTime() - started).as("not retried as an outage").isLessThan(60_000_000_000L);
        RelayProcess check = start(environment("unparseable-" + prefix), "-c", file.toString(), "--check");
        assertThat(check.exitCode()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(relay.err()).contains("store.url", "the JDBC driver cannot parse a jdbc:mariadb: URL")
                .doesNotContain("could not open the store");
        assertThat(errorLine(check.err())).isEqualTo(errorLine(relay.err()));
    }

    @Test
    void r6_aMalformedMongoConnectionStringFailsTheCheckAsAStartDoes() throws Exception {
        Path file = dir.resolve("mongo-" + UUID.randomUUID() + ".properties");
        Files.write(file, List.of("store=mongodb",
                "store.connection.string=mongodb://u:" + URL_SECRET + "@127.0.0.1:notaport/db"), StandardCharsets.UTF_8);
        Map<String, String> env = environment("mongo-" + prefix);
        env.remove("OUTBOX_STORE_PASSWORD"); // a JDBC setting
        RelayProcess check = start(env, "-c", file.toString(), "--check");
        RelayProcess relay = start(env, "-c", file.toString());
        assertThat(check.exitCode()).as("stderr:\n%s", check.err()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(relay.exitCode()).as("stderr:\n%s", relay.err()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(check.err()).contains("store.connection.string", "value hidden");
        assertThat(errorLine(check.err())).isEqualTo(errorLine(relay.err()));
    }

    /** The relay's one "invalid configuration" line, without the log's time stamp. */
    private static String errorLine(String err) {
        return err.lines().filter(l -> l.contains("invalid configuration")).findFirst()
                .map(l -> l.substring(l.indexOf("invalid configuration"))).orElse("(none) " + err);
    }

    /**
     * N5 through the jar: with notify.transport=postgres (url and user taken from the store), a
     * commit's NOTIFY wakes the relay process long before its one-minute poll.
     */
    @Test
    void n5_aPostgresNotifyWakesTheRelayProcessLongBeforeItsPoll() throws Exception {
        String topic = "notify-" + prefix.substring(0, prefix.length() - 1);
        broker.createTopic(topic, 8);
        String channel = prefix + "hints";
        String relayId = "notified-" + prefix;
        Map<String, String> env = environment(relayId);
        env.put("OUTBOX_LOG_LEVEL", "DEBUG"); // the effective configuration is logged at DEBUG
        RelayProcess relay = start(env, "--config", configFile("relay.poll.interval.ms=60000",
                "notify.transport=postgres", "notify.postgres.channel=" + channel).toString());
        String leases = "SELECT count(*) FROM \"" + prefix + "leases\" WHERE owner = ?";
        await().atMost(WAIT).until(() -> count(leases, relayId) == 8
                && relay.err().contains("listening for notifications channel=" + channel));
        Thread.sleep(1_000); // the discovery of the gained buckets is over; the next poll is a minute away

        try (io.outbox.notify.postgres.PostgresNotificationTransport transport =
                     new io.outbox.notify.postgres.PostgresNotificationTransport(
                             io.outbox.notify.postgres.PostgresTransportSettings.builder(POSTGRES_URL)
                                     .credentials(POSTGRES_USER, POSTGRES_PASSWORD).channel(channel).build());
             io.outbox.notify.OutboxNotifier notifier = io.outbox.notify.OutboxNotifier.builder().transport(transport)
                     .build();
             Connection c = dataSource.getConnection()) {
            OutboxMessage m = message(topic, "notified", 8);
            long committed = System.nanoTime();
            io.outbox.store.jdbc.JdbcOutboxTransactions.of(store().writer(), notifier).run(c, outbox -> {
                outbox.enqueue(m);
                return null;
            });
            assertThat(messageIds(topic, 1)).as("stderr:\n%s", relay.err()).containsExactly(m.messageId().toString());
            assertThat(Duration.ofNanos(System.nanoTime() - committed)).as("woken by the NOTIFY, not the poll")
                    .isLessThan(Duration.ofSeconds(30));
        }
        assertThat(relay.err()).contains("notify.transport=postgres", "notify.postgres.url=" + POSTGRES_URL,
                "notify.postgres.url <- the store's setting of that name");
    }

    @Test
    void n4_anUnknownNotifySettingExitsWithCodeThreeNamingIt() throws Exception {
        RelayProcess relay = start(environment("bad-notify-" + prefix), "--config",
                configFile("notify.transport=redis", "notify.redis.url=redis://x").toString(), "--check");
        assertThat(relay.exitCode()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(relay.err()).contains("notify.redis.url", "notify.redis.uri");

        RelayProcess badValue = start(environment("bad-channel-" + prefix), "--config",
                configFile("notify.transport=postgres", "notify.postgres.channel=no-dashes").toString(), "--check");
        assertThat(badValue.exitCode()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(badValue.err()).contains("notify.postgres.*", "no-dashes");
    }

    @Test
    void aMissingRequiredStoreSettingExitsWithCodeThreeNamingIt() throws Exception {
        Path file = configFile();
        List<String> withoutUrl = Files.readAllLines(file).stream().filter(l -> !l.startsWith("store.url=")).toList();
        Files.write(file, withoutUrl, StandardCharsets.UTF_8);
        RelayProcess relay = start(environment("missing-" + prefix), "--config", file.toString());

        assertThat(relay.exitCode()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(relay.err()).contains("invalid configuration", "url", "exiting with code 3");
    }

    /**
     * PostgreSQL's driver takes the user info for part of the host name and fails. At DEBUG the
     * relay logs the failure's stack trace, whose messages hold the URL as the driver wrote it:
     * only the redaction of standard error stands between it and the log.
     */
    @Test
    void r7_aStoreThatCannotBeReachedIsRetriedUntilSigtermWithThePasswordOfItsUrlHidden() throws Exception {
        String url = POSTGRES_URL.replace("://", "://" + POSTGRES_USER + ":" + URL_SECRET + "@");
        Map<String, String> env = environment("unreachable-" + prefix);
        env.put("OUTBOX_LOG_LEVEL", "DEBUG");
        RelayProcess relay = start(env, "-c", configFile("store.url=" + url).toString());
        await().atMost(WAIT).until(() -> relay.err().contains("attempt=2") || !relay.isAlive());

        relay.terminate();
        assertThat(relay.exitCode()).as("stderr:\n%s", relay.err()).isEqualTo(StandaloneRelay.EXIT_OK);
        assertThat(relay.err()).contains("could not open the store; retrying store=jdbc attempt=1",
                "store.url=" + url.replace(URL_SECRET, "[hidden]") + "\n",
                "Caused by: java.net.UnknownHostException: " + POSTGRES_USER + ":[hidden]@",
                "stop requested before the store was opened");
    }

    @Test
    void helpListsEverySettingOfEveryStorePackagedInTheJar() throws Exception {
        RelayProcess help = start(Map.of(), "--help");
        assertThat(help.exitCode()).isZero();
        String out = help.out();
        // This test's class path also has the kit's in-memory store and the unit tests' own stores; the jar has none.
        List<OutboxStoreProvider> providers = OutboxStores.providers().stream()
                .filter(p -> !p.getClass().getPackageName().equals("io.outbox.tck")
                        && !p.getClass().getPackageName().equals(StandaloneRelayJarIT.class.getPackageName()))
                .toList();
        assertThat(providers).extracting(OutboxStoreProvider::name).containsExactly("dynamodb", "jdbc", "mongodb");
        assertThat(out).contains("found on the class path: dynamodb, jdbc, mongodb");
        for (OutboxStoreProvider provider : providers) {
            assertThat(out).contains("store=" + provider.name() + "  (" + provider.getClass().getName() + ")");
            for (ConfigDef.ConfigKey key : provider.configDef().configKeys().values()) {
                String fileKey = "store." + key.name;
                assertThat(out).contains("    " + fileKey + "  [" + EnvironmentVariables.variableFor(fileKey) + "]");
            }
        }
        assertThat(out).contains("store.password  [OUTBOX_STORE_PASSWORD]\n        password, default: none",
                "store.connection.string  [OUTBOX_STORE_CONNECTION_STRING]\n        password, required",
                "relay.bucket.count  [OUTBOX_RELAY_BUCKET_COUNT]", "kafka.acks: always all");
        assertThat(help.err()).isEmpty();
    }
}
