package io.outbox.demo;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox.MessageIds;
import io.outbox.OutboxCommitNotifier;
import io.outbox.OutboxMessage;
import io.outbox.notify.NotificationTransport;
import io.outbox.notify.NotificationTransports;
import io.outbox.notify.OutboxNotifier;
import io.outbox.relay.OutboxRelay;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.spi.LeaseRelease;
import io.outbox.spi.LeaseRenewal;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.Pending;
import io.outbox.store.jdbc.JdbcOutboxStore;
import io.outbox.store.jdbc.JdbcOutboxTransactions;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

/**
 * Commit-to-consume latency across processes (rules N1-N6): writers in this process commit at a
 * fixed rate on PostgreSQL through {@link JdbcOutboxTransactions}, relays run as separate
 * standalone-relay processes ({@code java -jar outbox-relay-app-*-all.jar}), and a consumer in
 * this process notes when each message arrives; once with polling only, once with the Redis
 * transport and once with LISTEN/NOTIFY. Then it counts the store calls of an idle relay that
 * holds buckets, at the default settings.
 */
@Command(name = "notify-bench", sortOptions = false, usageHelpAutoWidth = true,
        description = {
            "Commit-to-consume latency across processes: writers here commit at a fixed rate on PostgreSQL, "
                    + "relays run as standalone-relay processes (the executable jar), a consumer here measures "
                    + "p50/p95/p99 from each commit to its record's arrival; for polling only, Redis pub/sub and "
                    + "PostgreSQL LISTEN/NOTIFY. Then the store calls per second of an idle relay holding buckets, "
                    + "at the default settings. The Kafka broker runs in this process unless --bootstrap-servers names one."},
        exitCodeListHeading = OutboxDemo.EXIT_CODE_LIST_HEADING, exitCodeList = {
            "0:the benchmark ran to its end and nothing was lost", "1:committed messages were never consumed",
            OutboxDemo.EXIT_CODES_2, "3:the benchmark failed (a server unreachable, a relay not starting)"})
final class NotifyBenchCommand implements Callable<Integer> {

    private static final StringSerializer STRING = new StringSerializer();

    @Spec
    private CommandSpec spec;

    @Option(names = "--jdbc-url", paramLabel = "URL", defaultValue = "jdbc:postgresql://127.0.0.1:5432/test",
            description = "PostgreSQL JDBC URL (default: ${DEFAULT-VALUE}).")
    private String jdbcUrl;

    @Option(names = "--jdbc-user", paramLabel = "USER", defaultValue = "postgres",
            description = "Database user (default: ${DEFAULT-VALUE}).")
    private String jdbcUser;

    @Option(names = "--jdbc-password", paramLabel = "PASSWORD", description = "Database password (default: none).")
    private String jdbcPassword;

    @Option(names = "--redis-uri", paramLabel = "URI", defaultValue = "redis://127.0.0.1:6379",
            description = "Redis for the redis mode (default: ${DEFAULT-VALUE}).")
    private String redisUri;

    @Option(names = "--bootstrap-servers", paramLabel = "HOST:PORT[,...]",
            description = "An existing Kafka cluster, such as a broker in its own process (./demo broker --port 9092). "
                    + "Default: a single-node broker started in this process, beside the writers and the consumer.")
    private String bootstrapServers;

    @Option(names = "--relay-jar", paramLabel = "JAR",
            description = "The standalone relay's executable jar (default: outbox-relay-app/target/"
                    + "outbox-relay-app-*-all.jar under the working directory; build it with "
                    + "mvn -pl outbox-relay-app -am -DskipTests package).")
    private Path relayJar;

    @Option(names = "--modes", paramLabel = "MODE", split = ",", defaultValue = "polling,redis,postgres",
            description = "Which of polling, redis, postgres to run, in order (default: ${DEFAULT-VALUE}).")
    private List<String> modes;

    @Option(names = "--rate", paramLabel = "MSG_PER_S", defaultValue = "1000",
            description = "Messages committed per second (default: ${DEFAULT-VALUE}).")
    private int rate;

    @Option(names = "--tx-messages", paramLabel = "N", defaultValue = "5",
            description = "Messages per transaction (default: ${DEFAULT-VALUE}).")
    private int txMessages;

    @Option(names = "--relays", paramLabel = "R", defaultValue = "2",
            description = "Relay processes (default: ${DEFAULT-VALUE}).")
    private int relays;

    @Option(names = "--buckets", paramLabel = "N", defaultValue = "8",
            description = "Buckets and topic partitions (default: ${DEFAULT-VALUE}).")
    private int buckets;

    @Option(names = "--seconds", paramLabel = "S", defaultValue = "30",
            description = "Measured seconds per mode, after the warm-up (default: ${DEFAULT-VALUE}).")
    private int seconds;

    @Option(names = "--warmup-seconds", paramLabel = "S", defaultValue = "20",
            description = "Seconds of writes per run that are not measured, while the new relay processes compile "
                    + "their code (default: ${DEFAULT-VALUE}).")
    private int warmupSeconds;

    @Option(names = "--runs", paramLabel = "N", defaultValue = "1",
            description = "Runs per mode, each with new relay processes; with more than one the medians of the runs' "
                    + "percentiles are printed with the lowest and highest (default: ${DEFAULT-VALUE}).")
    private int runs;

    @Option(names = "--idle-seconds", paramLabel = "S", defaultValue = "60",
            description = "Seconds the idle relay is watched; 0 skips it (default: ${DEFAULT-VALUE}).")
    private int idleSeconds;

    /** One mode's figures. */
    record Result(String mode, int count, double ratePerSecond, long p50, long p95, long p99, long max, int lost,
                  long hintsDropped, String load, Split split) {
    }

    /**
     * Where the time went, in milliseconds of the wall clock (the record's CreateTime, stamped by
     * the relay's producer at send): from the commit to the relay's send (the hint or poll, the
     * relay's read) and from the send to the consumer (the broker's acknowledgement path and the
     * consumer's fetch).
     */
    record Split(long toSendP50, long toSendP99, long toConsumeP50, long toConsumeP99) {
    }

    /** The machine's 1-minute load average, from /proc/loadavg; "?" where there is none. */
    static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }

    @Override
    public Integer call() throws Exception {
        CommandLine commandLine = spec.commandLine();
        Checks.between(commandLine, "--rate", rate, 1, 100_000);
        Checks.between(commandLine, "--tx-messages", txMessages, 1, 1_000);
        Checks.between(commandLine, "--relays", relays, 1, 16);
        Checks.between(commandLine, "--buckets", buckets, 1, 1_024);
        Checks.between(commandLine, "--seconds", seconds, 1, 3_600);
        Checks.between(commandLine, "--warmup-seconds", warmupSeconds, 0, 600);
        Checks.between(commandLine, "--idle-seconds", idleSeconds, 0, 3_600);
        Checks.between(commandLine, "--runs", runs, 1, 100);
        for (String mode : modes) {
            if (!List.of("polling", "redis", "postgres").contains(mode)) {
                throw new ParameterException(commandLine, "--modes: '" + mode + "' is none of polling, redis, postgres");
            }
        }
        Path jar = relayJar != null ? relayJar : findJar(commandLine);
        PrintWriter out = commandLine.getOut();
        PrintWriter err = commandLine.getErr();
        List<Result> results = new ArrayList<>();
        String idle = null;
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setUsername(jdbcUser);
        config.setPassword(jdbcPassword);
        config.setMaximumPoolSize(8);
        if (bootstrapServers != null && bootstrapServers.isBlank()) {
            throw new ParameterException(commandLine, "--bootstrap-servers must not be empty");
        }
        String where;
        try (DemoKafka broker = DemoKafka.connect(bootstrapServers, err);
             HikariDataSource pool = new HikariDataSource(config)) {
            where = broker.embedded() ? "broker in this process" : "broker at " + broker.bootstrapServers();
            for (int run = 1; run <= runs; run++) {
                for (String mode : modes) {
                    err.println("[notify-bench] " + mode + (runs > 1 ? " run " + run : "") + ": " + relays
                            + " relay processes, " + rate + " msg/s for " + warmupSeconds + " s warm-up + " + seconds
                            + " s");
                    err.flush();
                    results.add(runMode(mode, broker, pool, jar, err));
                }
            }
            if (idleSeconds > 0) {
                err.println("[notify-bench] idle relay at the defaults for " + idleSeconds + " s");
                err.flush();
                idle = idle(broker, pool);
            }
            broker.deleteCreatedTopics(err);
        }
        out.println();
        out.printf(Locale.ROOT, "commit-to-consume latency, PostgreSQL, %d msg/s (%d per transaction), %d relay "
                + "processes, %d buckets, %s, %d s measured per mode; %d cores, load 1m = the machine's load average%n",
                rate, txMessages, relays, buckets, where, seconds, Runtime.getRuntime().availableProcessors());
        out.printf(Locale.ROOT, "%-9s %9s %8s %8s %8s %8s %8s %6s %13s %10s%n", "mode", "messages", "msg/s", "p50 ms",
                "p95 ms", "p99 ms", "max ms", "lost", "hints dropped", "load 1m");
        int lost = 0;
        for (Result r : results) {
            out.printf(Locale.ROOT, "%-9s %9d %8.0f %8.1f %8.1f %8.1f %8.1f %6d %13d %10s%n", r.mode(), r.count(),
                    r.ratePerSecond(), r.p50() / 1e6, r.p95() / 1e6, r.p99() / 1e6, r.max() / 1e6, r.lost(),
                    r.hintsDropped(), r.load());
            lost += r.lost();
        }
        out.println("where the time went (wall clock, ms; the send is the record's CreateTime, stamped by the relay's "
                + "producer):");
        out.printf(Locale.ROOT, "%-9s %20s %20s %22s %22s%n", "mode", "commit-to-send p50", "commit-to-send p99",
                "send-to-consume p50", "send-to-consume p99");
        for (Result r : results) {
            out.printf(Locale.ROOT, "%-9s %20d %20d %22d %22d%n", r.mode(), r.split().toSendP50(),
                    r.split().toSendP99(), r.split().toConsumeP50(), r.split().toConsumeP99());
        }
        if (runs > 1) {
            out.printf(Locale.ROOT, "over %d runs per mode, median (lowest-highest) of the runs' percentiles, ms:%n", runs);
            out.printf(Locale.ROOT, "%-9s %20s %20s %20s%n", "mode", "p50", "p95", "p99");
            for (String mode : modes) {
                List<Result> of = results.stream().filter(r -> r.mode().equals(mode)).toList();
                out.printf(Locale.ROOT, "%-9s %20s %20s %20s%n", mode, spread(of, Result::p50), spread(of, Result::p95),
                        spread(of, Result::p99));
            }
        }
        if (idle != null) {
            out.println(idle);
        }
        out.flush();
        return lost == 0 ? OutboxDemo.EXIT_OK : OutboxDemo.EXIT_LOST;
    }

    /** The median of the runs' figure (nanoseconds) with the lowest and highest, in milliseconds. */
    static String spread(List<Result> runs, ToLongFunction<Result> figure) {
        long[] sorted = runs.stream().mapToLong(figure).sorted().toArray();
        int n = sorted.length;
        double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
        return String.format(Locale.ROOT, "%.1f (%.1f-%.1f)", median / 1e6, sorted[0] / 1e6, sorted[n - 1] / 1e6);
    }

    private static Path findJar(CommandLine commandLine) throws IOException {
        Path dir = Path.of("outbox-relay-app", "target");
        if (Files.isDirectory(dir)) {
            try (Stream<Path> files = Files.list(dir)) {
                List<Path> jars = files.filter(p -> p.getFileName().toString().matches("outbox-relay-app-.*-all\\.jar"))
                        .toList();
                if (jars.size() == 1) {
                    return jars.get(0);
                }
            }
        }
        throw new ParameterException(commandLine, "no standalone relay jar in " + dir.toAbsolutePath()
                + ": build it (mvn -pl outbox-relay-app -am -DskipTests package) or pass --relay-jar");
    }

    private Result runMode(String mode, DemoKafka broker, HikariDataSource pool, Path jar, PrintWriter err)
            throws Exception {
        String prefix = "nb_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10) + "_";
        String topic = prefix.replace('_', '-') + mode;
        JdbcOutboxStore store = JdbcOutboxStore.builder(pool).tablePrefix(prefix).build();
        store.createSchema();
        broker.createTopic(topic, buckets);
        Path logs = Files.createDirectories(Path.of("target", "notify-bench"));
        List<Process> processes = new ArrayList<>();
        Map<UUID, Long> committed = new ConcurrentHashMap<>();
        Map<UUID, Long> consumed = new ConcurrentHashMap<>();
        Map<UUID, Long> committedWall = new ConcurrentHashMap<>();
        Map<UUID, long[]> sentAndArrivedWall = new ConcurrentHashMap<>();
        AtomicLong measuredFrom = new AtomicLong(Long.MAX_VALUE);
        Consumer consumer = new Consumer(broker.bootstrapServers(), topic, consumed, sentAndArrivedWall);
        NotificationTransport transport = null;
        OutboxNotifier notifier = null;
        try {
            for (int i = 1; i <= relays; i++) {
                Path file = logs.resolve(prefix + "relay-" + i + ".properties");
                Files.writeString(file, relayProperties(mode, prefix, "bench-relay-" + i, broker.bootstrapServers()));
                processes.add(new ProcessBuilder("java", "-Xmx256m", "-XX:+UseSerialGC",
                        "-jar", jar.toString(), "-c", file.toString())
                        .redirectErrorStream(true).redirectOutput(logs.resolve(prefix + "relay-" + i + ".log").toFile())
                        .start());
            }
            awaitShares(pool, prefix, processes, err);
            OutboxCommitNotifier commits = OutboxCommitNotifier.NONE;
            if (!mode.equals("polling")) {
                transport = NotificationTransports.open(mode, mode.equals("redis")
                        ? Map.of("uri", redisUri, "channel", prefix + "hints")
                        : jdbcPassword == null ? Map.of("url", jdbcUrl, "user", jdbcUser, "channel", prefix + "hints")
                        : Map.of("url", jdbcUrl, "user", jdbcUser, "password", jdbcPassword, "channel",
                                prefix + "hints"));
                notifier = OutboxNotifier.builder().transport(transport).build();
                commits = notifier;
            }
            consumer.start();
            JdbcOutboxTransactions tx = JdbcOutboxTransactions.of(store.writer(), commits);
            long periodNanos = 1_000_000_000L * txMessages / rate;
            ScheduledExecutorService ticks = Executors.newSingleThreadScheduledExecutor();
            ExecutorService writers = Executors.newFixedThreadPool(4);
            long start = System.nanoTime();
            ticks.scheduleAtFixedRate(() -> writers.execute(() -> writeOne(pool, tx, topic, committed, committedWall)),
                    0, periodNanos, TimeUnit.NANOSECONDS);
            Thread.sleep(warmupSeconds * 1_000L);
            measuredFrom.set(System.nanoTime());
            String loadBefore = loadAverage();
            Thread.sleep(seconds * 1_000L);
            String load = loadBefore + "-" + loadAverage();
            long measuredTo = System.nanoTime();
            ticks.shutdownNow();
            writers.shutdown();
            writers.awaitTermination(30, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!consumed.keySet().containsAll(committed.keySet()) && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            List<Long> latencies = new ArrayList<>();
            List<Long> toSend = new ArrayList<>();
            List<Long> toConsume = new ArrayList<>();
            int lost = 0;
            for (Map.Entry<UUID, Long> c : committed.entrySet()) {
                Long arrived = consumed.get(c.getKey());
                if (arrived == null) {
                    lost++;
                } else if (c.getValue() >= measuredFrom.get() && c.getValue() < measuredTo) {
                    latencies.add(Math.max(0, arrived - c.getValue()));
                    long[] wall = sentAndArrivedWall.get(c.getKey());
                    Long committedAt = committedWall.get(c.getKey());
                    if (wall != null && committedAt != null) {
                        toSend.add(Math.max(0, wall[0] - committedAt));
                        toConsume.add(Math.max(0, wall[1] - wall[0]));
                    }
                }
            }
            long[] send = toSend.stream().mapToLong(Long::longValue).sorted().toArray();
            long[] consume = toConsume.stream().mapToLong(Long::longValue).sorted().toArray();
            Split split = new Split(percentile(send, 50), percentile(send, 99), percentile(consume, 50),
                    percentile(consume, 99));
            long[] sorted = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
            double ratePerSecond = sorted.length / ((measuredTo - measuredFrom.get()) / 1e9);
            long dropped = notifier == null ? 0 : notifier.stats().dropped();
            err.println("[notify-bench] " + mode + ": " + sorted.length + " measured, " + lost + " lost; relay logs in "
                    + logs.toAbsolutePath() + "/" + prefix + "relay-*.log");
            err.flush();
            return new Result(mode, sorted.length, ratePerSecond, percentile(sorted, 50), percentile(sorted, 95),
                    percentile(sorted, 99), sorted.length == 0 ? 0 : sorted[sorted.length - 1], lost, dropped, load, split);
        } finally {
            consumer.close();
            if (notifier != null) {
                notifier.close();
            }
            if (transport != null) {
                transport.close();
            }
            for (Process p : processes) {
                p.destroy();
            }
            for (Process p : processes) {
                if (!p.waitFor(40, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            }
            dropTables(pool, prefix);
        }
    }

    private void writeOne(HikariDataSource pool, JdbcOutboxTransactions tx, String topic, Map<UUID, Long> committed,
                          Map<UUID, Long> committedWall) {
        List<OutboxMessage> messages = new ArrayList<>(txMessages);
        for (int i = 0; i < txMessages; i++) {
            String key = "customer-" + ThreadLocalRandom.current().nextInt(1_000);
            messages.add(OutboxMessage.create(topic, key, "order", STRING, STRING, buckets));
        }
        try (Connection c = pool.getConnection()) {
            tx.run(c, outbox -> {
                outbox.enqueue(messages);
                return null;
            });
            long at = System.nanoTime();
            long wall = System.currentTimeMillis();
            messages.forEach(m -> {
                committedWall.put(m.messageId(), wall);
                committed.put(m.messageId(), at);
            });
        } catch (Exception e) {
            System.err.println("[notify-bench] a write failed: " + e);
        }
    }

    private String relayProperties(String mode, String prefix, String relayId, String bootstrap) {
        StringBuilder p = new StringBuilder();
        p.append("store=jdbc\n");
        p.append("store.url=").append(jdbcUrl).append('\n');
        p.append("store.user=").append(jdbcUser).append('\n');
        if (jdbcPassword != null) {
            p.append("store.password=").append(jdbcPassword).append('\n');
        }
        p.append("store.table.prefix=").append(prefix).append('\n');
        p.append("kafka.bootstrap.servers=").append(bootstrap).append('\n');
        p.append("kafka.linger.ms=0\n");
        p.append("relay.id=").append(relayId).append('\n');
        p.append("relay.bucket.count=").append(buckets).append('\n');
        if (!mode.equals("polling")) {
            p.append("notify.transport=").append(mode).append('\n');
            p.append("notify.").append(mode).append(".channel=").append(prefix).append("hints\n");
            if (mode.equals("redis")) {
                p.append("notify.redis.uri=").append(redisUri).append('\n');
            }
        }
        return p.toString();
    }

    /** Waits until every relay process holds its fair share of the buckets. */
    private void awaitShares(HikariDataSource pool, String prefix, List<Process> processes, PrintWriter err)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (System.nanoTime() < deadline) {
            for (Process p : processes) {
                if (!p.isAlive()) {
                    throw new IllegalStateException("a relay process exited with code " + p.exitValue()
                            + "; see target/notify-bench/" + prefix + "relay-*.log");
                }
            }
            List<Integer> shares = new ArrayList<>();
            try (Connection c = pool.getConnection(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT count(*) FROM " + prefix + "leases WHERE owner IS NOT NULL "
                         + "GROUP BY owner")) {
                while (rs.next()) {
                    shares.add(rs.getInt(1));
                }
            }
            if (shares.size() == relays && shares.stream().mapToInt(Integer::intValue).sum() == buckets
                    && shares.stream().allMatch(n -> n >= buckets / relays && n <= buckets / relays + 1)) {
                Thread.sleep(1_500); // let the relays' first discovery of the gained buckets pass
                return;
            }
            Thread.sleep(250);
        }
        err.println("[notify-bench] the relays did not share the buckets within 90 s; measuring anyway");
    }

    private static void dropTables(HikariDataSource pool, String prefix) {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + prefix + "messages, " + prefix + "leases, " + prefix + "relays");
        } catch (Exception e) {
            System.err.println("[notify-bench] could not drop the tables of " + prefix + ": " + e);
        }
    }

    private static long percentile(long[] sorted, int p) {
        if (sorted.length == 0) {
            return 0;
        }
        int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }

    /**
     * An idle relay at the default settings on its own tables, holding every bucket, watched for
     * {@code --idle-seconds}: once polling only, once with the Redis transport listening.
     */
    private String idle(DemoKafka broker, HikariDataSource pool) throws Exception {
        StringBuilder text = new StringBuilder();
        for (String mode : List.of("polling", "redis")) {
            String prefix = "nbi_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10) + "_";
            JdbcOutboxStore jdbc = JdbcOutboxStore.builder(pool).tablePrefix(prefix).build();
            jdbc.createSchema();
            CountingStore store = new CountingStore(jdbc);
            RelayOptions options = RelayOptions.builder().relayId("idle-relay").build();
            NotificationTransport transport = mode.equals("redis")
                    ? NotificationTransports.open("redis", Map.of("uri", redisUri, "channel", prefix + "hints")) : null;
            try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers())).build();
                 OutboxRelay relay = new OutboxRelay(store, publisher, options)) {
                relay.start();
                OutboxNotifier notifier = transport == null ? null
                        : OutboxNotifier.builder().transport(transport).relay(relay).build();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (relay.ownedBuckets().size() < options.bucketCount() && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                Thread.sleep(2_000);
                long[] before = store.counts();
                long started = System.nanoTime();
                Thread.sleep(idleSeconds * 1_000L);
                double elapsed = (System.nanoTime() - started) / 1e9;
                long[] after = store.counts();
                long total = 0;
                long[] delta = new long[after.length];
                for (int i = 0; i < after.length; i++) {
                    delta[i] = after[i] - before[i];
                    total += delta[i];
                }
                text.append(String.format(Locale.ROOT, "idle relay (%s, defaults: poll.interval.ms=%d, "
                        + "lease.renew.interval.ms=%d), %d buckets held, %.0f s: %.2f store calls/s (acquire %d, "
                        + "bucketsWithPending %d, nextBatch %d, other %d), load 1m %s%n", mode, options.pollInterval().toMillis(),
                        options.leaseRenewInterval().toMillis(), relay.ownedBuckets().size(), elapsed, total / elapsed,
                        delta[0], delta[1], delta[2], delta[3], loadAverage()));
                if (notifier != null) {
                    notifier.close();
                }
            } finally {
                if (transport != null) {
                    transport.close();
                }
                dropTables(pool, prefix);
            }
        }
        return text.toString().stripTrailing();
    }

    /** Reads the topic from its beginning and notes when each message id arrives. */
    private static final class Consumer implements AutoCloseable {

        private final Thread thread;
        private volatile boolean closed;

        Consumer(String bootstrap, String topic, Map<UUID, Long> consumed, Map<UUID, long[]> sentAndArrivedWall) {
            thread = new Thread(() -> {
                Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                        ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 5);
                try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                        new ByteArrayDeserializer())) {
                    List<TopicPartition> partitions = c.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                            .map(p -> new TopicPartition(topic, p.partition())).toList();
                    c.assign(partitions);
                    c.seekToBeginning(partitions);
                    while (!closed) {
                        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(20))) {
                            long now = System.nanoTime();
                            long wall = System.currentTimeMillis();
                            Header h = r.headers().lastHeader(KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER);
                            UUID id = MessageIds.parse(new String(h.value(), StandardCharsets.UTF_8));
                            if (consumed.putIfAbsent(id, now) == null) {
                                sentAndArrivedWall.put(id, new long[] {r.timestamp(), wall});
                            }
                        }
                    }
                }
            }, "notify-bench-consumer");
            thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        @Override
        public void close() {
            closed = true;
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Counts the relay's store calls by kind: acquire, bucketsWithPending, nextBatch, other. */
    private static final class CountingStore implements OutboxStore {

        private final JdbcOutboxStore store;
        private final AtomicLong[] counts = {new AtomicLong(), new AtomicLong(), new AtomicLong(), new AtomicLong()};

        CountingStore(JdbcOutboxStore store) {
            this.store = store;
        }

        long[] counts() {
            return Arrays.stream(counts).mapToLong(AtomicLong::get).toArray();
        }

        @Override
        public List<Integer> acquireBucketLeases(LeaseRequest request) {
            counts[0].incrementAndGet();
            return store.acquireBucketLeases(request);
        }

        @Override
        public List<Integer> bucketsWithPending(List<Integer> owned) {
            counts[1].incrementAndGet();
            return store.bucketsWithPending(owned);
        }

        @Override
        public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
            counts[2].incrementAndGet();
            return store.nextBatch(bucket, maxCount, maxBytes);
        }

        @Override
        public void markPublished(int bucket, List<Pending> published) {
            counts[3].incrementAndGet();
            store.markPublished(bucket, published);
        }

        @Override
        public Optional<LeaseRenewal> leaseRenewal() {
            return store.leaseRenewal().map(renewal -> request -> {
                counts[3].incrementAndGet();
                return renewal.renewBucketLeases(request);
            });
        }

        @Override
        public Optional<LeaseRelease> leaseRelease() {
            return store.leaseRelease().map(release -> relayId -> {
                counts[3].incrementAndGet();
                release.releaseBucketLeases(relayId);
            });
        }
    }
}
