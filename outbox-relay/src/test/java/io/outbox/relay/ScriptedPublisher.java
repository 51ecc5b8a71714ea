package io.outbox.relay;

import io.outbox.OutboxMessage;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * A publisher whose answers a test scripts: by default every batch is acknowledged at once; a
 * test can instead answer with any result, or keep the futures pending and complete them itself.
 */
final class ScriptedPublisher implements OutboxPublisher {

    /** One publish call. */
    record Call(List<OutboxMessage> batch, CompletableFuture<PublishResult> future) {

        int bucket() {
            return batch.get(0).bucket();
        }

        List<UUID> ids() {
            return batch.stream().map(OutboxMessage::messageId).toList();
        }

        void succeed() {
            future.complete(PublishResult.success(batch.size()));
        }
    }

    private final List<Call> calls = new CopyOnWriteArrayList<>();
    private volatile Function<List<OutboxMessage>, PublishResult> answer = batch -> PublishResult.success(batch.size());
    private volatile boolean holding;

    /** Answers every later batch with this function. */
    ScriptedPublisher answer(Function<List<OutboxMessage>, PublishResult> answer) {
        this.answer = answer;
        this.holding = false;
        return this;
    }

    /** Leaves every later batch's future pending; complete it through {@link #calls()}. */
    ScriptedPublisher hold() {
        this.holding = true;
        return this;
    }

    List<Call> calls() {
        return calls;
    }

    Call lastCall() {
        return calls.get(calls.size() - 1);
    }

    @Override
    public CompletableFuture<PublishResult> publish(List<OutboxMessage> batch) {
        CompletableFuture<PublishResult> future = new CompletableFuture<>();
        calls.add(new Call(List.copyOf(batch), future));
        if (!holding) {
            future.complete(answer.apply(batch));
        }
        return future;
    }
}
