package io.outbox.relay;

import io.outbox.OutboxMessage;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A publisher that acknowledges at once, except the first batch of each bucket in
 * {@link #hold(int)}: that publish stays in flight until {@link #release(int)}. It records when
 * each message was acknowledged, so a test can measure how long messages waited, and which
 * relay (by a label) published which bucket.
 */
final class HeldPublisher {

    /** One acknowledged message: its bucket, its wait from enqueue to acknowledgement, who published it. */
    record Acked(int bucket, long waitMillis, String relay) {
    }

    private final Set<Integer> toHold = ConcurrentHashMap.newKeySet();
    private final Map<Integer, CompletableFuture<PublishResult>> held = new ConcurrentHashMap<>();
    private final List<Acked> acked = new CopyOnWriteArrayList<>();

    /** The next publish of this bucket, by any relay, stays in flight until {@link #release(int)}. */
    void hold(int bucket) {
        toHold.add(bucket);
    }

    /** Whether the bucket's held publish has started. */
    boolean isHeld(int bucket) {
        return held.containsKey(bucket);
    }

    /** Acknowledges the bucket's held publish. */
    void release(int bucket) {
        toHold.remove(bucket);
        CompletableFuture<PublishResult> future = held.get(bucket);
        if (future != null) {
            future.complete(null); // replaced by the acknowledgement in the dependent stage
        }
    }

    List<Acked> acked() {
        return acked;
    }

    /** A publisher for one relay; {@code relay} labels its acknowledgements. */
    OutboxPublisher forRelay(String relay) {
        return batch -> {
            int bucket = batch.get(0).bucket();
            if (toHold.remove(bucket)) {
                CompletableFuture<PublishResult> gate = new CompletableFuture<>();
                held.put(bucket, gate);
                return gate.thenApply(ignored -> ack(batch, relay));
            }
            return CompletableFuture.completedFuture(ack(batch, relay));
        };
    }

    private PublishResult ack(List<OutboxMessage> batch, String relay) {
        long now = System.currentTimeMillis();
        for (OutboxMessage m : batch) {
            acked.add(new Acked(m.bucket(), now - m.createdAt().toEpochMilli(), relay));
        }
        return PublishResult.success(batch.size());
    }
}
