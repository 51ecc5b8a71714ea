package io.outbox.demo;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.outbox.OutboxBucket;
import io.outbox.OutboxMessage;
import io.outbox.OutboxMessageFactory;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.Pending;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
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
 * records (same keys, values and headers, message-id header included; each partition's first
 * record alone, as the relays' publisher sends it, rule K8) to a second topic and flushes; timed
 * from the first send to the end of the flush. Then, unless turned off, the same messages are
 * pre-filled again and the store alone reads and deletes them, batch by batch, without
 * a broker: the store's own work per message, which any relay adds to the plain producer's. A
 * warm-up round runs first and is reported but not counted.
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
     * @param prefetch whether the relays read a bucket's next batch during the publish of the one before
     *     (relay option prefetch)
     * @param brokerPid the broker's process, whose CPU time (with its children's) is read over each
     *     phase; null to find it (a broker listening on a local port) or not measure it
     * @param dbPid the database server's process, read the same way; null to find it (PostgreSQL:
     *     the backends of the relay's connections) or not measure it
     * @param meter whether a JDBC store's connections are counted ({@link JdbcMeter}: statements,
     *     calls, rows and bytes per message, and the PostgreSQL backends whose CPU is read); the
     *     counting wraps every JDBC call of the relays and costs CPU of the bench process
     * @param storeAlone whether each round also times the store alone reading and deleting the same
     *     messages without a broker (the store's own work per message)
     */
    record Settings(StoreKind store, StoreOptions storeOptions, KafkaOptions kafkaOptions, int messages,
                    int valueBytes, int keys, int relays, int buckets, int batchSize, int storeConcurrency, int runs, int warmupMessages,
                    Duration timeout, boolean progress, boolean transactions, boolean prefetch, Long brokerPid,
                    Long dbPid, boolean meter, boolean storeAlone) {
    }

    /**
     * One timed phase of a round: the relays' drain or the plain producer's sends.
     *
     * @param messages messages sent
     * @param nanos how long it took
     * @param cpuNanos CPU time of the bench process (every thread) over the phase
     * @param brokerTicks clock ticks of the broker's process over the phase; NaN when not measured
     * @param dbTicks clock ticks of the database server's processes over the phase; NaN when not
     *     measured
     * @param jitTicks clock ticks of the bench process's JIT compiler threads over the phase (part of
     *     {@code cpuNanos}); NaN when not measured
     * @param gcTicks clock ticks of its garbage collector threads over the phase (part of
     *     {@code cpuNanos}); NaN when not measured
     */
    record Phase(int messages, long nanos, long cpuNanos, double brokerTicks, double dbTicks, double jitTicks,
                 double gcTicks) {
        /** Messages per second. */
        double rate() {
            return perSecond(messages, nanos);
        }

        /** The bench process's CPU milliseconds per 1,000 messages. */
        double cpuPerThousand() {
            return cpuNanos / 1e6 / (messages / 1000.0);
        }

        /** The broker's CPU milliseconds per 1,000 messages; NaN when not measured. */
        double brokerPerThousand() {
            return ProcCpu.millis(1) * brokerTicks / (messages / 1000.0);
        }

        /** The database's CPU milliseconds per 1,000 messages; NaN when not measured. */
        double dbPerThousand() {
            return ProcCpu.millis(1) * dbTicks / (messages / 1000.0);
        }

        /** The bench process's JIT compiler threads' CPU milliseconds per 1,000 messages; NaN when not measured. */
        double jitPerThousand() {
            return ProcCpu.millis(1) * jitTicks / (messages / 1000.0);
        }

        /** Its garbage collector threads' CPU milliseconds per 1,000 messages; NaN when not measured. */
        double gcPerThousand() {
            return ProcCpu.millis(1) * gcTicks / (messages / 1000.0);
        }

        /**
         * The bench process's CPU milliseconds per 1,000 messages without its JIT compiler and
         * garbage collector threads: the code that ran; NaN when those were not measured.
         */
        double codePerThousand() {
            return cpuPerThousand() - jitPerThousand() - gcPerThousand();
        }

        /**
         * CPU milliseconds per 1,000 messages of the bench, the broker and the database together, a
         * figure not measured counting as 0 (a process in the bench's is in its figure).
         */
        double allPerThousand() {
            return cpuPerThousand() + zeroIfNaN(brokerPerThousand()) + zeroIfNaN(dbPerThousand());
        }

        /** Processors kept busy over the phase by the bench, the broker and the database: CPU time over elapsed time. */
        double coresBusy() {
            return allPerThousand() * rate() / 1e6;
        }

        private static double zeroIfNaN(double value) {
            return Double.isNaN(value) ? 0 : value;
        }
    }

    /**
     * One round's phases, and where the relays' time went.
     *
     * @param label "warm-up" or "run n"
     * @param messages messages in the round
     * @param prefill pre-fill rate (not part of the comparison)
     * @param relayPhase the relays' drain
     * @param plainPhase the plain producer's sends
     * @param storePhase the store alone reading and deleting the same messages without a broker; null
     *     when not timed
     * @param fetchShare store calls reading batches in progress per relay, on average over the
     *     drain: the summed time of those calls over the drain's time; above 1 when store threads
     *     overlap them
     * @param deleteShare the same for calls deleting published messages
     * @param otherShare the same for other store calls (leases, probes)
     * @param transactional the relay rate in the transactional mode, on the same messages; NaN when
     *     not timed
     * @param database the relays' database work over the drain; null when the store is not metered
     */
    record Round(String label, int messages, double prefill, Phase relayPhase, Phase plainPhase, Phase storePhase,
                 double fetchShare, double deleteShare, double otherShare, double transactional,
                 JdbcMeter.Counts database) {
        /** Relay messages per second. */
        double relay() {
            return relayPhase.rate();
        }

        /** Plain producer messages per second. */
        double plain() {
            return plainPhase.rate();
        }

        double ratio() {
            return relay() / plain();
        }

        /** The bench process's CPU per message, relay over plain producer. */
        double cpuRatio() {
            return relayPhase.cpuPerThousand() / plainPhase.cpuPerThousand();
        }

        /** The same without the JIT compiler and garbage collector threads; NaN when not measured. */
        double codeCpuRatio() {
            return relayPhase.codePerThousand() / plainPhase.codePerThousand();
        }

        /** Messages per second of the store alone; NaN when not timed. */
        double storeAlone() {
            return storePhase == null ? Double.NaN : storePhase.rate();
        }

        /**
         * The relay side's CPU per 1,000 messages (bench, broker and database) beyond the plain
         * producer's and the store alone's: what the relay adds to the sends and to the store's own
         * work (engine, leases, read ahead, record building, waiting turned into CPU); NaN when the
         * store alone was not timed.
         */
        double relayBeyondPlainAndStore() {
            return storePhase == null ? Double.NaN
                    : relayPhase.allPerThousand() - plainPhase.allPerThousand() - storePhase.allPerThousand();
        }

        /**
         * The highest relay / plain producer ratio this machine allows if a relay costs at least the
         * plain producer's CPU per message plus the store alone's (bench, broker and database each):
         * {@code processors} cores spent on nothing else give at most {@code processors / (plain + store)}
         * messages per second, over the plain producer's rate; NaN when the store alone was not timed.
         *
         * @param processors the machine's processors
         */
        double ratioCeiling(int processors) {
            return storePhase == null ? Double.NaN
                    : processors * 1e6 / (plainPhase.allPerThousand() + storePhase.allPerThousand()) / plain();
        }

        /** Statements the relays executed per message; NaN when not metered. */
        double statementsPerMessage() {
            return database == null ? Double.NaN : (double) database.statements() / messages;
        }

        /** Execute calls (round trips) of the relays per message; NaN when not metered. */
        double callsPerMessage() {
            return database == null ? Double.NaN : (double) database.calls() / messages;
        }

        /** Bytes the relays read from the database per message; NaN when not metered. */
        double bytesPerMessage() {
            return database == null ? Double.NaN : (double) database.bytes() / messages;
        }

        /** Transactional relay rate over the default mode's. */
        double transactionalRatio() {
            return transactional / relay();
        }

        /** Transactional relay rate over the plain producer's. */
        double transactionalToPlain() {
            return transactional / plain();
        }
    }

    private final Settings settings;
    private final PrintWriter log;
    private final ProcCpu proc = ProcCpu.system();

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
        String loadBefore = proc.loadAverage();
        try (RunScope scope = RunScope.open(settings.store(), settings.storeOptions(), settings.kafkaOptions(), runId,
                1, log)) {
            scope.database().createSchema();
            CpuProbe broker = brokerProbe(scope.kafka());
            JdbcMeter probeMeter = !settings.meter() || scope.database().tableNames().isEmpty() ? null
                    : new JdbcMeter(scope.database().tableNames());
            List<Round> rounds = new ArrayList<>();
            CpuProbe db = null;
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
                JdbcMeter meter = probeMeter == null ? null : new JdbcMeter(scope.database().tableNames());
                if (db == null) {
                    db = dbProbe(scope.database(), meter);
                }
                Round result = round(label, count, round, relayTopic, plainTopic, transactionalTopic, runId,
                        scope.kafka(), scope.database(), broker, db, meter);
                log.printf(Locale.ROOT, "%s: relay %,.0f msg/s, plain producer %,.0f msg/s, ratio %.2f"
                        + " (pre-fill %,.0f msg/s); bench CPU %.0f / %.0f ms per 1,000 messages%n", label,
                        result.relay(), result.plain(), result.ratio(), result.prefill(),
                        result.relayPhase().cpuPerThousand(), result.plainPhase().cpuPerThousand());
                if (settings.transactions()) {
                    log.printf(Locale.ROOT, "%s: transactional relay %,.0f msg/s, %.2f of the default mode%n", label,
                            result.transactional(), result.transactionalRatio());
                }
                log.flush();
                rounds.add(result);
            }
            return new BenchResult(runId, scope.database().describe(), scope.kafka().describe(), prefix, partitions,
                    settings, producerDescription(scope.kafka().bootstrapServers()), rounds, broker.description(),
                    db == null ? "not measured" : db.description(), cpuAccounted(broker, db, rounds),
                    Runtime.getRuntime().availableProcessors(), loadBefore, proc.loadAverage());
        }
    }

    /**
     * Whether every phase's CPU over the three processes is complete: the broker's and the
     * database's each in the bench process's figure or read by its probe, and a probe that measures
     * having read something in every phase it was meant to (a process gone, or PostgreSQL backends
     * not on this machine, read nothing: its figure is NaN, not 0).
     */
    static boolean cpuAccounted(CpuProbe broker, CpuProbe db, List<Round> rounds) {
        if (!broker.accounted() || db != null && !db.accounted()) {
            return false;
        }
        for (Round r : rounds) {
            List<Phase> phases = new ArrayList<>(List.of(r.relayPhase(), r.plainPhase()));
            if (r.storePhase() != null) {
                phases.add(r.storePhase());
            }
            for (Phase p : phases) {
                if (broker.measures() && Double.isNaN(p.brokerTicks())) {
                    return false;
                }
                boolean dbRead = db != null && (p == r.plainPhase() ? db.outsideDrain() : db).measures();
                if (dbRead && Double.isNaN(p.dbTicks())) {
                    return false;
                }
            }
        }
        return true;
    }

    /** The broker's CPU: --broker-pid, else a local listener on the bootstrap port, else none. */
    private CpuProbe brokerProbe(DemoKafka kafka) {
        if (settings.brokerPid() != null) {
            return CpuProbe.tree(proc, settings.brokerPid(), "broker process " + settings.brokerPid() + " (--broker-pid)");
        }
        if (kafka.embedded()) {
            return CpuProbe.inBench("embedded broker: counted in the bench process");
        }
        OptionalInt port = localPort(kafka.bootstrapServers());
        if (port.isPresent() && proc.available()) {
            OptionalLong pid = proc.listeningPid(port.getAsInt());
            if (pid.isPresent() && pid.getAsLong() == ProcessHandle.current().pid()) {
                return CpuProbe.inBench("listening in the bench process: counted in the bench process");
            }
            if (pid.isPresent()) {
                return CpuProbe.tree(proc, pid.getAsLong(), "broker process " + pid.getAsLong() + " (listening on port "
                        + port.getAsInt() + ")");
            }
        }
        return CpuProbe.none("not measured (not found on this machine; pass --broker-pid)");
    }

    /**
     * The database's CPU: --db-pid, else the PostgreSQL backends of the relay's connections when
     * they run on this machine, else none.
     */
    private CpuProbe dbProbe(DemoDatabase database, JdbcMeter meter) {
        if (settings.dbPid() != null) {
            return CpuProbe.tree(proc, settings.dbPid(), "database process " + settings.dbPid() + " (--db-pid)");
        }
        String url = settings.storeOptions().jdbcUrl;
        if (settings.store() == StoreKind.JDBC && (url == null || url.startsWith("jdbc:h2:")
                && !url.startsWith("jdbc:h2:tcp:") && !url.startsWith("jdbc:h2:ssl:"))) {
            return CpuProbe.inBench("H2 in this process: counted in the bench process");
        }
        if (meter != null && proc.available() && database.describe().contains("PostgreSQL")) {
            return CpuProbe.processes(proc, () -> currentMeter.get() == null ? Set.of()
                    : localBackends(currentMeter.get().backendPids()),
                    "PostgreSQL backends of the relays' connections (pg_backend_pid())");
        }
        return CpuProbe.none("not measured (pass --db-pid)");
    }

    /** The meter of the drain in progress, whose backends the database probe reads. */
    private final AtomicReference<JdbcMeter> currentMeter = new AtomicReference<>();

    /** The pids of {@code pids} that are PostgreSQL processes on this machine. */
    private Set<Long> localBackends(Set<Long> pids) {
        Set<Long> local = new HashSet<>();
        for (long pid : pids) {
            proc.stat(pid).filter(s -> s.command().startsWith("postgres")).ifPresent(s -> local.add(pid));
        }
        return local;
    }

    /** The port of the first of the bootstrap servers when it is on this machine's loopback. */
    static OptionalInt localPort(String bootstrapServers) {
        String first = bootstrapServers.split(",")[0].trim();
        int colon = first.lastIndexOf(':');
        if (colon < 0) {
            return OptionalInt.empty();
        }
        String host = first.substring(0, colon).replace("[", "").replace("]", "");
        if (!(host.equals("localhost") || host.startsWith("127.") || host.equals("::1"))) {
            return OptionalInt.empty();
        }
        try {
            return OptionalInt.of(Integer.parseInt(first.substring(colon + 1)));
        } catch (NumberFormatException e) {
            return OptionalInt.empty();
        }
    }

    private Round round(String label, int count, int round, String relayTopic, String plainTopic,
                        String transactionalTopic, String runId, DemoKafka kafka, DemoDatabase database,
                        CpuProbe broker, CpuProbe db, JdbcMeter meter)
            throws Exception {
        List<OutboxMessage> messages = messages(count, relayTopic, round);
        double prefill = prefill(label, messages, database);
        Drain relay = drain(label, count, round, runId, kafka, database, null, broker, db, meter);
        Phase plain = plainProducer(messages, plainTopic, kafka.bootstrapServers(), broker, db);
        Phase storeAlone = null;
        if (settings.storeAlone()) {
            prefill(label + " (store alone)", messages, database);
            storeAlone = storeAlone(label, count, database, broker, db,
                    meter == null ? null : new JdbcMeter(database.tableNames()));
        }
        double transactional = Double.NaN;
        if (settings.transactions()) {
            // The same messages again, to a topic of their own, drained by relays in the transactional mode.
            prefill(label + " (transactional)", messages(count, transactionalTopic, round), database);
            transactional = drain(label + " (transactional)", count, round, runId, kafka, database,
                    "outbox-bench-" + runId + "-" + round, CpuProbe.none(""), CpuProbe.none(""), null).phase().rate();
        }
        return new Round(label, count, prefill, relay.phase(), plain, storeAlone, relay.share(TimedStore::fetchNanos),
                relay.share(TimedStore::deleteNanos), relay.share(TimedStore::otherNanos), transactional,
                relay.database());
    }

    private List<OutboxMessage> messages(int count, String topic, long seed) {
        Random random = new Random(seed);
        OutboxMessageFactory<byte[], byte[]> factory = OutboxMessageFactory.builder(settings.buckets())
                .keySerializer(new ByteArraySerializer()).valueSerializer(new ByteArraySerializer()).build();
        List<OutboxMessage> messages = new ArrayList<>(count);
        // Each message is created inside a span of its own, as in a traced request: with an SDK
        // (bench --tracing) it carries that span's context; without one the span is the API's no-op.
        Tracer tracer = GlobalOpenTelemetry.getTracer("io.outbox.demo");
        for (int i = 0; i < count; i++) {
            byte[] value = new byte[settings.valueBytes()];
            random.nextBytes(value);
            byte[] key = Order.key(i % settings.keys()).getBytes(StandardCharsets.UTF_8);
            Span request = tracer.spanBuilder("place order").startSpan();
            Scope scope = request.makeCurrent();
            try {
                messages.add(factory.create(topic, key, value));
            } finally {
                scope.close();
                request.end();
            }
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
     * @param phase its rate and CPU times
     * @param stores the relays' stores, with the time spent in them
     * @param database the relays' database work from their start to the last acknowledged delete;
     *     null when not metered
     */
    private record Drain(Phase phase, List<TimedStore> stores, JdbcMeter.Counts database) {
        /** Calls of one kind in progress per relay, on average: their summed time over the drain's. */
        double share(ToLongFunction<TimedStore> spent) {
            return stores.stream().mapToLong(spent).sum() / ((double) phase.nanos() * stores.size());
        }
    }

    /**
     * Starts the relays on the pre-filled store and waits until they have published every message;
     * in the transactional mode when {@code transactionalIdPrefix} is not null.
     */
    private Drain drain(String label, int count, int round, String runId, DemoKafka kafka, DemoDatabase database,
                        String transactionalIdPrefix, CpuProbe broker, CpuProbe db, JdbcMeter meter) throws Exception {
        RelayOptions options = RelayFleet.options(settings.buckets(), settings.batchSize(),
                settings.storeConcurrency()).toBuilder().prefetch(settings.prefetch()).build();
        List<TimedStore> stores = new ArrayList<>();
        currentMeter.set(meter);
        Supplier<OutboxStore> timedStores = () -> {
            OutboxStore metered = meter == null ? null
                    : database.openMeteredRelayStore(settings.storeConcurrency(), meter);
            TimedStore store = new TimedStore(metered != null ? metered
                    : database.openRelayStore(settings.storeConcurrency()));
            stores.add(store);
            return store;
        };
        try (RelayFleet relays = RelayFleet.create(settings.relays(), "bench-" + runId + "-" + round
                        + (transactionalIdPrefix == null ? "" : "-tx"), timedStores, kafka.bootstrapServers(), options,
                transactionalIdPrefix);
             Progress progress = Progress.start(settings.progress(), label + " relay", count)) {
            JdbcMeter.Counts before = meter == null ? null : meter.counts();
            PhaseStart phaseStart = new PhaseStart(broker, db);
            relays.start();
            long deadline = phaseStart.nanos() + settings.timeout().toNanos();
            while (!relays.awaitPublished(count, Duration.ofMillis(200))) {
                progress.update(relays.published(), "");
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("the relays published " + relays.published() + " of " + count
                            + " messages within " + settings.timeout().toSeconds() + " s");
                }
            }
            Phase phase = phaseStart.end(count);
            progress.update(count, "");
            return new Drain(phase, List.copyOf(stores), meter == null ? null : meter.counts().minus(before));
        }
    }

    /** Waits for a send; its callback counts a failure. */
    private static void awaitQuietly(Future<?> sent) {
        try {
            sent.get();
        } catch (ExecutionException e) {
            // counted by the send's callback
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the plain producer sent", e);
        }
    }

    /**
     * Sends the same records with a plain producer and flushes; returns its rate and CPU times. Each
     * partition's first record goes alone, acknowledged before the next, as the relays' publisher
     * sends (rule K8).
     */
    private Phase plainProducer(List<OutboxMessage> messages, String topic, String bootstrapServers, CpuProbe broker,
                                CpuProbe db) {
        Map<String, Object> config = plainProducerConfig(bootstrapServers);
        AtomicLong failures = new AtomicLong();
        AtomicReference<Exception> firstFailure = new AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
            int partitions = producer.partitionsFor(topic).size();
            Set<Integer> opened = new HashSet<>();
            CpuProbe database = db.outsideDrain();
            PhaseStart phaseStart = new PhaseStart(broker, database);
            for (OutboxMessage m : messages) {
                RecordHeaders headers = new RecordHeaders();
                m.headers().forEach(headers::add);
                headers.add(KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER,
                        m.messageId().toString().getBytes(StandardCharsets.UTF_8));
                Future<?> sent = producer.send(new ProducerRecord<>(topic, m.partition(), null, m.key(), m.value(),
                        headers), (metadata, error) -> {
                            if (error != null && failures.getAndIncrement() == 0) {
                                firstFailure.set(error);
                            }
                        });
                Integer partition = m.partition() != null ? m.partition()
                        : m.key() == null ? null : OutboxBucket.forKey(m.key(), partitions);
                if (partition != null && opened.add(partition)) {
                    awaitQuietly(sent); // as the relays' publisher does (rule K8): a partition's first record alone
                }
            }
            producer.flush();
            Phase phase = phaseStart.end(messages.size());
            if (failures.get() > 0) {
                throw new IllegalStateException(failures.get() + " sends of the plain producer failed",
                        firstFailure.get());
            }
            return phase;
        }
    }

    /**
     * The store's own work on the pre-filled messages without a broker: store-concurrency threads take
     * the buckets in turn, each reading a bucket's batch ({@link OutboxStore#nextBatch}, the relays'
     * batch size) and deleting it ({@link OutboxStore#markPublished}) until every bucket is empty. No
     * leases, no read ahead, no records built: what any relay must have the store do per message,
     * beside the plain producer's sends. Timed and measured like the other phases.
     *
     * @param meter counts the store's connections so that a PostgreSQL's backends are found; null for none
     * @throws IllegalStateException if the store did not drain exactly {@code count} messages in time
     */
    private Phase storeAlone(String label, int count, DemoDatabase database, CpuProbe broker, CpuProbe db,
                             JdbcMeter meter) throws Exception {
        int threads = settings.storeConcurrency();
        OutboxStore metered = meter == null ? null : database.openMeteredRelayStore(threads, meter);
        OutboxStore store = metered != null ? metered : database.openRelayStore(threads);
        currentMeter.set(meter);
        AtomicInteger named = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads, task -> {
            Thread thread = new Thread(task, "bench-store-alone-" + named.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        try (Progress progress = Progress.start(settings.progress(), label + " store alone", count)) {
            Queue<Integer> buckets = new ConcurrentLinkedQueue<>();
            for (int bucket = 0; bucket < settings.buckets(); bucket++) {
                buckets.add(bucket);
            }
            AtomicLong drained = new AtomicLong();
            PhaseStart phaseStart = new PhaseStart(broker, db);
            List<Future<?>> tasks = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                tasks.add(pool.submit(() -> {
                    for (Integer bucket = buckets.poll(); bucket != null; bucket = buckets.poll()) {
                        List<Pending> batch = store.nextBatch(bucket, settings.batchSize());
                        if (!batch.isEmpty()) {
                            store.markPublished(bucket, batch);
                            drained.addAndGet(batch.size());
                            buckets.add(bucket);
                        }
                    }
                    return null;
                }));
            }
            long deadline = phaseStart.nanos() + settings.timeout().toNanos();
            for (Future<?> task : tasks) {
                try {
                    task.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (TimeoutException e) {
                    throw new IllegalStateException("the store alone deleted " + drained.get() + " of " + count
                            + " messages within " + settings.timeout().toSeconds() + " s");
                } catch (ExecutionException e) {
                    throw new IllegalStateException("the store alone failed after " + drained.get() + " of " + count
                            + " messages: " + e.getCause(), e.getCause());
                }
            }
            Phase phase = phaseStart.end(count);
            if (drained.get() != count) {
                throw new IllegalStateException("the store alone deleted " + drained.get() + " messages, the pre-fill"
                        + " wrote " + count);
            }
            progress.update(count, "");
            return phase;
        } finally {
            pool.shutdownNow();
            currentMeter.set(null);
            DemoDatabase.closeStore(store);
        }
    }

    /**
     * The readings at the start of a timed phase (the broker's and the database's CPU, the bench's
     * JIT and GC threads', the bench's CPU, the clock); {@link #end} turns them into the phase's
     * figures. Used by one thread.
     */
    private final class PhaseStart {
        private final CpuProbe broker;
        private final CpuProbe db;
        private final Map<Long, Long> brokerStart;
        private final Map<Long, Long> dbStart;
        private final Optional<ProcCpu.VmThreadTicks> vmStart;
        private final long cpuStart;
        private final long start;

        PhaseStart(CpuProbe broker, CpuProbe db) {
            this.broker = broker;
            this.db = db;
            brokerStart = broker.sample();
            dbStart = db.sample();
            vmStart = proc.ownVmThreadTicks();
            cpuStart = ProcCpu.ownCpuNanos();
            start = System.nanoTime();
        }

        /** {@link System#nanoTime()} at the start. */
        long nanos() {
            return start;
        }

        /** The phase from the start until now, for {@code messages} messages. */
        Phase end(int messages) {
            long elapsed = System.nanoTime() - start;
            long cpu = ProcCpu.ownCpuNanos() - cpuStart;
            Optional<ProcCpu.VmThreadTicks> vm = vmSince(vmStart);
            return new Phase(messages, elapsed, cpu, broker.ticksSince(brokerStart), db.ticksSince(dbStart),
                    vm.map(t -> (double) t.jit()).orElse(Double.NaN), vm.map(t -> (double) t.gc()).orElse(Double.NaN));
        }
    }

    /** The JIT compiler and garbage collector threads' ticks since {@code start}; empty when not measured. */
    private Optional<ProcCpu.VmThreadTicks> vmSince(Optional<ProcCpu.VmThreadTicks> start) {
        Optional<ProcCpu.VmThreadTicks> now = proc.ownVmThreadTicks();
        return start.isPresent() && now.isPresent() ? Optional.of(now.get().minus(start.get())) : Optional.empty();
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
     * @param brokerCpu whose CPU the broker columns show, or why they are empty
     * @param dbCpu whose CPU the database columns show, or why they are empty
     * @param cpuAccounted whether the broker's and the database's CPU are each measured or in the
     *     bench's figure, so that a phase's CPU over all three processes is complete
     * @param processors the machine's processors
     * @param loadBefore the machine's load average (1, 5, 15 minutes) before the first round
     * @param loadAfter the same after the last round
     */
    record BenchResult(String runId, String store, String kafka, String topicPrefix, int partitions,
                       Settings settings, String producer, List<Round> rounds, String brokerCpu, String dbCpu,
                       boolean cpuAccounted, int processors, String loadBefore, String loadAfter) {

        /** The counted rounds. */
        List<Round> counted() {
            return rounds.stream().filter(r -> !r.label().equals("warm-up")).toList();
        }

        /** The median, lowest and highest of a figure over the counted rounds. */
        Spread spread(ToDoubleFunction<Round> figure) {
            return Spread.of(counted().stream().mapToDouble(figure).toArray());
        }

        /** The median of a rate over the counted rounds. */
        double median(ToDoubleFunction<Round> rate) {
            return spread(rate).median();
        }

        /** The table. */
        String render() {
            StringBuilder out = new StringBuilder();
            Settings s = settings;
            out.append("Outbox relay benchmark, run ").append(runId).append('\n');
            out.append(String.format(Locale.ROOT, "  %-8s %s%n", "store", store));
            out.append(String.format(Locale.ROOT, "  %-8s %s, topics %s-*, %d partitions each%n", "kafka", kafka,
                    topicPrefix, partitions));
            out.append(String.format(Locale.ROOT, "  %-8s %,d messages per run, %,d-byte values, %,d keys, "
                    + "%d relay(s), %d buckets, batch size %d, store concurrency %d, prefetch %s%s%n", "load",
                    s.messages(), s.valueBytes(), s.keys(), s.relays(), s.buckets(), s.batchSize(),
                    s.storeConcurrency(), s.prefetch() ? "on" : "off", s.meter() ? "" : ", JDBC calls not counted"));
            out.append(String.format(Locale.ROOT, "  %-8s relays and plain producer alike: %s%n", "producer",
                    producer));
            out.append(String.format(Locale.ROOT, "  %-8s bench: this process (%d processors); broker: %s; "
                    + "database: %s%n", "cpu", processors, brokerCpu, dbCpu));
            out.append(String.format(Locale.ROOT, "  %-8s load average %s before, %s after (1, 5, 15 min)%n%n",
                    "machine", loadBefore, loadAfter));
            out.append(String.format(Locale.ROOT, "  %-10s %14s %14s %21s %7s   %s%n", "round", "pre-fill msg/s",
                    "relay msg/s", "plain producer msg/s", "ratio", "store calls in progress per relay: "
                            + "reads/deletes/other"));
            for (Round r : rounds) {
                out.append(String.format(Locale.ROOT, "  %-10s %,14.0f %,14.0f %,21.0f %7.2f   %.2f / %.2f / %.2f%n",
                        r.label(), r.prefill(), r.relay(), r.plain(), r.ratio(), r.fetchShare(), r.deleteShare(),
                        r.otherShare()));
            }
            List<Round> counted = counted();
            out.append(String.format(Locale.ROOT, "  %-10s %14s %,14.0f %,21.0f %7.2f%n",
                    "median", "", median(Round::relay), median(Round::plain), median(Round::ratio)));

            out.append(String.format(Locale.ROOT, "%n  CPU ms per 1,000 messages%n  %-10s %27s %27s %11s%n", "round",
                    "relay: bench/broker/db", "plain: bench/broker/db", "bench cpu"));
            for (Round r : rounds) {
                out.append(String.format(Locale.ROOT, "  %-10s %27s %27s %11s%n", r.label(),
                        cpu(r.relayPhase()), cpu(r.plainPhase()), number("%.2f", r.cpuRatio())));
            }
            out.append(String.format(Locale.ROOT, "  %-10s %27s %27s %11s%n", "median",
                    cpu(median(r -> r.relayPhase().cpuPerThousand()), median(r -> r.relayPhase().brokerPerThousand()),
                            median(r -> r.relayPhase().dbPerThousand())),
                    cpu(median(r -> r.plainPhase().cpuPerThousand()), median(r -> r.plainPhase().brokerPerThousand()),
                            median(r -> r.plainPhase().dbPerThousand())),
                    number("%.2f", median(Round::cpuRatio))));

            out.append(String.format(Locale.ROOT, "%n  bench CPU ms per 1,000 messages by thread: all / JIT compiler / "
                    + "garbage collector / the rest%n  %-10s %27s %27s %11s%n", "round", "relay", "plain", "rest cpu"));
            for (Round r : rounds) {
                out.append(String.format(Locale.ROOT, "  %-10s %27s %27s %11s%n", r.label(), byThread(r.relayPhase()),
                        byThread(r.plainPhase()), number("%.2f", r.codeCpuRatio())));
            }

            boolean storeAlone = rounds.stream().anyMatch(r -> r.storePhase() != null);
            if (storeAlone) {
                out.append(String.format(Locale.ROOT, "%n  store alone: the same messages read and deleted by the store, "
                        + "no broker; CPU ms per 1,000 messages; cores busy: bench, broker and database CPU over "
                        + "elapsed time%s%n  %-10s %17s %17s %18s %20s %14s%n",
                        cpuAccounted ? "" : " (the broker's or the database's CPU not measured: no sums)", "round",
                        "store alone msg/s", "bench/broker/db", "relay beyond both", "cores busy r/p/s",
                        "ratio ceiling"));
                for (Round r : rounds) {
                    if (r.storePhase() != null) {
                        out.append(String.format(Locale.ROOT, "  %-10s %,17.0f %17s %18s %20s %14s%n", r.label(),
                                r.storeAlone(), cpu(r.storePhase()), accounted("%.0f", r.relayBeyondPlainAndStore()),
                                cpuAccounted ? String.format(Locale.ROOT, "%.2f / %.2f / %.2f",
                                        r.relayPhase().coresBusy(), r.plainPhase().coresBusy(),
                                        r.storePhase().coresBusy()) : "-",
                                accounted("%.2f", r.ratioCeiling(processors))));
                    }
                }
            }

            boolean metered = counted.stream().anyMatch(r -> r.database() != null);
            if (metered) {
                out.append(String.format(Locale.ROOT, "%n  relays' database work per message (a call is one execute, "
                        + "a JDBC batch of statements counting once)%n  %-10s %11s %9s %8s %11s   %s%n", "round",
                        "statements", "calls", "rows", "bytes read", "statements by kind"));
                for (Round r : rounds) {
                    if (r.database() != null) {
                        out.append(String.format(Locale.ROOT, "  %-10s %11.4f %9.4f %8.3f %11.1f   %s%n", r.label(),
                                r.statementsPerMessage(), r.callsPerMessage(), (double) r.database().rows() / r.messages(),
                                r.bytesPerMessage(), r.database().describeKinds(r.messages(), "")));
                    }
                }
            }

            out.append(String.format(Locale.ROOT, "%nover %d run(s), median (lowest-highest):%n", counted.size()));
            line(out, "relay msg/s", spread(Round::relay).format("%,.0f"));
            line(out, "plain producer msg/s", spread(Round::plain).format("%,.0f"));
            line(out, "relay / plain producer", spread(Round::ratio).format("%.2f"));
            bothSides(out, "bench CPU ms per 1,000 messages", Phase::cpuPerThousand);
            line(out, "bench CPU per message, relay / plain", spread(Round::cpuRatio).format("%.2f"));
            bothSides(out, "bench JIT compiler CPU ms per 1,000", Phase::jitPerThousand);
            bothSides(out, "bench GC CPU ms per 1,000 messages", Phase::gcPerThousand);
            line(out, "bench CPU less JIT and GC, relay / plain", spread(Round::codeCpuRatio).format("%.2f"));
            bothSides(out, "broker CPU ms per 1,000 messages", Phase::brokerPerThousand);
            line(out, "database CPU ms per 1,000 messages, relay", spread(r -> r.relayPhase().dbPerThousand())
                    .format("%.0f"));
            if (storeAlone) {
                line(out, "store alone msg/s", spread(Round::storeAlone).format("%,.0f"));
                line(out, "store alone bench CPU ms per 1,000", spread(r -> r.storePhase().cpuPerThousand())
                        .format("%.0f"));
                line(out, "store alone database CPU ms per 1,000", spread(r -> r.storePhase().dbPerThousand())
                        .format("%.0f"));
                line(out, "relay CPU ms per 1,000 beyond plain + store", cpuAccounted
                        ? spread(Round::relayBeyondPlainAndStore).format("%.0f") : "-");
                line(out, "cores busy, relay", cpuAccounted ? spread(r -> r.relayPhase().coresBusy())
                        .format("%.2f") : "-");
                line(out, "cores busy, plain", cpuAccounted ? spread(r -> r.plainPhase().coresBusy())
                        .format("%.2f") : "-");
                line(out, "cores busy, store alone", cpuAccounted ? spread(r -> r.storePhase().coresBusy())
                        .format("%.2f") : "-");
                line(out, "ratio ceiling on " + processors + " processors", cpuAccounted
                        ? spread(r -> r.ratioCeiling(processors)).format("%.2f") : "-");
            }
            if (metered) {
                line(out, "statements per message, relay", spread(Round::statementsPerMessage).format("%.4f"));
                line(out, "calls per message, relay", spread(Round::callsPerMessage).format("%.4f"));
                line(out, "bytes read per message, relay", spread(Round::bytesPerMessage).format("%,.1f"));
            }
            out.append(String.format(Locale.ROOT, "%nrelay / plain producer: median ratio %.2f over %d run(s)"
                    + " (lowest %.2f, highest %.2f)%n", median(Round::ratio), counted.size(),
                    spread(Round::ratio).min(), spread(Round::ratio).max()));
            if (s.transactions()) {
                out.append(String.format(Locale.ROOT, "%n  %-10s %24s %20s %20s%n", "round",
                        "transactional msg/s", "of the default mode", "of plain producer"));
                for (Round r : rounds) {
                    out.append(String.format(Locale.ROOT, "  %-10s %,24.0f %20.2f %20.2f%n", r.label(),
                            r.transactional(), r.transactionalRatio(), r.transactionalToPlain()));
                }
                Spread tx = spread(Round::transactionalRatio);
                out.append(String.format(Locale.ROOT, "  %-10s %,24.0f %20.2f %20.2f%n", "median",
                        median(Round::transactional), tx.median(), median(Round::transactionalToPlain)));
                out.append(String.format(Locale.ROOT, "%ntransactional / default mode: median ratio %.2f over %d "
                        + "run(s) (lowest %.2f, highest %.2f); transactional / plain producer: median ratio %.2f%n",
                        tx.median(), counted.size(), tx.min(), tx.max(), median(Round::transactionalToPlain)));
            }
            out.append(String.format(Locale.ROOT, "store: on average %.2f reads and deletes in progress per relay "
                    + "(median), so its %d store threads were busy %.0f%% of the time; the rest of a bucket's "
                    + "time went to publishing and waiting for the broker%n",
                    median(r -> r.fetchShare() + r.deleteShare()), s.storeConcurrency(),
                    100 * median(r -> r.fetchShare() + r.deleteShare()) / s.storeConcurrency()));
            return out.toString();
        }

        /** Two lines, "what, relay" and "what, plain", each the figure's median and range in whole numbers. */
        private void bothSides(StringBuilder out, String what, ToDoubleFunction<Phase> figure) {
            line(out, what + ", relay", spread(r -> figure.applyAsDouble(r.relayPhase())).format("%.0f"));
            line(out, what + ", plain", spread(r -> figure.applyAsDouble(r.plainPhase())).format("%.0f"));
        }

        private static void line(StringBuilder out, String what, String spread) {
            out.append(String.format(Locale.ROOT, "  %-46s %s%n", what, spread));
        }

        private static String byThread(Phase p) {
            return number("%.0f", p.cpuPerThousand()) + " / " + number("%.0f", p.jitPerThousand()) + " / "
                    + number("%.0f", p.gcPerThousand()) + " / " + number("%.0f", p.codePerThousand());
        }

        private static String cpu(Phase p) {
            return cpu(p.cpuPerThousand(), p.brokerPerThousand(), p.dbPerThousand());
        }

        private static String cpu(double bench, double broker, double db) {
            return number("%.0f", bench) + " / " + number("%.0f", broker) + " / " + number("%.0f", db);
        }

        /** The number in {@code format} when every process's CPU is in the figures, else "-". */
        private String accounted(String format, double value) {
            return cpuAccounted ? number(format, value) : "-";
        }

        /** The number in {@code format}, or "-" for NaN (not measured). */
        static String number(String format, double value) {
            return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, format, value);
        }
    }
}
