package io.outbox.demo;

import io.outbox.OutboxCommitNotifier;
import io.outbox.notify.NotificationTransport;
import io.outbox.notify.NotificationTransports;
import io.outbox.notify.OutboxNotifier;
import io.outbox.relay.OutboxRelay;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The wake-ups of one demo run ({@code --notify}, rules R8, N1-N6). With a transport the writers
 * hold one notifier on a transport of their own, and every relay another on its own transport
 * (its own subscription or listening connection), so a relay hears of a commit only through the
 * transport, exactly as a relay in another process would; the writers never wake it directly.
 * Polling stays on in every mode. Not thread-safe apart from the writers' notifier.
 */
final class DemoNotify implements AutoCloseable {

    private final NotifyOptions.Mode mode;
    private final String transportName;
    private final Map<String, String> settings;
    private final String where;
    private final List<AutoCloseable> opened = new ArrayList<>();
    private final List<OutboxNotifier> relayNotifiers = new ArrayList<>();
    private OutboxNotifier writerNotifier;
    /** Hint messages the relays had received when the writers started: the probes of {@link #awaitListening}. */
    private long receivedBefore;

    private DemoNotify(NotifyOptions.Mode mode, String transportName, Map<String, String> settings, String where) {
        this.mode = mode;
        this.transportName = transportName;
        this.settings = settings;
        this.where = where;
    }

    /**
     * The run's wake-ups; opens nothing yet.
     *
     * @param options {@code --notify} and its settings, checked
     * @param store the store options, for PostgreSQL's connection
     * @param runId the run's id: the channel is the run's own, so parallel runs do not wake each other
     */
    static DemoNotify of(NotifyOptions options, StoreOptions store, String runId) {
        Map<String, String> settings = new LinkedHashMap<>();
        return switch (options.mode) {
            case LOCAL, NONE -> new DemoNotify(options.mode, null, Map.of(), null);
            case REDIS -> {
                settings.put("uri", options.redisUri());
                settings.put("channel", "outbox-demo-" + runId);
                yield new DemoNotify(options.mode, "redis", settings, StoreOptions.redactor(null, options.redisUri())
                        .redact(options.redisUri()) + ", channel " + settings.get("channel"));
            }
            case POSTGRES -> {
                settings.put("url", store.jdbcUrl);
                if (store.jdbcUser != null) {
                    settings.put("user", store.jdbcUser);
                }
                if (store.jdbcPassword != null) {
                    settings.put("password", store.jdbcPassword);
                }
                settings.put("channel", "outbox_demo_" + runId);
                yield new DemoNotify(options.mode, "postgres", settings, "channel " + settings.get("channel"));
            }
        };
    }

    /**
     * Gives every relay of the fleet its own transport and notifier (cross-process modes only); call
     * before the relays start, so that their subscriptions are up by the first commit.
     */
    void attach(List<OutboxRelay> relays) {
        if (!mode.crossProcess()) {
            return;
        }
        for (OutboxRelay relay : relays) {
            NotificationTransport transport = open();
            OutboxNotifier notifier = OutboxNotifier.builder().transport(transport).relay(relay).build();
            opened.add(notifier);
            relayNotifiers.add(notifier);
        }
    }

    /**
     * What the writers tell after each commit: the relays of this process directly ({@code local}),
     * nobody ({@code none}), or a notifier on a transport of the writers' own.
     */
    OutboxCommitNotifier writers(RelayFleet fleet) {
        return switch (mode) {
            case LOCAL -> buckets -> {
                for (int bucket : buckets) {
                    fleet.wakeUp(bucket);
                }
            };
            case NONE -> OutboxCommitNotifier.NONE;
            case REDIS, POSTGRES -> {
                if (writerNotifier == null) {
                    writerNotifier = OutboxNotifier.builder().transport(open()).build();
                    opened.add(writerNotifier);
                }
                yield writerNotifier;
            }
        };
    }

    /**
     * Waits until a hint sent through the writers' transport reaches every relay's (cross-process
     * modes; at once otherwise): the unknown bucket, sent every 200 ms, which makes a relay look at
     * its buckets and nothing more (N2). A transport connects in the background, so without this
     * the first orders would wait for the poll.
     *
     * @return whether every relay heard a probe within the timeout
     */
    boolean awaitListening(RelayFleet fleet, Duration timeout) throws InterruptedException {
        if (!mode.crossProcess()) {
            return true;
        }
        OutboxCommitNotifier writer = writers(fleet);
        long deadline = System.nanoTime() + timeout.toNanos();
        boolean all = false;
        while (!all && System.nanoTime() - deadline < 0) {
            writer.committed(new int[] {OutboxCommitNotifier.UNKNOWN_BUCKET});
            Thread.sleep(200);
            all = relayNotifiers.stream().allMatch(n -> n.stats().received() > 0);
        }
        receivedBefore = received();
        return all;
    }

    private NotificationTransport open() {
        NotificationTransport transport = NotificationTransports.open(transportName, settings);
        opened.add(transport);
        return transport;
    }

    /** Hint messages the relays received through the transport, over all relays, probes included. */
    private long received() {
        return relayNotifiers.stream().mapToLong(n -> n.stats().received()).sum();
    }

    /** Hint messages the relays received since the writers started, over all relays. */
    long receivedDuringRun() {
        return received() - receivedBefore;
    }

    /** Hint batches the writers' sender dropped because a send failed (Redis; PostgreSQL sends in the commit). */
    long dropped() {
        return writerNotifier == null ? 0 : writerNotifier.stats().dropped();
    }

    /** The summary's line: how the relays learnt of commits, and what the transport carried. */
    String describe() {
        return switch (mode) {
            case LOCAL -> "local: the writers wake the relays of this process after each commit";
            case NONE -> "none: the relays poll every second";
            case REDIS -> String.format(Locale.ROOT, "redis pub/sub (%s): the relays, each on its own subscription, "
                    + "received %,d hint messages; %,d dropped by the writers' sender", where, receivedDuringRun(), dropped());
            case POSTGRES -> String.format(Locale.ROOT, "postgres LISTEN/NOTIFY (%s, NOTIFY in each writer's "
                    + "transaction): the relays, each on its own connection, received %,d hint messages", where,
                    receivedDuringRun());
        };
    }

    /** Closes the notifiers, then the transports, in reverse order of opening; the relays stay open. */
    @Override
    public void close() {
        RuntimeException failure = null;
        for (int i = opened.size() - 1; i >= 0; i--) {
            try {
                opened.get(i).close();
            } catch (Exception e) {
                if (failure == null) {
                    failure = new IllegalStateException("closing the demo's notifications failed: " + e, e);
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        opened.clear();
        if (failure != null) {
            throw failure;
        }
    }
}
