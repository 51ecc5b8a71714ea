package io.outbox.relay.app;

import io.outbox.relay.internal.Redactor;
import io.outbox.spi.LeaseTable;
import io.outbox.spi.LeaseView;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.support.BucketLease;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

/**
 * {@code outbox-relay leases}: the fleet's leases as the store holds them (capability C6,
 * {@link LeaseView}): the owner and expiry of every bucket of {@code relay.bucket.count}, and every
 * relay's last heartbeat, alive while that heartbeat is younger than {@code relay.lease.duration.ms}
 * by the store's clock. Reads only; never leases, publishes or deletes. The HTTP endpoint's
 * {@code /leases} shows the same under {@code fleet}.
 */
@Command(name = "leases", mixinStandardHelpOptions = true, versionProvider = RelayCommand.Version.class,
        description = "The fleet's leases as the store holds them: every bucket's owner and expiry, and every relay's "
                + "last heartbeat (alive: younger than relay.lease.duration.ms). Reads only. Exit codes: 0 done, "
                + "1 store error, 3 invalid configuration, 6 the store cannot show its leases (capability C6).")
final class LeasesCommand extends OperatorCommand {

    @ParentCommand
    RelayCommand parent;

    @Override
    RelayCommand root() {
        return parent;
    }

    @Override
    int run(OutboxStore store, RelayConfiguration configuration) {
        Optional<LeaseView> view = store.leaseView();
        if (view.isEmpty()) {
            return fail(EXIT_UNSUPPORTED, "the store " + configuration.provider().name() + " ("
                    + store.getClass().getName() + ") cannot show its leases: it offers no LeaseView (capability C6)");
        }
        int bucketCount = configuration.resolve().options().bucketCount();
        Duration leaseDuration = configuration.resolve().options().leaseDuration();
        LeaseTable table = view.get().leaseTable(bucketCount);
        if (json) {
            out().println(fleetJson(table, leaseDuration, redactor()));
            return EXIT_OK;
        }
        out().printf("%-36s %-24s %12s %s%n", "RELAY", "LAST HEARTBEAT", "AGE", "ALIVE");
        for (Map.Entry<String, Long> relay : table.heartbeats().entrySet()) {
            long age = table.readAtMillis() - relay.getValue();
            out().printf("%-36s %-24s %10s s %s%n", shown(relay.getKey()), Instant.ofEpochMilli(relay.getValue()),
                    age / 1000, age < leaseDuration.toMillis() ? "yes" : "no");
        }
        out().println();
        out().printf("%6s %-36s %-24s %s%n", "BUCKET", "OWNER", "EXPIRES AT", "STATE");
        for (BucketLease lease : table.leases()) {
            out().printf("%6d %-36s %-24s %s%n", lease.bucket(), lease.owner() == null ? "-" : shown(lease.owner()),
                    lease.expiresAtMillis() == 0 ? "-" : Instant.ofEpochMilli(lease.expiresAtMillis()),
                    state(lease, table.readAtMillis()));
        }
        out().println("read at " + Instant.ofEpochMilli(table.readAtMillis()) + " by the store's clock; buckets [0, "
                + bucketCount + ") of relay.bucket.count; relays alive: heartbeat younger than relay.lease.duration.ms="
                + leaseDuration.toMillis());
        return EXIT_OK;
    }

    private static String state(BucketLease lease, long now) {
        if (lease.owner() == null) {
            return "free";
        }
        return lease.isClaimable(now) ? "expired " + (now - lease.expiresAtMillis()) / 1000 + " s ago"
                : "held, " + (lease.expiresAtMillis() - now) / 1000 + " s left";
    }

    /**
     * The fleet's leases as JSON, as {@code leases --json} and the HTTP endpoint's {@code /leases}
     * ({@code fleet}) show them; stored text redacted.
     *
     * @param table the table read; not null
     * @param leaseDuration the relays' lease duration: a relay is alive while its heartbeat is younger
     * @param redactor hides the configuration's secrets; not null
     * @return a JSON object: {@code readAt}, {@code relays} (relayId, lastHeartbeat,
     *     heartbeatAgeMs, alive), {@code relaysAlive}, {@code buckets} (bucket, owner, expiresAt,
     *     expiresInMs, held)
     */
    static String fleetJson(LeaseTable table, Duration leaseDuration, Redactor redactor) {
        long now = table.readAtMillis();
        List<String> relays = new ArrayList<>();
        int alive = 0;
        for (Map.Entry<String, Long> relay : table.heartbeats().entrySet()) {
            long age = now - relay.getValue();
            boolean isAlive = age < leaseDuration.toMillis();
            alive += isAlive ? 1 : 0;
            Map<String, String> fields = new LinkedHashMap<>();
            fields.put("relayId", jsonText(redactor, relay.getKey()));
            fields.put("lastHeartbeat", quote(Instant.ofEpochMilli(relay.getValue()).toString()));
            fields.put("heartbeatAgeMs", Long.toString(age));
            fields.put("alive", Boolean.toString(isAlive));
            relays.add(object(fields));
        }
        List<String> buckets = new ArrayList<>();
        for (BucketLease lease : table.leases()) {
            Map<String, String> fields = new LinkedHashMap<>();
            fields.put("bucket", Integer.toString(lease.bucket()));
            fields.put("owner", lease.owner() == null ? "null" : jsonText(redactor, lease.owner()));
            fields.put("expiresAt", lease.expiresAtMillis() == 0 ? "null"
                    : quote(Instant.ofEpochMilli(lease.expiresAtMillis()).toString()));
            fields.put("expiresInMs", Long.toString(lease.expiresAtMillis() - now));
            fields.put("held", Boolean.toString(lease.owner() != null && !lease.isClaimable(now)));
            buckets.add(object(fields));
        }
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("readAt", quote(Instant.ofEpochMilli(now).toString()));
        fields.put("relaysAlive", Integer.toString(alive));
        fields.put("relays", "[" + String.join(", ", relays) + "]");
        fields.put("buckets", "[" + String.join(",\n ", buckets) + "]");
        return object(fields);
    }
}
