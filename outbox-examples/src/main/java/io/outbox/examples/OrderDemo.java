package io.outbox.examples;

import io.outbox.examples.DeliveryChecker.CheckResult;
import io.outbox.relay.RelayOptions;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * One demo run: the topic and tables of the run, the relays and the checking consumer, the
 * writers placing orders, the wait for every message, then the check and the clean-up.
 */
final class OrderDemo {

    /** How long the relays get to share the buckets before the writers start. */
    private static final Duration BALANCE_TIMEOUT = Duration.ofSeconds(15);
    private static final Duration PUBLISHED_COUNT_WAIT = Duration.ofSeconds(10);

    /**
     * What to run.
     *
     * @param store the store
     * @param storeOptions how to reach it
     * @param kafkaOptions the cluster and topic
     * @param orders orders to place
     * @param customers customers placing them
     * @param writers writer threads
     * @param relays relays
     * @param buckets buckets
     * @param batchSize the relays' batch size
     * @param timeout how long to wait for deliveries after the last order was placed
     * @param seed the seed of the order plan
     * @param rate orders per second in all, or 0 for as fast as the writers can
     * @param progress whether to show a progress bar
     */
    record Settings(StoreKind store, StoreOptions storeOptions, KafkaOptions kafkaOptions, int orders, int customers,
                    int writers, int relays, int buckets, int batchSize, Duration timeout, long seed, int rate,
                    boolean progress) {
    }

    private final Settings settings;
    private final PrintWriter log;

    OrderDemo(Settings settings, PrintWriter log) {
        this.settings = settings;
        this.log = log;
    }

    /** Runs the demo; throws when it could not run (a server unreachable, a write failing). */
    DemoSummary run() throws Exception {
        String runId = RunIds.next();
        String topic = settings.kafkaOptions().topicOr("outbox-demo-" + runId);
        log.printf("run %s: %,d orders from %,d customers, %d writer(s), %d relay(s), %d buckets, batch size %d,"
                        + " seed %d%n", runId, settings.orders(), settings.customers(), settings.writers(),
                settings.relays(), settings.buckets(), settings.batchSize(), settings.seed());
        log.flush();
        try (RunScope scope = RunScope.open(settings.store(), settings.storeOptions(), settings.kafkaOptions(), runId,
                settings.writers(), log)) {
            warnAboutEmulators(scope.database());
            int partitions = scope.createTopic(topic, settings.kafkaOptions().partitionsOr(settings.buckets()));
            if (partitions != settings.buckets()) {
                log.printf("note: topic %s has %d partitions and the relays %d buckets: a bucket is not a partition,"
                        + " but each customer still stays in one partition%n", topic, partitions, settings.buckets());
            }
            scope.database().createSchema();
            return exercise(runId, topic, partitions, scope.kafka(), scope.database());
        }
    }

    private void warnAboutEmulators(DemoDatabase database) {
        if (database instanceof MongoDemoDatabase mongo && mongo.isJongodb()
                && (settings.relays() > 1 || settings.writers() > 1)) {
            log.println("warning: this MongoDB server is the jongodb emulator, whose findOneAndUpdate and conditional"
                    + " updates are not atomic across connections: with more than one writer orders can get the same"
                    + " sequence number, and with more than one relay a bucket can be leased twice. Use --relays 1"
                    + " --writers 1 on jongodb.");
        }
    }

    private DemoSummary exercise(String runId, String topic, int partitions, DemoKafka kafka, DemoDatabase database)
            throws Exception {
        DeliveryChecker checker = new DeliveryChecker(runId);
        RelayOptions options = RelayFleet.options(settings.buckets(), settings.batchSize());
        try (OrderConsumer consumer = OrderConsumer.start(kafka.bootstrapServers(), topic, options.messageIdHeader(),
                checker);
             RelayFleet relays = RelayFleet.create(settings.relays(), "demo-" + runId, database::openRelayStore,
                     kafka.bootstrapServers(), options)) {
            relays.start();
            if (!relays.awaitBalanced(settings.buckets(), BALANCE_TIMEOUT)) {
                log.println("note: the relays have not shared the buckets out yet; starting anyway");
            }
            Map<String, List<Integer>> owned = relays.ownedBuckets();
            log.println("relays started, buckets owned: " + BucketRanges.format(owned));
            log.flush();
            OrderWriters writers = OrderWriters.start(database, checker, relays, runId, topic, settings);
            boolean timedOut = false;
            try (Progress progress = Progress.start(settings.progress(), "delivered", settings.orders())) {
                Long deadline = null; // set when the last order is placed
                while (true) {
                    writers.failIfFailed();
                    relays.failIfStopped();
                    consumer.failIfStopped();
                    progress.update(checker.distinctDelivered(), String.format("placed %,d, relayed %,d",
                            writers.placed(), relays.published()));
                    if (writers.done()) {
                        writers.failIfFailed();
                        if (checker.allExpectedSeen()) {
                            break;
                        }
                        if (deadline == null) {
                            deadline = System.nanoTime() + settings.timeout().toNanos();
                        } else if (System.nanoTime() - deadline > 0) {
                            timedOut = true;
                            break;
                        }
                    }
                    Thread.sleep(20);
                }
            } finally {
                writers.stop();
            }
            if (!timedOut) {
                // The consumer can read a record before its relay has deleted it and counted it as
                // published; wait for the relays' counts so the summary's per-relay figures add up.
                relays.awaitPublished(writers.placed(), PUBLISHED_COUNT_WAIT);
            }
            CheckResult result = checker.result();
            return new DemoSummary(runId, database.describe(), kafka.describe(), topic, partitions, settings, result,
                    writers.placementRate(), owned, relays.publishedByRelay(), relays.publishFailures(),
                    relays.storeErrors(), timedOut);
        }
    }
}
