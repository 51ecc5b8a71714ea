package io.outbox.relay.app;

import io.outbox.OutboxMessage;
import io.outbox.spi.CorruptMessageException;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.HeadFailure;
import io.outbox.spi.OutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
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
 * head), so it works on every store; it never leases, publishes or deletes.
 */
@Command(name = "pending", mixinStandardHelpOptions = true, versionProvider = RelayCommand.Version.class,
        description = "Per bucket with pending messages: the count (up to --max-count), the head's message id and "
                + "age, for a head the store cannot decode the error, and for a stalled bucket the attempts and last "
                + "error the relays counted against its head (stores with dead letters, capability C4). Exit codes: "
                + "0 done, 1 store error, 3 invalid configuration.")
final class PendingCommand extends OperatorCommand {

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
        List<Integer> buckets = store.bucketsWithPending(IntStream.range(0, bucketCount).boxed().toList());
        Instant now = Instant.now();
        Map<Integer, HeadFailure> failing = new HashMap<>();
        if (store instanceof DeadLetters dead) {
            dead.headFailures(buckets).forEach(f -> failing.put(f.bucket(), f));
        }
        List<Map<String, String>> rows = new ArrayList<>();
        for (int bucket : buckets) {
            Map<String, String> row = new LinkedHashMap<>();
            row.put("bucket", Integer.toString(bucket));
            try {
                List<OutboxMessage> batch = store.nextBatch(bucket, maxCount + 1);
                if (batch.isEmpty()) {
                    continue;
                }
                OutboxMessage head = batch.get(0);
                row.put("count", batch.size() > maxCount ? quote(maxCount + "+") : Integer.toString(batch.size()));
                row.put("headMessageId", quote(head.messageId().toString()));
                row.put("oldestAgeSeconds", Long.toString(Duration.between(head.createdAt(), now).toSeconds()));
                row.put("headError", "null");
            } catch (CorruptMessageException e) {
                row.put("count", "null");
                row.put("headMessageId", quote((e.messagesBefore().isEmpty() ? e.messageId()
                        : e.messagesBefore().get(0).messageId()).toString()));
                row.put("oldestAgeSeconds", e.messagesBefore().isEmpty() ? "null"
                        : Long.toString(Duration.between(e.messagesBefore().get(0).createdAt(), now).toSeconds()));
                row.put("headError", quote((e.messagesBefore().isEmpty() ? "" : "row " + e.messagesBefore().size()
                        + " behind the head: ") + "CorruptMessageException: " + e.getMessage()));
            }
            HeadFailure f = failing.get(bucket);
            boolean stalled = f != null && row.get("headMessageId").equals(quote(f.messageId().toString()));
            row.put("attempts", stalled ? Integer.toString(f.failure().attempts()) : "null");
            row.put("lastError", stalled ? quote(f.failure().causeClass() + ": " + f.failure().reason()) : "null");
            row.put("lastFailureAt", stalled ? quote(f.failure().lastFailureAt().toString()) : "null");
            row.put("countedBy", stalled ? quote(f.failure().relayId()) : "null");
            rows.add(row);
        }
        if (json) {
            out().println("[" + String.join(",\n ", rows.stream().map(OperatorCommand::object).toList()) + "]");
            return EXIT_OK;
        }
        if (rows.isEmpty()) {
            out().println("no pending messages in buckets [0, " + bucketCount + ") of relay.bucket.count");
            return EXIT_OK;
        }
        out().printf("%6s %8s %-36s %10s %8s %s%n", "BUCKET", "COUNT", "HEAD MESSAGE ID", "OLDEST AGE", "ATTEMPTS",
                "HEAD ERROR");
        for (Map<String, String> row : rows) {
            String error = !row.get("headError").equals("null") ? plain(row.get("headError"))
                    : row.get("lastError").equals("null") ? "-" : plain(row.get("lastError")) + " (last at "
                    + plain(row.get("lastFailureAt")) + ", counted by " + plain(row.get("countedBy")) + ")";
            out().printf("%6s %8s %-36s %10s %8s %s%n", row.get("bucket"), plain(row.get("count")),
                    plain(row.get("headMessageId")), row.get("oldestAgeSeconds").equals("null") ? "-"
                            : row.get("oldestAgeSeconds") + " s", plain(row.get("attempts")), error);
        }
        out().println("counted: buckets [0, " + bucketCount + ") of relay.bucket.count; a relay refuses to start on "
                + "messages in a bucket outside them (S8, exit 3), and they are not counted here");
        if (!(store instanceof DeadLetters)) {
            out().println("this store keeps no record of failures (it lacks DeadLetters, capability C4): the attempts of "
                    + "a stalled bucket are counted only by the relay that owns it; see its WARN lines and the "
                    + "outbox.relay.failing.head.attempts metric");
        }
        return EXIT_OK;
    }

    private static String plain(String json) {
        return json.equals("null") ? "-" : json.startsWith("\"") ? json.substring(1, json.length() - 1) : json;
    }
}
