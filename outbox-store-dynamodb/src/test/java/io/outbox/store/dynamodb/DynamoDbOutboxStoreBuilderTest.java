package io.outbox.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/**
 * {@link DynamoDbOutboxStore.Builder}: defaults, settings and validation naming the bad setting.
 * The client answers nothing: building a store calls no DynamoDB API.
 */
class DynamoDbOutboxStoreBuilderTest {

    private final DelegatingDynamoDbClient client = new DelegatingDynamoDbClient(null);

    private DynamoDbOutboxStore.Builder builder() {
        return DynamoDbOutboxStore.builder(client);
    }

    @Test
    void defaults() {
        try (DynamoDbOutboxStore store = builder().build()) {
            DynamoDbOutboxOptions options = store.options();
            assertThat(options.messagesTable()).isEqualTo("outbox_messages");
            assertThat(options.coordinationTable()).isEqualTo("outbox_coordination");
            assertThat(options.clock()).isEqualTo(Clock.systemUTC());
            assertThat(options.probeParallelism()).isEqualTo(8);
        }
    }

    @Test
    void everySettingCanBeSet() {
        Clock clock = Clock.fixed(Instant.EPOCH, ZoneOffset.UTC);
        try (DynamoDbOutboxStore store = builder().messagesTable("app_messages").coordinationTable("app_coordination")
                .clock(clock).probeParallelism(1).build()) {
            assertThat(store.options().messagesTable()).isEqualTo("app_messages");
            assertThat(store.options().coordinationTable()).isEqualTo("app_coordination");
            assertThat(store.options().clock()).isSameAs(clock);
            assertThat(store.options().probeParallelism()).isEqualTo(1);
        }
    }

    @Test
    void s10_theStoreAndItsWriterStateTheSamePayloadLimit() {
        try (DynamoDbOutboxStore store = builder().build()) {
            assertThat(store.maxPayloadBytes()).isEqualTo(DynamoDbOutboxStore.MAX_PAYLOAD_BYTES);
            assertThat(store.writer().maxPayloadBytes()).isEqualTo(DynamoDbOutboxStore.MAX_PAYLOAD_BYTES);
            assertThat(store.writer()).isSameAs(store.writer());
        }
    }

    @Test
    void badValuesAreRefusedNamingTheSetting() {
        assertThatThrownBy(() -> builder().messagesTable("ab").build())
                .hasMessageContaining("messagesTable").hasMessageContaining("'ab'");
        assertThatThrownBy(() -> builder().coordinationTable("a b c").build())
                .hasMessageContaining("coordinationTable");
        assertThatThrownBy(() -> builder().messagesTable("same").coordinationTable("same").build())
                .hasMessageContaining("must differ");
        assertThatThrownBy(() -> builder().probeParallelism(0).build())
                .hasMessageContaining("probeParallelism");
        assertThatThrownBy(() -> builder().clock(null).build())
                .isInstanceOf(NullPointerException.class).hasMessageContaining("clock");
        assertThatThrownBy(() -> DynamoDbOutboxStore.builder(null))
                .isInstanceOf(NullPointerException.class).hasMessage("client must not be null");
    }
}
