package io.outbox.relay.internal;

import io.outbox.notify.NotificationTransport;
import io.outbox.relay.RelayListener;
import io.outbox.relay.RelayOptions;
import io.outbox.spi.DeadLetterFailure;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import org.slf4j.Logger;

/**
 * Calls every registered listener, in order; one that throws is logged and skipped, never the
 * relay's concern. Runs on whichever thread reports (the loop thread, the renewal thread, a
 * transport's thread); stateless beyond its immutable list.
 */
public final class Listeners implements RelayListener {

    private static final Logger LOG = RelayLog.LOG;

    private final List<RelayListener> listeners;

    /**
     * A fan-out to these listeners, called in this order.
     *
     * @param listeners not null; copied
     */
    public Listeners(List<RelayListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    @Override
    public void onStarted(RelayOptions options) {
        each(l -> l.onStarted(options));
    }

    @Override
    public void onCycle(Duration took) {
        each(l -> l.onCycle(took));
    }

    @Override
    public void onPoll(boolean foundWork) {
        each(l -> l.onPoll(foundWork));
    }

    @Override
    public void onWakeUp() {
        each(RelayListener::onWakeUp);
    }

    @Override
    public void onLeasesExpired(List<Integer> buckets) {
        each(l -> l.onLeasesExpired(buckets));
    }

    @Override
    public void onPublishCompleted(int bucket, int count, Duration took) {
        each(l -> l.onPublishCompleted(bucket, count, took));
    }

    @Override
    public void onTimesInOutbox(int bucket, List<Duration> times) {
        each(l -> l.onTimesInOutbox(bucket, times));
    }

    @Override
    public void onOwnedBucketsChanged(List<Integer> ownedBuckets) {
        each(l -> l.onOwnedBucketsChanged(ownedBuckets));
    }

    @Override
    public void onLeaseRound(List<Integer> ownedBuckets) {
        each(l -> l.onLeaseRound(ownedBuckets));
    }

    @Override
    public void onPublished(int bucket, int count) {
        each(l -> l.onPublished(bucket, count));
    }

    @Override
    public void onPublishFailed(int bucket, int acknowledged, Throwable error) {
        each(l -> l.onPublishFailed(bucket, acknowledged, error));
    }

    @Override
    public void onMessageFailed(int bucket, UUID messageId, int attempts, Throwable error) {
        each(l -> l.onMessageFailed(bucket, messageId, attempts, error));
    }

    @Override
    public void onDeadLettered(int bucket, UUID messageId, DeadLetterFailure failure) {
        each(l -> l.onDeadLettered(bucket, messageId, failure));
    }

    @Override
    public void onStoreError(Throwable error) {
        each(l -> l.onStoreError(error));
    }

    @Override
    public void onNotificationStateChanged(NotificationTransport.State state) {
        each(l -> l.onNotificationStateChanged(state));
    }

    @Override
    public void onTerminated(Throwable fatalError) {
        each(l -> l.onTerminated(fatalError));
    }

    private void each(Consumer<RelayListener> call) {
        for (RelayListener listener : listeners) {
            try {
                call.accept(listener);
            } catch (RuntimeException e) {
                LOG.warn("relay listener {} failed; ignored", listener, e);
            }
        }
    }
}
