package io.outbox.examples;

import io.outbox.OutboxMessage;
import io.outbox.OutboxMessageFactory;
import io.outbox.relay.KafkaOutboxPublisher;
import io.outbox.relay.RelayOptions;
import io.outbox.spi.OutboxStore;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The benchmark: how fast the relays drain a pre-filled store to Kafka, against a plain
 * {@link KafkaProducer} sending the same records in the same run.
 *
 * <p>Each round pre-fills N messages (values of random bytes, keys spread over K customers) into
 * the store in batched transactions (not timed), then starts the relays and times from their
 * start until they have published every message (acknowledged by the broker and deleted from the
 * store). Then a plain producer with exactly the relays' producer settings
 * ({@link RelayFleet#producerSettings} through {@link KafkaOutboxPublisher#effectiveConfig}:
 * {@code acks=all}, idempotence, the same {@code linger.ms} and {@code batch.size}) sends the same
 * records (same keys, values and headers, message-id header included) to a second topic and
 * flushes; timed from the first send to the end of the flush. A warm-up round runs first and
 * is reported but not counted.
 */
final class RelayBench {

    /**
     * What to run.
     *
     * @param store the store
     * @param storeOptions how to reach it
     * @param kafkaOptions the cluster and topic prefix
     * @param messages messages per round
     * @param valueBytes bytes per value
     * @param keys distinct keys (customers)
     * @param relays relays
     * @param buckets buckets
     * @param batchSize the relays' batch size
     * @param storeConcurrency each relay's store threads
     * @param runs counted rounds
     * @param warmupMessages messages of the warm-up round; 0 for none
     * @param timeout how long the relays may take to drain one round
     * @param progress whether to show a progress bar
     * @param transactions whether each round also times relays in the transactional mode (K5-K7)
     */
    record Settings(StoreKind store, StoreOptions storeOptions, KafkaOptions kafkaOptions, int messages,
                    int valueBytes, int keys, int relays, int buckets, int batchSize, int storeConcurrency, int runs, int warmupMessages,
                    Duration timeout, boolean progress, boolean transactions, boolean prefetch) {

        /** Settings with the relays' read ahead (relay option prefetch) on, its default. */
        Settings(StoreKind store, StoreOptions storeOptions, KafkaOptions kafkaOptions, int messages,
                 int valueBytes, int keys, int relays, int buckets, int batchSize, int storeConcurrency, int runs,
                 int warmupMessages, Duration timeout, boolean progress, boolean transactions) {
            this(store, storeOptions, kafkaOptions, messages, valueBytes, keys, relays, buckets, batchSize,
                    storeConcurrency, runs, warmupMessages, timeout, progress, transactions, true);
        }

        /** Settings without the transactional mode. */
        Settings(StoreKind store, StoreOptions storeOptions, KafkaOptions kafkaOptions, int messages,
                 int valueBytes, int keys, int relays, int buckets, int batchSize, int storeConcurrency, int runs,
                 int warmupMessages, Duration timeout, boolean progress) {
            this(store, storeOptions, kafkaOptions, messages, valueBytes, keys, relays, buckets, batchSize,
                    storeConcurrency, runs, warmupMessages, timeout, progress, false);
        }
    }

    /**
     * One round's rates, in messages per second, and where the relays' time went.
     *
     * @param label "warm-up" or "run n"
     * @param messages messages in the round
     * @param prefill pre-fill rate (not part of the comparison)
     * @param relay relay rate
     * @param plain plain producer rate
     * @param fetchShare store calls reading batches in progress per relay, on average over the
     *     drain: the summed time of those calls over the drain's time; above 1 when store threads
     *     overlap them
     * @param deleteShare the same for calls deleting published messages
     * @param otherShare the same for other store calls (leases, probes)
     * @param transactional the relay rate in the transactional mode, on the same messages; NaN when
     *     not timed
     */
    record Round(String label, int messages, double prefill, double relay, double plain, double fetchShare,
                 double deleteShare, double otherShare, double transactional) {
        double ratio() {
            return relay / plain;
        }

        /** Transactional relay rate over the default mode's. */
        double transactionalRatio() {
            return transactional / relay;
        }

        /** Transactional relay rate over the plain producer's. */
        double transactionalToPlain() {
            return transactional / plain;
        }
    }

    private final Settings settings;
    private final PrintWriter log;

    RelayBench(Settings settings, PrintWriter log) {
        this.settings = settings;
        this.log = log;
    }

    /** Runs the warm-up and the counted rounds; throws when the benchmark could not run. */
    BenchResult run() throws Exception {
        String runId = RunIds.next();
        String prefix = settings.kafkaOptions().topicOr("outbox-bench-" + runId);
        int partitions = settings.kafkaOptions().partitionsOr(settings.buckets());
        log.printf("bench %s: %,d messages of %,d bytes per run, %d run(s) after a warm-up of %,d, %d relay(s), "
                        + "%d buckets, batch size %d, store concurrency %d%n", runId, settings.messages(),
                settings.valueBytes(), settings.runs(), settings.warmupMessages(), settings.relays(),
                settings.buckets(), settings.batchSize(), settings.storeConcurrency());
        log.flush();
        try (RunScope scope = RunScope.open(settings.store(), settings.storeOptions(), settings.kafkaOptions(), runId,
                1, log)) {
            scope.database().createSchema();
            List<Round> rounds = new ArrayList<>();
            for (int round = settings.warmupMessages() > 0 ? 0 : 1; round <= settings.runs(); round++) {
                String label = round == 0 ? "warm-up" : "run " + round;
                int count = round == 0 ? settings.warmupMessages() : settings.messages();
                String relayTopic = prefix + "-relay-" + round;
                String plainTopic = prefix + "-plain-" + round;
                scope.createTopic(relayTopic, partitions);
                scope.createTopic(plainTopic, partitions);
                String transactionalTopic = prefix + "-transactional-" + round;
                if (settings.transactions()) {
                    scope.createTopic(transactionalTopic, partitions);
                }
                Round result = round(label, count, round, relayTopic, plainTopic, transactionalTopic, runId,
                        scope.kafka(),
                        scope.database());
                log.printf(Locale.ROOT, "%s: relay %,.0f msg/s, plain producer %,.0f msg/s, ratio %.2f"
                        + " (pre-fill %,.0f msg/s)%n", label, result.relay(), result.plain(), result.ratio(),
                        result.prefill());
                if (settings.transactions()) {
                    log.printf(Locale.ROOT, "%s: transactional relay %,.0f msg/s, %.2f of the default mode%n", label,
                            result.transactional(), result.transactionalRatio());
                }
                log.flush();
                rounds.add(result);
            }
            return new BenchResult(runId, scope.database().describe(), scope.kafka().describe(), prefix, partitions,
                    settings, producerDescription(scope.kafka().bootstrapServers()), rounds);
        }
    }

    private Round round(String label, int count, int round, String relayTopic, String plainTopic,
                        String transactionalTopic, String runId, DemoKafka kafka, DemoDatabase database)
            throws Exception {
        List<OutboxMessage> messages = messages(count, relayTopic, round);
        double prefill = prefill(label, messages, database);
        Drain relay = drain(label, count, round, runId, kafka, database, null);
        double plain = plainProducer(messages, plainTopic, kafka.bootstrapServers());
        double transactional = Double.NaN;
        if (settings.transactions()) {
            // The same messages again, to a topic of their own, drained by relays in the transactional mode.
            prefill(label + " (transactional)", messages(count, transactionalTopic, round), database);
            transactional = drain(label + " (transactional)", count, round, runId, kafka, database,
                    "outbox-bench-" + runId + "-" + round).rate();
        }
        return new Round(label, count, prefill, relay.rate(), plain, relay.share(TimedStore::fetchNanos),
                relay.share(TimedStore::deleteNanos), relay.share(TimedStore::otherNanos), transactional);
    }

    private List<OutboxMessage> messages(int count, String topic, long seed) {
        Random random = new Random(seed);
        OutboxMessageFactory<byte[], byte[]> factory = OutboxMessageFactory.builder(settings.buckets())
                .keySerializer(new ByteArraySerializer()).valueSerializer(new ByteArraySerializer()).build();
        List<OutboxMessage> messages = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            byte[] value = new byte[settings.valueBytes()];
            random.nextBytes(value);
            byte[] key = Order.key(i % settings.keys()).getBytes(StandardCharsets.UTF_8);
            messages.add(factory.create(topic, key, value));
        }
        return messages;
    }

    /** Writes the messages in transactions of the store's largest batch; returns messages per second. */
    private double prefill(String label, List<OutboxMessage> messages, DemoDatabase database) throws Exception {
        int chunk = database.maxMessagesPerTransaction();
        long start = System.nanoTime();
        try (Progress progress = Progress.start(settings.progress(), label + " pre-fill", messages.size())) {
            for (int from = 0; from < messages.size(); from += chunk) {
                database.enqueue(messages.subList(from, Math.min(messages.size(), from + chunk)));
                progress.update(Math.min(messages.size(), from + chunk), "");
            }
        }
        return perSecond(messages.size(), System.nanoTime() - start);
    }

    /**
     * The relays' drain of one round.
     *
     * @param rate messages per second
     * @param nanos how long it took
     * @param stores the relays' stores, with the time spent in them
     */
    private record Drain(double rate, long nanos, List<TimedStore> stores) {
        /** Calls of one kind in progress per relay, on average: their summed time over the drain's. */
        double share(ToLongFunction<TimedStore> spent) {
            return stores.stream().mapToLong(spent).sum() / ((double) nanos * stores.size());
        }
    }

    /**
     * Starts the relays on the pre-filled store and waits until they have published every message;
     * in the transactional mode when {@code transactionalIdPrefix} is not null.
     */
    private Drain drain(String label, int count, int round, String runId, DemoKafka kafka, DemoDatabase database,
                        String transactionalIdPrefix) throws Exception {
        RelayOptions options = RelayFleet.options(settings.buckets(), settings.batchSize(),
                settings.storeConcurrency()).toBuilder().prefetch(settings.prefetch()).build();
        List<TimedStore> stores = new ArrayList<>();
        Supplier<OutboxStore> timedStores = () -> {
            TimedStore store = new TimedStore(database.openRelayStore(settings.storeConcurrency()));
            stores.add(store);
            return store;
        };
        try (RelayFleet relays = RelayFleet.create(settings.relays(), "bench-" + runId + "-" + round
                        + (transactionalIdPrefix == null ? "" : "-tx"), timedStores, kafka.bootstrapServers(), options,
                transactionalIdPrefix);
             Progress progress = Progress.start(settings.progress(), label + " relay", count)) {
            long start = System.nanoTime();
            relays.start();
            long deadline = start + settings.timeout().toNanos();
            while (!relays.awaitPublished(count, Duration.ofMillis(200))) {
                progress.update(relays.published(), "");
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("the relays published " + relays.published() + " of " + count
                            + " messages within " + settings.timeout().toSeconds() + " s");
                }
            }
            long elapsed = System.nanoTime() - start;
            progress.update(count, "");
            return new Drain(perSecond(count, elapsed), elapsed, List.copyOf(stores));
        }
    }

    /** Sends the same records with a plain producer and flushes; returns messages per second. */
    private static double plainProducer(List<OutboxMessage> messages, String topic, String bootstrapServers) {
        Map<String, Object> config = plainProducerConfig(bootstrapServers);
        AtomicLong failures = new AtomicLong();
        AtomicReference<Exception> firstFailure = new AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
            producer.partitionsFor(topic);
            long start = System.nanoTime();
            for (OutboxMessage m : messages) {
                RecordHeaders headers = new RecordHeaders();
                m.headers().forEach(headers::add);
                headers.add(KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER,
                        m.messageId().toString().getBytes(StandardCharsets.UTF_8));
                producer.send(new ProducerRecord<>(topic, m.partition(), null, m.key(), m.value(), headers),
                        (metadata, error) -> {
                            if (error != null && failures.getAndIncrement() == 0) {
                                firstFailure.set(error);
                            }
                        });
            }
            producer.flush();
            long elapsed = System.nanoTime() - start;
            if (failures.get() > 0) {
                throw new IllegalStateException(failures.get() + " sends of the plain producer failed",
                        firstFailure.get());
            }
            return perSecond(messages.size(), elapsed);
        }
    }

    /** The plain producer's settings: the relays' publishers', with another client id. */
    private static Map<String, Object> plainProducerConfig(String bootstrapServers) {
        return KafkaOutboxPublisher.effectiveConfig(RelayFleet.producerSettings(bootstrapServers, "bench-plain"));
    }

    /** The producer settings that bear on throughput, as both the relays and the plain producer use them. */
    private static String producerDescription(String bootstrapServers) {
        Map<String, Object> parsed = ProducerConfig.configDef().parse(plainProducerConfig(bootstrapServers));
        StringBuilder text = new StringBuilder();
        for (String key : List.of(ProducerConfig.ACKS_CONFIG, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, ProducerConfig.LINGER_MS_CONFIG,
                ProducerConfig.BATCH_SIZE_CONFIG, ProducerConfig.COMPRESSION_TYPE_CONFIG)) {
            text.append(text.length() == 0 ? "" : ", ").append(key).append('=').append(parsed.get(key));
        }
        return text.toString();
    }

    private static double perSecond(long count, long nanos) {
        return count / (nanos / 1e9);
    }

    /**
     * The benchmark's outcome.
     *
     * @param runId the run id
     * @param store what the store was
     * @param kafka where Kafka was
     * @param topicPrefix the prefix of the rounds' topics
     * @param partitions partitions per topic
     * @param settings what was asked for
     * @param producer the producer settings the relays and the plain producer share
     * @param rounds the warm-up (if any) and the counted rounds, in order
     */
    record BenchResult(String runId, String store, String kafka, String topicPrefix, int partitions,
                       Settings settings, String producer, List<Round> rounds) {

        /** The counted rounds. */
        List<Round> counted() {
            return rounds.stream().filter(r -> !r.label().equals("warm-up")).toList();
        }

        /** The median of a rate over the counted rounds. */
        double median(ToDoubleFunction<Round> rate) {
            double[] values = counted().stream().mapToDouble(rate).sorted().toArray();
            int n = values.length;
            return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
        }

        /** The table. */
        String render() {
            StringBuilder out = new StringBuilder();
            Settings s = settings;
            out.append("Outbox relay benchmark, run ").append(runId).append('\n');
            out.append(String.format(Locale.ROOT, "  %-7s %s%n", "store", store));
            out.append(String.format(Locale.ROOT, "  %-7s %s, topics %s-*, %d partitions each%n", "kafka", kafka,
                    topicPrefix, partitions));
            out.append(String.format(Locale.ROOT, "  %-7s %,d messages per run, %,d-byte values, %,d keys, "
                    + "%d relay(s), %d buckets, batch size %d, store concurrency %d, prefetch %s%n", "load",
                    s.messages(), s.valueBytes(), s.keys(), s.relays(), s.buckets(), s.batchSize(),
                    s.storeConcurrency(), s.prefetch() ? "on" : "off"));
            out.append(String.format(Locale.ROOT, "  %-7s relays and plain producer alike: %s%n%n", "producer",
                    producer));
            out.append(String.format(Locale.ROOT, "  %-10s %14s %14s %21s %7s   %s%n", "round", "pre-fill msg/s",
                    "relay msg/s", "plain producer msg/s", "ratio", "store calls in progress per relay: "
                            + "reads/deletes/other"));
            for (Round r : rounds) {
                out.append(String.format(Locale.ROOT, "  %-10s %,14.0f %,14.0f %,21.0f %7.2f   %.2f / %.2f / %.2f%n",
                        r.label(), r.prefill(), r.relay(), r.plain(), r.ratio(), r.fetchShare(), r.deleteShare(),
                        r.otherShare()));
            }
            List<Round> counted = counted();
            double[] ratios = counted.stream().mapToDouble(Round::ratio).sorted().toArray();
            out.append(String.format(Locale.ROOT, "  %-10s %14s %,14.0f %,21.0f %7.2f%n",
                    "median", "", median(Round::relay), median(Round::plain), median(Round::ratio)));
            out.append(String.format(Locale.ROOT, "%nrelay / plain producer: median ratio %.2f over %d run(s)"
                    + " (lowest %.2f, highest %.2f)%n", median(Round::ratio), counted.size(), ratios[0],
                    ratios[ratios.length - 1]));
            if (s.transactions()) {
                out.append(String.format(Locale.ROOT, "%n  %-10s %24s %20s %20s%n", "round",
                        "transactional msg/s", "of the default mode", "of plain producer"));
                for (Round r : rounds) {
                    out.append(String.format(Locale.ROOT, "  %-10s %,24.0f %20.2f %20.2f%n", r.label(),
                            r.transactional(), r.transactionalRatio(), r.transactionalToPlain()));
                }
                double[] tx = counted.stream().mapToDouble(Round::transactionalRatio).sorted().toArray();
                out.append(String.format(Locale.ROOT, "  %-10s %,24.0f %20.2f %20.2f%n", "median",
                        median(Round::transactional), median(Round::transactionalRatio),
                        median(Round::transactionalToPlain)));
                out.append(String.format(Locale.ROOT, "%ntransactional / default mode: median ratio %.2f over %d "
                        + "run(s) (lowest %.2f, highest %.2f); transactional / plain producer: median ratio %.2f%n",
                        median(Round::transactionalRatio), counted.size(), tx[0], tx[tx.length - 1],
                        median(Round::transactionalToPlain)));
            }
            out.append(String.format(Locale.ROOT, "store: on average %.2f reads and deletes in progress per relay "
                    + "(median), so its %d store threads were busy %.0f%% of the time; the rest of a bucket's "
                    + "time went to publishing and waiting for the broker%n",
                    median(r -> r.fetchShare() + r.deleteShare()), s.storeConcurrency(),
                    100 * median(r -> r.fetchShare() + r.deleteShare()) / s.storeConcurrency()));
            return out.toString();
        }
    }
}
