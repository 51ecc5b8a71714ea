package io.outbox.relay;

import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.relay.kafka.KafkaTransactions;
import io.outbox.tck.InMemoryOutboxStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Throughput of the relay (in-memory store, batchSize 500), in the default mode and in the
 * transactional mode (K5-K7: one transaction per batch, a producer per bucket), against a plain
 * KafkaProducer sending the same records (1 KiB values, 1,000 keys, the same enforced producer
 * settings) to the same in-process broker, in one run. Prints numbers; asserts nothing. Excluded from the normal build;
 * run it with
 *
 * <pre>
 * mvn -B -ntp -pl outbox-relay -am verify -Drelay.test.excludedGroups= -Dgroups=benchmark \
 *     -Dsurefire.failIfNoSpecifiedTests=false [-Dbenchmark.messages=100000] [-Dbenchmark.runs=3]
 * </pre>
 *
 * and read the result in {@code outbox-relay/target/surefire-reports/*RelayThroughputBenchmark-output.txt}.
 */
@Tag("benchmark")
class RelayThroughputBenchmark {

    private static final int MESSAGES = Integer.getInteger("benchmark.messages", 100_000);
    private static final int RUNS = Integer.getInteger("benchmark.runs", 3);
    private static final int BUCKETS = 8;
    private static final int KEYS = 1_000;
    private static final int VALUE_BYTES = 1_024;

    @Test
    void relayVersusPlainProducer() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start()) {
            Map<String, Object> config = KafkaOutboxPublisher.effectiveConfig(broker.adminConfig());
            List<double[]> results = new ArrayList<>();
            for (int run = 0; run <= RUNS; run++) { // run 0 warms up the JIT and the broker; not counted
                String rawTopic = "bench-raw-" + run;
                String relayTopic = "bench-relay-" + run;
                String transactionalTopic = "bench-transactional-" + run;
                broker.createTopic(rawTopic, BUCKETS);
                broker.createTopic(relayTopic, BUCKETS);
                broker.createTopic(transactionalTopic, BUCKETS);
                double raw = plainProducer(config, messages(rawTopic));
                double relay = relay(config, messages(relayTopic), null);
                double transactional = relay(broker.adminConfig(), messages(transactionalTopic),
                        KafkaTransactions.builder("bench-" + run).build());
                report(run == 0 ? "warm-up" : "run " + run, relay, transactional, raw);
                if (run > 0) {
                    results.add(new double[] {relay, raw, relay / raw, transactional, transactional / relay});
                }
            }
            report("median of " + RUNS + " runs", median(results, 0), median(results, 3), median(results, 1));
            System.err.printf("median ratio of the runs %.2f, lowest %.2f, highest %.2f%n", median(results, 2),
                    results.stream().mapToDouble(r -> r[2]).min().orElseThrow(),
                    results.stream().mapToDouble(r -> r[2]).max().orElseThrow());
            System.err.printf("median ratio transactional/default %.2f, lowest %.2f, highest %.2f%n",
                    median(results, 4), results.stream().mapToDouble(r -> r[4]).min().orElseThrow(),
                    results.stream().mapToDouble(r -> r[4]).max().orElseThrow());
        }
    }

    private static List<OutboxMessage> messages(String topic) {
        Random random = new Random(42);
        List<OutboxMessage> messages = new ArrayList<>(MESSAGES);
        for (int i = 0; i < MESSAGES; i++) {
            byte[] value = new byte[VALUE_BYTES];
            random.nextBytes(value);
            byte[] key = ("key-" + (i % KEYS)).getBytes(StandardCharsets.UTF_8);
            messages.add(OutboxMessage.create(topic, key, value, new ByteArraySerializer(), new ByteArraySerializer(),
                    List.<OutboxHeader>of(), BUCKETS));
        }
        return messages;
    }

    /** The same records as the relay sends, from the same message objects, then one flush. */
    private static double plainProducer(Map<String, Object> config, List<OutboxMessage> messages) {
        try (Producer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
            producer.partitionsFor(messages.get(0).topic());
            long start = System.nanoTime();
            for (OutboxMessage m : messages) {
                RecordHeaders headers = new RecordHeaders();
                headers.add(KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER,
                        m.messageId().toString().getBytes(StandardCharsets.UTF_8));
                producer.send(new ProducerRecord<>(m.topic(), null, null, m.key(), m.value(), headers));
            }
            producer.flush();
            return perSecond(messages.size(), System.nanoTime() - start);
        }
    }

    /**
     * Pre-filled store, drained by one relay with the default batch size of 500; in the
     * transactional mode when {@code transactions} is not null.
     */
    private static double relay(Map<String, Object> config, List<OutboxMessage> messages,
                                KafkaTransactions transactions) throws InterruptedException {
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        store.enqueue(messages);
        CountDownLatch drained = new CountDownLatch(messages.size());
        RelayListener counter = new RelayListener() {
            @Override
            public void onPublished(int bucket, int count) {
                for (int i = 0; i < count; i++) {
                    drained.countDown();
                }
            }
        };
        RelayOptions options = RelayOptions.builder().relayId("benchmark").bucketCount(BUCKETS).batchSize(500).build();
        try (Producer<byte[], byte[]> producer = new KafkaProducer<>(KafkaOutboxPublisher.effectiveConfig(config));
             KafkaOutboxPublisher publisher = transactions == null
                     ? KafkaOutboxPublisher.builder(producer).build()
                     : KafkaOutboxPublisher.builder(config).transactions(transactions).build();
             OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options).listener(counter).build()) {
            producer.partitionsFor(messages.get(0).topic());
            long start = System.nanoTime();
            relay.start();
            if (!drained.await(10, TimeUnit.MINUTES)) {
                throw new IllegalStateException("the relay did not drain the store in 10 minutes");
            }
            return perSecond(messages.size(), System.nanoTime() - start);
        }
    }

    private static double perSecond(int count, long nanos) {
        return count / (nanos / (double) Duration.ofSeconds(1).toNanos());
    }

    private static double median(List<double[]> results, int column) {
        double[] values = results.stream().mapToDouble(r -> r[column]).sorted().toArray();
        return values[values.length / 2];
    }

    private static void report(String label, double relay, double transactional, double raw) {
        System.err.printf("%s: %,d messages of %d B: relay %,.0f msg/s, transactional relay %,.0f msg/s, plain "
                + "producer %,.0f msg/s, ratio %.2f, transactional/default %.2f, transactional/plain %.2f%n", label,
                MESSAGES, VALUE_BYTES, relay, transactional, raw, relay / raw, transactional / relay, transactional / raw);
    }
}
