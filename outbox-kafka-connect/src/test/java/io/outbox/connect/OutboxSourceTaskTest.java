package io.outbox.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.notify.NotificationTransport;
import io.outbox.notify.NotificationTransports;
import io.outbox.relay.BucketFencedException;
import io.outbox.relay.PublishResult;
import io.outbox.relay.kafka.OutboxRecords;
import io.outbox.spi.DeadLetter;
import io.outbox.spi.support.BucketLease;
import io.outbox.tck.InMemoryOutboxStore;
import io.outbox.tck.InMemoryOutboxStoreProvider;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.apache.kafka.connect.source.TransactionContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The task on the in-memory store, with Connect's callbacks made the way {@code WorkerSourceTask}
 * and {@code ExactlyOnceWorkerSourceTask} make them (see {@link ConnectPublisher}). The real
 * runtime runs in {@link ConnectClusterIT}.
 */
class OutboxSourceTaskTest {

    private static final StringSerializer STRING = new StringSerializer();
    private static final int BUCKETS = 4;

    private final String storeName = "connect-task-" + UUID.randomUUID();
    private InMemoryOutboxStore store;
    private OutboxSourceTask task;
    /** Further tasks a test started, stopped after it. */
    private final List<OutboxSourceTask> moreTasks = new ArrayList<>();
    /** Threads polling a task, halted after the test. */
    private final List<TaskThread> taskThreads = new ArrayList<>();
    /** Settings a test adds to {@link #config()}. */
    private final Map<String, String> extra = new HashMap<>();

    @BeforeEach
    void registerStore() {
        store = InMemoryOutboxStore.builder().build();
        InMemoryOutboxStoreProvider.register(storeName, store);
    }

    @AfterEach
    void stopTask() {
        taskThreads.forEach(TaskThread::halt);
        moreTasks.forEach(OutboxSourceTask::stop);
        if (task != null) {
            task.stop();
        }
        InMemoryOutboxStoreProvider.unregister(storeName);
    }

    private Map<String, String> config() {
        Map<String, String> props = new HashMap<>();
        props.put("name", "orders");
        props.put("store", "memory");
        props.put("store.name", storeName);
        props.put("relay.bucket.count", Integer.toString(BUCKETS));
        props.put("relay.poll.interval.ms", "50");
        props.put("relay.error.backoff.ms", "50");
        props.put("relay.error.backoff.max.ms", "100");
        props.put("relay.lease.duration.ms", "3000");
        props.put("relay.lease.renew.interval.ms", "1000");
        props.put("key.converter", OutboxConnectorConfig.BYTE_ARRAY_CONVERTER);
        props.put("value.converter", OutboxConnectorConfig.BYTE_ARRAY_CONVERTER);
        props.put("header.converter", OutboxConnectorConfig.BYTE_ARRAY_CONVERTER);
        props.putAll(extra);
        return props;
    }

    private void start(TransactionContext transactions) {
        Map<String, String> props = new HashMap<>(config());
        props.put(OutboxSourceConnector.TASK_INDEX, "0");
        task = started(transactions, props);
    }

    /** A task initialized with a context over {@link #config()} and started with {@code props}. */
    private OutboxSourceTask started(TransactionContext transactions, Map<String, String> props) {
        OutboxSourceTask instance = new OutboxSourceTask();
        instance.initialize(new SourceTaskContext() {
            @Override
            public Map<String, String> configs() {
                return config();
            }

            @Override
            public OffsetStorageReader offsetStorageReader() {
                return null;
            }

            @Override
            public TransactionContext transactionContext() {
                return transactions;
            }

            @Override
            public PluginMetrics pluginMetrics() {
                return null;
            }
        });
        instance.start(props);
        return instance;
    }

    private static OutboxMessage message(String key, String value) {
        return OutboxMessage.create("orders", key, value, STRING, STRING, BUCKETS);
    }

    private List<SourceRecord> pollUntilRecords() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < deadline) {
            List<SourceRecord> records = task.poll();
            if (records != null && !records.isEmpty()) {
                return records;
            }
        }
        throw new AssertionError("no records within 20 s");
    }

    private static RecordMetadata written(SourceRecord record) {
        return new RecordMetadata(new TopicPartition(record.topic(), 0), 0, 0, 0, 0, 0);
    }

    @Test
    void x2_recordsAreTheRelaysRecords_theBucketIsTheSourcePartition() throws Exception {
        OutboxMessage plain = message("k1", "v1");
        OutboxMessage shaped = OutboxMessage.create("orders", null, null, STRING, STRING,
                List.of(new RecordHeader("h", "1".getBytes(StandardCharsets.UTF_8)), new RecordHeader("h", null)),
                BUCKETS, 3);
        store.enqueue(plain, shaped);
        start(null);
        List<SourceRecord> records = new ArrayList<>(pollUntilRecords());
        while (records.size() < 2) {
            records.addAll(pollUntilRecords());
        }
        OutboxRecords relay = OutboxRecords.withMessageIdHeader("x-outbox-message-id");
        for (OutboxMessage message : List.of(plain, shaped)) {
            SourceRecord record = records.stream().filter(r -> r.sourceOffset().get(ConnectPublisher.MESSAGE_ID)
                    .equals(message.messageId().toString())).findFirst().orElseThrow();
            ProducerRecord<byte[], byte[]> expected = relay.record(message);
            assertThat(record.topic()).isEqualTo(expected.topic());
            assertThat(record.kafkaPartition()).isEqualTo(expected.partition());
            assertThat((byte[]) record.key()).isEqualTo(expected.key());
            assertThat((byte[]) record.value()).isEqualTo(expected.value());
            assertThat(record.timestamp()).as("K4: the producer stamps the send time").isNull();
            List<String> headers = new ArrayList<>();
            for (Header h : record.headers()) {
                headers.add(h.key() + "=" + (h.value() == null ? null : new String((byte[]) h.value(),
                        StandardCharsets.UTF_8)));
            }
            List<String> expectedHeaders = new ArrayList<>();
            expected.headers().forEach(h -> expectedHeaders.add(h.key() + "=" + (h.value() == null ? null
                    : new String(h.value(), StandardCharsets.UTF_8))));
            assertThat(headers).isEqualTo(expectedHeaders);
            assertThat(record.sourcePartition()).isEqualTo(Map.of(ConnectPublisher.BUCKET, message.bucket()));
        }
    }

    /**
     * Wake-ups: with a poll interval of ten minutes, a message enqueued after the first round is
     * read only when a writer's hint arrives over the notification transport the task listens on
     * (Redis pub/sub here, the same transports and settings as the relay's).
     */
    @Test
    void x2_aWriterHintOverTheNotifyTransportWakesTheTask_pollingAloneWouldWaitTenMinutes() throws Exception {
        String uri = System.getenv().getOrDefault("OUTBOX_TEST_REDIS_URI", "redis://127.0.0.1:6379");
        String channel = "connect-task-" + UUID.randomUUID();
        extra.put("relay.poll.interval.ms", Long.toString(Duration.ofMinutes(10).toMillis()));
        extra.put("notify.transport", "redis");
        extra.put("notify.redis.uri", uri);
        extra.put("notify.redis.channel", channel);
        OutboxMessage first = message("k", "first");
        store.enqueue(first);
        start(null);
        List<SourceRecord> records = pollUntilRecords(); // the first round reads every bucket it takes
        task.commitRecord(records.get(0), written(records.get(0)));
        try (NotificationTransport writer = NotificationTransports.open("redis", Map.of("uri", uri, "channel", channel))) {
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> store.pendingBuckets().isEmpty() && subscribers(uri, channel) > 0);
            OutboxMessage second = message("k", "second");
            store.enqueue(second);
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(12)).until(() -> {
                List<SourceRecord> polled = task.poll();
                return polled == null || polled.isEmpty();
            });
            writer.publish(new int[] {second.bucket()});
            List<SourceRecord> woken = pollUntilRecords();
            assertThat(woken).extracting(r -> new String((byte[]) r.value(), StandardCharsets.UTF_8))
                    .containsExactly("second");
        }
    }

    /** Redis's {@code PUBSUB NUMSUB} of one channel, in its inline form: the task's subscription is up. */
    private static long subscribers(String uri, String channel) throws IOException {
        URI redis = URI.create(uri);
        try (Socket socket = new Socket(redis.getHost(), redis.getPort())) {
            OutputStream out = socket.getOutputStream();
            out.write(("PUBSUB NUMSUB " + channel + "\r\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            for (int i = 0; i < 3; i++) {
                in.readLine(); // *2, $length, the channel
            }
            String count = in.readLine(); // :N
            return Long.parseLong(count.substring(1));
        }
    }

    @Test
    void x3_deletedOnlyAfterConnectReportsTheRecordWritten() throws Exception {
        OutboxMessage m = message("k", "v");
        store.enqueue(m);
        start(null);
        List<SourceRecord> records = pollUntilRecords();
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(10))
                .until(() -> store.pendingBuckets().contains(m.bucket()));
        task.commitRecord(records.get(0), written(records.get(0)));
        await().atMost(Duration.ofSeconds(10)).until(() -> store.pendingBuckets().isEmpty());
    }

    @Test
    void x3_nullMetadataNeverDeletes_theMessageIsSentAgainBeforeTheBucketGoesOn() throws Exception {
        OutboxMessage first = message("same-key", "1");
        OutboxMessage second = message("same-key", "2");
        store.enqueue(first, second);
        start(null);
        List<SourceRecord> records = pollUntilRecords();
        assertThat(records).hasSize(2);
        task.commitRecord(records.get(0), null); // a filter dropped it
        task.commitRecord(records.get(1), written(records.get(1)));
        List<SourceRecord> again = pollUntilRecords();
        assertThat(again.get(0).sourceOffset().get(ConnectPublisher.MESSAGE_ID))
                .as("the bucket starts again at the record Connect did not write")
                .isEqualTo(first.messageId().toString());
        assertThat(store.pendingBuckets()).contains(first.bucket());
        again.forEach(r -> task.commitRecord(r, written(r)));
        await().atMost(Duration.ofSeconds(10)).until(() -> { // R12: the failed message alone first, then the rest
            List<SourceRecord> more = task.poll();
            if (more != null) {
                more.forEach(r -> task.commitRecord(r, written(r)));
            }
            return store.pendingBuckets().isEmpty();
        });
    }

    /**
     * docs/kafka-connect.md: with {@code relay.poison.policy=dead-letter}, a record Connect keeps
     * reporting with null metadata (a filter drops it) moves to the store's dead letters after
     * {@code relay.poison.max.attempts} attempts, and the bucket goes on with the next message.
     */
    @Test
    void x3_nullMetadataUnderTheDeadLetterPolicy_movesTheMessageToTheDeadLettersAndTheBucketGoesOn() throws Exception {
        extra.put("relay.poison.policy", "dead-letter");
        extra.put("relay.poison.max.attempts", "2");
        OutboxMessage dropped = message("same-key", "1");
        OutboxMessage next = message("same-key", "2");
        store.enqueue(dropped, next);
        start(null);
        List<String> nextWritten = new ArrayList<>();
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            List<SourceRecord> records = task.poll();
            for (SourceRecord r : records == null ? List.<SourceRecord>of() : records) {
                boolean isDropped = dropped.messageId().toString().equals(r.sourceOffset().get(ConnectPublisher.MESSAGE_ID));
                task.commitRecord(r, isDropped ? null : written(r));
                if (!isDropped) {
                    nextWritten.add(new String((byte[]) r.value(), StandardCharsets.UTF_8));
                }
            }
            return store.pendingBuckets().isEmpty();
        });
        DeadLetter deadLetter = store.deadLetters().orElseThrow().deadLetter(dropped.messageId()).orElseThrow();
        assertThat(deadLetter.failure().attempts()).isEqualTo(2);
        assertThat(nextWritten).as("the bucket went on with the next message").contains("2");
    }

    @Test
    void x3_exactlyOnce_deletedAfterTheCommit_oneBucketBatchPerTransaction() throws Exception {
        RecordingTransactions transactions = new RecordingTransactions();
        OutboxMessage m = message("k", "v");
        store.enqueue(m);
        start(transactions);
        List<SourceRecord> records = pollUntilRecords();
        assertThat(task.poll()).as("the call after a batch asks for its commit").isNull();
        assertThat(transactions.requests).containsExactly("commit");
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(10))
                .until(() -> store.pendingBuckets().contains(m.bucket()));
        records.forEach(r -> task.commitRecord(r, written(r))); // after Connect committed the transaction
        task.commit();
        await().atMost(Duration.ofSeconds(10)).until(() -> store.pendingBuckets().isEmpty());
    }

    @Test
    void x3_exactlyOnce_anAbortedTransactionDeletesNothing_evenWhenConnectReportsItsRecordsWritten() throws Exception {
        RecordingTransactions transactions = new RecordingTransactions();
        ConnectPublisher publisher = new ConnectPublisher(OutboxRecords.withMessageIdHeader("x-outbox-message-id"),
                transactions);
        OutboxMessage m = message("k", "v");
        CompletableFuture<PublishResult> result = publisher.publish(List.of(m));
        List<SourceRecord> records = publisher.poll(Duration.ofSeconds(1));
        publisher.bucketsReleased(Set.of(m.bucket())); // the lease was lost before the commit
        assertThat(publisher.poll(Duration.ofMillis(10))).isNull();
        assertThat(transactions.requests).containsExactly("abort");
        // ExactlyOnceWorkerSourceTask: after the abort it commits the offsets and reports the aborted
        // records the broker had acknowledged with their metadata.
        records.forEach(r -> publisher.recordReported(r, written(r)));
        publisher.committed();
        assertThat(result).isCompleted();
        PublishResult outcome = result.join();
        assertThat(outcome.acknowledged()).as("nothing deleted").isZero();
        assertThat(outcome.firstError()).isInstanceOf(BucketFencedException.class);
    }

    @Test
    void x3_exactlyOnce_aTransactionOfDroppedRecordsOnlyIsSettledByCommit() throws Exception {
        RecordingTransactions transactions = new RecordingTransactions();
        ConnectPublisher publisher = new ConnectPublisher(OutboxRecords.withMessageIdHeader("x-outbox-message-id"),
                transactions);
        CompletableFuture<PublishResult> result = publisher.publish(List.of(message("k", "v")));
        publisher.poll(Duration.ofSeconds(1));
        assertThat(publisher.poll(Duration.ofMillis(10))).isNull();
        publisher.committed(); // Connect committed nothing and did not report the dropped record yet
        assertThat(result.join().acknowledged()).isZero();
        assertThat(result.join().firstError()).isInstanceOf(RecordNotWrittenException.class);
    }

    /**
     * X1, X3 without exactly-once support: a zombie instance of task 0 (its worker cut off from the
     * group, the instance still running) and the instance the rebalance started from the same task
     * configuration, each under a relay id of its own, over the same buckets while messages keep
     * coming. Each runs on a thread of its own as Connect runs a task: poll, then report the
     * previous poll's records written, so every batch stays in Connect's hands for one poll. Every
     * record a poll returns is checked as it comes: its bucket's lease is held by the returning
     * task, and the other task has no record of that bucket in Connect's hands. Both running, they
     * split the buckets by the store's fair share and both deliver; once the zombie's thread no
     * longer polls, its relay still renews its leases and the replacement returns no record of its
     * buckets; once it stops (its leases given back) the replacement takes its buckets and delivers
     * the rest. Every message is delivered and deleted, each key's first deliveries in enqueue
     * order.
     */
    @Test
    void x1_x3_aZombieTaskAndItsReplacementNeverPublishOneBucketAtOnce_theReplacementTakesOverWhenTheZombieStops()
            throws Exception {
        List<String> keys = IntStream.range(0, 12).mapToObj(i -> "key-" + i).toList();
        assertThat(keys.stream().map(k -> message(k, "0").bucket()).distinct().count())
                .as("the keys cover every bucket").isEqualTo(BUCKETS);
        OutboxSourceConnector connector = new OutboxSourceConnector();
        connector.start(config());
        Map<String, String> task0 = connector.taskConfigs(1).get(0); // both instances run this configuration
        connector.stop();
        Writer writer = new Writer(keys);
        Deliveries deliveries = new Deliveries();
        for (int i = 0; i < 10; i++) {
            writer.round();
        }

        OutboxSourceTask zombie = started(null, task0);
        moreTasks.add(zombie);
        String zombieId = zombie.relayId();
        TaskThread zombieThread = new TaskThread("zombie", zombie, zombieId, deliveries);
        await().atMost(Duration.ofSeconds(20)).until(() -> store.pendingBuckets().isEmpty());
        assertThat(held(zombieId)).as("alone, the first instance holds every bucket").hasSize(BUCKETS);

        OutboxSourceTask replacement = started(null, task0);
        moreTasks.add(replacement);
        String replacementId = replacement.relayId();
        TaskThread replacementThread = new TaskThread("replacement", replacement, replacementId, deliveries);
        // Messages keep coming: one per key at each evaluation of the conditions below.
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            writer.round();
            return deliveries.noViolation()
                    && held(zombieId).size() == BUCKETS / 2 && held(replacementId).size() == BUCKETS / 2;
        });
        int bothRunning = deliveries.size();
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(12)).until(() -> {
            writer.round();
            return deliveries.noViolation()
                    && held(zombieId).size() == BUCKETS / 2 && held(replacementId).size() == BUCKETS / 2;
        });
        Set<Integer> zombieBuckets = held(zombieId);
        assertThat(deliveries.bucketsFrom("zombie", bothRunning))
                .as("the zombie keeps publishing the buckets it holds").isEqualTo(zombieBuckets);
        assertThat(deliveries.bucketsFrom("replacement", bothRunning)).as("the replacement publishes the others")
                .isEqualTo(held(replacementId));

        zombieThread.halt(); // its task thread stuck: nothing polls the zombie any more
        int halted = deliveries.size();
        writer.round();
        // Longer than the 3 s lease: the zombie's relay renews its leases on its own threads, without poll().
        await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(14)).until(() -> deliveries.noViolation()
                && held(zombieId).equals(zombieBuckets)
                && deliveries.bucketsFrom("replacement", halted).stream().noneMatch(zombieBuckets::contains));
        assertThat(store.pendingBuckets()).as("the zombie's buckets wait for it").containsAll(zombieBuckets);

        zombie.stop(); // gives its leases back
        int stopped = deliveries.size();
        await().atMost(Duration.ofSeconds(20))
                .until(() -> deliveries.noViolation() && store.pendingBuckets().isEmpty()
                        && held(replacementId).size() == BUCKETS);
        replacementThread.halt();
        assertThat(deliveries.bucketsFrom("replacement", stopped)).as("the replacement delivered the rest")
                .containsAll(zombieBuckets);
        assertThat(zombieThread.failure).isNull();
        assertThat(replacementThread.failure).isNull();
        assertThat(deliveries.violations()).isEmpty();
        assertThat(store.pendingBuckets()).isEmpty();
        Map<String, List<Integer>> firstDeliveries = deliveries.firstDeliveriesByKey();
        for (String key : keys) {
            assertThat(firstDeliveries.get(key))
                    .as("every message of %s delivered, first deliveries in enqueue order", key)
                    .isEqualTo(IntStream.range(0, writer.enqueued(key)).boxed().toList());
        }
    }

    /** The buckets whose lease {@code relayId} holds now. */
    private Set<Integer> held(String relayId) {
        long now = System.currentTimeMillis(); // the store's clock
        return store.leases().values().stream().filter(lease -> lease.isHeldBy(relayId, now))
                .map(BucketLease::bucket).collect(Collectors.toCollection(TreeSet::new));
    }

    /** Enqueues rounds of one message per key; each key's values count 0, 1, 2, ... */
    private final class Writer {

        private final List<String> keys;
        private final Map<String, Integer> counts = new HashMap<>();

        Writer(List<String> keys) {
            this.keys = keys;
        }

        synchronized void round() {
            List<OutboxMessage> batch = new ArrayList<>();
            for (String key : keys) {
                int next = counts.merge(key, 1, Integer::sum) - 1;
                batch.add(message(key, Integer.toString(next)));
            }
            store.enqueue(batch);
        }

        synchronized int enqueued(String key) {
            return counts.getOrDefault(key, 0);
        }
    }

    /** One record as a poll returned it. */
    private record Delivery(String task, int bucket, String key, int value, String messageId) {
    }

    /**
     * What the tasks' polls returned, in the order they returned it, checked as it comes (X1):
     * the returning task holds the bucket's lease, and no other task has a record of that bucket in
     * Connect's hands (returned and not yet reported).
     */
    private final class Deliveries {

        private final List<Delivery> log = new ArrayList<>();
        private final List<String> violations = new ArrayList<>();
        private final Map<Integer, String> inConnectsHands = new HashMap<>();

        synchronized void returned(String task, String relayId, List<SourceRecord> records) {
            Map<Integer, BucketLease> leases = store.leases();
            long now = System.currentTimeMillis();
            for (SourceRecord r : records) {
                int bucket = (Integer) r.sourcePartition().get(ConnectPublisher.BUCKET);
                BucketLease lease = leases.get(bucket);
                if (lease == null || !lease.isHeldBy(relayId, now)) {
                    violations.add(task + " returned a record of bucket " + bucket + " under the lease " + lease);
                }
                String other = inConnectsHands.putIfAbsent(bucket, task);
                if (other != null && !other.equals(task)) {
                    violations.add(task + " returned a record of bucket " + bucket + " while " + other
                            + " had one in Connect's hands");
                }
                log.add(new Delivery(task, bucket, new String((byte[]) r.key(), StandardCharsets.UTF_8),
                        Integer.parseInt(new String((byte[]) r.value(), StandardCharsets.UTF_8)),
                        (String) r.sourceOffset().get(ConnectPublisher.MESSAGE_ID)));
            }
        }

        synchronized void reported(String task, List<SourceRecord> records) {
            for (SourceRecord r : records) {
                inConnectsHands.remove((Integer) r.sourcePartition().get(ConnectPublisher.BUCKET), task);
            }
        }

        synchronized int size() {
            return log.size();
        }

        synchronized List<String> violations() {
            return List.copyOf(violations);
        }

        /** True, or an assertion error naming every check that failed so far. */
        boolean noViolation() {
            assertThat(violations()).as("X1: records of a bucket only from its lease holder, one task at a time")
                    .isEmpty();
            return true;
        }

        /** The buckets of the records {@code task} returned from the {@code from}-th delivery on. */
        synchronized Set<Integer> bucketsFrom(String task, int from) {
            return log.subList(from, log.size()).stream().filter(d -> d.task().equals(task)).map(Delivery::bucket)
                    .collect(Collectors.toCollection(TreeSet::new));
        }

        /** Per key, the values of each message's first delivery, in delivery order. */
        synchronized Map<String, List<Integer>> firstDeliveriesByKey() {
            Set<String> seen = new HashSet<>();
            Map<String, List<Integer>> byKey = new LinkedHashMap<>();
            for (Delivery d : log) {
                if (seen.add(d.messageId())) {
                    byKey.computeIfAbsent(d.key(), k -> new ArrayList<>()).add(d.value());
                }
            }
            return byKey;
        }
    }

    /**
     * A task's thread as Connect runs it without exactly-once support: poll, then report the
     * previous poll's records written (the producer's acknowledgements arrive while the next poll
     * waits).
     */
    private final class TaskThread {

        private final String name;
        private final OutboxSourceTask task;
        private final String relayId;
        private final Deliveries deliveries;
        private final Thread thread;
        private volatile boolean polling = true;
        private volatile Throwable failure;

        TaskThread(String name, OutboxSourceTask task, String relayId, Deliveries deliveries) {
            this.name = name;
            this.task = task;
            this.relayId = relayId;
            this.deliveries = deliveries;
            this.thread = new Thread(this::run, "connect-task-" + name);
            this.thread.setDaemon(true);
            taskThreads.add(this);
            this.thread.start();
        }

        private void run() {
            List<SourceRecord> previous = List.of();
            try {
                while (polling) {
                    List<SourceRecord> records = task.poll();
                    if (records != null && !records.isEmpty()) {
                        deliveries.returned(name, relayId, records);
                    }
                    report(previous);
                    previous = records == null ? List.of() : records;
                }
                report(previous);
            } catch (Throwable e) {
                failure = e;
            }
        }

        private void report(List<SourceRecord> records) {
            deliveries.reported(name, records);
            records.forEach(r -> task.commitRecord(r, written(r)));
        }

        /** Stops polling once the current poll returned and its records were reported. */
        void halt() {
            polling = false;
            await().atMost(Duration.ofSeconds(10)).until(() -> !thread.isAlive());
        }
    }

    /** Records what the task asked of Connect's transactions. */
    static final class RecordingTransactions implements TransactionContext {

        final List<String> requests = new ArrayList<>();

        @Override
        public synchronized void commitTransaction() {
            requests.add("commit");
        }

        @Override
        public synchronized void commitTransaction(SourceRecord record) {
            requests.add("commit record");
        }

        @Override
        public synchronized void abortTransaction() {
            requests.add("abort");
        }

        @Override
        public synchronized void abortTransaction(SourceRecord record) {
            requests.add("abort record");
        }
    }
}
