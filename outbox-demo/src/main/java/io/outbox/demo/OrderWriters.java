package io.outbox.demo;

import io.outbox.OutboxCommitNotifier;
import io.outbox.OutboxMessage;
import io.outbox.OutboxMessageFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The order service's writers: W threads placing N orders for K customers, each order one
 * transaction of the business row and its outbox message (key: the customer).
 *
 * <p><b>Each customer belongs to exactly one writer</b> ({@code customer % writers}), which places
 * that customer's orders one transaction after the other. This is what the per-customer order
 * check relies on, and what a real service must do too: the stores publish a bucket in enqueue
 * order (an auto-increment id assigned at insert on JDBC, a sequence number reserved before the
 * commit on MongoDB and DynamoDB), which equals commit order only for writes to one key that
 * never overlap (see {@code JdbcOutboxWriter} and {@code MongoOutboxWriter}). Two threads placing
 * orders of one customer at once could commit in the opposite order to their enqueue; a service
 * gets the same effect by locking the key's row (or document) before it enqueues.
 *
 * <p>Which customer places each order is drawn from {@code seed}, so a run can be repeated. With a
 * rate, order {@code i} is placed no earlier than {@code i / rate} seconds after the start;
 * without, as fast as the writers can.
 */
final class OrderWriters {

    private final DemoDatabase database;
    private final DeliveryChecker checker;
    private final OutboxCommitNotifier notifier;
    private final String runId;
    private final String topic;
    private final int buckets;
    private final int customers;
    private final double nanosPerOrder;
    private final int[] customerOfOrder;
    private final int[] amountOfOrder;
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicLong placed = new AtomicLong();
    private final AtomicInteger running = new AtomicInteger();
    private volatile Throwable failure;
    private volatile boolean stopped;
    private volatile long startedNanos;
    private volatile long finishedNanos;

    private OrderWriters(DemoDatabase database, DeliveryChecker checker, OutboxCommitNotifier notifier, String runId,
                         String topic, OrderDemo.Settings settings) {
        this.database = database;
        this.checker = checker;
        this.notifier = notifier;
        this.runId = runId;
        this.topic = topic;
        this.buckets = settings.buckets();
        this.customers = settings.customers();
        this.nanosPerOrder = settings.rate() > 0 ? 1e9 / settings.rate() : 0;
        this.customerOfOrder = new int[settings.orders()];
        this.amountOfOrder = new int[settings.orders()];
        Random random = new Random(settings.seed());
        for (int i = 0; i < settings.orders(); i++) {
            customerOfOrder[i] = random.nextInt(customers);
            amountOfOrder[i] = 100 + random.nextInt(99_900);
        }
    }

    /**
     * Starts the writer threads.
     *
     * @param notifier told each order's bucket once its transaction committed (N1), through the
     *     store's helper ({@link DemoDatabase#placeOrder(Order, OutboxMessage, OutboxCommitNotifier)})
     */
    static OrderWriters start(DemoDatabase database, DeliveryChecker checker, OutboxCommitNotifier notifier,
                              String runId, String topic, OrderDemo.Settings settings) {
        OrderWriters w = new OrderWriters(database, checker, notifier, runId, topic, settings);
        int writers = settings.writers();
        w.running.set(writers);
        w.startedNanos = System.nanoTime();
        for (int i = 0; i < writers; i++) {
            int writer = i;
            Thread t = new Thread(() -> w.write(writer, writers), "demo-writer-" + (i + 1));
            t.setDaemon(true);
            w.threads.add(t);
        }
        w.threads.forEach(Thread::start);
        return w;
    }

    private void write(int writer, int writers) {
        OutboxMessageFactory<String, byte[]> messages = OutboxMessageFactory.builder(buckets)
                .keySerializer(new StringSerializer()).valueSerializer(new ByteArraySerializer()).build();
        int[] lastSeq = new int[customers];
        try {
            for (int i = 0; i < customerOfOrder.length && !stopped && failure == null; i++) {
                int customer = customerOfOrder[i];
                if (customer % writers != writer) {
                    continue;
                }
                pace(i);
                Order order = new Order(runId, customer, ++lastSeq[customer], amountOfOrder[i], Order.nowMicros());
                OutboxMessage message = messages.create(topic, order.key(), order.toJson());
                database.placeOrder(order, message, notifier);
                checker.expect(message.messageId());
                placed.incrementAndGet();
            }
        } catch (Exception | Error e) {
            if (failure == null) {
                failure = e;
            }
        } finally {
            finished();
        }
    }

    /** With {@code --rate}, waits until order {@code i} is due: the i-th order is placed i / rate s after the start. */
    private void pace(int i) {
        if (nanosPerOrder > 0) {
            long due = startedNanos + (long) (i * nanosPerOrder);
            for (long wait = due - System.nanoTime(); wait > 0 && !stopped; wait = due - System.nanoTime()) {
                LockSupport.parkNanos(wait);
            }
        }
    }

    private void finished() {
        if (running.decrementAndGet() == 0) {
            finishedNanos = System.nanoTime();
        }
    }

    /** Orders committed so far. */
    long placed() {
        return placed.get();
    }

    /** Whether every writer has finished (check {@link #failIfFailed()} too). */
    boolean done() {
        return running.get() == 0;
    }

    /** Committed orders per second, from the start to the last writer's end (or now). */
    double placementRate() {
        long end = finishedNanos != 0 ? finishedNanos : System.nanoTime();
        return placed.get() / ((end - startedNanos) / 1e9);
    }

    /**
     * Throws if a writer failed; the others stop at their next order.
     *
     * @throws IllegalStateException with the writer's error as its cause
     */
    void failIfFailed() {
        Throwable e = failure;
        if (e != null) {
            throw new IllegalStateException("placing an order failed: " + e, e);
        }
    }

    /** Stops the writers after their current order and waits for them. */
    void stop() throws InterruptedException {
        stopped = true;
        for (Thread t : threads) {
            t.join(30_000);
        }
    }
}
