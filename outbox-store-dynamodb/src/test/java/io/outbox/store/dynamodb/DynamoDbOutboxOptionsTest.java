package io.outbox.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import org.junit.jupiter.api.Test;

/** Options validation. */
class DynamoDbOutboxOptionsTest {

    @Test
    void defaults() {
        DynamoDbOutboxOptions options = DynamoDbOutboxOptions.defaults();
        assertThat(options.messagesTable()).isEqualTo("outbox_messages");
        assertThat(options.coordinationTable()).isEqualTo("outbox_coordination");
        assertThat(options.clock()).isEqualTo(Clock.systemUTC());
        assertThat(options.probeParallelism()).isEqualTo(8);
        assertThat(options.toBuilder().build().toString()).isEqualTo(options.toString());
    }

    @Test
    void badValuesAreRefusedNamingTheOption() {
        assertThatThrownBy(() -> DynamoDbOutboxOptions.builder().messagesTable("ab").build())
                .hasMessageContaining("messagesTable").hasMessageContaining("'ab'");
        assertThatThrownBy(() -> DynamoDbOutboxOptions.builder().coordinationTable("a b c").build())
                .hasMessageContaining("coordinationTable");
        assertThatThrownBy(() -> DynamoDbOutboxOptions.builder().messagesTable("same").coordinationTable("same").build())
                .hasMessageContaining("must differ");
        assertThatThrownBy(() -> DynamoDbOutboxOptions.builder().probeParallelism(0).build())
                .hasMessageContaining("probeParallelism");
        assertThatThrownBy(() -> DynamoDbOutboxOptions.builder().clock(null).build())
                .isInstanceOf(NullPointerException.class).hasMessageContaining("clock");
    }
}
