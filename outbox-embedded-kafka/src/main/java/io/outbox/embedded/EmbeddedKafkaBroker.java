package io.outbox.embedded;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Stream;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A single-node Kafka broker running inside this JVM: one KRaft server that is both broker and
 * controller, listening on {@code 127.0.0.1} only, with every replication factor and minimum
 * in-sync replica count set to 1 so consumer groups, idempotent producers ({@code acks=all}) and
 * transactions work on one node.
 *
 * <p>Meant for demos, local runs and tests, not production: data lives in a temporary directory
 * that {@link #close()} deletes, nothing is secured, and the broker is tuned for a small footprint
 * (about 300 MB of resident memory, a 2 MiB log-cleaner buffer, one partition for each internal
 * topic). Start-up takes a few seconds.
 *
 * <pre>{@code
 * try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start()) {
 *     broker.createTopic("orders", 3);
 *     Map<String, Object> producerConfig = Map.of("bootstrap.servers", broker.bootstrapServers());
 *     ...
 * }
 * }</pre>
 *
 * <p>{@link #stop()} shuts the broker down but keeps its ports and data; {@link #restart()} brings
 * it back on the same ports with the same data, so clients reconnect to the same address (useful
 * to test a broker outage). The client and broker versions on the class path must be equal
 * (both come from {@code org.apache.kafka} at the same version).
 *
 * <p>Instances are thread-safe; lifecycle methods are serialized.
 */
public final class EmbeddedKafkaBroker implements AutoCloseable {

    /** How long {@link #start()} and {@link #restart()} wait for the broker by default: 60 s. */
    public static final Duration DEFAULT_STARTUP_TIMEOUT = Duration.ofSeconds(60);

    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedKafkaBroker.class);
    private static final String HOST = "127.0.0.1";
    private static final int PORT_ATTEMPTS = 3;

    private final Path workDir;
    private final boolean ownsWorkDir;
    private final int port;
    private final int controllerPort;
    private final Properties serverProperties;
    private final Duration startupTimeout;
    private final Map<String, String> clientProperties;
    private KafkaRaftServer server;
    private boolean closed;

    private EmbeddedKafkaBroker(Path workDir, boolean ownsWorkDir, int port, int controllerPort,
                                Properties serverProperties, Duration startupTimeout,
                                Map<String, String> clientProperties) {
        this.workDir = workDir;
        this.ownsWorkDir = ownsWorkDir;
        this.port = port;
        this.controllerPort = controllerPort;
        this.serverProperties = serverProperties;
        this.startupTimeout = startupTimeout;
        this.clientProperties = Map.copyOf(clientProperties);
    }

    /**
     * Formats and starts a broker on free ports in a new temporary directory, with the default
     * settings; same as {@code builder().start()}.
     *
     * @return the running broker; the caller closes it
     * @throws IllegalStateException if the broker does not start within
     *     {@link #DEFAULT_STARTUP_TIMEOUT}
     * @throws UncheckedIOException if the temporary directory cannot be created
     */
    public static EmbeddedKafkaBroker start() {
        return builder().start();
    }

    /**
     * A builder for a broker with chosen ports, directory or extra settings.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Where Kafka clients connect.
     *
     * @return {@code 127.0.0.1:<port>}, the value for a client's {@code bootstrap.servers}
     */
    public String bootstrapServers() {
        return HOST + ":" + port;
    }

    /**
     * The client (PLAINTEXT) port.
     *
     * @return the port, the same across {@link #restart()}
     */
    public int port() {
        return port;
    }

    /**
     * The KRaft controller port (clients never use it).
     *
     * @return the port, the same across {@link #restart()}
     */
    public int controllerPort() {
        return controllerPort;
    }

    /**
     * The broker's data directory.
     *
     * @return the log directory, kept across {@link #restart()}
     */
    public Path logDir() {
        return workDir.resolve("logs");
    }

    /**
     * Whether the broker is running.
     *
     * @return true between a successful start and {@link #stop()} or {@link #close()}
     */
    public synchronized boolean isRunning() {
        return server != null;
    }

    /**
     * Creates a topic with replication factor 1 and waits until every partition has a leader.
     * Creating a topic that already exists with the same partition count is a no-op.
     *
     * @param name the topic; a legal Kafka topic name
     * @param partitions the number of partitions, {@code >= 1}
     * @throws IllegalArgumentException if {@code partitions < 1}, or the topic exists with
     *     another partition count
     * @throws IllegalStateException if the broker is not running or the topic does not become
     *     ready within the start-up timeout
     */
    public void createTopic(String name, int partitions) {
        Objects.requireNonNull(name, "name must not be null");
        if (partitions < 1) {
            throw new IllegalArgumentException("partitions must be >= 1 but was " + partitions);
        }
        requireRunning();
        try (Admin admin = Admin.create(adminConfig())) {
            try {
                admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all()
                        .get(startupTimeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw new IllegalStateException("could not create topic '" + name + "': " + e.getCause(), e);
                }
            }
            awaitLeaders(admin, name, partitions);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topic '" + name + "'", e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("topic '" + name + "' was not created within " + startupTimeout, e);
        }
    }

    private void awaitLeaders(Admin admin, String name, int partitions) throws InterruptedException {
        long deadline = System.nanoTime() + startupTimeout.toNanos();
        while (true) {
            try {
                TopicDescription description = admin.describeTopics(List.of(name)).allTopicNames()
                        .get(5, TimeUnit.SECONDS).get(name);
                if (description.partitions().size() != partitions) {
                    throw new IllegalArgumentException("topic '" + name + "' already exists with "
                            + description.partitions().size() + " partitions, not " + partitions);
                }
                if (description.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty())) {
                    return;
                }
            } catch (ExecutionException | TimeoutException e) {
                LOG.debug("topic={} not described yet: {}", name, e.toString());
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("topic '" + name + "' has no leader for every partition after "
                        + startupTimeout);
            }
            Thread.sleep(50);
        }
    }

    /**
     * Creates ACLs and waits until this broker enforces them. {@code createAcls} returns once the
     * controller committed the bindings; the broker's authorizer applies them a moment later, and a
     * client that connects in between is still refused. The broker answers {@code describeAcls}
     * from its own authorizer, so this waits until that answer holds every binding. Needs a broker
     * with an authorizer ({@link Builder#saslPlainWithAcls}).
     *
     * @param acls the bindings; not null
     * @throws IllegalStateException if the broker is not running, refuses the bindings or does not
     *     enforce them within the start-up timeout
     */
    public void grant(Collection<AclBinding> acls) {
        List<AclBinding> bindings = List.copyOf(Objects.requireNonNull(acls, "acls must not be null"));
        changeAcls("grant " + bindings, admin -> admin.createAcls(bindings).all(),
                described -> described.containsAll(bindings));
    }

    /**
     * Deletes the ACLs that match a filter and waits until this broker no longer enforces any of
     * them (see {@link #grant}: its authorizer's answer to {@code describeAcls} holds none).
     *
     * @param filter which bindings; not null
     * @throws IllegalStateException if the broker is not running, refuses the deletion or still
     *     enforces a binding after the start-up timeout
     */
    public void revoke(AclBindingFilter filter) {
        Objects.requireNonNull(filter, "filter must not be null");
        changeAcls("revoke " + filter, admin -> admin.deleteAcls(List.of(filter)).all(), Collection::isEmpty,
                filter);
    }

    private void changeAcls(String what, Function<Admin, KafkaFuture<?>> change,
                            Predicate<Collection<AclBinding>> applied) {
        changeAcls(what, change, applied, AclBindingFilter.ANY);
    }

    private void changeAcls(String what, Function<Admin, KafkaFuture<?>> change,
                            Predicate<Collection<AclBinding>> applied, AclBindingFilter filter) {
        requireRunning();
        try (Admin admin = Admin.create(adminConfig())) {
            change.apply(admin).get(startupTimeout.toMillis(), TimeUnit.MILLISECONDS);
            long deadline = System.nanoTime() + startupTimeout.toNanos();
            while (!applied.test(admin.describeAcls(filter).values().get(5, TimeUnit.SECONDS))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the broker did not apply " + what + " within " + startupTimeout);
                }
                Thread.sleep(20);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted during " + what, e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("the broker refused " + what + ": " + e.getCause(), e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("no answer to " + what + " within " + startupTimeout, e);
        }
    }

    /**
     * Settings for an Admin client or any other Kafka client of this broker.
     *
     * @return a new mutable map holding {@code bootstrap.servers} and the builder's
     *     {@link Builder#clientProperty client settings}
     */
    public Map<String, Object> adminConfig() {
        Map<String, Object> config = new LinkedHashMap<>();
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        config.putAll(clientProperties);
        return config;
    }

    /**
     * Shuts the broker down and waits for it, keeping its ports and data for {@link #restart()}.
     * Clients see the broker as unreachable. A no-op when it is not running.
     */
    public synchronized void stop() {
        if (server == null) {
            return;
        }
        LOG.info("stopping embedded Kafka broker bootstrapServers={}", bootstrapServers());
        KafkaRaftServer running = server;
        server = null;
        running.shutdown();
        running.awaitShutdown();
    }

    /**
     * Stops the broker if it runs, then starts it again on the same ports with the same data, and
     * waits until it answers.
     *
     * @throws IllegalStateException if the broker is closed or does not come back within the
     *     start-up timeout (a port taken by another process in the meantime, say)
     */
    public synchronized void restart() {
        if (closed) {
            throw new IllegalStateException("the embedded Kafka broker is closed");
        }
        stop();
        startServer();
    }

    /**
     * Stops the broker and deletes its temporary directory (unless the directory was given to
     * the builder). Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            stop();
        } finally {
            if (ownsWorkDir) {
                deleteRecursively(workDir);
            }
        }
    }

    @Override
    public String toString() {
        return "EmbeddedKafkaBroker[" + bootstrapServers() + ", running=" + isRunning() + ", dir=" + workDir + "]";
    }

    private void requireRunning() {
        if (!isRunning()) {
            throw new IllegalStateException("the embedded Kafka broker is not running");
        }
    }

    private synchronized void startServer() {
        KafkaRaftServer candidate = new KafkaRaftServer(new KafkaConfig(serverProperties, false), Time.SYSTEM);
        try {
            candidate.startup();
            awaitReady();
        } catch (RuntimeException e) {
            shutdownQuietly(candidate);
            throw e;
        }
        server = candidate;
        LOG.info("embedded Kafka broker running bootstrapServers={} logDir={}", bootstrapServers(), logDir());
    }

    private void awaitReady() {
        long deadline = System.nanoTime() + startupTimeout.toNanos();
        Map<String, Object> config = adminConfig();
        config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 2_000);
        config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 2_000);
        try (Admin admin = Admin.create(config)) {
            while (true) {
                try {
                    if (!admin.describeCluster().nodes().get(2, TimeUnit.SECONDS).isEmpty()) {
                        return;
                    }
                } catch (ExecutionException | TimeoutException e) {
                    LOG.debug("embedded Kafka broker not ready yet: {}", e.toString());
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the embedded Kafka broker did not answer within " + startupTimeout
                            + " on " + bootstrapServers());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the embedded Kafka broker", e);
        }
    }

    private static void shutdownQuietly(KafkaRaftServer server) {
        try {
            server.shutdown();
            server.awaitShutdown();
        } catch (RuntimeException e) {
            LOG.debug("embedded Kafka broker did not shut down cleanly: {}", e.toString());
        }
    }

    private static void format(Properties properties, Path workDir) {
        Path file = workDir.resolve("server.properties");
        try (OutputStream out = Files.newOutputStream(file)) {
            properties.store(out, "embedded Kafka broker");
        } catch (IOException e) {
            throw new UncheckedIOException("could not write " + file, e);
        }
        ByteArrayOutputStream output = new ByteArrayOutputStream();
        int status;
        try (PrintStream print = new PrintStream(output, true, StandardCharsets.UTF_8)) {
            status = StorageTool.execute(new String[] {"format", "--standalone", "-t", Uuid.randomUuid().toString(),
                "-c", file.toString()}, print);
        }
        if (status != 0) {
            throw new IllegalStateException("formatting the embedded Kafka broker's storage failed with status "
                    + status + ": " + output.toString(StandardCharsets.UTF_8));
        }
    }

    private static Properties serverProperties(Path logDir, int port, int controllerPort, Map<String, String> extra) {
        Properties p = new Properties();
        p.setProperty("process.roles", "broker,controller");
        p.setProperty("node.id", "1");
        p.setProperty("listeners", "PLAINTEXT://" + HOST + ":" + port + ",CONTROLLER://" + HOST + ":" + controllerPort);
        p.setProperty("advertised.listeners", "PLAINTEXT://" + HOST + ":" + port);
        p.setProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.setProperty("inter.broker.listener.name", "PLAINTEXT");
        p.setProperty("controller.listener.names", "CONTROLLER");
        p.setProperty("controller.quorum.bootstrap.servers", HOST + ":" + controllerPort);
        p.setProperty("log.dirs", logDir.toString());
        // One node: every replication factor and min ISR must be 1, or internal topics never appear.
        p.setProperty("offsets.topic.replication.factor", "1");
        p.setProperty("transaction.state.log.replication.factor", "1");
        p.setProperty("transaction.state.log.min.isr", "1");
        p.setProperty("share.coordinator.state.topic.replication.factor", "1");
        p.setProperty("share.coordinator.state.topic.min.isr", "1");
        p.setProperty("default.replication.factor", "1");
        p.setProperty("min.insync.replicas", "1");
        // Small and quick: few internal partitions, no rebalance delay, a small cleaner buffer.
        p.setProperty("offsets.topic.num.partitions", "1");
        p.setProperty("transaction.state.log.num.partitions", "1");
        p.setProperty("share.coordinator.state.topic.num.partitions", "1");
        p.setProperty("group.initial.rebalance.delay.ms", "0");
        p.setProperty("log.cleaner.dedupe.buffer.size", "2097152");
        p.setProperty("log.index.size.max.bytes", "1048576");
        p.setProperty("num.network.threads", "2");
        p.setProperty("num.io.threads", "2");
        p.setProperty("num.recovery.threads.per.data.dir", "1");
        p.setProperty("background.threads", "2");
        extra.forEach(p::setProperty);
        return p;
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on " + HOST, e);
        }
    }

    /** Refuses a port given by the caller that is already bound, before Kafka tries and logs its failure at length. */
    private static void requireBindable(String name, int port) {
        if (port == 0) {
            return;
        }
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getByName(HOST), port), 1);
        } catch (IOException e) {
            throw new IllegalStateException(name + " " + port + " on " + HOST + " is in use (" + e.getMessage()
                    + "); stop what listens there or choose another port", e);
        }
    }

    private static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException e) {
                    LOG.warn("could not delete {}: {}", path, e.toString());
                }
            });
        } catch (IOException | UncheckedIOException e) {
            LOG.warn("could not delete {}: {}", dir, e.toString());
        }
    }

    /**
     * The {@code sasl.jaas.config} of a SASL/PLAIN login, for a client of a broker built with
     * {@link Builder#saslPlainWithAcls}.
     *
     * @param user the user; not null
     * @param password its password; not null
     * @return the JAAS line of {@code PlainLoginModule}
     */
    public static String plainLogin(String user, String password) {
        return "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
                + Objects.requireNonNull(user, "user must not be null") + "\" password=\""
                + Objects.requireNonNull(password, "password must not be null") + "\";";
    }

    /**
     * Chooses ports, directory and extra broker settings, then starts the broker. Not thread-safe.
     */
    public static final class Builder {

        private int port;
        private int controllerPort;
        private Path workDir;
        private Duration startupTimeout = DEFAULT_STARTUP_TIMEOUT;
        private final Map<String, String> brokerProperties = new LinkedHashMap<>();
        private final Map<String, String> clientProperties = new LinkedHashMap<>();

        private Builder() {
        }

        /**
         * The client port.
         *
         * @param port a port in {@code [1, 65535]}, or 0 (the default) for a free one
         * @return this builder
         * @throws IllegalArgumentException if the port is out of range
         */
        public Builder port(int port) {
            this.port = requirePort("port", port);
            return this;
        }

        /**
         * The controller port.
         *
         * @param controllerPort a port in {@code [1, 65535]}, or 0 (the default) for a free one
         * @return this builder
         * @throws IllegalArgumentException if the port is out of range
         */
        public Builder controllerPort(int controllerPort) {
            this.controllerPort = requirePort("controllerPort", controllerPort);
            return this;
        }

        /**
         * The working directory (data lives in its {@code logs} subdirectory). A given directory
         * is kept on {@link EmbeddedKafkaBroker#close()}; the default, a new temporary
         * directory, is deleted then.
         *
         * @param workDir an empty or missing directory; not null
         * @return this builder
         */
        public Builder workDir(Path workDir) {
            this.workDir = Objects.requireNonNull(workDir, "workDir must not be null");
            return this;
        }

        /**
         * How long start and restart wait for the broker to answer.
         *
         * @param startupTimeout positive; default {@link #DEFAULT_STARTUP_TIMEOUT}
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder startupTimeout(Duration startupTimeout) {
            Objects.requireNonNull(startupTimeout, "startupTimeout must not be null");
            if (startupTimeout.isNegative() || startupTimeout.isZero()) {
                throw new IllegalArgumentException("startupTimeout must be positive but was " + startupTimeout);
            }
            this.startupTimeout = startupTimeout;
            return this;
        }

        /**
         * Adds or overrides one broker setting ({@code server.properties} syntax), applied after
         * the defaults, for example {@code brokerProperty("auto.create.topics.enable", "false")}.
         * Overriding the listeners, node id or roles breaks the broker.
         *
         * @param name the setting; not null
         * @param value its value; not null
         * @return this builder
         */
        public Builder brokerProperty(String name, String value) {
            brokerProperties.put(Objects.requireNonNull(name, "name must not be null"),
                    Objects.requireNonNull(value, "value must not be null"));
            return this;
        }

        /**
         * Adds a client setting that {@link #adminConfig()} returns, so the broker's own readiness
         * check and {@link #createTopic} use it too: the login of a super user when the broker
         * property {@code listener.security.protocol.map} makes the client listener
         * {@code SASL_PLAINTEXT}, for example {@code clientProperty("security.protocol", "SASL_PLAINTEXT")}.
         *
         * @param name the client setting; not null
         * @param value its value; not null
         * @return this builder
         */
        public Builder clientProperty(String name, String value) {
            clientProperties.put(Objects.requireNonNull(name, "name must not be null"),
                    Objects.requireNonNull(value, "value must not be null"));
            return this;
        }

        /**
         * Makes the client listener check logins (SASL/PLAIN over {@code SASL_PLAINTEXT}) and ACLs
         * (KRaft's {@code StandardAuthorizer}): each user of {@code passwords} may log in with its
         * password; {@code superUser}, one of them, bypasses the ACLs and is the login of
         * {@link EmbeddedKafkaBroker#adminConfig()}, while the others need ACLs for what they do. The
         * controller listener stays {@code PLAINTEXT}; its {@code ANONYMOUS} principal is a super user
         * too, so the broker reaches its controller.
         *
         * @param superUser the user that bypasses the ACLs; a key of {@code passwords}
         * @param passwords each user's password; not null, not empty; names and passwords without
         *     {@code "} or white space
         * @return this builder
         * @throws IllegalArgumentException if {@code superUser} is not a key of {@code passwords}, or
         *     a name or password holds {@code "} or white space
         */
        public Builder saslPlainWithAcls(String superUser, Map<String, String> passwords) {
            Objects.requireNonNull(superUser, "superUser must not be null");
            Objects.requireNonNull(passwords, "passwords must not be null");
            if (!passwords.containsKey(superUser)) {
                throw new IllegalArgumentException("superUser '" + superUser + "' is not one of the users "
                        + passwords.keySet());
            }
            StringBuilder users = new StringBuilder();
            passwords.forEach((user, password) -> {
                requirePlain("user name", user);
                requirePlain("password of " + user, password);
                users.append(" user_").append(user).append("=\"").append(password).append('"');
            });
            String login = plainLogin(superUser, passwords.get(superUser));
            brokerProperty("listener.security.protocol.map", "PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT");
            brokerProperty("sasl.enabled.mechanisms", "PLAIN");
            brokerProperty("sasl.mechanism.inter.broker.protocol", "PLAIN");
            brokerProperty("listener.name.plaintext.plain.sasl.jaas.config",
                    login.substring(0, login.length() - 1) + users + ";");
            brokerProperty("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
            brokerProperty("super.users", "User:" + superUser + ";User:ANONYMOUS");
            clientProperty("security.protocol", "SASL_PLAINTEXT");
            clientProperty("sasl.mechanism", "PLAIN");
            clientProperty("sasl.jaas.config", login);
            return this;
        }

        private static void requirePlain(String what, String text) {
            Objects.requireNonNull(text, what + " must not be null");
            if (text.isEmpty() || text.chars().anyMatch(c -> c == '"' || Character.isWhitespace(c))) {
                throw new IllegalArgumentException(what + " must be non-empty, without \" or white space, but is '"
                        + text + "'");
            }
        }

        /**
         * Formats the storage and starts the broker. When a port was left free and is taken by
         * another process before the broker binds it, it retries with new ports (three attempts). A
         * port the caller gave that is already in use is refused before the broker starts, naming it.
         *
         * @return the running broker; the caller closes it
         * @throws IllegalStateException if a given port is in use or the broker does not start within
         *     the timeout
         * @throws UncheckedIOException if the directory cannot be created
         */
        public EmbeddedKafkaBroker start() {
            requireBindable("port", port);
            requireBindable("controller port", controllerPort);
            boolean freePorts = port == 0 || controllerPort == 0;
            RuntimeException failure = null;
            for (int attempt = 1; attempt <= (freePorts ? PORT_ATTEMPTS : 1); attempt++) {
                Path dir = createWorkDir();
                int p = port == 0 ? freePort() : port;
                int c = controllerPort == 0 ? freePort() : controllerPort;
                Properties properties = serverProperties(dir.resolve("logs"), p, c, brokerProperties);
                EmbeddedKafkaBroker broker = new EmbeddedKafkaBroker(dir, workDir == null, p, c, properties,
                        startupTimeout, clientProperties);
                try {
                    format(properties, dir);
                    broker.startServer();
                    return broker;
                } catch (RuntimeException e) {
                    broker.close();
                    failure = e;
                    LOG.warn("embedded Kafka broker did not start on ports {} and {} (attempt {}): {}", p, c, attempt,
                            e.toString());
                }
            }
            throw failure;
        }

        private Path createWorkDir() {
            try {
                if (workDir == null) {
                    return Files.createTempDirectory("embedded-kafka-");
                }
                return Files.createDirectories(workDir);
            } catch (IOException e) {
                throw new UncheckedIOException("could not create the embedded Kafka broker's directory", e);
            }
        }

        private static int requirePort(String name, int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException(name + " must be in [0, 65535] but was " + port);
            }
            return port;
        }
    }
}
