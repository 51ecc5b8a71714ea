package io.outbox.store.mongodb;

import com.mongodb.TransactionOptions;
import com.mongodb.client.ClientSession;
import io.outbox.OutboxCommitNotifier;
import io.outbox.OutboxMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * Runs a business transaction with outbox enqueues through the driver's
 * {@link ClientSession#withTransaction}, and tells the notifier which buckets it wrote only once
 * the transaction has committed (rule N1).
 *
 * <pre>{@code
 * MongoOutboxTransactions tx = MongoOutboxTransactions.of(store.writer(), notifier);
 * try (ClientSession session = client.startSession()) {
 *     tx.run(session, outbox -> {
 *         orders.insertOne(session, order);                       // the business write
 *         outbox.enqueue(OutboxMessage.create("orders", ...));    // same transaction (E4)
 *         return null;
 *     });                                                         // committed, then notified
 * }
 * }</pre>
 *
 * <p>{@code withTransaction} runs the body again after a transient transaction error and retries
 * the commit while its outcome is unknown; the buckets are collected afresh on every run of the
 * body and notified once, after {@code withTransaction} returned, so a retried commit is notified
 * after it succeeded and never before. An abort, an exception of the body, or a commit that finally
 * fails notifies nothing. Thread-safe; a session is used by one thread at a time.
 */
public final class MongoOutboxTransactions {

    /** Enqueues messages inside the running transaction and remembers their buckets. */
    public static final class Outbox {

        private final MongoOutboxWriter writer;
        private final ClientSession session;
        private final List<Integer> buckets = new ArrayList<>();

        private Outbox(MongoOutboxWriter writer, ClientSession session) {
            this.writer = writer;
            this.session = session;
        }

        /**
         * Writes messages in the transaction ({@link MongoOutboxWriter#enqueue(ClientSession, List)}).
         *
         * @param messages in enqueue order; not null, no null element
         * @throws com.mongodb.MongoException on a database error; let it propagate
         */
        public void enqueue(List<OutboxMessage> messages) {
            writer.enqueue(session, messages);
            messages.forEach(m -> buckets.add(m.bucket()));
        }

        /**
         * Writes messages in the transaction.
         *
         * @param messages in enqueue order; no null element
         */
        public void enqueue(OutboxMessage... messages) {
            enqueue(List.of(messages));
        }
    }

    private final MongoOutboxWriter writer;
    private final OutboxCommitNotifier notifier;

    private MongoOutboxTransactions(MongoOutboxWriter writer, OutboxCommitNotifier notifier) {
        this.writer = Objects.requireNonNull(writer, "writer must not be null");
        this.notifier = Objects.requireNonNull(notifier, "notifier must not be null");
    }

    /**
     * A helper writing with this writer and notifying this notifier.
     *
     * @param writer the store's writer ({@link MongoOutboxStore#writer()}); not null
     * @param notifier not null; {@link OutboxCommitNotifier#NONE} for none
     * @return the helper
     */
    public static MongoOutboxTransactions of(MongoOutboxWriter writer, OutboxCommitNotifier notifier) {
        return new MongoOutboxTransactions(writer, notifier);
    }

    /**
     * Runs the body in {@code session.withTransaction} with the session's default options, then
     * notifies the buckets the last run of the body enqueued.
     *
     * @param session a session of the writer's client, without an active transaction; not null
     * @param body the transaction's body; not null; may run more than once
     * @param <T> what it returns
     * @return the body's result of the committed run
     * @throws RuntimeException whatever the body or the driver threw; nothing was notified
     */
    public <T> T run(ClientSession session, Function<Outbox, T> body) {
        return run(session, body, TransactionOptions.builder().build());
    }

    /**
     * Runs the body in {@code session.withTransaction(body, options)}, then notifies.
     *
     * @param session a session of the writer's client, without an active transaction; not null
     * @param body the transaction's body; not null; may run more than once
     * @param options the transaction options; not null
     * @param <T> what it returns
     * @return the body's result of the committed run
     * @throws RuntimeException whatever the body or the driver threw; nothing was notified
     */
    public <T> T run(ClientSession session, Function<Outbox, T> body, TransactionOptions options) {
        Objects.requireNonNull(session, "session must not be null");
        Objects.requireNonNull(body, "body must not be null");
        Objects.requireNonNull(options, "options must not be null");
        Outbox[] last = new Outbox[1];
        T result = session.withTransaction(() -> {
            Outbox outbox = new Outbox(writer, session); // a retried body starts with no buckets
            last[0] = outbox;
            return body.apply(outbox);
        }, options);
        int[] buckets = last[0] == null ? new int[0]
                : last[0].buckets.stream().mapToInt(Integer::intValue).distinct().toArray();
        if (buckets.length > 0) {
            notifier.committed(buckets);
        }
        return result;
    }
}
