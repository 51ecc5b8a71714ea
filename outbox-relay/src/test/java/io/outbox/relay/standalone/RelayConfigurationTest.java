package io.outbox.relay.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.RelayOptions;
import io.outbox.spi.OutboxMisconfigurationException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reading the standalone relay's configuration: prefixes, environment overrides, unknown keys, secrets. */
class RelayConfigurationTest {

    @TempDir
    Path dir;

    private Path file(String... lines) throws IOException {
        Path file = dir.resolve("relay.properties");
        Files.write(file, java.util.List.of(lines), StandardCharsets.UTF_8);
        return file;
    }

    @Test
    void sortsSettingsByPrefixAndTheEnvironmentWinsOverTheFile() throws IOException {
        Path file = file(
                "store=scripted",
                "store.name=from-file",
                "store.failures=1",
                "kafka.bootstrap.servers=file:9092",
                "kafka.linger.ms=5",
                "relay.id=relay-a",
                "relay.bucket.count=4",
                "relay.poll.interval.ms=250");
        RelayConfiguration configuration = RelayConfiguration.read(file, Map.of(
                "OUTBOX_STORE_NAME", "from-env",
                "OUTBOX_KAFKA_BOOTSTRAP_SERVERS", "env:9092",
                "OUTBOX_RELAY_BUCKET_COUNT", "16"));
        assertThat(configuration.provider().name()).isEqualTo("scripted");
        assertThat(configuration.storeSettings()).containsOnly(Map.entry("name", "from-env"),
                Map.entry("failures", "1"));
        RelayConfiguration.Resolved resolved = configuration.resolve();
        RelayOptions options = resolved.options();
        assertThat(options.relayId()).isEqualTo("relay-a");
        assertThat(options.bucketCount()).isEqualTo(16);
        assertThat(options.pollInterval()).isEqualTo(Duration.ofMillis(250));
        assertThat(resolved.producerConfig())
                .containsEntry("bootstrap.servers", "env:9092")
                .containsEntry("linger.ms", "5")
                .containsEntry("client.id", "outbox-relay-relay-a")
                .containsEntry("acks", "all");
        assertThat(configuration.describe(resolved))
                .contains("store.name=from-env\n", "relay.bucket.count=16\n", "kafka.linger.ms=5\n",
                        "#   store.name <- OUTBOX_STORE_NAME\n");
    }

    @Test
    void theEnvironmentAloneIsAConfiguration() {
        RelayConfiguration configuration = RelayConfiguration.read(null, Map.of(
                "OUTBOX_STORE", "memory",
                "OUTBOX_KAFKA_BOOTSTRAP_SERVERS", "k:9092",
                "OUTBOX_RELAY_ID", "env-relay"));
        assertThat(configuration.resolve().options().relayId()).isEqualTo("env-relay");
    }

    @Test
    void refusesUnknownTopLevelAndRelayKeysNamingThem() throws IOException {
        Path topLevel = file("store=memory", "kafka.bootstrap.servers=k:9092", "bucket.count=8", "stor.url=x");
        assertThatThrownBy(() -> RelayConfiguration.read(topLevel, Map.of()))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("[bucket.count, stor.url]");
        Path relay = file("store=memory", "kafka.bootstrap.servers=k:9092", "relay.bucket.cont=8",
                "relay.relay.id=x");
        assertThatThrownBy(() -> RelayConfiguration.read(relay, Map.of()))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("[relay.bucket.cont, relay.relay.id]")
                .hasMessageContaining("relay.bucket.count").hasMessageContaining("relay.id");
    }

    @Test
    void refusesUnknownStoreSettingsNamingThem() throws IOException {
        Path file = file("store=memory", "store.max.payload.byte=10", "kafka.bootstrap.servers=k:9092");
        RelayConfiguration configuration = RelayConfiguration.read(file, Map.of());
        assertThatThrownBy(configuration::resolve)
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("store settings").hasMessageContaining("max.payload.byte");
    }

    @Test
    void passesUnknownKafkaSettingsThroughAndListsThem() throws IOException {
        Path file = file("store=memory", "kafka.bootstrap.servers=k:9092", "kafka.interceptor.custom.key=1");
        RelayConfiguration.Resolved resolved = RelayConfiguration.read(file, Map.of()).resolve();
        assertThat(resolved.producerConfig()).containsEntry("interceptor.custom.key", "1");
        assertThat(resolved.unknownKafkaKeys()).containsExactly("interceptor.custom.key");
    }

    @Test
    void refusesMissingOrInvalidKafkaSettings() throws IOException {
        Path missing = file("store=memory");
        assertThatThrownBy(() -> RelayConfiguration.read(missing, Map.of()).resolve())
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("bootstrap.servers");
        Path invalid = file("store=memory", "kafka.bootstrap.servers=k:9092", "kafka.linger.ms=soon");
        assertThatThrownBy(() -> RelayConfiguration.read(invalid, Map.of()).resolve())
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("linger.ms");
    }

    @Test
    void refusesAnInvalidRelayOptionNamingIt() throws IOException {
        Path file = file("store=memory", "kafka.bootstrap.servers=k:9092", "relay.lease.duration.ms=100",
                "relay.lease.renew.interval.ms=200");
        assertThatThrownBy(() -> RelayConfiguration.read(file, Map.of()).resolve())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("lease.renew.interval.ms").hasMessageContaining("200");
    }

    @Test
    void readsTheStoreConcurrencyFromTheFileOrTheEnvironment() throws IOException {
        Path file = file("store=memory", "kafka.bootstrap.servers=k:9092", "relay.store.concurrency=6");
        assertThat(RelayConfiguration.read(file, Map.of()).resolve().options().storeConcurrency()).isEqualTo(6);
        assertThat(RelayConfiguration.read(file, Map.of("OUTBOX_RELAY_STORE_CONCURRENCY", "2")).resolve().options()
                .storeConcurrency()).isEqualTo(2);
        Path unset = file("store=memory", "kafka.bootstrap.servers=k:9092");
        assertThat(RelayConfiguration.read(unset, Map.of()).resolve().options().storeConcurrency())
                .isEqualTo(RelayOptions.DEFAULT_STORE_CONCURRENCY);
    }

    @Test
    void refusesAStoreConcurrencyThatIsNotAPositiveNumberNamingIt() throws IOException {
        for (String bad : new String[] {"0", "-2", "many", "257"}) {
            Path file = file("store=memory", "kafka.bootstrap.servers=k:9092", "relay.store.concurrency=" + bad);
            assertThatThrownBy(() -> RelayConfiguration.read(file, Map.of()).resolve())
                    .as(bad).isInstanceOf(OutboxMisconfigurationException.class)
                    .hasMessageContaining("store.concurrency").hasMessageContaining(bad);
        }
    }

    @Test
    void needsAStoreThatIsOnTheClassPath() throws IOException {
        assertThatThrownBy(() -> RelayConfiguration.read(file("kafka.bootstrap.servers=k:9092"), Map.of()))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("no store selected").hasMessageContaining("OUTBOX_STORE")
                .hasMessageContaining("memory").hasMessageContaining("scripted");
        assertThatThrownBy(() -> RelayConfiguration.read(null, Map.of("OUTBOX_STORE", "cassandra")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("cassandra").hasMessageContaining("memory");
    }

    @Test
    void aMissingFileIsAConfigurationError() {
        assertThatThrownBy(() -> RelayConfiguration.read(dir.resolve("absent.properties"), Map.of()))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("absent.properties");
    }

    @Test
    void findsEverySecretAndTheDescriptionShowsNone() throws IOException {
        Path file = file(
                "store=scripted",
                "store.name=s",
                "store.password=store-pw-1",
                "kafka.bootstrap.servers=k:9092",
                "kafka.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                        + "username=\"u\" password=\"jaas-pw-2\";",
                "kafka.ssl.truststore.password=trust-pw-3",
                "kafka.my.custom.secret=custom-pw-4",
                "kafka.sasl.oauthbearer.token.endpoint.url=https://client:url-pw-5@idp.example/token",
                "kafka.acks=1");
        RelayConfiguration configuration = RelayConfiguration.read(file, Map.of(
                "OUTBOX_KAFKA_SSL_KEY_PASSWORD", "key-pw-6"));
        String description = configuration.describe(configuration.resolve());
        String[] secrets = {"store-pw-1", "jaas-pw-2", "trust-pw-3", "custom-pw-4", "url-pw-5", "key-pw-6"};
        assertThat(description).doesNotContain(secrets)
                .contains("store.password=[hidden]\n", "kafka.sasl.jaas.config=[hidden]\n",
                        "kafka.ssl.truststore.password=[hidden]\n", "kafka.my.custom.secret=[hidden]\n",
                        "kafka.ssl.key.password=[hidden]\n",
                        "kafka.sasl.oauthbearer.token.endpoint.url=https://client:[hidden]@idp.example/token\n",
                        "kafka.acks=all\n", "# kafka.acks=1 was replaced (rule K1)\n");
        Redactor redactor = configuration.redactor();
        for (String secret : secrets) {
            assertThat(redactor.redact("before " + secret + " after")).isEqualTo("before [hidden] after");
        }
    }

    @Test
    void aPasswordDefaultIsHiddenToo() throws IOException {
        RelayConfiguration configuration = RelayConfiguration.read(
                file("store=scripted", "store.name=s", "kafka.bootstrap.servers=k:9092"), Map.of());
        assertThat(configuration.describe(configuration.resolve()))
                .contains("store.password=[hidden]\n").doesNotContain("default-secret");
    }

    @Test
    void aGeneratedRelayIdIsSaidToBeGenerated() throws IOException {
        RelayConfiguration configuration = RelayConfiguration.read(
                file("store=memory", "kafka.bootstrap.servers=k:9092"), Map.of());
        RelayConfiguration.Resolved resolved = configuration.resolve();
        assertThat(configuration.describe(resolved))
                .contains("relay.id=" + resolved.options().relayId() + "\n", "relay.id was not set: generated");
    }
}
