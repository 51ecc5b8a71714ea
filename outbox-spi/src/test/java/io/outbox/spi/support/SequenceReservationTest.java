package io.outbox.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.OutboxMessage;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class SequenceReservationTest {

    private static OutboxMessage message(int bucket) {
        return StoredMessages.rebuild(UUID.randomUUID(), bucket, "t", null, null, List.of(), null, Instant.EPOCH);
    }

    @Test
    void E5_oneIncrementPerBucketAndNumbersInListOrder() {
        Map<Integer, Long> counters = new HashMap<>(Map.of(3, 10L));
        List<String> calls = new ArrayList<>();
        List<OutboxMessage> batch = List.of(message(3), message(5), message(3), message(3), message(5));
        long[] seqs = SequenceReservation.reserve(batch, (bucket, count) -> {
            calls.add(bucket + "+" + count);
            return counters.merge(bucket, (long) count, Long::sum);
        });
        assertThat(calls).as("one reservation per bucket, in first-appearance order").containsExactly("3+3", "5+2");
        assertThat(seqs).containsExactly(11, 1, 12, 13, 2);
        assertThat(SequenceReservation.reserve(List.of(), (b, c) -> {
            throw new AssertionError("nothing to reserve");
        })).isEmpty();
    }

    @Test
    void E5_aCounterBelowTheCountIsCorrupt() {
        assertThatThrownBy(() -> SequenceReservation.reserve(List.of(message(1), message(1)), (b, c) -> 1L))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("bucket 1");
    }
}
