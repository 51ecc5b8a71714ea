package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.outbox.notify.NotificationTransportProvider;
import io.outbox.notify.NotificationTransports;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.spi.OutboxStoreProvider;
import io.outbox.spi.OutboxStores;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The standalone relay's command line, run in this JVM: help, version, check, print-config, errors. */
class StandaloneRelayCommandTest {

    @TempDir
    Path dir;

    /** What one run printed, and its exit code. */
    record Result(int code, String out, String err) {
    }

    static Result run(Map<String, String> environment, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = StandaloneRelay.execute(args, environment, o, e, Lifecycle.inProcess(), redactor -> { });
        }
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static String words(String text) {
        return text.replaceAll("\\s+", " ");
    }

    @Test
    void helpListsEveryRelayOptionWithItsVariableTypeDefaultAndDocumentation() {
        Result help = run(Map.of(), "--help");
        assertThat(help.code()).isZero();
        String text = words(help.out());
        for (ConfigDef.ConfigKey key : RelayOptions.configDef().configKeys().values()) {
            String fileKey = RelayConfiguration.relayFileKey(key.name);
            assertThat(help.out()).contains("  " + fileKey + "  [" + EnvironmentVariables.variableFor(fileKey) + "]");
            assertThat(text).contains(words(key.documentation));
        }
        assertThat(help.out()).contains("relay.bucket.count  [OUTBOX_RELAY_BUCKET_COUNT]\n      int, default: 8, "
                + "valid: 1-65536");
        assertThat(help.out()).contains("relay.store.concurrency  [OUTBOX_RELAY_STORE_CONCURRENCY]\n      int, "
                + "default: 4, valid: 1-256 threads");
        assertThat(help.out()).contains("relay.message.id.header  [OUTBOX_RELAY_MESSAGE_ID_HEADER]\n      string, "
                + "default: x-outbox-message-id, valid: not blank");
    }

    @Test
    void r9_helpSaysExitZeroGivesTheLeasesBackUnlessPublishesWereStillInFlight() {
        String text = words(run(Map.of(), "--help").out());
        assertThat(text).contains("0 stopped on SIGTERM or SIGINT: the leases were given back, unless publishes "
                + "were still in flight after relay.close.timeout.ms, in which case they expire (logged at WARN)")
                .doesNotContain("stopped gracefully");
        assertThat(text).contains("The number of threads making store calls for the owned buckets: reading batches "
                + "and deleting acknowledged prefixes. Publishes are asynchronous",
                "at least store.concurrency + 2 connections");
    }

    @Test
    void helpListsEverySettingOfEveryStoreAndTransportOnTheClassPathButNoPasswordDefault() {
        Result help = run(Map.of(), "--help");
        String text = words(help.out());
        List<OutboxStoreProvider> providers = OutboxStores.providers();
        assertThat(providers).extracting(OutboxStoreProvider::name).contains("memory", ScriptedStoreProvider.NAME);
        for (OutboxStoreProvider provider : providers) {
            assertThat(help.out()).contains("store=" + provider.name() + "  (" + provider.getClass().getName() + ")");
            for (ConfigDef.ConfigKey key : provider.configDef().configKeys().values()) {
                String fileKey = "store." + key.name;
                assertThat(help.out()).contains("    " + fileKey + "  [" + EnvironmentVariables.variableFor(fileKey)
                        + "]");
                assertThat(text).contains(words(key.documentation));
            }
        }
        List<NotificationTransportProvider> transports = NotificationTransports.providers();
        assertThat(transports).extracting(NotificationTransportProvider::name).contains("redis", "postgres");
        for (NotificationTransportProvider transport : transports) {
            assertThat(help.out()).contains("notify.transport=" + transport.name() + "  ("
                    + transport.getClass().getName() + ")");
            for (ConfigDef.ConfigKey key : transport.configDef().configKeys().values()) {
                String fileKey = "notify." + transport.name() + "." + key.name;
                assertThat(help.out()).contains("    " + fileKey + "  [" + EnvironmentVariables.variableFor(fileKey)
                        + "]");
                assertThat(text).contains(words(key.documentation));
            }
        }
        assertThat(help.out()).contains("store.name  [OUTBOX_STORE_NAME]\n        string, required")
                .contains("store.password  [OUTBOX_STORE_PASSWORD]\n        password, default: [hidden]")
                .doesNotContain("default-secret");
    }

    @Test
    void helpListsTheEnforcedKafkaSettingsTheExitCodesAndTheEnvironmentRule() {
        String out = run(Map.of(), "--help").out();
        SettingsHelp.ENFORCED_KAFKA.keySet().forEach(key -> assertThat(out).contains("kafka." + key + ": "));
        SettingsHelp.KAFKA_DEFAULTS.keySet().forEach(key -> assertThat(out).contains("kafka." + key + ": "));
        for (int code = StandaloneRelay.EXIT_OK; code <= StandaloneRelay.EXIT_STOP_TIMEOUT; code++) {
            assertThat(out).contains("\n  " + code + "  ");
        }
        assertThat(words(out)).contains("'.' written as '_', '_' as '__' and '-' as '___'", "--config",
                "--check", "--print-config", "--version");
    }

    /** The help's list of enforced producer settings is what the publisher really does (K1). */
    @Test
    void theEnforcedKafkaSettingsInTheHelpAreExactlyWhatThePublisherChanges() {
        Set<String> changed = new TreeSet<>();
        for (String key : ProducerConfig.configNames()) {
            Map<String, Object> effective = KafkaOutboxPublisher.effectiveConfig(Map.of(key, "probe"));
            if (!"probe".equals(effective.get(key))) {
                changed.add(key);
            }
        }
        assertThat(changed).isEqualTo(SettingsHelp.ENFORCED_KAFKA.keySet());
        Map<String, Object> defaults = KafkaOutboxPublisher.effectiveConfig(Map.of());
        assertThat(defaults).containsEntry("max.block.ms", 10_000L);
        Set<String> added = new TreeSet<>(defaults.keySet());
        added.removeAll(SettingsHelp.ENFORCED_KAFKA.keySet());
        assertThat(added).containsExactly("max.block.ms");
        assertThat(SettingsHelp.KAFKA_DEFAULTS).containsKeys("max.block.ms", "client.id");
    }

    @Test
    void versionNamesTheRelayKafkaAndJava() {
        Result version = run(Map.of(), "--version");
        assertThat(version.code()).isZero();
        assertThat(version.out()).startsWith("outbox-relay 0.").contains("Kafka clients 4.", "Java 17");
    }

    @Test
    void anInvalidCommandLineExitsWithTwoAndAShortMessage() {
        Result bad = run(Map.of(), "--confg", "x");
        assertThat(bad.code()).isEqualTo(StandaloneRelay.EXIT_USAGE);
        assertThat(bad.err()).contains("Unknown option", "--help").doesNotContain("Relay options");
    }

    @Test
    void checkAcceptsAValidConfigurationWithoutConnecting() throws IOException {
        Path file = Files.writeString(dir.resolve("ok.properties"),
                "store=memory\nkafka.bootstrap.servers=nowhere.invalid:9092\n", StandardCharsets.UTF_8);
        Result check = run(Map.of("OUTBOX_RELAY_BUCKET_COUNT", "12"), "--config", file.toString(), "--check");
        assertThat(check.code()).isZero();
        assertThat(check.out()).contains("configuration is valid", "store=memory", "relay.bucket.count=12");
    }

    @Test
    void anInvalidConfigurationExitsWithThreeNamingTheReasonWithoutItsSecrets() throws IOException {
        Path file = Files.writeString(dir.resolve("bad.properties"), String.join("\n",
                "store=scripted", "store.name=x", "store.password=pw-93731", "store.failures=pw-93731",
                "kafka.bootstrap.servers=k:9092"), StandardCharsets.UTF_8);
        Result check = run(Map.of(), "-c", file.toString(), "--check");
        assertThat(check.code()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(check.err()).contains("invalid configuration", "failures", "[hidden]").doesNotContain("pw-93731");

        Result unknown = run(Map.of("OUTBOX_STORE", "memory", "OUTBOX_KAFKA_BOOTSTRAP_SERVERS", "k:9092",
                "OUTBOX_RELAY_BATCHSIZE", "5"));
        assertThat(unknown.code()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(unknown.err()).contains("relay.batchsize");

        Result missingFile = run(Map.of(), "-c", dir.resolve("absent.properties").toString());
        assertThat(missingFile.code()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(missingFile.err()).contains("absent.properties", "does not exist");
    }

    @Test
    void aConfigurationFileThatIsNotUtf8ExitsWithThreeNamingTheFileAndWhere() throws IOException {
        byte[] latin1 = "store=memory\nkafka.bootstrap.servers=k:9092\nrelay.id=caf\u00e9\n"
                .getBytes(StandardCharsets.ISO_8859_1);
        Path file = Files.write(dir.resolve("latin1.properties"), latin1);
        Result check = run(Map.of(), "-c", file.toString(), "--check");
        assertThat(check.code()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(check.err()).contains("configuration file " + file + " is not valid UTF-8: byte 0xE9 at byte "
                + "offset 56 (line 3)").doesNotContain("MalformedInputException");
        assertThat(check.err().lines()).hasSize(2);
    }

    @Test
    void aKeyGivenTwiceInTheFileIsRefusedNamingTheKeyAndBothLines() throws IOException {
        Path file = Files.writeString(dir.resolve("twice.properties"), String.join("\n",
                "store=memory", "# relay.bucket.count=2 in a comment does not count", "relay.bucket.count=4",
                "kafka.bootstrap.servers=k:9092", "relay.bucket.count = 16"), StandardCharsets.UTF_8);
        Result check = run(Map.of(), "-c", file.toString(), "--check");
        assertThat(check.code()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(check.err()).contains("configuration file " + file + " sets 'relay.bucket.count' twice, on lines 3 "
                + "and 5");
        assertThat(check.out()).doesNotContain("configuration is valid");
    }

    @Test
    void aFileOverOneMebibyteIsRefusedNamingItsSizeAndDevZeroDoesNotExhaustMemory() throws IOException {
        Path big = Files.writeString(dir.resolve("big.properties"), "store=memory\n# " + "x".repeat(1 << 20) + "\n",
                StandardCharsets.UTF_8);
        Result check = run(Map.of(), "-c", big.toString(), "--check");
        assertThat(check.code()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(check.err()).contains("configuration file " + big + " is " + Files.size(big) + " bytes, larger "
                + "than the limit of 1048576 bytes (1 MiB)");

        Result zero = run(Map.of(), "--config", "/dev/zero", "--check");
        assertThat(zero.code()).as("refused before it is read: not a regular file")
                .isEqualTo(StandaloneRelay.EXIT_USAGE);
        assertThat(zero.err()).contains("configuration file /dev/zero is a character device, not a regular file")
                .doesNotContain("OutOfMemoryError");
    }

    /** A FIFO made by mkfifo(1); skips, saying why, where there is none. */
    private Path fifo(String name) throws IOException, InterruptedException {
        assumeTrue(System.getProperty("os.name", "").startsWith("Linux"), "FIFOs are made with mkfifo on Linux only");
        Path fifo = dir.resolve(name);
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).redirectErrorStream(true).start();
        assertThat(mkfifo.waitFor()).as(new String(mkfifo.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                .isZero();
        return fifo;
    }

    @Test
    void aFifoOrOtherFileThatIsNotRegularGivenToDashCIsRefusedAtOnceWithExitTwo() throws Exception {
        Path fifo = fifo("relay.fifo");
        List<String[]> commands = List.of(new String[] {"-c", fifo.toString(), "--check"},
                new String[] {"--print-config", "--config", fifo.toString()},
                new String[] {"-c", fifo.toString()},
                new String[] {"pending", "-c", fifo.toString()},
                new String[] {"dead-letters", "list", "--config", fifo.toString()},
                new String[] {"-c", fifo.toString(), "dead-letters", "show", UUID.randomUUID().toString()});
        for (String[] args : commands) {
            // Nothing writes to the FIFO: opening it would block for ever.
            Result result = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> run(Map.of(), args),
                    () -> "blocked on the FIFO: " + List.of(args));
            assertThat(result.code()).as("%s: %s", List.of(args), result.err()).isEqualTo(StandaloneRelay.EXIT_USAGE);
            assertThat(result.err()).contains("configuration file " + fifo + " is a FIFO (named pipe), not a regular "
                    + "file");
        }
        Result directory = run(Map.of(), "-c", dir.toString(), "--check");
        assertThat(directory.code()).isEqualTo(StandaloneRelay.EXIT_USAGE);
        assertThat(directory.err()).contains("configuration file " + dir + " is a directory, not a regular file");
    }

    @Test
    void aKafkaSettingNamingAFifoIsRefusedByTheCheckNamingTheSetting() throws Exception {
        Path fifo = fifo("truststore.fifo");
        Path file = Files.writeString(dir.resolve("tls.properties"), String.join("\n", "store=memory",
                "kafka.bootstrap.servers=k:9092", "kafka.ssl.truststore.location=" + fifo, ""), StandardCharsets.UTF_8);
        Result check = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> run(Map.of(), "-c", file.toString(),
                "--check"));
        assertThat(check.code()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(check.err()).contains("kafka.ssl.truststore.location=" + fifo + " is a FIFO (named pipe), not a "
                + "regular file");
    }

    @Test
    void checkingFiftyThousandUnknownStoreKeysFinishesNamingThem() throws IOException {
        // Once quadratic: 10,000 such keys took 18 to 66 s, 70,000 over 10 minutes. No timing assertion here.
        StringBuilder text = new StringBuilder("store=jdbc\nstore.url=jdbc:postgresql://127.0.0.1:5432/test\n"
                + "kafka.bootstrap.servers=k:9092\n");
        for (int i = 1; i <= 50_000; i++) {
            // "key" makes each a secret by the wider rule: 50,000 values the redactor hides in one pass.
            String n = Integer.toString(i, 36);
            text.append("store.key").append(n).append("=~").append(n).append('\n');
        }
        Path file = Files.writeString(dir.resolve("unknown.properties"), text, StandardCharsets.UTF_8);
        assertThat(Files.size(file)).isLessThan(RelayConfiguration.MAX_FILE_BYTES);
        Result check = run(Map.of(), "-c", file.toString(), "--check");
        assertThat(check.code()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(check.err()).contains("unknown setting(s) [store.key1, store.key10, ").doesNotContain("~");
        assertThat(check.err().split("store\\.key", -1)).as("every key named as written").hasSize(50_001);
    }

    /** A valid configuration of each store, without connecting, and one setting it replaces. */
    private static final Map<String, List<String>> VALID = Map.of(
            "jdbc", List.of("store.url=jdbc:postgresql://127.0.0.1:5432/test", "store.table.prefix=app_"),
            "mongodb", List.of("store.connection.string=mongodb://127.0.0.1:27017/shop", "store.collection.prefix=app_"),
            "dynamodb", List.of("store.endpoint=http://127.0.0.1:8000", "store.region=us-east-1",
                    "store.access.key.id=test", "store.secret.access.key=test"));

    /**
     * One bad value of a store's identifier or connection setting, or of a notification setting,
     * and the key the message must name.
     */
    record Bad(String store, String setting, String named) {
    }

    /** Every identifier setting of every store, and the notification settings, with bad values. */
    private static List<Bad> badSettings() {
        return List.of(
                new Bad("jdbc", "store.table.prefix=abc ", "store.table.prefix"),
                new Bad("jdbc", "store.table.prefix=", "store.table.prefix"),
                new Bad("jdbc", "store.table.prefix=abc\\u0000", "store.table.prefix"),
                new Bad("jdbc", "store.table.prefix=1abc", "store.table.prefix"),
                new Bad("jdbc", "store.table.prefix=ab-c", "store.table.prefix"),
                new Bad("jdbc", "store.schema=x;drop", "store.schema"),
                new Bad("jdbc", "store.url=jdbc:postgresql://127.0.0.1:notaport/test", "store.url"),
                new Bad("mongodb", "store.database=a$b", "store.database"),
                new Bad("mongodb", "store.database=" + "d".repeat(64), "store.database"),
                new Bad("mongodb", "store.connection.string=mongodb://127.0.0.1:27017/" + "d".repeat(64),
                        "store.connection.string"),
                new Bad("mongodb", "store.connection.string=mongodb://127.0.0.1:27017/a$b", "store.connection.string"),
                new Bad("mongodb", "store.connection.string=mongodb://u:pw@127.0.0.1:notaport/db",
                        "store.connection.string"),
                new Bad("mongodb", "store.collection.prefix=", "store.collection.prefix"),
                new Bad("mongodb", "store.collection.prefix=system.x", "store.collection.prefix"),
                new Bad("mongodb", "store.collection.prefix=a b", "store.collection.prefix"),
                new Bad("dynamodb", "store.messages.table=ab", "store.messages.table"),
                new Bad("dynamodb", "store.messages.table=orders/outbox", "store.messages.table"),
                new Bad("dynamodb", "store.messages.table=" + "t".repeat(256), "store.messages.table"),
                new Bad("dynamodb", "store.coordination.table=a b", "store.coordination.table"),
                new Bad("dynamodb", "store.coordination.table=outbox_messages", "store.coordination.table"),
                new Bad("dynamodb", "store.endpoint=ftp://127.0.0.1", "store.endpoint"),
                new Bad("dynamodb", "store.retry.mode=eager", "store.retry.mode"),
                new Bad("jdbc", "notify.transport=redis\nnotify.redis.uri=notredis://x", "notify.redis"),
                new Bad("jdbc", "notify.transport=redis\nnotify.redis.channel=\\u0020", "notify.redis"),
                new Bad("jdbc", "notify.transport=redis\nnotify.redis.command.timeout.ms=0", "notify.redis"),
                new Bad("jdbc", "notify.transport=postgres\nnotify.postgres.channel=orders-outbox", "notify.postgres"),
                new Bad("mongodb", "notify.transport=postgres\nnotify.postgres.url=jdbc:mysql://h/db",
                        "notify.postgres"),
                new Bad("mongodb", "notify.transport=postgres\nnotify.postgres.url=jdbc:postgresql://h:notaport/db",
                        "notify.postgres"),
                new Bad("mongodb", "notify.transport=postgres\nnotify.postgres.url=jdbc:postgresql://u:pw@h/db",
                        "notify.postgres"),
                new Bad("jdbc", "notify.transport=kafka", "notify.transport"),
                new Bad("jdbc", "store.url=jdbc:postgresql://127.0.0.1:5432/test?sslmode=bogus", "store.url"),
                new Bad("jdbc", "store.url=jdbc:postgresql://127.0.0.1:5432/test?socketFactory=com.example.NoSuch",
                        "store.url"),
                new Bad("jdbc", "store.url=jdbc:h2:relative_outbox_file", "store.url"),
                new Bad("dynamodb", "store.endpoint=\nstore.region=not a region", "store.region"),
                new Bad("jdbc", "notify.transport=redis\nnotify.redis.uri=redis://:pw@127.0.0.1:notaport",
                        "notify.redis"),
                new Bad("mongodb", "notify.transport=postgres\nnotify.postgres.url=jdbc:postgresql://h/db?sslmode=bogus",
                        "notify.postgres"),
                new Bad("jdbc", "notify.transport=redis\nnotify.redis.channel=orders ", "notify.redis.channel"),
                new Bad("jdbc", "notify.transport=redis \nnotify.redis.channel=orders", "notify.transport"),
                new Bad("jdbc", "relay.id=relay-1 ", "relay.id"),
                new Bad("jdbc", "relay.message.id.header=x-id\\u0000", "relay.message.id.header"));
    }

    @Test
    void checkRefusesWhatAStartRefusesWithTheSameMessageAndExitCode() throws IOException {
        org.assertj.core.api.SoftAssertions soft = new org.assertj.core.api.SoftAssertions();
        for (Bad bad : badSettings()) {
            List<String> keys = bad.setting().lines().map(l -> l.substring(0, l.indexOf('=') + 1)).toList();
            List<String> lines = new java.util.ArrayList<>(List.of("store=" + bad.store(),
                    "kafka.bootstrap.servers=k:9092"));
            VALID.get(bad.store()).stream().filter(l -> keys.stream().noneMatch(l::startsWith)).forEach(lines::add);
            lines.add(bad.setting());
            Path file = Files.writeString(dir.resolve("bad.properties"), String.join("\n", lines),
                    StandardCharsets.UTF_8);
            Result check = run(Map.of(), "-c", file.toString(), "--check");
            soft.assertThat(check.code()).as("%s: %s", bad, check.out()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
            if (check.code() != StandaloneRelay.EXIT_MISCONFIGURATION) {
                continue; // a start would try to connect
            }
            Result start = run(Map.of(), "-c", file.toString());
            soft.assertThat(start.code()).as("%s", bad).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
            soft.assertThat(check.err()).as("%s", bad).isEqualTo(start.err()).contains("invalid configuration",
                    bad.named()).doesNotContain(":pw@");
        }
        soft.assertAll();
    }

    /** A UTF-8 byte order mark, as Windows editors write it, is not part of the first key. */
    @Test
    void aFileStartingWithAByteOrderMarkIsRead() throws IOException {
        Path file = dir.resolve("bom.properties");
        Files.write(file, ("\uFEFFstore=jdbc\nstore.url=jdbc:postgresql://127.0.0.1:5432/test\n"
                + "kafka.bootstrap.servers=k:9092\n").getBytes(StandardCharsets.UTF_8));
        Result check = run(Map.of(), "-c", file.toString(), "--check");
        assertThat(check.code()).as(check.err()).isZero();
    }

    /** A huge refused value is shown abbreviated with its length: the ERROR line stays short. */
    @Test
    void aHugeRefusedValueIsShownAbbreviatedWithItsLength() throws IOException {
        Path file = Files.writeString(dir.resolve("huge.properties"), "store=jdbc\n"
                + "store.url=jdbc:postgresql://127.0.0.1:5432/test\nkafka.bootstrap.servers=k:9092\n"
                + "store.table.prefix=" + "a".repeat(900_000) + "\n", StandardCharsets.UTF_8);
        Result check = run(Map.of(), "-c", file.toString(), "--check");
        assertThat(check.code()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(check.err()).contains("store.table.prefix", "...(900000 characters)");
        assertThat(check.err().length()).isLessThan(2_000);
    }

    /** The store's name is taken as written too: {@code store=jdbc } is refused, not trimmed. */
    @Test
    void aStoreNameWithWhitespaceIsRefusedNamingTheVariable() {
        Result check = run(Map.of("OUTBOX_STORE", "jdbc ", "OUTBOX_STORE_URL", "jdbc:postgresql://127.0.0.1:5432/test",
                "OUTBOX_KAFKA_BOOTSTRAP_SERVERS", "k:9092"), "--check");
        assertThat(check.code()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(check.err()).contains("store='jdbc ' starts or ends with whitespace", "OUTBOX_STORE");
    }

    @Test
    void theValidConfigurationsOfTheParityTestPassTheCheck() throws IOException {
        for (Map.Entry<String, List<String>> store : VALID.entrySet()) {
            Path file = Files.writeString(dir.resolve(store.getKey() + ".properties"), String.join("\n",
                    "store=" + store.getKey(), "kafka.bootstrap.servers=k:9092", String.join("\n", store.getValue())),
                    StandardCharsets.UTF_8);
            Result check = run(Map.of(), "-c", file.toString(), "--check");
            assertThat(check.code()).as("%s: %s", store.getKey(), check.err()).isZero();
        }
    }

    @Test
    void printConfigShowsTheEffectiveConfigurationWithSecretsHidden() {
        Result printed = run(Map.of("OUTBOX_STORE", "scripted", "OUTBOX_STORE_NAME", "x",
                "OUTBOX_STORE_PASSWORD", "pw-5521", "OUTBOX_KAFKA_BOOTSTRAP_SERVERS", "k:9092",
                "OUTBOX_KAFKA_SASL_JAAS_CONFIG", "x required password=\"jaas-7781\";"), "--print-config");
        assertThat(printed.code()).isZero();
        assertThat(printed.out()).doesNotContain("pw-5521", "jaas-7781")
                .contains("store=scripted\n", "store.password=[hidden]\n", "kafka.sasl.jaas.config=[hidden]\n",
                        "kafka.enable.idempotence=true\n", "relay.bucket.count=8\n",
                        "store.password <- OUTBOX_STORE_PASSWORD");
    }

    @Test
    void printConfigHidesCredentialBearingSettingsByTheWiderRule() {
        Result printed = run(Map.of("OUTBOX_STORE", "memory", "OUTBOX_KAFKA_BOOTSTRAP_SERVERS", "k:9092",
                "OUTBOX_KAFKA_BASIC_AUTH_USER_INFO", "sr-user:sr-pw-4410", "OUTBOX_KAFKA_BEARER_AUTH_TOKEN",
                "tok-4411", "OUTBOX_KAFKA_API_KEY", "AKIA4412"), "--print-config");
        assertThat(printed.code()).isZero();
        assertThat(printed.out()).doesNotContain("sr-pw-4410", "sr-user", "tok-4411", "AKIA4412")
                .contains("kafka.basic.auth.user.info=[hidden]\n", "kafka.bearer.auth.token=[hidden]\n",
                        "kafka.api.key=[hidden]\n", "kafka.partitioner.ignore.keys=false\n",
                        "kafka.key.serializer=org.apache.kafka.common.serialization.ByteArraySerializer\n");
    }
}
