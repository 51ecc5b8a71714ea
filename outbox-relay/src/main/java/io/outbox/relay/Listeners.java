package io.outbox.relay;

import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Calls every registered listener; one that throws is logged and skipped, never the relay's concern. */
final class Listeners implements RelayListener {

    private static final Logger LOG = LoggerFactory.getLogger(OutboxRelay.class);

    private final List<RelayListener> listeners;

    Listeners(List<RelayListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    @Override
    public void onOwnedBucketsChanged(List<Integer> ownedBuckets) {
        each(l -> l.onOwnedBucketsChanged(ownedBuckets));
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
    public void onMessageFailed(int bucket, java.util.UUID messageId, int attempts, Throwable error) {
        each(l -> l.onMessageFailed(bucket, messageId, attempts, error));
    }

    @Override
    public void onDeadLettered(int bucket, java.util.UUID messageId, io.outbox.spi.DeadLetterFailure failure) {
        each(l -> l.onDeadLettered(bucket, messageId, failure));
    }

    @Override
    public void onStoreError(Throwable error) {
        each(l -> l.onStoreError(error));
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
