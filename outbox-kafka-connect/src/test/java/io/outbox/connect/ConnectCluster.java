package io.outbox.connect;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Kafka Connect cluster as an operator runs one, for the integration tests: a broker in a JVM of
 * its own ({@link BrokerProcess}) and distributed workers, each a JVM
 * running {@code org.apache.kafka.connect.cli.ConnectDistributed} with {@code plugin.path} on the
 * plugin directory the package phase laid out (system property {@code connect.plugin.dir}). A
 * worker's class path is the test class path without this project's jars and without anything the
 * plugin directory ships, so the connector can only come from the plugin directory.
 */
final class ConnectCluster implements AutoCloseable {

    static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration START_WAIT = Duration.ofMinutes(2);

    private final Path dir;
    private final String groupId;
    private final Map<String, String> extraWorkerSettings;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<Worker> workers = new ArrayList<>();
    private Process broker;
    private String bootstrapServers;

    /** One worker process and its REST port. */
    record Worker(String name, int port, Process process, Path log) {
        String url() {
            return "http://127.0.0.1:" + port;
        }
    }

    ConnectCluster(Path dir, String groupId, Map<String, String> extraWorkerSettings) {
        this.dir = dir;
        this.groupId = groupId;
        this.extraWorkerSettings = Map.copyOf(extraWorkerSettings);
    }

    /** The plugin directory's parent, for plugin.path; fails when the package phase did not lay it out. */
    static Path pluginDir() {
        String configured = System.getProperty("connect.plugin.dir");
        if (configured == null || !Files.isDirectory(Paths.get(configured))) {
            throw new IllegalStateException("the connector's plugin directory " + configured + " does not exist; "
                    + "run the integration tests with 'mvn verify' (the package phase lays it out)");
        }
        return Paths.get(configured);
    }

    private static String testClassPath() {
        String cp = System.getProperty("surefire.test.class.path");
        return cp == null || cp.isBlank() ? System.getProperty("java.class.path") : cp;
    }

    /** The test class path less this project's classes and jars and every jar the plugin ships. */
    static String workerClassPath() throws IOException {
        Set<String> shipped = new HashSet<>();
        try (var files = Files.list(pluginDir())) {
            files.forEach(f -> shipped.add(f.getFileName().toString()));
        }
        List<String> kept = new ArrayList<>();
        for (String entry : testClassPath().split(File.pathSeparator)) {
            String name = Paths.get(entry).getFileName().toString();
            boolean ours = name.startsWith("outbox-") || entry.endsWith("classes") || entry.contains("/outbox-")
                    && entry.contains("/target/");
            if (!entry.isBlank() && !ours && !shipped.contains(name)) {
                kept.add(entry);
            }
        }
        return String.join(File.pathSeparator, kept);
    }

    static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String java() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * A second group of workers on this cluster's broker, with worker settings of its own (another
     * {@code group.id}, so another Connect cluster); closing it stops its workers, not the broker.
     *
     * @param groupId the new group's {@code group.id} and storage topic prefix
     * @param extraWorkerSettings settings added to (or replacing) the defaults of {@link #startWorker}
     * @return the new cluster, with no worker started yet
     * @throws IllegalStateException if this cluster's broker was not started
     */
    ConnectCluster onSameBroker(String groupId, Map<String, String> extraWorkerSettings) {
        if (bootstrapServers == null) {
            throw new IllegalStateException("the broker of " + this + " was not started");
        }
        ConnectCluster other = new ConnectCluster(dir, groupId, extraWorkerSettings);
        other.bootstrapServers = bootstrapServers;
        return other;
    }

    /** Starts the broker JVM and waits for its address. */
    String startBroker() throws IOException {
        Path out = dir.resolve("broker.out");
        Path err = dir.resolve("broker.err");
        broker = new ProcessBuilder(java(), "-Xmx512m", "-XX:+UseSerialGC", "-cp", testClassPath(),
                BrokerProcess.class.getName())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        Pattern address = Pattern.compile("bootstrap.servers=(\\S+)");
        await("the broker to print its address").atMost(START_WAIT).pollInterval(Duration.ofMillis(200)).until(() -> {
            if (!broker.isAlive()) {
                throw new IllegalStateException("the broker exited: " + Files.readString(err));
            }
            Matcher m = address.matcher(Files.readString(out));
            if (m.find()) {
                bootstrapServers = m.group(1);
                return true;
            }
            return false;
        });
        return bootstrapServers;
    }

    String bootstrapServers() {
        return bootstrapServers;
    }

    /** Starts a worker JVM; {@link #awaitWorker} waits until its REST API answers. */
    Worker startWorker(String name) throws IOException {
        int port = freePort();
        Map<String, String> settings = new TreeMap<>();
        settings.put("bootstrap.servers", bootstrapServers);
        settings.put("group.id", groupId);
        settings.put("listeners", "http://127.0.0.1:" + port);
        settings.put("rest.advertised.host.name", "127.0.0.1");
        settings.put("rest.advertised.port", Integer.toString(port));
        settings.put("plugin.path", pluginDir().getParent().toString());
        // The plugins carry ServiceLoader manifests (the connector registers itself with @AutoService):
        // no class scanning, which takes tens of seconds on a loaded machine.
        settings.put("plugin.discovery", "service_load");
        settings.put("key.converter", "org.apache.kafka.connect.json.JsonConverter");
        settings.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        settings.put("config.storage.topic", groupId + "-configs");
        settings.put("offset.storage.topic", groupId + "-offsets");
        settings.put("status.storage.topic", groupId + "-status");
        settings.put("config.storage.replication.factor", "1");
        settings.put("offset.storage.replication.factor", "1");
        settings.put("status.storage.replication.factor", "1");
        settings.put("offset.storage.partitions", "1");
        settings.put("status.storage.partitions", "1");
        settings.put("offset.flush.interval.ms", "1000");
        settings.put("task.shutdown.graceful.timeout.ms", "5000");
        settings.putAll(extraWorkerSettings);
        Path properties = dir.resolve(name + ".properties");
        StringBuilder text = new StringBuilder();
        settings.forEach((k, v) -> text.append(k).append('=').append(v).append('\n'));
        Files.writeString(properties, text, StandardCharsets.UTF_8);
        Path log4j = dir.resolve("log4j2.properties");
        if (!Files.exists(log4j)) {
            Files.writeString(log4j, String.join("\n",
                    "rootLogger.level=WARN", "rootLogger.appenderRef.out.ref=out",
                    "appender.out.type=Console", "appender.out.name=out",
                    "appender.out.layout.type=PatternLayout",
                    "appender.out.layout.pattern=%d{HH:mm:ss.SSS} %-5p [%t] %c{1} %m%n",
                    "logger.outbox.name=io.outbox", "logger.outbox.level=INFO",
                    "logger.herder.name=org.apache.kafka.connect.runtime.distributed.DistributedHerder",
                    "logger.herder.level=INFO", ""), StandardCharsets.UTF_8);
        }
        Path log = dir.resolve(name + ".log");
        Process process = new ProcessBuilder(java(), "-Xms64m", "-Xmx384m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-Dlog4j2.configurationFile=" + log4j, "-cp", workerClassPath(),
                "org.apache.kafka.connect.cli.ConnectDistributed", properties.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        Worker worker = new Worker(name, port, process, log);
        workers.add(worker);
        return worker;
    }

    /** Waits until a worker's REST API answers and it sees the connector plugin. */
    void awaitWorker(Worker worker) {
        await(worker.name() + " to serve its REST API").atMost(START_WAIT).pollInterval(Duration.ofMillis(500))
                .ignoreExceptions().until(() -> {
                    if (!worker.process().isAlive()) {
                        throw new IllegalStateException(worker.name() + " exited: " + log(worker));
                    }
                    return get(worker, "/connector-plugins").toString().contains("OutboxSourceConnector");
                });
    }

    String log(Worker worker) {
        try {
            return Files.readString(worker.log());
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    List<Worker> workers() {
        return workers;
    }

    /** A GET on a worker's REST API. */
    JsonNode get(Worker worker, String path) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(worker.url() + path))
                .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() / 100 != 2) {
            throw new IOException("GET " + path + ": " + response.statusCode() + " " + response.body());
        }
        return JSON.readTree(response.body());
    }

    /** A PUT of a JSON body; returns the status and the body. */
    HttpResponse<String> put(Worker worker, String path, Object body) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(worker.url() + path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** A DELETE on a worker's REST API; returns the status and the body. */
    HttpResponse<String> delete(Worker worker, String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(worker.url() + path)).timeout(Duration.ofSeconds(60))
                .DELETE().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The worker ids running a connector's tasks, by task number. */
    Map<Integer, String> taskWorkers(Worker worker, String connector) throws IOException, InterruptedException {
        Map<Integer, String> byTask = new TreeMap<>();
        for (JsonNode task : get(worker, "/connectors/" + connector + "/status").get("tasks")) {
            if ("RUNNING".equals(task.get("state").asText())) {
                byTask.put(task.get("id").asInt(), task.get("worker_id").asText());
            }
        }
        return byTask;
    }

    /** Stops every worker of this group (SIGTERM, then SIGKILL after 10 s); the broker keeps running. */
    void stopWorkers() {
        for (Worker worker : workers) {
            worker.process().destroy();
        }
        for (Worker worker : workers) {
            try {
                if (!worker.process().waitFor(10, TimeUnit.SECONDS)) {
                    worker.process().destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                worker.process().destroyForcibly();
            }
        }
    }

    @Override
    public void close() {
        stopWorkers();
        if (broker != null) {
            broker.destroy();
            try {
                if (!broker.waitFor(20, TimeUnit.SECONDS)) {
                    broker.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                broker.destroyForcibly();
            }
        }
    }

    /** For messages: the command lines' arguments are never needed, only the outputs. */
    @Override
    public String toString() {
        return "ConnectCluster[" + bootstrapServers + ", workers=" + Arrays.toString(workers.stream()
                .map(Worker::name).toArray()) + "]";
    }
}
