package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.KafkaOutboxPublisher;
import io.outbox.relay.RelayOptions;
import io.outbox.spi.OutboxStoreProvider;
import io.outbox.spi.OutboxStores;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
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
    void helpListsEverySettingOfEveryStoreOnTheClassPathButNoPasswordDefault() {
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
        assertThat(zero.code()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(zero.err()).contains("configuration file /dev/zero is more than 1048576 bytes")
                .doesNotContain("OutOfMemoryError");
    }

    @Test
    void checkRefusesWhatAStartRefusesWithTheSameMessageAndExitCode() throws IOException {
        for (String bad : List.of("store.table.prefix=abc ", "store.table.prefix=", "store.table.prefix=abc\\u0000",
                "store.url=jdbc:postgresql://127.0.0.1:notaport/test")) {
            String url = bad.startsWith("store.url=") ? bad : "store.url=jdbc:postgresql://127.0.0.1:5432/test";
            String other = bad.startsWith("store.url=") ? "store.table.prefix=app_" : bad;
            Path file = Files.writeString(dir.resolve("jdbc.properties"), String.join("\n", "store=jdbc", url, other,
                    "kafka.bootstrap.servers=k:9092"), StandardCharsets.UTF_8);
            Result check = run(Map.of(), "-c", file.toString(), "--check");
            Result start = run(Map.of(), "-c", file.toString());
            assertThat(check.code()).as(bad).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
            assertThat(start.code()).as(bad).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
            assertThat(check.err()).as(bad).isEqualTo(start.err()).contains("store.");
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
}
