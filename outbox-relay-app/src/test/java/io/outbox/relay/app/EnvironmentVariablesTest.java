package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.RelayOptions;
import io.outbox.spi.OutboxMisconfigurationException;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;

/** The mapping between OUTBOX_* variables and setting keys. */
class EnvironmentVariablesTest {

    @Test
    void theDocumentedExamplesMapBothWays() {
        Map<String, String> examples = Map.of(
                "store", "OUTBOX_STORE",
                "store.url", "OUTBOX_STORE_URL",
                "kafka.bootstrap.servers", "OUTBOX_KAFKA_BOOTSTRAP_SERVERS",
                "relay.bucket.count", "OUTBOX_RELAY_BUCKET_COUNT",
                "relay.id", "OUTBOX_RELAY_ID",
                "kafka.my_setting", "OUTBOX_KAFKA_MY__SETTING",
                "kafka.my-setting", "OUTBOX_KAFKA_MY___SETTING",
                "store.a_b-c.d", "OUTBOX_STORE_A__B___C_D");
        examples.forEach((key, variable) -> {
            assertThat(EnvironmentVariables.variableFor(key)).as(key).isEqualTo(variable);
            assertThat(EnvironmentVariables.keyFor(variable)).as(variable).isEqualTo(key);
        });
    }

    @Test
    void everyRelayOptionAndKafkaProducerSettingHasAVariableThatMapsBack() {
        for (String option : RelayOptions.configDef().names()) {
            String key = RelayConfiguration.relayFileKey(option);
            assertThat(EnvironmentVariables.keyFor(EnvironmentVariables.variableFor(key))).isEqualTo(key);
        }
        for (String setting : ProducerConfig.configNames()) {
            String key = "kafka." + setting;
            assertThat(EnvironmentVariables.keyFor(EnvironmentVariables.variableFor(key))).isEqualTo(key);
        }
    }

    @Test
    void readsOnlyTheStoreKafkaAndRelayGroupsAndListsOtherOutboxVariables() {
        Map<String, String> env = new TreeMap<>(Map.of(
                "OUTBOX_STORE", "jdbc",
                "OUTBOX_STORE_URL", "jdbc:h2:mem:x",
                "OUTBOX_KAFKA_BOOTSTRAP_SERVERS", "k:9092",
                "OUTBOX_RELAY_BATCH_SIZE", "10",
                "OUTBOX_TEST_POSTGRES_URL", "ignored",
                "OUTBOX_STOREFRONT", "ignored too",
                "OUTBOX_LOG_LEVEL", "DEBUG",
                "PATH", "/usr/bin",
                "outbox_store_url", "lower case: not ours"));
        EnvironmentVariables.Found found = EnvironmentVariables.read(env);
        assertThat(found.settings()).containsExactly(
                Map.entry("kafka.bootstrap.servers", "k:9092"),
                Map.entry("relay.batch.size", "10"),
                Map.entry("store", "jdbc"),
                Map.entry("store.url", "jdbc:h2:mem:x"));
        assertThat(found.variables()).containsEntry("store.url", "OUTBOX_STORE_URL");
        assertThat(found.ignored()).containsExactly("OUTBOX_STOREFRONT", "OUTBOX_TEST_POSTGRES_URL");
    }

    @Test
    void anEmptyValueIsKeptAsAnEmptySetting() {
        assertThat(EnvironmentVariables.read(Map.of("OUTBOX_STORE_USER", "")).settings())
                .containsExactly(Map.entry("store.user", ""));
    }

    @Test
    void refusesFourUnderscoresInARowNamingTheVariable() {
        assertThatThrownBy(() -> EnvironmentVariables.read(Map.of("OUTBOX_KAFKA_A____B", "x")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("OUTBOX_KAFKA_A____B").hasMessageContaining("4 underscores");
    }

    @Test
    void refusesAGroupVariableThatNamesNoSetting() {
        for (String variable : new String[] {"OUTBOX_KAFKA_", "OUTBOX_RELAY__X", "OUTBOX_STORE_URL_", "OUTBOX_STORE__"}) {
            assertThatThrownBy(() -> EnvironmentVariables.keyFor(variable)).as(variable)
                    .isInstanceOf(OutboxMisconfigurationException.class)
                    .hasMessageContaining(variable).hasMessageContaining("names no setting");
        }
    }
}
