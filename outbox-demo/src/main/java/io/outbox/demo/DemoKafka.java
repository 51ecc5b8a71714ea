package io.outbox.demo;

import io.outbox.embedded.EmbeddedKafkaBroker;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * The Kafka cluster of a run: an existing one ({@code --bootstrap-servers}) or a single-node
 * broker started in this process. Creates the run's topics and, unless they are kept, deletes
 * the ones it created on an existing cluster (an embedded broker takes its data with it).
 */
final class DemoKafka implements AutoCloseable {

    private static final long ADMIN_TIMEOUT_SECONDS = 60;

    private final EmbeddedKafkaBroker broker;
    private final String bootstrapServers;
    private final Admin admin;
    private final List<String> created = new ArrayList<>();

    private DemoKafka(EmbeddedKafkaBroker broker, String bootstrapServers) {
        this.broker = broker;
        this.bootstrapServers = bootstrapServers;
        this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000));
    }

    /**
     * Connects to a cluster, or starts the embedded broker when {@code bootstrapServers} is null.
     *
     * @param log where to say what is happening
     */
    static DemoKafka connect(String bootstrapServers, PrintWriter log) {
        if (bootstrapServers != null) {
            return new DemoKafka(null, bootstrapServers);
        }
        log.println("starting an embedded single-node Kafka broker ...");
        log.flush();
        EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start();
        try {
            return new DemoKafka(broker, broker.bootstrapServers());
        } catch (RuntimeException e) {
            broker.close();
            throw e;
        }
    }

    String bootstrapServers() {
        return bootstrapServers;
    }

    /** Where the cluster is, for the summary. */
    String describe() {
        return (broker != null ? "embedded broker " : "") + bootstrapServers;
    }

    /**
     * Creates a topic, or uses it if it exists.
     *
     * @return the topic's partition count, which differs from {@code partitions} when it existed
     */
    int createTopic(String topic, int partitions) throws InterruptedException {
        if (broker != null) {
            broker.createTopic(topic, partitions);
            created.add(topic);
            return partitions;
        }
        try {
            admin.createTopics(List.of(new NewTopic(topic, Optional.of(partitions), Optional.empty()))).all()
                    .get(ADMIN_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            created.add(topic);
            return partitions;
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw new IllegalStateException("could not create topic " + topic + " on " + bootstrapServers + ": "
                        + e.getCause().getMessage(), e.getCause());
            }
            return describe(topic).partitions().size();
        } catch (TimeoutException e) {
            throw new IllegalStateException("Kafka at " + bootstrapServers + " did not create topic " + topic
                    + " within " + ADMIN_TIMEOUT_SECONDS + " s; is it reachable?", e);
        }
    }

    private TopicDescription describe(String topic) throws InterruptedException {
        try {
            return admin.describeTopics(List.of(topic)).allTopicNames().get(ADMIN_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                    .get(topic);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("could not describe topic " + topic + " on " + bootstrapServers, e);
        }
    }

    /** Whether the cluster is the broker started in this process. */
    boolean embedded() {
        return broker != null;
    }

    /**
     * Deletes the topics this run created on an existing cluster; best effort.
     *
     * @return the topics deleted; none on the embedded broker (its data goes when it stops)
     */
    List<String> deleteCreatedTopics(PrintWriter log) {
        if (broker != null || created.isEmpty()) {
            return List.of();
        }
        List<String> topics = List.copyOf(created);
        try {
            admin.deleteTopics(topics).all().get(ADMIN_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            created.clear();
            return topics;
        } catch (ExecutionException | TimeoutException e) {
            log.println("warning: could not delete topics " + topics + ": " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.println("warning: interrupted while deleting topics " + topics);
        }
        return List.of();
    }

    @Override
    public void close() {
        try {
            admin.close();
        } finally {
            if (broker != null) {
                broker.close();
            }
        }
    }
}
