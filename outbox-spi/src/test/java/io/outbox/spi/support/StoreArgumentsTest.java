package io.outbox.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.OutboxMessage;
import io.outbox.spi.Pending;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class StoreArgumentsTest {

    /** A store's own handle type, carrying where it was read. */
    private record Row(String table, long id) {
    }

    private static OutboxMessage message(int bucket) {
        return StoredMessages.rebuild(UUID.randomUUID(), bucket, "t", null, null, List.of(), null, Instant.EPOCH);
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
    void S2_publishedEntriesMustBeTheStoresOwnFromThatBucket() {
        Row row = new Row("a", 7);
        Pending mine = new Pending(message(2), row);
        assertThat(StoreArguments.requirePublished(2, List.of(mine), Row.class, r -> r.table().equals("a"), "table a"))
                .containsExactly(row);
        Pending foreign = new Pending(message(2), 7L);
        assertThatThrownBy(() -> StoreArguments.requirePublished(2, List.of(mine, foreign), Row.class,
                r -> true, "table a")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(foreign.message().messageId().toString()).hasMessageContaining("table a");
        assertThatThrownBy(() -> StoreArguments.requirePublished(2, List.of(new Pending(message(2), new Row("b", 1))),
                Row.class, r -> r.table().equals("a"), "table a")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> StoreArguments.requirePublished(3, List.of(mine), Row.class, r -> true, "table a"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("belongs to bucket 2, not to bucket 3");
        assertThatThrownBy(() -> StoreArguments.requirePublished(-1, List.of(), Row.class, r -> true, "table a"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> StoreArguments.requirePublished(2, Arrays.asList(mine, null), Row.class, r -> true,
                "table a")).isInstanceOf(NullPointerException.class);
    }
}
