package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.spi.support.BucketLease;
import io.outbox.tck.InMemoryOutboxStore;
import io.outbox.tck.InMemoryOutboxStoreProvider;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The standalone relay's run, in this JVM, against an in-process broker and a registered
 * in-memory store: publishing until a stop request (R9), a fatal misconfiguration (R6, S8), a
 * store that cannot be opened at first, and what reaches the log. The separate-process tests
 * with the executable jar and a real database are in module outbox-relay-app.
 */
class StandaloneRelayRunTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final StringSerializer STRING = new StringSerializer();
    private static EmbeddedKafkaBroker broker;

    @BeforeAll
    static void startBroker() {
        broker = EmbeddedKafkaBroker.start();
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    /** A run on its own thread. */
    private static final class Run {
        final Lifecycle lifecycle = Lifecycle.inProcess();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final CompletableFuture<Integer> exitCode;

        Run(Map<String, String> environment) {
            PrintStream errStream = new PrintStream(err, true, StandardCharsets.UTF_8);
            exitCode = CompletableFuture.supplyAsync(() -> StandaloneRelay.execute(new String[0], environment,
                    errStream, errStream, lifecycle, redactor -> { }));
        }

        int stop() throws Exception {
            lifecycle.requestStop();
            return exitCode.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
    }

    private static Map<String, String> environment(String store, String relayId, int buckets) {
        Map<String, String> env = new HashMap<>();
        env.put("OUTBOX_STORE", "memory");
        env.put("OUTBOX_STORE_NAME", store);
        env.put("OUTBOX_KAFKA_BOOTSTRAP_SERVERS", broker.bootstrapServers());
        env.put("OUTBOX_RELAY_ID", relayId);
        env.put("OUTBOX_RELAY_BUCKET_COUNT", Integer.toString(buckets));
        env.put("OUTBOX_RELAY_POLL_INTERVAL_MS", "100");
        env.put("OUTBOX_RELAY_ERROR_BACKOFF_MS", "100");
        env.put("OUTBOX_RELAY_ERROR_BACKOFF_MAX_MS", "200");
        return env;
    }

    private static OutboxMessage message(String topic, String key, int buckets) {
        return OutboxMessage.create(topic, key, "value-" + key, STRING, STRING, buckets);
    }

    private static List<ConsumerRecord<byte[], byte[]>> read(String topic, int expected) {
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic, WAIT).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (records.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
        }
        return records;
    }

    @Test
    void r9_publishesUntilAskedToStopThenGivesItsLeasesBackAndExitsWithZero() throws Exception {
        String name = "run-" + UUID.randomUUID();
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        InMemoryOutboxStoreProvider.register(name, store);
        try {
            String topic = "standalone-run";
            broker.createTopic(topic, 4);
            List<OutboxMessage> messages = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                messages.add(message(topic, "k" + i, 4));
            }
            store.enqueue(messages);
            Run run = new Run(environment(name, "run-relay", 4));

            List<ConsumerRecord<byte[], byte[]>> records = read(topic, messages.size());
            Set<String> ids = records.stream()
                    .map(r -> new String(r.headers().lastHeader("x-outbox-message-id").value(), StandardCharsets.UTF_8))
                    .collect(Collectors.toSet());
            assertThat(ids).isEqualTo(messages.stream().map(m -> m.messageId().toString()).collect(Collectors.toSet()));
            await().atMost(WAIT).until(() -> store.pendingBuckets().isEmpty());
            await().atMost(WAIT).until(() -> store.leases().values().stream()
                    .filter(l -> "run-relay".equals(l.owner())).count() == 4);

            assertThat(run.stop()).isEqualTo(StandaloneRelay.EXIT_OK);
            assertThat(store.leases().values()).extracting(BucketLease::owner).containsOnlyNulls();
            assertThat(run.err.toString(StandardCharsets.UTF_8)).isEmpty();
        } finally {
            InMemoryOutboxStoreProvider.unregister(name);
        }
    }

    @Test
    void r6_s8_rowsOutsideTheBucketRangeStopTheRelayWithExitCodeThreeAndOneErrorLine() throws Exception {
        String name = "fatal-" + UUID.randomUUID();
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        InMemoryOutboxStoreProvider.register(name, store);
        PrintStream originalErr = System.err;
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8)); // where the test's SLF4J binding writes
        try {
            OutboxMessage outside = message("standalone-fatal", "k", 64);
            while (outside.bucket() < 4) {
                outside = message("standalone-fatal", UUID.randomUUID().toString(), 64);
            }
            store.enqueue(outside);
            Run run = new Run(environment(name, "fatal-relay", 4));
            assertThat(run.exitCode.get(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
            assertThat(store.pendingBuckets()).containsExactly(outside.bucket());
        } finally {
            System.setErr(originalErr);
            InMemoryOutboxStoreProvider.unregister(name);
        }
        String text = log.toString(StandardCharsets.UTF_8);
        originalErr.print(text);
        List<String> errors = text.lines().filter(line -> line.contains(" ERROR ")).toList();
        assertThat(errors).as("the misconfiguration is logged once, in one line").hasSize(1);
        assertThat(errors.get(0)).contains("relay stopped on a misconfiguration", "outside [0, 4)");
        assertThat(text).as("no stack trace for a misconfiguration").doesNotContain("\tat ", "Exception:");
        assertThat(text).contains("outbox-relay stopped relayId=fatal-relay exitCode=3");
    }

    /**
     * R6 for an OutOfMemoryError, here wrapped by the store's driver as the PostgreSQL driver does:
     * the standalone relay stops with exit code 1 (an orchestrator restarts it), after one ERROR line
     * naming the settings that decide the memory; it is never retried as a store error.
     */
    @Test
    void r6_anOutOfMemoryErrorWhileReadingABatchExitsWithCodeOneAfterOneErrorLine() throws Exception {
        String name = "oom-" + UUID.randomUUID();
        InMemoryOutboxStore store = new InMemoryOutboxStore(InMemoryOutboxStore.builder()) {
            @Override
            public List<io.outbox.spi.Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
                throw new IllegalStateException("reading a batch of bucket " + bucket + " failed",
                        new java.sql.SQLException("Ran out of memory retrieving query results.",
                                new OutOfMemoryError("Java heap space")));
            }
        };
        InMemoryOutboxStoreProvider.register(name, store);
        PrintStream originalErr = System.err;
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8)); // where the test's SLF4J binding writes
        try {
            store.enqueue(message("standalone-oom", "k", 4));
            Run run = new Run(environment(name, "oom-relay", 4));
            assertThat(run.exitCode.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(StandaloneRelay.EXIT_ERROR);
            assertThat(store.pendingBuckets()).hasSize(1);
        } finally {
            System.setErr(originalErr);
            InMemoryOutboxStoreProvider.unregister(name);
        }
        String text = log.toString(StandardCharsets.UTF_8);
        originalErr.print(text);
        assertThat(text.lines().filter(line -> line.contains(" ERROR "))).singleElement().asString()
                .contains("relay stopped: out of memory", "relayId=oom-relay", "batch.max.bytes=", "batch.size=500");
        assertThat(text).doesNotContain("store call failed")
                .contains("outbox-relay stopped relayId=oom-relay exitCode=1");
    }

    @Test
    void r6_aMisconfigurationAtStartWhoseMessageSpansLinesIsOneErrorLine() throws Exception {
        Map<String, String> env = environment("multiline-" + UUID.randomUUID(), "multiline-relay", 2);
        env.put("OUTBOX_STORE", ScriptedStoreProvider.NAME);
        env.put("OUTBOX_STORE_MISCONFIGURATION", "relation does not exist|  Position: 23; set failures=0");
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        PrintStream originalErr = System.err;
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8)); // where the test's SLF4J binding writes
        int code;
        try {
            code = new Run(env).exitCode.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        } finally {
            System.setErr(originalErr);
        }
        String text = log.toString(StandardCharsets.UTF_8);
        originalErr.print(text);
        assertThat(code).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        List<String> errors = text.lines().filter(line -> line.contains(" ERROR ")).toList();
        assertThat(errors).as("the misconfiguration is logged once, in one line").hasSize(1);
        assertThat(errors.get(0)).contains("invalid store configuration; exiting with code 3: "
                + "relation does not exist Position: 23; set store.failures=0");
    }

    @Test
    void r7_aStoreThatCannotBeOpenedIsRetriedWithItsSecretsHiddenFromTheLog() throws Exception {
        String name = "flaky-" + UUID.randomUUID();
        InMemoryOutboxStoreProvider.register(name, InMemoryOutboxStore.builder().build());
        PrintStream originalErr = System.err;
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8)); // where the test's SLF4J binding writes
        try {
            Map<String, String> env = environment(name, "flaky-relay", 2);
            env.put("OUTBOX_STORE", ScriptedStoreProvider.NAME);
            env.put("OUTBOX_STORE_FAILURES", "2");
            env.put("OUTBOX_STORE_PASSWORD", "pw-31337");
            Run run = new Run(env);
            await().atMost(WAIT).until(() -> ScriptedStoreProvider.calls(name) >= 3);
            assertThat(run.stop()).isEqualTo(StandaloneRelay.EXIT_OK);
        } finally {
            System.setErr(originalErr);
            InMemoryOutboxStoreProvider.unregister(name);
        }
        String text = log.toString(StandardCharsets.UTF_8);
        originalErr.print(text);
        assertThat(text).contains("could not open the store; retrying", "attempt=2", "store opened",
                "jdbc:test://app:[hidden]@db/x", "inner cause mentions [hidden]").doesNotContain("pw-31337");
    }
}
