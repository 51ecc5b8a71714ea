package io.outbox.relay.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class BackoffTest {

    @Test
    void r3_theBackoffDoublesPerFailureInARowUpToItsCap() {
        Backoff backoff = new Backoff(1_000, 30_000);

        assertThat(IntStream.rangeClosed(0, 7).mapToLong(backoff::delayMillis).toArray())
                .containsExactly(0L, 1_000L, 2_000L, 4_000L, 8_000L, 16_000L, 30_000L, 30_000L);
        assertThat(backoff.delayMillis(Integer.MAX_VALUE)).isEqualTo(30_000);
    }

    @Test
    void r3_aBaseEqualToTheCapNeverGrows() {
        assertThat(new Backoff(200, 200).delayMillis(5)).isEqualTo(200);
    }
}
