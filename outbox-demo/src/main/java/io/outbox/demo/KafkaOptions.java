package io.outbox.demo;

import io.outbox.OutboxMessage;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine;

/** Which Kafka cluster and topic: the options both commands share. */
final class KafkaOptions {

    /**
     * The most partitions a run's topic may have: Kafka takes more, but the embedded single broker
     * (and a demo's consumer assigning itself every partition) would spend its time on partitions.
     */
    static final int MAX_PARTITIONS = 1000;

    @Option(names = "--bootstrap-servers", paramLabel = "HOST:PORT[,...]",
            description = "An existing Kafka cluster. Default: a single-node broker started in this process.")
    String bootstrapServers;

    @Option(names = "--topic", paramLabel = "TOPIC",
            description = "Topic (name prefix for bench) of the run. Default: one named after the run, created for it.")
    String topic;

    @Option(names = "--partitions", paramLabel = "N",
            description = "Partitions of the topics the run creates, at most " + MAX_PARTITIONS + ". Default: --buckets "
                    + "(so a bucket is a partition), at most " + MAX_PARTITIONS + ".")
    Integer partitions;

    /** The topic (or topic prefix) asked for, else {@code fallback}. */
    String topicOr(String fallback) {
        return topic != null ? topic : fallback;
    }

    /** The partitions asked for, else one per bucket up to {@link #MAX_PARTITIONS}. */
    int partitionsOr(int buckets) {
        return partitions != null ? partitions : Math.min(buckets, MAX_PARTITIONS);
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
            Checks.between(commandLine, "--partitions", partitions, 1, MAX_PARTITIONS);
        }
    }
}
