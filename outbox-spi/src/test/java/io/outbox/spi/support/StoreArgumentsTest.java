package io.outbox.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.OutboxMessage;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class StoreArgumentsTest {

    /** A store's own message type, carrying where it was read. */
    private static final class Stored extends OutboxMessage {
        final String table;

        Stored(OutboxMessage m, String table) {
            super(m);
            this.table = table;
        }
    }

    private static OutboxMessage message(int bucket) {
        return new OutboxMessage(UUID.randomUUID(), bucket, "t", null, null, List.of(), null, Instant.EPOCH);
    }

    @Test
    void S1_bucketAndMaxCountChecksNameTheValue() {
        assertThat(StoreArguments.requireBucket(0)).isZero();
        assertThatThrownBy(() -> StoreArguments.requireBucket(-3)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bucket must be >= 0 but was -3");
        assertThatThrownBy(() -> StoreArguments.requireBucket(8, 8)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bucket must be in [0, 8) but was 8");
        assertThat(StoreArguments.requireMaxCount(1)).isOne();
        assertThatThrownBy(() -> StoreArguments.requireMaxCount(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxCount must be >= 1 but was 0");
    }

    @Test
    void S3_bucketsAreSortedDistinctAndNeverNegative() {
        assertThat(StoreArguments.requireBuckets(List.of(5, 1, 5, 0, 1))).containsExactly(0, 1, 5);
        assertThatThrownBy(() -> StoreArguments.requireBuckets(List.of(1, -1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1");
        assertThatThrownBy(() -> StoreArguments.requireBuckets(Arrays.asList(1, null)))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> StoreArguments.requireBuckets(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void S2_publishedMessagesMustBeTheStoresOwnFromThatBucket() {
        Stored mine = new Stored(message(2), "a");
        assertThat(StoreArguments.requirePublished(2, List.of(mine), Stored.class, s -> s.table.equals("a"), "table a"))
                .containsExactly(mine);
        OutboxMessage foreign = message(2);
        assertThatThrownBy(() -> StoreArguments.requirePublished(2, List.of(mine, foreign), Stored.class,
                s -> true, "table a")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(foreign.messageId().toString()).hasMessageContaining("table a");
        assertThatThrownBy(() -> StoreArguments.requirePublished(2, List.of(new Stored(message(2), "b")),
                Stored.class, s -> s.table.equals("a"), "table a")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> StoreArguments.requirePublished(3, List.of(mine), Stored.class, s -> true, "table a"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("belongs to bucket 2, not to bucket 3");
        assertThatThrownBy(() -> StoreArguments.requirePublished(-1, List.of(), Stored.class, s -> true, "table a"))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
