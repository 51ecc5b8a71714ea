package io.outbox.relay.app;

import io.outbox.OutboxMessage;
import io.outbox.relay.internal.BrokerProbe;
import io.outbox.relay.internal.Redactor;
import io.outbox.spi.CorruptMessageException;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.HeadFailure;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.Pending;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code outbox-relay pending}: per bucket with pending messages, how many (counted up to
 * {@code --max-count}) and the age of its head, the oldest message; a head the store cannot
 * decode is named with its error (rule R12). For a stalled bucket, the failures the relays
 * counted against its head: attempts, the last error, when, and which relay counted them, as the
 * store keeps them (capability C4, {@link DeadLetters#headFailures}), so another process sees
 * them; a store without C4 keeps none. Reads through the store SPI only (nextBatch from the
 * head), so it works on every store; it never leases, publishes or deletes. In text, a last line
 * says whether a broker of {@code kafka.bootstrap.servers} answers from here (within
 * {@link #KAFKA_PROBE}).
 */
@Command(name = "pending", mixinStandardHelpOptions = true, versionProvider = RelayCommand.Version.class,
        description = "Per bucket with pending messages: the count (up to --max-count), the head's message id and "
                + "age, for a head the store cannot decode the error, and for a stalled bucket the attempts and last "
                + "error the relays counted against its head (stores with dead letters, capability C4); in text, whether a "
                + "broker of kafka.bootstrap.servers answers. Exit codes: "
                + "0 done, 1 store error, 3 invalid configuration.")
final class PendingCommand extends OperatorCommand {

    /** How long {@code pending} waits for a broker to answer before it calls the cluster unreachable. */
    static final Duration KAFKA_PROBE = Duration.ofSeconds(3);

    @ParentCommand
    RelayCommand parent;

    @Option(names = "--max-count", paramLabel = "N", defaultValue = "10000",
            description = "Count at most this many messages per bucket (default ${DEFAULT-VALUE}); more shows as N+.")
    int maxCount;

    @Override
    RelayCommand root() {
        return parent;
    }

    @Override
    int run(OutboxStore store, RelayConfiguration configuration) {
        if (maxCount < 1 || maxCount > 100_000) {
            return fail(StandaloneRelay.EXIT_USAGE, "--max-count must be in [1, 100000] but was " + maxCount);
        }
        int bucketCount = configuration.resolve().options().bucketCount();
        List<Row> rows = rows(store, bucketCount, maxCount, Instant.now());
        if (json) {
            out().println(json(rows, redactor()));
            return EXIT_OK;
        }
        String kafka = shown(kafkaReachability(configuration));
        if (rows.isEmpty()) {
            out().println("no pending messages in buckets [0, " + bucketCount + ") of relay.bucket.count");
            out().println(kafka);
            return EXIT_OK;
        }
        out().printf("%6s %8s %-36s %10s %8s %s%n", "BUCKET", "COUNT", "HEAD MESSAGE ID", "OLDEST AGE", "ATTEMPTS",
                "HEAD ERROR");
        for (Row row : rows) {
            HeadFailure f = row.failure();
            String error = row.headError() != null ? shown(row.headError())
                    : f == null ? "-" : shown(f.failure().causeClass() + ": " + f.failure().reason()) + " (last at "
                    + f.failure().lastFailureAt() + ", counted by " + shown(f.failure().relayId()) + ")";
            out().printf("%6s %8s %-36s %10s %8s %s%n", row.bucket(), row.count() == null ? "-" : row.count(),
                    row.headMessageId(), row.oldestAgeSeconds() == null ? "-" : row.oldestAgeSeconds() + " s",
                    f == null ? "-" : f.failure().attempts(), error);
        }
        out().println("counted: buckets [0, " + bucketCount + ") of relay.bucket.count; a relay refuses to start on "
                + "messages in a bucket outside them (S8, exit 3), and they are not counted here");
        out().println(kafka);
        if (store.deadLetters().isEmpty()) {
            out().println("this store keeps no record of failures (it has no DeadLetters, capability C4): the "
                    + "attempts of a stalled bucket are counted only by the relay that owns it; see its WARN lines and "
                    + "the outbox.relay.failing.head.attempts metric");
        }
        return EXIT_OK;
    }

    /**
     * Whether a broker of the relay's {@code kafka.bootstrap.servers} answers from here, asked
     * with an Admin client of the relay's connection settings within {@link #KAFKA_PROBE}: pending
     * messages that do not move may wait for an unreachable cluster.
     */
    private static String kafkaReachability(RelayConfiguration configuration) {
        int timeout = (int) KAFKA_PROBE.toMillis();
        Map<String, Object> admin = BrokerProbe.adminConfig(configuration.resolve().producerConfig(), timeout);
        String servers = "kafka.bootstrap.servers=" + admin.get(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG) + ": ";
        try (Admin client = Admin.create(admin)) {
            int brokers = client.describeCluster().nodes().get(timeout, TimeUnit.MILLISECONDS).size();
            return servers + "reachable (" + brokers + " broker(s) answered)";
        } catch (ExecutionException e) {
            return servers + (e.getCause() instanceof org.apache.kafka.common.errors.TimeoutException
                    ? "UNREACHABLE: no broker answered within " + timeout + " ms" : "refused: " + e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            return servers + "UNREACHABLE: no broker answered within " + timeout + " ms";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return servers + "not asked (interrupted)";
        } catch (RuntimeException e) {
            return servers + "UNREACHABLE: " + e.getMessage();
        }
    }

    /**
     * The pending messages per bucket, as {@code pending} and the HTTP endpoint's {@code /pending}
     * show them: reads through the store SPI only, never leases, publishes or deletes.
     *
     * @param store the store; not null
     * @param bucketCount the buckets counted, [0, bucketCount)
     * @param maxCount the most messages counted per bucket
     * @param now the time ages are measured at
     * @return one row per bucket with pending messages, ascending
     */
    static List<Row> rows(OutboxStore store, int bucketCount, int maxCount, Instant now) {
        List<Integer> buckets = store.bucketsWithPending(IntStream.range(0, bucketCount).boxed().toList());
        Map<Integer, HeadFailure> failing = new HashMap<>();
        store.deadLetters().ifPresent(d -> d.headFailures(buckets).forEach(f -> failing.put(f.bucket(), f)));
        List<Row> rows = new ArrayList<>();
        for (int bucket : buckets) {
            Row row;
            try {
                List<Pending> batch = store.nextBatch(bucket, maxCount + 1);
                if (batch.isEmpty()) {
                    continue;
                }
                OutboxMessage head = batch.get(0).message();
                row = new Row(bucket, batch.size() > maxCount ? maxCount + "+" : Integer.toString(batch.size()),
                        head.messageId(), Duration.between(head.createdAt(), now).toSeconds(), null, null);
            } catch (CorruptMessageException e) {
                List<OutboxMessage> before = Pending.messages(e.messagesBefore());
                row = new Row(bucket, null, before.isEmpty() ? e.messageId() : before.get(0).messageId(),
                        before.isEmpty() ? null : Duration.between(before.get(0).createdAt(), now).toSeconds(),
                        (before.isEmpty() ? "" : "row " + before.size() + " behind the head: ")
                                + "CorruptMessageException: " + e.getMessage(), null);
            }
            HeadFailure f = failing.get(bucket);
            rows.add(f != null && row.headMessageId().equals(f.messageId()) ? row.withFailure(f) : row);
        }
        return rows;
    }

    /**
     * The rows as a JSON array, stored text redacted.
     *
     * @param rows the rows; not null
     * @param redactor hides the configuration's secrets; not null
     * @return the array
     */
    static String json(List<Row> rows, Redactor redactor) {
        return "[" + String.join(",\n ", rows.stream().map(row -> object(json(row, redactor))).toList()) + "]";
    }

    /**
     * One bucket's line.
     *
     * @param bucket the bucket
     * @param count the messages counted, {@code N+} past {@code --max-count}; null when the head
     *     cannot be decoded
     * @param headMessageId the head's message id
     * @param oldestAgeSeconds the head's age; null when it cannot be decoded
     * @param headError why the store cannot decode the head, or null
     * @param failure what the relays counted against the head (C4), or null
     */
    record Row(int bucket, String count, UUID headMessageId, Long oldestAgeSeconds, String headError,
                       HeadFailure failure) {

        Row withFailure(HeadFailure f) {
            return new Row(bucket, count, headMessageId, oldestAgeSeconds, headError, f);
        }
    }

    /** A row's JSON fields, stored text redacted. */
    private static Map<String, String> json(Row row, Redactor redactor) {
        Map<String, String> fields = new LinkedHashMap<>();
        HeadFailure f = row.failure();
        fields.put("bucket", Integer.toString(row.bucket()));
        fields.put("count", row.count() == null ? "null"
                : row.count().endsWith("+") ? quote(row.count()) : row.count());
        fields.put("headMessageId", quote(row.headMessageId().toString()));
        fields.put("oldestAgeSeconds", String.valueOf(row.oldestAgeSeconds()));
        fields.put("headError", row.headError() == null ? "null" : jsonText(redactor, row.headError()));
        fields.put("attempts", f == null ? "null" : Integer.toString(f.failure().attempts()));
        fields.put("lastError", f == null ? "null"
                : jsonText(redactor, f.failure().causeClass() + ": " + f.failure().reason()));
        fields.put("lastFailureAt", f == null ? "null" : quote(f.failure().lastFailureAt().toString()));
        fields.put("countedBy", f == null ? "null" : jsonText(redactor, f.failure().relayId()));
        return fields;
    }
}
