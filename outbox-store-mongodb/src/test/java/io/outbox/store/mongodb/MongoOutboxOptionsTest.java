package io.outbox.store.mongodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class MongoOutboxOptionsTest {

    @Test
    void defaultsAndCollectionNames() {
        MongoOutboxOptions options = MongoOutboxOptions.builder("orders").build();
        assertThat(options.database()).isEqualTo("orders");
        assertThat(options.collectionPrefix()).isEqualTo("outbox_");
        assertThat(options.clock()).isEqualTo(Clock.systemUTC());
        assertThat(options.createIndexes()).isTrue();
        assertThat(options.messagesCollection()).isEqualTo("outbox_messages");
        assertThat(options.sequencesCollection()).isEqualTo("outbox_sequences");
        assertThat(options.leasesCollection()).isEqualTo("outbox_leases");
        assertThat(options.relaysCollection()).isEqualTo("outbox_relays");
    }

    @Test
    void everyOptionCanBeSet() {
        Clock clock = Clock.fixed(Instant.EPOCH, ZoneOffset.UTC);
        MongoOutboxOptions options = MongoOutboxOptions.builder("db").collectionPrefix("").clock(clock)
                .createIndexes(false).build();
        assertThat(options.messagesCollection()).isEqualTo("messages");
        assertThat(options.clock()).isSameAs(clock);
        assertThat(options.createIndexes()).isFalse();
        assertThat(MongoOutboxOptions.builder("db").collectionPrefix("svc.orders-v2_").build().leasesCollection())
                .isEqualTo("svc.orders-v2_leases");
    }

    @Test
    void illegalDatabaseNamesAreRefusedNamingTheOption() {
        for (String bad : new String[] {"", "a.b", "a b", "a/b", "a\\b", "a\"b", "a$b", "a\0b", "d".repeat(64)}) {
            assertThatThrownBy(() -> MongoOutboxOptions.builder(bad).build()).as("database '%s'", bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("database");
        }
        assertThatThrownBy(() -> MongoOutboxOptions.builder(null).build()).isInstanceOf(NullPointerException.class);
        assertThat(MongoOutboxOptions.builder("d".repeat(63)).build().database()).hasSize(63);
    }

    @Test
    void illegalPrefixesAreRefusedNamingTheOption() {
        for (String bad : new String[] {"a b", "a$", "system.x", ".x", "é", "p".repeat(65)}) {
            assertThatThrownBy(() -> MongoOutboxOptions.builder("db").collectionPrefix(bad).build())
                    .as("prefix '%s'", bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("collectionPrefix");
        }
        assertThatThrownBy(() -> MongoOutboxOptions.builder("db").collectionPrefix(null).build())
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> MongoOutboxOptions.builder("db").clock(null).build())
                .isInstanceOf(NullPointerException.class);
    }
}
