package io.outbox.store.mongodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link MongoOutboxStore.Builder}: defaults, settings, validation naming the bad setting. The
 * client points at a port nothing listens on: building a store contacts no server.
 */
class MongoOutboxStoreBuilderTest {

    private final MongoClient client = MongoClients.create("mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=100");

    @AfterEach
    void closeClient() {
        client.close();
    }

    private MongoOutboxStore.Builder builder(String database) {
        return MongoOutboxStore.builder(client).database(database);
    }

    @Test
    void defaultsAndCollectionNames() {
        MongoOutboxOptions options = builder("orders").build().options();
        assertThat(options.database()).isEqualTo("orders");
        assertThat(options.collectionPrefix()).isEqualTo("outbox_");
        assertThat(options.clock()).isEqualTo(Clock.systemUTC());
        assertThat(options.messagesCollection()).isEqualTo("outbox_messages");
        assertThat(options.sequencesCollection()).isEqualTo("outbox_sequences");
        assertThat(options.leasesCollection()).isEqualTo("outbox_leases");
        assertThat(options.relaysCollection()).isEqualTo("outbox_relays");
    }

    @Test
    void everySettingCanBeSet() {
        Clock clock = Clock.fixed(Instant.EPOCH, ZoneOffset.UTC);
        MongoOutboxStore store = builder("db").collectionPrefix("").clock(clock).build();
        assertThat(store.options().messagesCollection()).isEqualTo("messages");
        assertThat(store.options().clock()).isSameAs(clock);
        assertThat(builder("db").collectionPrefix("svc.orders-v2_").build().options().leasesCollection())
                .isEqualTo("svc.orders-v2_leases");
    }

    @Test
    void s10_theWriterAndTheStoreStateTheSamePayloadLimit() {
        MongoOutboxStore store = builder("db").build();
        assertThat(store.maxPayloadBytes()).isEqualTo(MongoOutboxStore.MAX_PAYLOAD_BYTES);
        assertThat(store.writer().maxPayloadBytes()).isEqualTo(MongoOutboxStore.MAX_PAYLOAD_BYTES);
        assertThat(store.writer()).isSameAs(store.writer());
    }

    @Test
    void theDatabaseIsRequiredAndIllegalNamesAreRefusedNamingTheSetting() {
        assertThatThrownBy(() -> MongoOutboxStore.builder(client).build()).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("database must be set");
        for (String bad : new String[] {"", "a.b", "a b", "a/b", "a\\b", "a\"b", "a$b", "a\0b", "d".repeat(64)}) {
            assertThatThrownBy(() -> builder(bad).build()).as("database '%s'", bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("database");
        }
        assertThat(builder("d".repeat(63)).build().options().database()).hasSize(63);
        assertThatThrownBy(() -> MongoOutboxStore.builder(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("client must not be null");
    }

    @Test
    void illegalPrefixesAreRefusedNamingTheSetting() {
        for (String bad : new String[] {"a b", "a$", "system.x", ".x", "é", "p".repeat(65)}) {
            assertThatThrownBy(() -> builder("db").collectionPrefix(bad).build())
                    .as("prefix '%s'", bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("collectionPrefix");
        }
        assertThatThrownBy(() -> builder("db").collectionPrefix(null).build())
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> builder("db").clock(null).build())
                .isInstanceOf(NullPointerException.class);
    }
}
