package io.outbox.demo;

import io.outbox.demo.DeliveryChecker.CheckResult;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
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
     * @param transactions whether the relays publish in the transactional mode (K5-K7) and the
     *     checker reads with {@code isolation.level=read_committed}
     */
    record Settings(StoreKind store, StoreOptions storeOptions, KafkaOptions kafkaOptions, int orders, int customers,
                    int writers, int relays, int buckets, int batchSize, Duration timeout, long seed, int rate,
                    boolean progress, boolean transactions) {

        /** Settings of the default mode. */
        Settings(StoreKind store, StoreOptions storeOptions, KafkaOptions kafkaOptions, int orders, int customers,
                 int writers, int relays, int buckets, int batchSize, Duration timeout, long seed, int rate,
                 boolean progress) {
            this(store, storeOptions, kafkaOptions, orders, customers, writers, relays, buckets, batchSize, timeout,
                    seed, rate, progress, false);
        }
    }

    private final Settings settings;
    private final PrintWriter log;
    private final boolean inbox;
    private final NotifyOptions notify;
    private InboxConsumer.Result inboxResult;

    OrderDemo(Settings settings, PrintWriter log) {
        this(settings, log, false);
    }

    /**
     * @param inbox whether a second consumer applies every order to a per-customer counter through the
     *     store's inbox ({@code --inbox}), checked at the end
     */
    OrderDemo(Settings settings, PrintWriter log, boolean inbox) {
        this(settings, log, inbox, new NotifyOptions());
    }

    /**
     * @param notify how the relays learn of commits ({@code --notify}), checked
     */
    OrderDemo(Settings settings, PrintWriter log, boolean inbox, NotifyOptions notify) {
        this.settings = settings;
        this.log = log;
        this.inbox = inbox;
        this.notify = notify;
    }

    /** The inbox consumer's result of the last run with {@code --inbox}, or null. */
    InboxConsumer.Result inboxResult() {
        return inboxResult;
    }

    /** Runs the demo; throws when it could not run (a server unreachable, a write failing). */
    DemoSummary run() throws Exception {
        String runId = RunIds.next();
        String topic = settings.kafkaOptions().topicOr("outbox-demo-" + runId);
        log.printf("run %s: %,d orders from %,d customers, %d writer(s), %d relay(s), %d buckets, batch size %d,"
                        + " seed %d%s%n", runId, settings.orders(), settings.customers(), settings.writers(),
                settings.relays(), settings.buckets(), settings.batchSize(), settings.seed(),
                settings.transactions() ? ", Kafka transactions, read_committed checker" : "");
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
            if (!inbox) {
                return exercise(runId, topic, partitions, scope.kafka(), scope.database(), null);
            }
            DemoInbox demoInbox = scope.database().openInbox();
            demoInbox.createSchema();
            try {
                return exercise(runId, topic, partitions, scope.kafka(), scope.database(), demoInbox);
            } finally {
                if (settings.storeOptions().keep) {
                    log.println("kept (--keep): inbox " + String.join(", ", demoInbox.objectNames()));
                } else {
                    demoInbox.dropSchema();
                }
            }
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

    private DemoSummary exercise(String runId, String topic, int partitions, DemoKafka kafka, DemoDatabase database,
                                 DemoInbox demoInbox) throws Exception {
        DeliveryChecker checker = new DeliveryChecker(runId);
        RelayOptions options = RelayFleet.options(settings.buckets(), settings.batchSize());
        try (OrderConsumer consumer = OrderConsumer.start(kafka.bootstrapServers(), topic,
                KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER, checker, settings.transactions());
             InboxConsumer inboxConsumer = demoInbox == null ? null : InboxConsumer.start(kafka.bootstrapServers(),
                     topic, runId, KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER, demoInbox);
             RelayFleet relays = RelayFleet.create(settings.relays(), "demo-" + runId, database::openRelayStore,
                     kafka.bootstrapServers(), options, settings.transactions() ? "outbox-demo-" + runId : null);
             DemoNotify wakeUps = DemoNotify.of(notify, settings.storeOptions(), runId)) {
            wakeUps.attach(relays.relays());
            relays.start();
            if (!relays.awaitBalanced(settings.buckets(), BALANCE_TIMEOUT)) {
                log.println("note: the relays have not shared the buckets out yet; starting anyway");
            }
            if (!wakeUps.awaitListening(relays, BALANCE_TIMEOUT)) {
                log.println("note: not every relay hears the notification transport yet; starting anyway (the relays "
                        + "poll meanwhile)");
            }
            Map<String, List<Integer>> owned = relays.ownedBuckets();
            log.println("relays started, buckets owned: " + BucketRanges.format(owned));
            log.flush();
            OrderWriters writers = OrderWriters.start(database, checker, wakeUps.writers(relays), runId, topic,
                    settings);
            boolean timedOut = false;
            try (Progress progress = Progress.start(settings.progress(), "delivered", settings.orders())) {
                Long deadline = null; // set when the last order is placed
                while (true) {
                    writers.failIfFailed();
                    relays.failIfStopped();
                    consumer.failIfStopped();
                    if (inboxConsumer != null) {
                        inboxConsumer.failIfStopped();
                    }
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
            if (inboxConsumer != null) {
                awaitInbox(inboxConsumer, checker.distinctDelivered());
                inboxConsumer.stop();
                inboxConsumer.failIfStopped();
                inboxResult = inboxConsumer.result(demoInbox.counters());
            }
            return new DemoSummary(runId, database.describe(), kafka.describe(), topic, partitions, settings, result,
                    writers.placementRate(), owned, relays.publishedByRelay(), relays.publishFailures(),
                    relays.storeErrors(), timedOut, wakeUps.describe());
        }
    }

    /** Waits, at most the run's timeout, until the inbox consumer has applied every delivered order. */
    private void awaitInbox(InboxConsumer inboxConsumer, long delivered) throws InterruptedException {
        long deadline = System.nanoTime() + settings.timeout().toNanos();
        while (inboxConsumer.distinctApplied() < delivered && System.nanoTime() - deadline < 0) {
            inboxConsumer.failIfStopped();
            Thread.sleep(20);
        }
    }
}
