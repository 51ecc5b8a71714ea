package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.outbox.notify.NotificationTransport;
import io.outbox.notify.OutboxNotifier;
import io.outbox.relay.testing.SwitchedTransport;
import io.outbox.tck.InMemoryOutboxStore;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Rule N6 on the relay's side: what a transport reports about its listening connection reaches
 * each local relay through the notifier, the relay's listeners and its meters, and a recovery
 * wakes the relay for a discovery of every owned bucket. The transport is a stand-in whose
 * connection the test takes down and brings back.
 */
class NotificationStateTest {

    private static final int BUCKETS = 4;

    private final InMemoryOutboxStore memory = InMemoryOutboxStore.builder().clock(Clock.systemUTC()).build();
    private final TestStore.Renewing store = new TestStore.Renewing(memory);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final SwitchedTransport transport = new SwitchedTransport();
    private final List<NotificationTransport.State> heard = new CopyOnWriteArrayList<>();

    private double connectedGauge() {
        return registry.get("outbox.notify.connected").tag("transport", SwitchedTransport.NAME).tag("outbox", "orders")
                .gauge().value();
    }

    private double losses() {
        return registry.get("outbox.notify.connection.losses").tag("transport", SwitchedTransport.NAME).counter().count();
    }

    @Test
    void n6_theTransportsStateReachesTheRelayItsListenersAndMeters_andARecoveryRunsDiscovery() {
        try (MicrometerRelayMetrics metrics = new MicrometerRelayMetrics(registry, List.of(Tag.of("outbox", "orders")));
             OutboxRelay relay = OutboxRelay.builder(store, new ScriptedPublisher())
                     .options(RelayOptions.builder().relayId("n6").bucketCount(BUCKETS)
                             .pollInterval(Duration.ofMinutes(1)).build())
                     .listener(metrics)
                     .listener(new RelayListener() {
                         @Override
                         public void onNotificationStateChanged(NotificationTransport.State state) {
                             heard.add(state);
                         }
                     })
                     .build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> relay.ownedBuckets().size() == BUCKETS
                    && store.pendingCalls.get() > 0); // the first discovery is over; the next poll is a minute away
            assertThat(relay.notificationState()).as("a relay without a transport reports none").isNull();
            assertThat(registry.find("outbox.notify.connected").gauge()).as("no gauge without a transport").isNull();

            try (OutboxNotifier notifier = OutboxNotifier.builder().transport(transport).relay(relay).build()) {
                assertThat(relay.notificationState()).as("the state the relay starts with: not connected yet")
                        .isEqualTo(transport.state());
                assertThat(connectedGauge()).isZero();

                transport.up();
                assertThat(relay.notificationState().connected()).isTrue();
                assertThat(connectedGauge()).isEqualTo(1);
                assertThat(losses()).as("connecting the first time is no loss").isZero();

                transport.down();
                NotificationTransport.State down = relay.notificationState();
                assertThat(down.connected()).isFalse();
                assertThat(down.since()).isEqualTo(transport.state().since());
                assertThat(connectedGauge()).isZero();
                assertThat(losses()).isEqualTo(1);

                int discoveries = store.pendingCalls.get();
                transport.up();
                assertThat(connectedGauge()).isEqualTo(1);
                await().atMost(Duration.ofSeconds(10)).until(() -> store.pendingCalls.get() > discoveries);
                assertThat(heard).extracting(NotificationTransport.State::connected)
                        .as("each change once, in order").containsExactly(false, true, false, true);

                relay.notificationStateChanged(transport.state());
                assertThat(heard).as("the same state again is no change").hasSize(4);
                assertThat(notifier.stats().received()).as("state changes are no hints").isZero();
            }
        }
    }
}
