package io.outbox.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Store discovery through ServiceLoader, with a provider registered by auto-service. */
class OutboxStoresTest {

    @Test
    void findsProviderRegisteredWithAutoService() {
        assertThat(OutboxStores.providers()).extracting(OutboxStoreProvider::name).contains("test-memory");
        OutboxStore store = OutboxStores.open("test-memory", Map.of("greeting", "hi"));
        assertThat(store).isInstanceOf(TestStoreProvider.TestStore.class);
        assertThat(((TestStoreProvider.TestStore) store).config.getString("greeting")).isEqualTo("hi");
    }

    @Test
    void theOpenedStoreIsClosedByTryWithResources() {
        TestStoreProvider.TestStore seen;
        try (CloseableOutboxStore store = OutboxStores.open("test-memory", Map.of())) {
            seen = (TestStoreProvider.TestStore) store;
            assertThat(seen.closes).hasValue(0);
        }
        assertThat(seen.closes).as("closed once, on leaving the block").hasValue(1);
    }

    @Test
    void unknownNameListsTheNamesFound() {
        assertThatThrownBy(() -> OutboxStores.open("cassandra", Map.of()))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("'cassandra'")
                .hasMessageContaining("[test-memory]")
                .hasMessageContaining("outbox-store-jdbc adds the store 'jdbc'")
                .hasMessageContaining("outbox-store-mongodb adds 'mongodb'")
                .hasMessageContaining("outbox-store-dynamodb adds 'dynamodb'");
    }

    @Test
    void unknownSettingIsRefusedNamingItAndTheKnownOnes() {
        assertThatThrownBy(() -> OutboxStores.open("test-memory", Map.of("greting", "hi")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("[greting]")
                .hasMessageContaining("[greeting, password, size]");
    }

    @Test
    void malformedSettingIsRefusedNamingTheValue() {
        assertThatThrownBy(() -> OutboxStores.open("test-memory", Map.of("size", "many")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("size")
                .hasMessageContaining("many");
        assertThatThrownBy(() -> OutboxStores.open("test-memory", Map.of("size", "0")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("size");
    }

    @Test
    void passwordsAreHiddenFromToString() {
        TestStoreProvider.TestStore store = (TestStoreProvider.TestStore) OutboxStores.open("test-memory",
                Map.of("password", "s3cr3t"));
        assertThat(store.config.getPassword("password").value()).isEqualTo("s3cr3t");
        assertThat(store.config.toString()).doesNotContain("s3cr3t").contains("[hidden]").contains("size=1");
    }
}
