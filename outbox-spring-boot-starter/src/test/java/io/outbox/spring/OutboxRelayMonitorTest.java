package io.outbox.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What the health indicator reports as stalled buckets (rule R3). */
class OutboxRelayMonitorTest {

    @Test
    void r3_aBucketIsStalledFromItsFirstFailedPublishUntilItsNextSuccess() {
        OutboxRelayMonitor monitor = new OutboxRelayMonitor();
        monitor.onOwnedBucketsChanged(List.of(0, 1, 2));
        monitor.onPublishFailed(1, 0, new IllegalStateException("broker down"));
        monitor.onPublishFailed(1, 0, new IllegalStateException("still down"));
        assertThat(monitor.stalledBuckets()).containsOnlyKeys(1);
        assertThat(monitor.stalledBuckets().get(1).failures()).isEqualTo(2);
        assertThat(monitor.stalledBuckets().get(1).lastError()).contains("still down");
        monitor.onPublished(1, 5);
        assertThat(monitor.stalledBuckets()).isEmpty();
        monitor.onPublishFailed(2, 0, new IllegalStateException("x"));
        monitor.onOwnedBucketsChanged(List.of(0, 1));
        assertThat(monitor.stalledBuckets()).as("a bucket given up is no longer reported").isEmpty();
        assertThat(monitor.ownedBuckets()).containsExactly(0, 1);
    }

    @Test
    void r3_theLastErrorShownHidesCredentials() {
        OutboxRelayMonitor monitor = new OutboxRelayMonitor();
        monitor.onOwnedBucketsChanged(List.of(0));
        monitor.onPublishFailed(0, 0, new IllegalStateException("cannot reach https://sr:sr-pw-1@registry/x with "
                + "basic.auth.user.info=sr:sr-pw-2"));
        assertThat(monitor.stalledBuckets().get(0).lastError()).doesNotContain("sr-pw-1", "sr-pw-2")
                .contains("https://sr:[hidden]@registry/x", "basic.auth.user.info=[hidden]");
    }
}
