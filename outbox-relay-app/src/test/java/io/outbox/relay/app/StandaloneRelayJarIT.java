package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox.OutboxMessage;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.spi.OutboxStoreProvider;
import io.outbox.spi.OutboxStores;
import io.outbox.store.jdbc.JdbcOutboxStore;
import java.io.IOException;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
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
        config.setMaximumPoolSize(2);
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
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic, WAIT).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (records.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
        }
        return records.stream()
                .map(r -> new String(r.headers().lastHeader("x-outbox-message-id").value(), StandardCharsets.UTF_8))
                .collect(Collectors.toSet());
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
             io.outbox.relay.OutboxNotifier notifier = io.outbox.relay.OutboxNotifier.builder().transport(transport)
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
