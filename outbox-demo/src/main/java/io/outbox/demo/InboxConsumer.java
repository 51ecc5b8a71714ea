package io.outbox.demo;

import io.outbox.MessageIdReader;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The demo's business consumer for {@code --inbox}: reads the run's orders and applies each one to
 * its customer's counter through the store's inbox ({@link DemoInbox}), so that every counter ends
 * equal to the orders the customer placed however often an order is delivered. To make repeats
 * happen in every run, it rewinds every partition by up to {@value #REWIND_RECORDS} records every
 * {@value #REWIND_EVERY_POLLS} polls that returned records, at most {@value #MAX_REWINDS} times, as
 * a consumer restarting from an older committed offset would.
 */
final class InboxConsumer implements AutoCloseable {

    static final int REWIND_RECORDS = 20;
    static final int REWIND_EVERY_POLLS = 3;
    static final int MAX_REWINDS = 5;

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final List<TopicPartition> partitions;
    private final String runId;
    private final MessageIdReader ids;
    private final DemoInbox inbox;
    private final Thread thread;
    private final Set<UUID> applied = new HashSet<>();
    private final Map<Integer, Long> expected = new HashMap<>();
    private volatile boolean stopped;
    private volatile Throwable error;
    private long firstDeliveries;
    private long repeatsDropped;
    private int rewinds;

    private InboxConsumer(KafkaConsumer<byte[], byte[]> consumer, List<TopicPartition> partitions, String runId,
                          String messageIdHeader, DemoInbox inbox) {
        this.consumer = consumer;
        this.partitions = partitions;
        this.runId = runId;
        this.ids = MessageIdReader.of(messageIdHeader, MessageIdReader.Policy.FAIL);
        this.inbox = inbox;
        this.thread = new Thread(this::run, "demo-inbox-consumer");
        this.thread.setDaemon(true);
    }

    /** Assigns the topic's partitions from their beginning and starts applying orders. */
    static InboxConsumer start(String bootstrapServers, String topic, String runId, String messageIdHeader,
                               DemoInbox inbox) {
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.CLIENT_ID_CONFIG, "outbox-demo-inbox",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500), new ByteArrayDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> partitions;
        try {
            partitions = OrderConsumer.partitions(consumer, topic);
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
        } catch (RuntimeException e) {
            consumer.close();
            throw e;
        }
        InboxConsumer reader = new InboxConsumer(consumer, partitions, runId, messageIdHeader, inbox);
        reader.thread.start();
        return reader;
    }

    private void run() {
        int pollsWithRecords = 0;
        try {
            while (!stopped) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    apply(record);
                }
                if (!records.isEmpty() && ++pollsWithRecords % REWIND_EVERY_POLLS == 0 && rewinds < MAX_REWINDS) {
                    rewinds++;
                    for (TopicPartition p : partitions) {
                        consumer.seek(p, Math.max(0, consumer.position(p) - REWIND_RECORDS));
                    }
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (Exception e) {
            error = e;
        } finally {
            consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
        }
    }

    private void apply(ConsumerRecord<byte[], byte[]> record) throws Exception {
        Order order;
        try {
            order = Order.parse(record.value());
        } catch (IllegalArgumentException notAnOrder) {
            return; // another producer's record: not this consumer's business
        }
        if (!order.runId().equals(runId)) {
            return;
        }
        UUID id = ids.read(record).orElseThrow(); // an order of this run without a valid id is a bug: fail
        boolean first = inbox.apply(id, order);
        synchronized (this) {
            if (first) {
                firstDeliveries++;
            } else {
                repeatsDropped++;
            }
            if (applied.add(id)) {
                expected.merge(order.customer(), 1L, Long::sum);
            }
        }
    }

    /** How many distinct orders were applied so far. */
    synchronized long distinctApplied() {
        return applied.size();
    }

    /** Throws if the consumer stopped on an error. */
    void failIfStopped() {
        Throwable e = error;
        if (e != null) {
            throw new IllegalStateException("the inbox consumer stopped: " + e, e);
        }
    }

    /** Compares every customer's counter with the distinct orders read for it. */
    synchronized Result result(Map<Integer, Long> counters) {
        Set<Integer> customers = new TreeSet<>(expected.keySet());
        customers.addAll(counters.keySet());
        long mismatched = 0;
        String example = null;
        for (int customer : customers) {
            long want = expected.getOrDefault(customer, 0L);
            long have = counters.getOrDefault(customer, 0L);
            if (want != have) {
                mismatched++;
                if (example == null) {
                    example = String.format(Locale.ROOT, "customer %d: counter %d, orders %d", customer, have, want);
                }
            }
        }
        long total = counters.values().stream().mapToLong(Long::longValue).sum();
        return new Result(applied.size(), firstDeliveries, repeatsDropped, rewinds, total, mismatched, example);
    }

    @Override
    public void close() {
        stop();
    }

    /** Stops reading and waits for the thread to end; idempotent. */
    void stop() {
        stopped = true;
        try {
            consumer.wakeup();
        } catch (IllegalStateException alreadyClosed) {
            // the thread has ended
        }
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * What the inbox consumer found.
     *
     * @param distinctOrders distinct orders of the run it read
     * @param firstDeliveries deliveries the inbox let through (the counters moved)
     * @param repeatsDropped deliveries the inbox refused as repeats
     * @param rewinds how often it rewound the partitions to cause repeats
     * @param counted the sum of all counters
     * @param mismatchedCustomers customers whose counter differs from their orders
     * @param example the first mismatch, or null
     */
    record Result(long distinctOrders, long firstDeliveries, long repeatsDropped, int rewinds, long counted,
                  long mismatchedCustomers, String example) {

        /** Whether every counter equals the customer's orders and every order counted once. */
        boolean passed() {
            return mismatchedCustomers == 0 && counted == distinctOrders && firstDeliveries == distinctOrders;
        }

        /**
         * The run's exit status with this result: the demo's own when it failed, otherwise
         * {@link OutboxDemo#EXIT_ERROR} when a counter is off.
         *
         * @param demoExitCode the delivery check's status
         * @return the status to exit with
         */
        int exitCode(int demoExitCode) {
            return demoExitCode != 0 ? demoExitCode : passed() ? 0 : OutboxDemo.EXIT_ERROR;
        }

        /** Lines for the summary. */
        String render() {
            StringBuilder out = new StringBuilder("\n");
            line(out, "inbox applied", firstDeliveries, "first deliveries, each +1 on its customer's counter");
            line(out, "inbox repeats", repeatsDropped, "deliveries dropped by the inbox (" + rewinds
                    + " rewinds of " + REWIND_RECORDS + " records)");
            line(out, "counters total", counted, "sum of the customers' counters");
            line(out, "mismatches", mismatchedCustomers, "customers whose counter differs from their orders");
            out.append(passed()
                    ? "OK: every customer's counter equals the orders it placed, repeats included.\n"
                    : "FAILED: the inbox counters differ from the orders placed" + (example == null ? "" : " ("
                    + example + ")") + ".\n");
            return out.toString();
        }

        private static void line(StringBuilder out, String label, long value, String note) {
            out.append(String.format(Locale.ROOT, "  %-17s %,12d   %s%n", label, value, note));
        }
    }
}
