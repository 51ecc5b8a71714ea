package io.outbox.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.Pending;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The byte budget of a batch (rule S1), and the read ahead by filtering keeping it (C5). */
class BatchBytesTest {

    private static OutboxMessage message(int valueBytes) {
        return StoredMessages.rebuild(UUID.randomUUID(), 0, "t", new byte[] {1, 2}, new byte[valueBytes],
                List.of(OutboxHeader.of("h", new byte[3])), null, Instant.EPOCH);
    }

    private static List<Pending> entries(int... valueBytes) {
        List<Pending> entries = new ArrayList<>();
        for (int i = 0; i < valueBytes.length; i++) {
            entries.add(new Pending(message(valueBytes[i]), (long) i));
        }
        return entries;
    }

    @Test
    void s1_aMessageCountsItsKeyValueAndEncodedHeadersAsItsPayloadSize() {
        OutboxMessage m = message(100);
        assertThat(BatchBytes.of(m)).isEqualTo(StoredMessages.payloadSize(m)).isEqualTo(2 + 100 + 5 + 8 + 1 + 3);
    }

    @Test
    void s1_theFirstMessageAlwaysFitsTheRestWhileTheBudgetHoldsAndARefusalDoesNotCount() {
        BatchBytes budget = new BatchBytes(100);
        assertThat(budget.admit(500)).as("the first, over the budget alone").isTrue();
        assertThat(budget.admit(0)).as("nothing is left after it").isFalse();

        BatchBytes exact = new BatchBytes(100);
        assertThat(exact.admit(60)).isTrue();
        assertThat(exact.admit(41)).as("one byte over").isFalse();
        assertThat(exact.admit(40)).as("exactly the budget; the refused one did not count").isTrue();
        assertThat(exact.taken()).isEqualTo(100);

        BatchBytes unbounded = new BatchBytes(Long.MAX_VALUE);
        assertThat(unbounded.admit(Long.MAX_VALUE - 1)).isTrue();
        assertThat(unbounded.admit(5)).as("no bound: saturates instead of overflowing").isFalse();
        assertThat(unbounded.taken()).isEqualTo(Long.MAX_VALUE - 1);

        assertThatThrownBy(() -> new BatchBytes(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxBytes must be >= 1 but was 0");
    }

    @Test
    void s1_aPrefixIsTheLongestWithinTheBudgetNeverSkippingALargeMessage() {
        List<Pending> read = entries(100, 100, 1_000, 10);
        long each = BatchBytes.of(read.get(0).message());
        assertThat(BatchBytes.prefix(read, 2 * each)).containsExactlyElementsOf(read.subList(0, 2));
        assertThat(BatchBytes.prefix(read, 2 * each + 999)).as("the small fourth is not taken past the third")
                .containsExactlyElementsOf(read.subList(0, 2));
        assertThat(BatchBytes.prefix(read, 1)).containsExactlyElementsOf(read.subList(0, 1));
        assertThat(BatchBytes.prefix(List.of(), 1)).isEmpty();
    }

    @Test
    void c5_readAheadByFilteringKeepsTheBudgetForTheMessagesAfterThoseInFlight() {
        List<Pending> rows = entries(100, 100, 100, 100, 5_000);
        OutboxStore store = new ListStore(rows);
        long each = BatchBytes.of(rows.get(0).message());
        List<Pending> inFlight = rows.subList(0, 2);

        assertThat(ReadAheads.byFiltering(store, 0, inFlight, 10, 2 * each))
                .as("the batch in flight counts against nothing").containsExactlyElementsOf(rows.subList(2, 4));
        assertThat(ReadAheads.byFiltering(store, 0, inFlight, 10, 2 * each - 1))
                .containsExactlyElementsOf(rows.subList(2, 3));
        assertThat(ReadAheads.byFiltering(store, 0, rows.subList(0, 4), 10, 10))
                .as("the first message after those in flight, over the budget alone")
                .containsExactlyElementsOf(rows.subList(4, 5));
        assertThat(ReadAheads.byFiltering(store, 0, rows, 10, 10)).as("nothing else pending").isEmpty();
        assertThatThrownBy(() -> ReadAheads.byFiltering(store, 0, inFlight, 10, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxBytes");
    }

    /** A bucket's rows in a list, read with the budget. */
    private record ListStore(List<Pending> rows) implements OutboxStore {

        @Override
        public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
            return BatchBytes.prefix(rows.subList(0, Math.min(maxCount, rows.size())), maxBytes);
        }

        @Override
        public List<Integer> acquireBucketLeases(LeaseRequest request) {
            throw new UnsupportedOperationException();
        }

        @Override
        public List<Integer> bucketsWithPending(List<Integer> buckets) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void markPublished(int bucket, List<Pending> published) {
            throw new UnsupportedOperationException();
        }
    }
}
