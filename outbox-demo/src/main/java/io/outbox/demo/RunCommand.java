package io.outbox.demo;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** The demo: an order service in miniature, its relays, and a consumer that checks every delivery. */
@Command(name = "run", aliases = "demo", sortOptions = false, usageHelpAutoWidth = true,
        description = {
            "An order service in miniature: writer threads place orders for customers; each order writes a business "
                    + "row and an outbox message keyed by the customer in one transaction. Relays in this process "
                    + "publish the messages to Kafka; a consumer reads the topic and checks that every committed "
                    + "message arrived (lost = 0), that each customer's orders arrived in placement order after "
                    + "dropping repeats (order violations = 0), and counts the repeats. Prints a summary.",
            "With no options it needs nothing installed: an in-memory H2 database and a Kafka broker in this process.",
            "Ctrl-C stops the run and drops its tables and topic (unless --keep) before exiting."},
        exitCodeListHeading = OutboxDemo.EXIT_CODE_LIST_HEADING, exitCodeList = {
            OutboxDemo.EXIT_CODES_0, OutboxDemo.EXIT_CODES_1, OutboxDemo.EXIT_CODES_2,
            OutboxDemo.EXIT_CODES_3, OutboxDemo.EXIT_CODES_4, OutboxDemo.EXIT_CODES_5,
            OutboxDemo.EXIT_CODES_130, OutboxDemo.EXIT_CODES_143})
final class RunCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Mixin
    private StoreOptions store;

    @Mixin
    private KafkaOptions kafka;

    @Option(names = "--orders", paramLabel = "N", defaultValue = "10000", description = "Orders to place (default: ${DEFAULT-VALUE}).")
    private int orders;

    @Option(names = "--customers", paramLabel = "K", defaultValue = "100",
            description = "Customers placing them; the customer is the message key (default: ${DEFAULT-VALUE}).")
    private int customers;

    @Option(names = "--writers", paramLabel = "W", defaultValue = "4",
            description = "Writer threads; each customer belongs to one of them (default: ${DEFAULT-VALUE}).")
    private int writers;

    @Option(names = "--relays", paramLabel = "R", defaultValue = "2",
            description = "Relays in this process, each with its own store connection and producer "
                    + "(default: ${DEFAULT-VALUE}).")
    private int relays;

    @Option(names = "--rate", paramLabel = "ORDERS_PER_S", defaultValue = "0",
            description = "Place orders at this rate in all, to measure latency below saturation; "
                    + "0 for as fast as the writers can (default: ${DEFAULT-VALUE}).")
    private int rate;

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "60s", converter = DurationConverter.class,
            description = "How long to wait for deliveries after the last order was placed before counting the "
                    + "missing ones as lost, e.g. 90s or 5m; at most " + DurationConverter.MAX_TEXT + " (default: ${DEFAULT-VALUE}).")
    private Duration timeout;

    @Option(names = "--seed", paramLabel = "SEED",
            description = "Seed of which customer places which order; printed, so a run can be repeated "
                    + "(default: random).")
    private Long seed;

    @Option(names = "--inbox",
            description = "Also run a business consumer that adds every order to its customer's counter through the "
                    + "store's inbox, in one transaction with the inbox marker, while rewinding its partitions now and "
                    + "then to cause repeats; at the end every counter must equal the customer's orders.")
    private boolean inbox;

    @Mixin
    private NotifyOptions notify;

    @Mixin
    private LoadOptions load;

    private DemoSummary summary;
    private InboxConsumer.Result inboxResult;

    /** The inbox consumer's result of the last run with {@code --inbox}, or null. */
    InboxConsumer.Result inboxResult() {
        return inboxResult;
    }

    /** The summary of the last run, or null. */
    DemoSummary summary() {
        return summary;
    }

    @Override
    public Integer call() throws Exception {
        CommandLine commandLine = spec.commandLine();
        StoreKind kind = store.resolve(commandLine);
        kafka.check(commandLine);
        Checks.between(commandLine, "--orders", orders, 1, 10_000_000);
        Checks.between(commandLine, "--customers", customers, 1, 1_000_000);
        Checks.between(commandLine, "--writers", writers, 1, 256);
        if (writers > customers) {
            throw new ParameterException(commandLine, "--writers " + writers + " is more than --customers " + customers
                    + ": each customer belongs to one writer, so " + (writers - customers) + " writer(s) would idle");
        }
        Checks.between(commandLine, "--relays", relays, 1, 64);
        Checks.between(commandLine, "--rate", rate, 0, 1_000_000);
        load.check(commandLine);
        notify.check(commandLine, kind == StoreKind.JDBC ? store.jdbcUrl : null);
        long theSeed = seed != null ? seed : ThreadLocalRandom.current().nextLong(1, 1_000_000);
        OrderDemo.Settings settings = new OrderDemo.Settings(kind, store, kafka, orders, customers, writers, relays,
                load.buckets, load.batchSize, timeout, theSeed, rate, !load.noProgress, load.transactions);
        OrderDemo demo = new OrderDemo(settings, commandLine.getErr(), inbox, notify);
        summary = demo.run();
        inboxResult = demo.inboxResult();
        commandLine.getOut().print(summary.render());
        if (inboxResult != null) {
            commandLine.getOut().print(inboxResult.render());
        }
        commandLine.getOut().flush();
        return inboxResult == null ? summary.exitCode() : inboxResult.exitCode(summary.exitCode());
    }
}
