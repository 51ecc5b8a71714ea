package io.outbox.demo;

import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.KafkaTransactions;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** The relays' buckets and batch size, the progress bar and the help: the options both commands share. */
final class LoadOptions {

    @Option(names = "--buckets", paramLabel = "B", defaultValue = "8",
            description = "Outbox buckets, the unit of ordering and of sharing between relays (default: ${DEFAULT-VALUE}).")
    int buckets;

    @Option(names = "--batch-size", paramLabel = "N", defaultValue = "500",
            description = "Messages a relay publishes per bucket at once (default: ${DEFAULT-VALUE}).")
    int batchSize;

    @Option(names = "--transactions",
            description = "Kafka transactions (rules K5-K7): each relay publishes every batch in one transaction, "
                    + "with a producer per owned bucket whose transactional.id fences the bucket's previous owner. "
                    + "run: the relays publish this way and the checker reads with isolation.level=read_committed; "
                    + "bench: every round also times relays in this mode, beside the default mode.")
    boolean transactions;

    @Option(names = "--no-progress", description = "No progress output: neither the bar (on a terminal) nor the line every 5 s (without one).")
    boolean noProgress;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean help;

    /**
     * Checks the options.
     *
     * @throws picocli.CommandLine.ParameterException naming the offending option and value
     */
    void check(CommandLine commandLine) {
        Checks.between(commandLine, "--buckets", buckets, 1, RelayOptions.MAX_BUCKET_COUNT);
        Checks.between(commandLine, "--batch-size", batchSize, 1, RelayOptions.MAX_BATCH_SIZE);
        if (transactions && buckets > KafkaTransactions.DEFAULT_MAX_BUCKETS) {
            throw new CommandLine.ParameterException(commandLine, "--buckets " + buckets + " is above "
                    + KafkaTransactions.DEFAULT_MAX_BUCKETS + ", the bound of --transactions: a relay may own every "
                    + "bucket and runs one Kafka producer per owned bucket");
        }
    }
}
