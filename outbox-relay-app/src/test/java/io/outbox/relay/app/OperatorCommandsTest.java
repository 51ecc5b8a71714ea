package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.OutboxMessage;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.store.jdbc.JdbcOutboxStore;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The operator commands ({@code dead-letters list|show|replay|purge}, {@code pending}, rule R12 and
 * capability C4) against PostgreSQL, with the relay's own configuration file, and their bad input.
 */
class OperatorCommandsTest {

    private static final int BUCKETS = 8;

    @TempDir
    Path dir;

    private String prefix;
    private JdbcOutboxStore store;
    private Path config;
    private final List<OutboxMessage> messages = new ArrayList<>();

    record Result(int code, String out, String err) {
    }

    private Result run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = StandaloneRelay.execute(args, Map.of(), o, e, Lifecycle.inProcess(), redactor -> { });
        }
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static String url() {
        return System.getenv().getOrDefault("OUTBOX_TEST_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/test");
    }

    private static String user() {
        return System.getenv().getOrDefault("OUTBOX_TEST_POSTGRES_USER", "postgres");
    }

    @BeforeEach
    void setUp() throws Exception {
        prefix = "ops_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10) + "_";
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(url());
        ds.setUser(user());
        store = JdbcOutboxStore.builder(ds).tablePrefix(prefix).build();
        store.createSchema();
        StringSerializer s = new StringSerializer();
        for (int i = 0; i < 6; i++) {
            messages.add(OutboxMessage.create("orders", "key-" + (i % 2), "value-" + i, s, s, BUCKETS));
        }
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            store.writer().enqueue(c, messages);
            c.commit();
        }
        config = Files.writeString(dir.resolve("relay.properties"), String.join("\n",
                "store=jdbc", "store.url=" + url(), "store.user=" + user(), "store.table.prefix=" + prefix,
                "kafka.bootstrap.servers=nowhere.invalid:9092", "relay.bucket.count=" + BUCKETS, ""),
                StandardCharsets.UTF_8);
        OperatorCommand.input = () -> new ByteArrayInputStream(new byte[0]);
    }

    @AfterEach
    void tearDown() throws Exception {
        OperatorCommand.input = () -> System.in;
        try (Connection c = store.dataSource().getConnection(); var st = c.createStatement()) {
            for (String table : List.of("messages", "leases", "relays", "messages_dead", "messages_failing")) {
                st.execute("DROP TABLE IF EXISTS \"" + prefix + table + "\"");
            }
        }
    }

    private OutboxMessage deadLetter(int index, String reason) {
        OutboxMessage m = messages.get(index);
        Instant now = Instant.now();
        assertThat(store.moveToDeadLetters(m.bucket(), m.messageId(), new DeadLetterFailure(reason,
                "org.apache.kafka.common.errors.RecordTooLargeException", 3, now.minusSeconds(9), now, "relay-a")))
                .isTrue();
        return m;
    }

    @Test
    void r12_listAndShowNameEveryDeadLetterWithItsReasonAndClass() {
        OutboxMessage a = deadLetter(0, "The message is 2000000 bytes when serialized");
        OutboxMessage b = deadLetter(1, "second reason");

        Result list = run("dead-letters", "list", "-c", config.toString());
        assertThat(list.code()).as(list.err()).isZero();
        assertThat(list.out()).contains(a.messageId().toString(), b.messageId().toString(), "RecordTooLargeException",
                "second reason");

        Result json = run("dead-letters", "list", "--json", "-c", config.toString());
        assertThat(json.code()).isZero();
        assertThat(json.out().strip()).startsWith("[{").endsWith("}]").contains("\"messageId\": \""
                + a.messageId() + "\"", "\"attempts\": 3");

        Result show = run("-c", config.toString(), "dead-letters", "show", a.messageId().toString());
        assertThat(show.code()).as(show.err()).isZero();
        assertThat(show.out()).contains("attempts:         3", "The message is 2000000 bytes",
                "org.apache.kafka.common.errors.RecordTooLargeException", "relay:            relay-a");

        Result showJson = run("dead-letters", "show", "--json", "-c", config.toString(), b.messageId().toString());
        assertThat(showJson.code()).isZero();
        assertThat(showJson.out()).contains("\"value\": \"" + java.util.Base64.getEncoder().encodeToString(b.value())
                + "\"");
    }

    @Test
    void r12_replayPutsTheMessageBackAndAnUnknownIdExitsFive() {
        OutboxMessage a = deadLetter(0, "too large");
        Result replay = run("dead-letters", "replay", "-c", config.toString(), a.messageId().toString());
        assertThat(replay.code()).as(replay.err()).isZero();
        assertThat(replay.out()).contains("replayed " + a.messageId());
        assertThat(store.deadLetter(a.messageId())).isEmpty();
        List<OutboxMessage> bucket = store.nextBatch(a.bucket(), 100);
        assertThat(bucket.get(bucket.size() - 1).messageId()).as("replayed after what is pending").isEqualTo(
                a.messageId());

        Result again = run("dead-letters", "replay", "-c", config.toString(), a.messageId().toString());
        assertThat(again.code()).isEqualTo(OperatorCommand.EXIT_NOT_FOUND);
        assertThat(again.err()).contains("no dead letter with message id " + a.messageId());

        UUID unknown = UUID.randomUUID();
        Result show = run("dead-letters", "show", "-c", config.toString(), unknown.toString());
        assertThat(show.code()).isEqualTo(OperatorCommand.EXIT_NOT_FOUND);
        assertThat(show.err()).contains("no dead letter with message id " + unknown);

        Result malformed = run("dead-letters", "show", "-c", config.toString(), "not-a-uuid");
        assertThat(malformed.code()).isEqualTo(StandaloneRelay.EXIT_USAGE);
        assertThat(malformed.err()).contains("not-a-uuid");
    }

    @Test
    void r12_purgeWithoutConfirmationPurgesNothingAndWithYesOnlyWhatItNames() {
        OutboxMessage a = deadLetter(0, "a");
        OutboxMessage b = deadLetter(1, "b");

        Result refused = run("dead-letters", "purge", "-c", config.toString(), a.messageId().toString());
        assertThat(refused.code()).isEqualTo(OperatorCommand.EXIT_NOT_CONFIRMED);
        assertThat(refused.err()).contains("not confirmed");
        assertThat(store.deadLetter(a.messageId())).isPresent();

        OperatorCommand.input = () -> new ByteArrayInputStream("yes\n".getBytes(StandardCharsets.UTF_8));
        Result confirmed = run("dead-letters", "purge", "-c", config.toString(), a.messageId().toString());
        assertThat(confirmed.code()).as(confirmed.err()).isZero();
        assertThat(store.deadLetter(a.messageId())).isEmpty();
        assertThat(store.deadLetter(b.messageId())).isPresent();

        Result yes = run("dead-letters", "purge", "--yes", "--json", "-c", config.toString(), b.messageId().toString(),
                a.messageId().toString());
        assertThat(yes.code()).as("one of the two was purged already").isEqualTo(OperatorCommand.EXIT_NOT_FOUND);
        assertThat(yes.out()).contains("\"result\": \"purged\"", "\"result\": \"not found\"");
        assertThat(store.deadLetter(b.messageId())).isEmpty();
        assertThat(store.pendingMetrics(java.time.Duration.ofSeconds(5)).pendingCount()).as("pending untouched")
                .isEqualTo(4);
    }

    @Test
    void operatorCommandsNeverCreateTablesAMistypedPrefixIsReportedAsAbsentTables() throws Exception {
        String typo = prefix + "typo_";
        Path mistyped = Files.writeString(dir.resolve("mistyped.properties"), String.join("\n",
                "store=jdbc", "store.url=" + url(), "store.user=" + user(), "store.table.prefix=" + typo,
                "store.create.schema=true", "kafka.bootstrap.servers=nowhere.invalid:9092",
                "relay.bucket.count=" + BUCKETS, ""), StandardCharsets.UTF_8);
        for (String[] command : List.of(new String[] {"pending"}, new String[] {"dead-letters", "list"})) {
            List<String> args = new ArrayList<>(List.of(command));
            args.addAll(List.of("-c", mistyped.toString()));
            Result result = run(args.toArray(String[]::new));
            assertThat(result.code()).as("%s: %s", args, result.out()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
            assertThat(result.err()).contains(typo + "messages");
        }
        try (Connection c = store.dataSource().getConnection();
             var tables = c.getMetaData().getTables(null, null, typo + "%", null)) {
            assertThat(tables.next()).as("a table with the mistyped prefix was created").isFalse();
        }
    }

    @Test
    void pendingSaysWhichBucketsItCounted() {
        Result pending = run("pending", "-c", config.toString());
        assertThat(pending.code()).as(pending.err()).isZero();
        assertThat(pending.out()).contains("buckets [0, " + BUCKETS + ") of relay.bucket.count");
    }

    @Test
    void r12_pendingShowsCountHeadAndAgePerBucketAndAnUndecodableHead() throws Exception {
        OutboxMessage bad = messages.get(1);
        try (Connection c = store.dataSource().getConnection();
             PreparedStatement st = c.prepareStatement("UPDATE \"" + prefix + "messages\" SET headers = ? WHERE "
                     + "message_id = ?")) {
            st.setBytes(1, new byte[] {0x7f});
            st.setObject(2, bad.messageId());
            assertThat(st.executeUpdate()).isEqualTo(1);
        }
        Result pending = run("pending", "-c", config.toString());
        assertThat(pending.code()).as(pending.err()).isZero();
        assertThat(pending.out()).contains(messages.get(0).messageId().toString(), "CorruptMessageException",
                bad.messageId().toString().substring(0, 8));

        Result json = run("pending", "--json", "-c", config.toString());
        assertThat(json.code()).isZero();
        int bucket = messages.get(0).bucket();
        long inBucket = messages.stream().filter(m -> m.bucket() == bucket).count();
        if (bucket != bad.bucket()) {
            assertThat(json.out()).contains("\"bucket\": " + bucket + ", \"count\": " + inBucket);
        }
        assertThat(json.out()).contains("\"headError\": \"");
    }

    @Test
    void r12_pendingShowsAStalledBucketsHeadAttemptsAndLastErrorFromTheStore() {
        OutboxMessage head = messages.get(0);
        Instant first = Instant.parse("2026-12-01T10:00:00.123Z");
        Instant last = Instant.parse("2026-12-01T10:05:00.456Z");
        // What a relay in another process stored after its fourth counted failure of the bucket's head.
        assertThat(store.recordHeadFailure(head.bucket(), head.messageId(), new DeadLetterFailure(
                "The message is 2000000 bytes when serialized", "org.apache.kafka.common.errors.RecordTooLargeException",
                4, first, last, "relay-b"))).isTrue();

        Result pending = run("pending", "-c", config.toString());
        assertThat(pending.code()).as(pending.err()).isZero();
        String line = pending.out().lines().filter(l -> l.contains(head.messageId().toString())).findFirst()
                .orElseThrow();
        assertThat(line).contains(" 4 ", "org.apache.kafka.common.errors.RecordTooLargeException: The message is "
                + "2000000 bytes when serialized", "last at 2026-12-01T10:05:00.456Z", "counted by relay-b");
        assertThat(pending.out()).doesNotContain("keeps no record of failures");

        Result json = run("pending", "--json", "-c", config.toString());
        assertThat(json.code()).isZero();
        assertThat(json.out()).contains("\"headMessageId\": \"" + head.messageId() + "\"", "\"attempts\": 4",
                "\"lastError\": \"org.apache.kafka.common.errors.RecordTooLargeException: The message is 2000000 bytes "
                        + "when serialized\"", "\"lastFailureAt\": \"2026-12-01T10:05:00.456Z\"",
                "\"countedBy\": \"relay-b\"");

        // Once the head is published the record is no longer shown.
        store.markPublished(head.bucket(), store.nextBatch(head.bucket(), 1));
        Result after = run("pending", "--json", "-c", config.toString());
        assertThat(after.out()).doesNotContain("\"attempts\": 4").contains("\"attempts\": null");
    }

    @Test
    void r12_aStoreWithoutDeadLettersIsAClearErrorNamingTheCapability() throws Exception {
        Path other = Files.writeString(dir.resolve("other.properties"), "store=" + NoDeadLettersStoreProvider.NAME
                + "\nkafka.bootstrap.servers=nowhere.invalid:9092\n", StandardCharsets.UTF_8);
        Result list = run("dead-letters", "list", "-c", other.toString());
        assertThat(list.code()).isEqualTo(OperatorCommand.EXIT_UNSUPPORTED);
        assertThat(list.err()).contains("has no dead letters", "DeadLetters (capability C4)");
        Result replay = run("dead-letters", "replay", "-c", other.toString(), UUID.randomUUID().toString());
        assertThat(replay.code()).isEqualTo(OperatorCommand.EXIT_UNSUPPORTED);

        Result noConfig = run("dead-letters", "list", "-c", dir.resolve("absent.properties").toString());
        assertThat(noConfig.code()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
    }
}
