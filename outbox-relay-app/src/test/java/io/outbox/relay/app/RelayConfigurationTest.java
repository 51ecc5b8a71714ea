package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.RelayOptions;
import io.outbox.relay.internal.Redactor;
import io.outbox.spi.OutboxMisconfigurationException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
        assertThatThrownBy(() -> RelayConfiguration.read(null, Map.of("OUTBOX_STORE", "memory",
                "OUTBOX_RELAY_BUCKET_CONT", "8")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("[relay.bucket.cont (environment variable OUTBOX_RELAY_BUCKET_CONT)]");
    }

    @Test
    void h1_httpSettingsAreOffByDefaultAndReadFromFileAndEnvironment() throws IOException {
        RelayConfiguration off = RelayConfiguration.read(null, Map.of("OUTBOX_STORE", "memory",
                "OUTBOX_KAFKA_BOOTSTRAP_SERVERS", "k:9092"));
        assertThat(off.httpSettings().enabled()).isFalse();
        assertThat(off.httpSettings().adminToken()).isNull();
        Path file = file("store=memory", "kafka.bootstrap.servers=k:9092", "http.port=8081",
                "http.bind.address=127.0.0.1");
        RelayConfiguration on = RelayConfiguration.read(file, Map.of("OUTBOX_HTTP_ADMIN_TOKEN", "t0ken-xyz"));
        assertThat(on.httpSettings().port()).isEqualTo(8081);
        assertThat(on.httpSettings().bindAddress()).isEqualTo("127.0.0.1");
        assertThat(on.httpSettings().adminToken().value()).isEqualTo("t0ken-xyz");
        assertThat(on.redactor().redact("token t0ken-xyz")).doesNotContain("t0ken-xyz");
        assertThat(on.describe(on.resolve())).contains("http.port=8081").doesNotContain("t0ken-xyz");
    }

    @Test
    void h1_badHttpSettingsAreRefusedNamingTheKey() throws IOException {
        assertThatThrownBy(() -> RelayConfiguration.read(file("store=memory", "kafka.bootstrap.servers=k:9092",
                "http.port=70000"), Map.of()))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("http.port").hasMessageContaining("70000");
        assertThatThrownBy(() -> RelayConfiguration.read(file("store=memory", "kafka.bootstrap.servers=k:9092",
                "http.prot=8080"), Map.of()))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("http.prot");
    }

    @Test
    void refusesUnknownStoreSettingsNamingThem() throws IOException {
        Path file = file("store=memory", "store.max.payload.byte=10", "kafka.bootstrap.servers=k:9092");
        RelayConfiguration configuration = RelayConfiguration.read(file, Map.of());
        assertThatThrownBy(configuration::resolve)
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("store settings").hasMessageContaining("max.payload.byte");
        RelayConfiguration fromEnvironment = RelayConfiguration.read(null, Map.of("OUTBOX_STORE", "scripted",
                "OUTBOX_STORE_NAME", "n", "OUTBOX_STORE_FAILURE", "1", "OUTBOX_KAFKA_BOOTSTRAP_SERVERS", "k:9092"));
        assertThatThrownBy(fromEnvironment::resolve)
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("[store.failure]")
                .hasMessageContaining("; store.failure came from environment variable OUTBOX_STORE_FAILURE");
    }

    @Test
    void passesUnknownKafkaSettingsThroughAndListsThem() throws IOException {
        Path file = file("store=memory", "kafka.bootstrap.servers=k:9092", "kafka.interceptor.custom.key=1");
        RelayConfiguration.Resolved resolved = RelayConfiguration.read(file, Map.of()).resolve();
        assertThat(resolved.producerConfig()).containsEntry("interceptor.custom.key", "1");
        assertThat(resolved.unknownKafkaKeys()).containsExactly("interceptor.custom.key");
    }

    @Test
    void k5_kafkaTransactionsTurnOnTheTransactionalModeAndAreNotUnknownKeys() throws IOException {
        Path file = file("store=memory", "kafka.bootstrap.servers=k:9092", "kafka.transactions=true",
                "kafka.transactional.id.prefix=orders-outbox");
        RelayConfiguration.Resolved resolved = RelayConfiguration.read(file, Map.of()).resolve();
        assertThat(resolved.unknownKafkaKeys()).isEmpty();
        assertThat(resolved.producerConfig()).containsEntry("transactional.id", "orders-outbox-<bucket>");
        Path noPrefix = file("store=memory", "kafka.bootstrap.servers=k:9092", "kafka.transactions=true");
        assertThatThrownBy(() -> RelayConfiguration.read(noPrefix, Map.of()).resolve())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("transactional.id.prefix is required");
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
    void credentialBearingSettingsNoDefinitionDeclaresAreSecretByTheWiderRule() throws IOException {
        Path file = file(
                "store=scripted",
                "store.name=s",
                "kafka.bootstrap.servers=k:9092",
                "kafka.basic.auth.user.info=sr-user:sr-pw-1",
                "kafka.bearer.auth.token=bearer-tok-2",
                "kafka.api.key=api-key-3",
                "kafka.bearer.auth.cache.expiry.buffer.seconds=300",
                "kafka.auto.register.schemas=false");
        RelayConfiguration configuration = RelayConfiguration.read(file, Map.of());
        String description = configuration.describe(configuration.resolve());
        assertThat(description).doesNotContain("sr-pw-1", "bearer-tok-2", "api-key-3")
                .contains("kafka.basic.auth.user.info=[hidden]\n", "kafka.bearer.auth.token=[hidden]\n",
                        "kafka.api.key=[hidden]\n", "kafka.bearer.auth.cache.expiry.buffer.seconds=[hidden]\n",
                        "kafka.auto.register.schemas=false\n",
                        "kafka.key.serializer=org.apache.kafka.common.serialization.ByteArraySerializer\n");
        Redactor redactor = configuration.redactor();
        assertThat(redactor.redact("sent sr-user:sr-pw-1, bearer-tok-2 and api-key-3"))
                .isEqualTo("sent [hidden], [hidden] and [hidden]");
        assertThat(redactor.redact("backoff.ms=300 enabled=false")).as("a number or flag is hidden where its setting "
                + "is shown, not wherever it occurs").isEqualTo("backoff.ms=300 enabled=false");
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

    @Test
    void k2_theMessageIdHeaderIsAPublisherOptionWrittenAsRelayMessageIdHeader() throws IOException {
        Path file = file("store=memory", "kafka.bootstrap.servers=k:9092", "relay.message.id.header=trace-id");
        RelayConfiguration.Resolved resolved = RelayConfiguration.read(file, Map.of()).resolve();
        assertThat(resolved.messageIdHeader()).isEqualTo("trace-id");
        assertThat(resolved.options().toProperties()).doesNotContainKey("message.id.header");
        Path defaults = file("store=memory", "kafka.bootstrap.servers=k:9092");
        assertThat(RelayConfiguration.read(defaults, Map.of()).resolve().messageIdHeader())
                .isEqualTo("x-outbox-message-id");
        Path blank = file("store=memory", "kafka.bootstrap.servers=k:9092", "relay.message.id.header= ");
        assertThatThrownBy(() -> RelayConfiguration.read(blank, Map.of()).resolve())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("relay.message.id.header").hasMessageContaining("must not be blank");
    }

    @Test
    void o2_theTimeInOutboxSpanIsAPublisherOptionOffByDefaultAndShownInTheConfiguration() throws IOException {
        Path defaults = file("store=memory", "kafka.bootstrap.servers=k:9092");
        RelayConfiguration configuration = RelayConfiguration.read(defaults, Map.of());
        RelayConfiguration.Resolved off = configuration.resolve();
        assertThat(off.tracingTimeInOutboxSpan()).isFalse();
        assertThat(configuration.describe(off)).contains("relay.tracing.time.in.outbox.span=false\n");
        Path on = file("store=memory", "kafka.bootstrap.servers=k:9092", "relay.tracing.time.in.outbox.span=true");
        assertThat(RelayConfiguration.read(on, Map.of()).resolve().tracingTimeInOutboxSpan()).isTrue();
        assertThat(RelayConfiguration.read(defaults, Map.of("OUTBOX_RELAY_TRACING_TIME_IN_OUTBOX_SPAN", "true"))
                .resolve().tracingTimeInOutboxSpan()).as("from the environment").isTrue();
        Path bad = file("store=memory", "kafka.bootstrap.servers=k:9092", "relay.tracing.time.in.outbox.span=yes");
        assertThatThrownBy(() -> RelayConfiguration.read(bad, Map.of()).resolve())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("relay.tracing.time.in.outbox.span").hasMessageContaining("yes");
    }

    @Test
    void R10_aRelayOptionErrorNamesTheKeyAsWrittenTheVariableAndTheValue() throws IOException {
        Path file = file("store=memory", "kafka.bootstrap.servers=k:9092", "relay.bucket.count=0");
        assertThatThrownBy(() -> RelayConfiguration.read(file, Map.of()).resolve())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("relay option relay.bucket.count must be in [1, 65536] but was 0")
                .hasMessageNotContaining("environment variable");
        assertThatThrownBy(() -> RelayConfiguration.read(file, Map.of("OUTBOX_RELAY_BUCKET_COUNT", "0")).resolve())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("relay option relay.bucket.count must be in [1, 65536] but was 0")
                .hasMessageEndingWith("; relay.bucket.count came from environment variable OUTBOX_RELAY_BUCKET_COUNT");
        Path tooMany = file("store=memory", "kafka.bootstrap.servers=k:9092", "relay.bucket.count=99999999");
        assertThatThrownBy(() -> RelayConfiguration.read(tooMany, Map.of()).resolve())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("relay.bucket.count")
                .hasMessageContaining("99999999");
        Path notANumber = file("store=memory", "kafka.bootstrap.servers=k:9092", "relay.error.backoff.ms=soon");
        assertThatThrownBy(() -> RelayConfiguration.read(notANumber, Map.of()).resolve())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("soon")
                .hasMessageContaining("relay.error.backoff.ms")
                .hasMessageNotContaining("relay.error.backoff.max.ms");
        Path pair = file("store=memory", "kafka.bootstrap.servers=k:9092", "relay.lease.duration.ms=100");
        assertThatThrownBy(() -> RelayConfiguration.read(pair, Map.of("OUTBOX_RELAY_LEASE_RENEW_INTERVAL_MS", "200"))
                .resolve())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageEndingWith("relay.lease.renew.interval.ms (200) must be less than relay.lease.duration.ms "
                        + "(100); relay.lease.renew.interval.ms came from environment variable "
                        + "OUTBOX_RELAY_LEASE_RENEW_INTERVAL_MS");
    }

    /** A cross-field rule names two settings: each stays next to its own value, the variables come last. */
    @Test
    void R10_aCrossFieldErrorKeepsEachValueWithItsKeyAndNamesTheVariablesAtTheEnd() throws IOException {
        Path file = file("store=memory", "kafka.bootstrap.servers=k:9092");
        assertThatThrownBy(() -> RelayConfiguration.read(file, Map.of("OUTBOX_RELAY_LEASE_DURATION_MS", "5000"))
                .resolve())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessage("relay options: relay.lease.renew.interval.ms (10000) must be less than "
                        + "relay.lease.duration.ms (5000); relay.lease.duration.ms came from environment variable "
                        + "OUTBOX_RELAY_LEASE_DURATION_MS");
        assertThatThrownBy(() -> RelayConfiguration.read(file, Map.of("OUTBOX_RELAY_ERROR_BACKOFF_MS", "60000"))
                .resolve())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessage("relay options: relay.error.backoff.max.ms (30000) must be at least "
                        + "relay.error.backoff.ms (60000); relay.error.backoff.ms came from environment variable "
                        + "OUTBOX_RELAY_ERROR_BACKOFF_MS");
        Path budget = file("store=memory", "kafka.bootstrap.servers=k:9092", "relay.max.publish.duration.ms=25000");
        assertThatThrownBy(() -> RelayConfiguration.read(budget, Map.of("OUTBOX_RELAY_LEASE_RENEW_INTERVAL_MS",
                "6000", "OUTBOX_RELAY_LEASE_DURATION_MS", "30000")).resolve())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessage("relay options: relay.max.publish.duration.ms (25000) plus "
                        + "relay.lease.renew.interval.ms (6000) must be less than relay.lease.duration.ms (30000), so "
                        + "that a publish that starts on a fresh lease ends before the lease does; "
                        + "relay.lease.renew.interval.ms came from environment variable "
                        + "OUTBOX_RELAY_LEASE_RENEW_INTERVAL_MS; relay.lease.duration.ms came from environment "
                        + "variable OUTBOX_RELAY_LEASE_DURATION_MS");
    }

    @Test
    void aStoreSettingErrorNamesTheKeyAsWritten() throws IOException {
        Path file = file("store=scripted", "store.name=x", "kafka.bootstrap.servers=k:9092");
        assertThatThrownBy(() -> RelayConfiguration.read(file, Map.of("OUTBOX_STORE_FAILURES", "-1")).resolve())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("Invalid value -1 for configuration store.failures: ")
                .hasMessageEndingWith("; store.failures came from environment variable OUTBOX_STORE_FAILURES");
        RelayConfiguration configuration = RelayConfiguration.read(file, Map.of("OUTBOX_STORE_NAME", "y"));
        assertThat(configuration.storeKeysAsWritten("set failures=1 or name=z in the current schema; "
                + "Invalid value q for configuration name: no"))
                .isEqualTo("set store.failures=1 or store.name=z in the current schema; Invalid value q for "
                        + "configuration store.name: no; store.name came from environment variable OUTBOX_STORE_NAME");
    }

    @Test
    void anUnknownStoreListsTheStoresFoundAndTheJarsThatAddStores() throws IOException {
        assertThatThrownBy(() -> RelayConfiguration.read(file("store=nosuch"), Map.of()))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageStartingWith("store=nosuch: no outbox store named 'nosuch'")
                .hasMessageContaining("memory").hasMessageContaining("scripted")
                .hasMessageContaining("outbox-store-jdbc").hasMessageContaining("outbox-store-mongodb")
                .hasMessageContaining("outbox-store-dynamodb");
        assertThatThrownBy(() -> RelayConfiguration.read(null, Map.of("OUTBOX_STORE", "nosuch")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageStartingWith("store=nosuch (environment variable OUTBOX_STORE): ");
    }

    @Test
    void K1_aKafkaValueOfTheWrongTypeIsAnErrorNotSilentlyReplaced() throws IOException {
        Path file = file("store=memory", "kafka.bootstrap.servers=k:9092",
                "kafka.max.in.flight.requests.per.connection=abc");
        assertThatThrownBy(() -> RelayConfiguration.read(file, Map.of()).resolve())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("kafka.max.in.flight.requests.per.connection")
                .hasMessageContaining("abc");
        Path env = file("store=memory", "kafka.bootstrap.servers=k:9092");
        assertThatThrownBy(() -> RelayConfiguration.read(env, Map.of("OUTBOX_KAFKA_ENABLE_IDEMPOTENCE", "maybe"))
                .resolve())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("for configuration kafka.enable.idempotence: ")
                .hasMessageEndingWith("; kafka.enable.idempotence came from environment variable "
                        + "OUTBOX_KAFKA_ENABLE_IDEMPOTENCE")
                .hasMessageContaining("maybe");
        Path acks = file("store=memory", "kafka.bootstrap.servers=k:9092", "kafka.acks=most");
        assertThatThrownBy(() -> RelayConfiguration.read(acks, Map.of()).resolve())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("kafka.acks").hasMessageContaining("most");
        Path replaced = file("store=memory", "kafka.bootstrap.servers=k:9092",
                "kafka.max.in.flight.requests.per.connection=9", "kafka.acks=1");
        assertThat(RelayConfiguration.read(replaced, Map.of()).resolve().producerConfig())
                .as("a valid value that K1 forbids is still replaced, and logged")
                .containsEntry("max.in.flight.requests.per.connection", "5").containsEntry("acks", "all");
    }

    @Test
    void printConfigSaysWhereEveryValueCameFrom() throws IOException {
        Path file = file("store=scripted", "store.name=n", "kafka.bootstrap.servers=k:9092", "kafka.acks=1",
                "kafka.linger.ms=5");
        RelayConfiguration configuration = RelayConfiguration.read(file, Map.of("OUTBOX_RELAY_BUCKET_COUNT", "16"));
        String description = configuration.describe(configuration.resolve());
        assertThat(description).contains(
                "#   relay.bucket.count <- OUTBOX_RELAY_BUCKET_COUNT\n",
                "#   relay.batch.size <- default\n",
                "#   relay.id <- generated for this run\n",
                "#   store <- file " + file + "\n",
                "#   store.name <- file " + file + "\n",
                "#   store.failures <- default\n",
                "#   kafka.linger.ms <- file " + file + "\n",
                "#   kafka.acks <- rule K1, replacing the value of file " + file + "\n",
                "#   kafka.enable.idempotence <- rule K1\n",
                "#   kafka.client.id <- generated: outbox-relay-<relay.id>\n");
        for (String line : description.split("\n")) {
            Matcher setting = Pattern.compile("^#?([a-z][a-z0-9._-]*)=").matcher(line);
            if (setting.find()) {
                assertThat(description).as("source of %s", setting.group(1))
                        .contains("#   " + setting.group(1) + " <- ");
            }
        }
    }
}
