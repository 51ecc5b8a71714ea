package io.outbox.examples;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * The resources of one run: the Kafka cluster (or embedded broker), the run's database and the
 * topics it creates. Closing it drops the run's tables and deletes its topics, unless
 * {@code --keep} asked to keep them, then closes the database and the cluster.
 */
final class RunScope implements AutoCloseable {

    private final DemoKafka kafka;
    private final DemoDatabase database;
    private final boolean keep;
    private final PrintWriter log;
    private final List<String> topics = new ArrayList<>();

    private RunScope(DemoKafka kafka, DemoDatabase database, boolean keep, PrintWriter log) {
        this.kafka = kafka;
        this.database = database;
        this.keep = keep;
        this.log = log;
    }

    /**
     * Opens the run's database (first: a wrong address or password fails fast), then connects to
     * Kafka or starts the embedded broker.
     *
     * @param connections how many writers use the database at once
     */
    static RunScope open(StoreKind store, StoreOptions storeOptions, KafkaOptions kafkaOptions, String runId,
                         int connections, PrintWriter log) {
        DemoDatabase database = storeOptions.open(store, runId, connections);
        try {
            return new RunScope(DemoKafka.connect(kafkaOptions.bootstrapServers, log), database, storeOptions.keep,
                    log);
        } catch (RuntimeException | Error e) {
            database.close();
            throw e;
        }
    }

    DemoKafka kafka() {
        return kafka;
    }

    DemoDatabase database() {
        return database;
    }

    /**
     * Creates a topic of the run, or uses it if it exists.
     *
     * @return its partition count
     */
    int createTopic(String topic, int partitions) throws InterruptedException {
        topics.add(topic);
        return kafka.createTopic(topic, partitions);
    }

    @Override
    public void close() {
        try {
            if (keep) {
                log.println("kept (--keep): topic(s) " + String.join(", ", topics) + "; "
                        + String.join(", ", database.objectNames()));
            } else {
                try {
                    database.dropSchema();
                } catch (Exception e) {
                    log.println("warning: could not drop the run's tables " + database.objectNames() + ": " + e);
                }
                kafka.deleteCreatedTopics(log);
            }
        } finally {
            try {
                database.close();
            } finally {
                kafka.close();
            }
        }
    }
}
