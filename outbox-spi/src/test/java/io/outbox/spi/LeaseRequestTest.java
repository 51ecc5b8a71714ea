package io.outbox.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class LeaseRequestTest {

    @Test
    void heldBucketsAreNormalized() {
        LeaseRequest r = new LeaseRequest("a", 8, Duration.ofSeconds(1), List.of(5, 1, 5, 3));
        assertThat(r.heldBuckets()).containsExactly(1, 3, 5);
        assertThat(r.withHeldBuckets(List.of()).heldBuckets()).isEmpty();
        assertThat(r.busyBuckets()).isEmpty();
        LeaseRequest busy = r.withBusyBuckets(List.of(5, 3, 5));
        assertThat(busy.busyBuckets()).containsExactly(3, 5);
        assertThat(busy.heldBuckets()).containsExactly(1, 3, 5);
        assertThatThrownBy(() -> r.withBusyBuckets(List.of(-1)))
                .hasMessage("busyBuckets contains -1, outside [0, 8)");
        assertThat(r.leaseDurationMillis()).isEqualTo(1_000);
    }

    @Test
    void badValuesAreNamed() {
        Duration d = Duration.ofSeconds(1);
        assertThatThrownBy(() -> new LeaseRequest("a", 8, d, List.of(8)))
                .hasMessage("heldBuckets contains 8, outside [0, 8)");
        assertThatThrownBy(() -> LeaseRequest.of(" ", 8, d)).hasMessageContaining("relayId must not be blank");
        assertThatThrownBy(() -> LeaseRequest.of("x".repeat(129), 8, d)).hasMessageContaining("at most 128")
                .hasMessageContaining("129");
        assertThatThrownBy(() -> LeaseRequest.of("a\nb", 8, d)).hasMessageContaining("control characters");
        assertThatThrownBy(() -> LeaseRequest.of("a", 0, d)).hasMessage("bucketCount must be >= 1 but was 0");
        assertThatThrownBy(() -> LeaseRequest.of("a", 1, Duration.ofNanos(10)))
                .hasMessageContaining("leaseDuration must be at least 1 ms");
        assertThatNullPointerException().isThrownBy(() -> LeaseRequest.of(null, 1, d)).withMessageContaining("relayId");
    }
}
