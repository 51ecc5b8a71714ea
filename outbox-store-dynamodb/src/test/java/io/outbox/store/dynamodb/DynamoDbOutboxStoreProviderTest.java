package io.outbox.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStores;
import io.outbox.spi.support.OutboxStoreConfig;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** Provider settings: parsing, refusal of bad ones, and the client they build. No server needed. */
class DynamoDbOutboxStoreProviderTest {

    private static final DynamoDbOutboxStoreProvider PROVIDER = new DynamoDbOutboxStoreProvider();

    private static Map<String, String> settings(String... keyValues) {
        Map<String, String> map = new HashMap<>(Map.of("region", "eu-west-1", "endpoint", "http://127.0.0.1:1",
                "access.key.id", "AKIDEXAMPLE", "secret.access.key", "wJalrXUtnFEMI-secret"));
        for (int i = 0; i < keyValues.length; i += 2) {
            if (keyValues[i + 1] == null) {
                map.remove(keyValues[i]);
            } else {
                map.put(keyValues[i], keyValues[i + 1]);
            }
        }
        return map;
    }

    private static OutboxStoreConfig parse(Map<String, String> settings) {
        return OutboxStoreConfig.parse(DynamoDbOutboxStoreProvider.NAME, PROVIDER.configDef(), settings);
    }

    @Test
    void isFoundByNameThroughServiceLoader() {
        assertThat(OutboxStores.provider("dynamodb")).isInstanceOf(DynamoDbOutboxStoreProvider.class);
    }

    @Test
    void unknownSettingsAreRefusedNamingTheKey() {
        assertThatThrownBy(() -> PROVIDER.create(settings("messages.tabel", "x")))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("messages.tabel");
    }

    @Test
    void theSecretNeverShowsInTheParsedSettings() {
        assertThat(parse(settings()).toString()).doesNotContain("wJalrXUtnFEMI-secret").contains("[hidden]");
    }

    @Test
    void anAccessKeyNeedsItsSecretAndViceVersa() {
        assertThatThrownBy(() -> PROVIDER.create(settings("secret.access.key", null)))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("secret.access.key");
        assertThatThrownBy(() -> PROVIDER.create(settings("access.key.id", null)))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("access.key.id");
    }

    @Test
    void badValuesAreRefusedNamingTheSetting() {
        assertThatThrownBy(() -> PROVIDER.create(settings("endpoint", "not a url")))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("endpoint");
        assertThatThrownBy(() -> PROVIDER.create(settings("retry.mode", "legacy")))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("retry.mode");
        assertThatThrownBy(() -> PROVIDER.create(settings("retry.max.attempts", "0")))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("retry.max.attempts");
        assertThatThrownBy(() -> PROVIDER.create(settings("messages.table", "x")))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("messages.table");
    }

    @Test
    void validateRefusesTheTableNamesACreateRefusesWithTheSameMessage() {
        for (String[] bad : new String[][] {{"messages.table", "x"}, {"messages.table", "orders/outbox"},
                {"coordination.table", "t".repeat(256)}, {"coordination.table", "outbox_messages"}}) {
            Map<String, String> config = settings(bad[0], bad[1]);
            Throwable checked = catchThrowable(() -> PROVIDER.validate(config));
            assertThat(checked).as(bad[0] + "=" + bad[1]).isInstanceOf(OutboxMisconfigurationException.class)
                    .hasMessageContaining(bad[0]);
            assertThatThrownBy(() -> PROVIDER.create(config)).hasMessage(checked.getMessage());
        }
    }

    /** Against a closed port (a retryable connection error), the client makes exactly the configured attempts. */
    @Test
    void theClientMakesTheConfiguredNumberOfAttempts() {
        for (String mode : List.of("standard", "ADAPTIVE")) {
            AtomicInteger attempts = new AtomicInteger();
            ExecutionInterceptor counter = new ExecutionInterceptor() {
                @Override
                public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
                    attempts.incrementAndGet();
                }
            };
            try (DynamoDbClient client = DynamoDbOutboxStoreProvider.buildClient(
                    parse(settings("retry.mode", mode, "retry.max.attempts", "3")), counter)) {
                assertThatThrownBy(() -> client.describeTable(r -> r.tableName("any")))
                        .isInstanceOf(SdkClientException.class);
            }
            assertThat(attempts).as("attempts in %s mode", mode).hasValue(3);
        }
    }

    @Test
    void aStoreFromTheProviderOwnsItsClientAndOneOnTheCallersClientDoesNot() {
        DelegatingDynamoDbClient owned = new DelegatingDynamoDbClient(null);
        DynamoDbOutboxStore.builder(owned).closeClient(true).build().close();
        assertThat(owned.closed).isTrue();
        DelegatingDynamoDbClient callers = new DelegatingDynamoDbClient(null);
        try (DynamoDbOutboxStore store = DynamoDbOutboxStore.builder(callers).build()) {
            assertThat(store.options().messagesTable()).isEqualTo("outbox_messages");
        }
        assertThat(callers.closed).isFalse();
    }

    @Test
    void R6_anEndpointThatCanNeverWorkIsRefusedByTheSettingsCheckWithoutConnecting() {
        for (String bad : List.of("ftp://127.0.0.1:8000", "127.0.0.1:8000", "not a url")) {
            assertThatThrownBy(() -> parse(settings("endpoint", bad)))
                    .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("endpoint");
        }
        assertThat(parse(settings("endpoint", "https://dynamodb.eu-west-1.amazonaws.com")).getString("endpoint"))
                .startsWith("https://");
    }

    /** A region the SDK cannot build a client with fails the check as it fails a start, with one message. */
    @Test
    void R6_aRegionTheSdkCannotUseIsRefusedByTheCheckWithTheMessageOfAStart() {
        Map<String, String> config = new java.util.HashMap<>(settings("region", "not a region"));
        config.remove("endpoint");
        Throwable checked = catchThrowable(() -> PROVIDER.validate(config));
        assertThat(checked).isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("Invalid value for configuration region");
        assertThatThrownBy(() -> PROVIDER.create(config)).hasMessage(checked.getMessage());
        PROVIDER.validate(settings("region", "eu-west-1"));
    }

    @Test
    void identifiersAreTakenAsWrittenNeverTrimmed() {
        assertThatThrownBy(() -> parse(settings("messages.table", "outbox_messages ")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("messages.table='outbox_messages '");
        assertThatThrownBy(() -> parse(settings("secret.access.key", "wJalrXUtnFEMI-secret\n")))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("secret.access.key=[hidden]")
                .hasMessageNotContaining("wJalrXUtnFEMI");
    }
}
