package io.outbox.examples;

import io.outbox.spi.OutboxMessage;
import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** Which Kafka cluster and topic: the options both commands share. */
final class KafkaOptions {

    @Option(names = "--bootstrap-servers", paramLabel = "HOST:PORT[,...]",
            description = "An existing Kafka cluster. Default: a single-node broker started in this process.")
    String bootstrapServers;

    @Option(names = "--topic", paramLabel = "TOPIC",
            description = "Topic (name prefix for bench) of the run. Default: one named after the run, created for it.")
    String topic;

    @Option(names = "--partitions", paramLabel = "N",
            description = "Partitions of the topics the run creates. Default: --buckets, so a bucket is a partition.")
    Integer partitions;

    /** The topic (or topic prefix) asked for, else {@code fallback}. */
    String topicOr(String fallback) {
        return topic != null ? topic : fallback;
    }

    /** The partitions asked for, else one per bucket. */
    int partitionsOr(int buckets) {
        return partitions != null ? partitions : buckets;
    }

    /**
     * Checks the options.
     *
     * @throws ParameterException naming the offending option and value
     */
    void check(CommandLine commandLine) {
        if (bootstrapServers != null && bootstrapServers.isBlank()) {
            throw new ParameterException(commandLine, "--bootstrap-servers must not be empty");
        }
        if (topic != null) {
            try {
                OutboxMessage.validateTopic(topic);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(commandLine, "--topic: " + e.getMessage());
            }
        }
        if (partitions != null) {
            Checks.atLeast(commandLine, "--partitions", partitions, 1);
        }
    }
}
