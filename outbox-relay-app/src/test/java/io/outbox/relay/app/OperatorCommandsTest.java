package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.OutboxMessage;
import io.outbox.relay.internal.LogText;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.spi.Pending;
import io.outbox.store.jdbc.JdbcOutboxStore;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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
        assertThat(store.deadLetters().orElseThrow().moveToDeadLetters(m.bucket(), m.messageId(),
                new DeadLetterFailure(reason, "org.apache.kafka.common.errors.RecordTooLargeException", 3,
                        now.minusSeconds(9), now, "relay-a"))).isTrue();
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
        assertThat(store.deadLetters().orElseThrow().deadLetter(a.messageId())).isEmpty();
        List<Pending> bucket = store.nextBatch(a.bucket(), 100);
        assertThat(bucket.get(bucket.size() - 1).message().messageId()).as("replayed after what is pending")
                .isEqualTo(a.messageId());

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
        assertThat(store.deadLetters().orElseThrow().deadLetter(a.messageId())).isPresent();

        OperatorCommand.input = () -> new ByteArrayInputStream("yes\n".getBytes(StandardCharsets.UTF_8));
        Result confirmed = run("dead-letters", "purge", "-c", config.toString(), a.messageId().toString());
        assertThat(confirmed.code()).as(confirmed.err()).isZero();
        assertThat(store.deadLetters().orElseThrow().deadLetter(a.messageId())).isEmpty();
        assertThat(store.deadLetters().orElseThrow().deadLetter(b.messageId())).isPresent();

        Result yes = run("dead-letters", "purge", "--yes", "--json", "-c", config.toString(), b.messageId().toString(),
                a.messageId().toString());
        assertThat(yes.code()).as("one of the two was purged already").isEqualTo(OperatorCommand.EXIT_NOT_FOUND);
        assertThat(yes.out()).contains("\"result\": \"purged\"", "\"result\": \"not found\"");
        assertThat(store.deadLetters().orElseThrow().deadLetter(b.messageId())).isEmpty();
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
        assertThat(store.deadLetters().orElseThrow().recordHeadFailure(head.bucket(), head.messageId(),
                new DeadLetterFailure("The message is 2000000 bytes when serialized",
                        "org.apache.kafka.common.errors.RecordTooLargeException", 4, first, last, "relay-b"))).isTrue();

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
        Result leases = run("leases", "-c", other.toString());
        assertThat(leases.code()).as("C6 absent").isEqualTo(OperatorCommand.EXIT_UNSUPPORTED);
        assertThat(leases.err()).contains("cannot show its leases", "LeaseView (capability C6)");
        Result drain = run("drain", "-c", other.toString());
        assertThat(drain.code()).as("drain without http.admin.token").isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        assertThat(drain.err()).contains("http.admin.token is not set");

        Result noConfig = run("dead-letters", "list", "-c", dir.resolve("absent.properties").toString());
        assertThat(noConfig.code()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
    }

    private Path configWith(String name, String... extra) throws IOException {
        List<String> lines = new ArrayList<>(Files.readAllLines(config, StandardCharsets.UTF_8));
        lines.addAll(List.of(extra));
        return Files.write(dir.resolve(name), lines, StandardCharsets.UTF_8);
    }

    /** The head of the bucket of message {@code index}, with a stored failure record (C4). */
    private OutboxMessage failingHead(int index, String reason, String relayId) {
        OutboxMessage head = store.nextBatch(messages.get(index).bucket(), 1).get(0).message();
        Instant now = Instant.now();
        assertThat(store.deadLetters().orElseThrow().recordHeadFailure(head.bucket(), head.messageId(), new DeadLetterFailure(reason,
                "java.sql.SQLException", 2, now, now, relayId))).isTrue();
        return head;
    }

    /** The value of a string field of JSON output, decoded: what a JSON parser would read. */
    private static String jsonString(String json, String field) {
        String start = "\"" + field + "\": \"";
        int i = json.indexOf(start);
        assertThat(i).as("field %s in %s", field, json).isNotNegative();
        StringBuilder value = new StringBuilder();
        for (i += start.length(); json.charAt(i) != '"'; i++) {
            char c = json.charAt(i);
            if (c != '\\') {
                value.append(c);
                continue;
            }
            char e = json.charAt(++i);
            switch (e) {
                case 'n' -> value.append('\n');
                case 'r' -> value.append('\r');
                case 't' -> value.append('\t');
                case 'u' -> {
                    value.append((char) Integer.parseInt(json.substring(i + 1, i + 5), 16));
                    i += 4;
                }
                default -> value.append(e);
            }
        }
        return value.toString();
    }

    /** Whether a printed text has a character a terminal obeys, other than the line feeds ending its lines. */
    private static boolean hasRawControls(String printed) {
        return printed.chars().anyMatch(c -> c != '\n' && LogText.isEscaped((char) c));
    }

    @Test
    void theConfiguredPasswordAndCredentialFormsAreHiddenOnEveryOutputPathInTextAndJson() throws IOException {
        String password = "Pw-" + UUID.randomUUID().toString().substring(0, 8);
        Path withPassword = configWith("password.properties", "store.password=" + password);
        String reason = "login failed with " + password + " for postgresql://app:url-pw-1@db/x; password=kv-pw-2 "
                + "secret: colon-pw-3 token=tok-pw-4";
        String hidden = "login failed with [hidden] for postgresql://app:[hidden]@db/x; password=[hidden] "
                + "secret: [hidden] token=[hidden]";
        String[] secrets = {password, "url-pw-1", "kv-pw-2", "colon-pw-3", "tok-pw-4"};
        OutboxMessage dead = deadLetter(0, reason);
        OutboxMessage head = failingHead(1, reason, "relay-b");
        String id = dead.messageId().toString();
        for (String[] command : List.of(new String[] {"pending"}, new String[] {"pending", "--json"},
                new String[] {"dead-letters", "list"}, new String[] {"dead-letters", "list", "--json"},
                new String[] {"dead-letters", "show", id}, new String[] {"dead-letters", "show", id, "--json"})) {
            List<String> args = new ArrayList<>(List.of(command));
            args.addAll(List.of("-c", withPassword.toString()));
            Result result = run(args.toArray(String[]::new));
            assertThat(result.code()).as("%s: %s", args, result.err()).isZero();
            assertThat(result.out() + result.err()).as("%s", args).doesNotContain(secrets).contains("[hidden]");
            if (args.contains("--json")) {
                String field = args.contains("pending") ? "lastError" : "reason";
                String expected = args.contains("pending") ? "java.sql.SQLException: " + hidden : hidden;
                assertThat(jsonString(result.out(), field)).as("%s", args).isEqualTo(expected);
            }
        }
        assertThat(head.messageId()).isNotEqualTo(dead.messageId());
    }

    @Test
    void anExceptionsMessageIsPrintedWithTheConfiguredSecretsHidden() throws IOException {
        String password = "Pw-" + UUID.randomUUID().toString().substring(0, 8);
        Path scripted = Files.writeString(dir.resolve("scripted.properties"), String.join("\n", "store=scripted",
                "store.name=ops-" + password, "store.failures=1", "store.password=" + password,
                "kafka.bootstrap.servers=nowhere.invalid:9092", ""), StandardCharsets.UTF_8);
        Result failed = run("pending", "-c", scripted.toString());
        assertThat(failed.code()).isEqualTo(StandaloneRelay.EXIT_ERROR);
        assertThat(failed.err()).contains("could not open the store scripted", "jdbc:test://app:[hidden]@db/x",
                "(password [hidden] refused)").doesNotContain(password);
    }

    @Test
    void storedTextIsShownEscapedByEveryPrinterAndExactInJson() throws Exception {
        String reason = "boom\n2026-12-02 03:49:01 INFO forged line \u001b[31mred\u001b]0;title\u0007 \u202eevil\u2028x"
                + "\u0085y\u007f";
        String relayId = "relay-\u001b[2J";
        String topic = "orders\n2026-12-02 03:49:01 INFO forged \u001b[31m\u0007\u202e";
        OutboxMessage dead = deadLetter(0, reason);
        try (Connection c = store.dataSource().getConnection();
             PreparedStatement st = c.prepareStatement("UPDATE \"" + prefix + "messages_dead\" SET topic = ? WHERE "
                     + "message_id = ?")) {
            st.setString(1, topic);
            st.setObject(2, dead.messageId());
            assertThat(st.executeUpdate()).isEqualTo(1);
        }
        failingHead(1, reason, relayId);
        String id = dead.messageId().toString();

        Result show = run("dead-letters", "show", id, "-c", config.toString());
        assertThat(show.code()).as(show.err()).isZero();
        assertThat(hasRawControls(show.out())).as(show.out()).isFalse();
        assertThat(show.out().lines().count()).as("no forged line").isEqualTo(15);
        assertThat(show.out()).contains("topic:            orders\\u000a2026-12-02 03:49:01 INFO forged "
                + "\\u001b[31m\\u0007\\u202e\n", "reason:           boom\\u000a2026-12-02 03:49:01 INFO forged line "
                + "\\u001b[31mred\\u001b]0;title\\u0007 \\u202eevil\\u2028x\\u0085y\\u007f\n");
        Result list = run("dead-letters", "list", "-c", config.toString());
        assertThat(hasRawControls(list.out())).as(list.out()).isFalse();
        assertThat(list.out().lines().count()).isEqualTo(2);
        Result pending = run("pending", "-c", config.toString());
        assertThat(hasRawControls(pending.out())).as(pending.out()).isFalse();
        assertThat(pending.out()).contains("counted by relay-\\u001b[2J)", "\\u202eevil\\u2028x");

        Result showJson = run("dead-letters", "show", id, "--json", "-c", config.toString());
        assertThat(hasRawControls(showJson.out())).isFalse();
        assertThat(jsonString(showJson.out(), "topic")).isEqualTo(topic);
        assertThat(jsonString(showJson.out(), "reason")).isEqualTo(reason);
        Result listJson = run("dead-letters", "list", "--json", "-c", config.toString());
        assertThat(jsonString(listJson.out(), "reason")).isEqualTo(reason);
        Result pendingJson = run("pending", "--json", "-c", config.toString());
        assertThat(hasRawControls(pendingJson.out())).isFalse();
        assertThat(jsonString(pendingJson.out(), "countedBy")).isEqualTo(relayId);
        assertThat(jsonString(pendingJson.out(), "lastError")).isEqualTo("java.sql.SQLException: " + reason);
    }

    @Test
    void malformedMessageIdsExitTwoNamingTheValueAndChangeNothing() {
        OutboxMessage a = deadLetter(0, "too large");
        String id = a.messageId().toString();
        // UUID.fromString would read each of these as some id: 1-1-1-1-1 as 00000001-0001-...-000000000001,
        // an id with a digit missing zero-padded.
        for (String bad : List.of("1-1-1-1-1", id.substring(0, 35), id.substring(1), id + "0", id.replace("-", ""))) {
            for (String[] command : List.of(new String[] {"dead-letters", "replay", bad},
                    new String[] {"dead-letters", "show", bad}, new String[] {"dead-letters", "purge", "--yes", bad},
                    new String[] {"dead-letters", "list", "--after", bad})) {
                List<String> args = new ArrayList<>(List.of(command));
                args.addAll(List.of("-c", config.toString()));
                Result result = run(args.toArray(String[]::new));
                assertThat(result.code()).as("%s: %s", args, result.err()).isEqualTo(StandaloneRelay.EXIT_USAGE);
                assertThat(result.err()).contains("not a message id: '" + bad + "'", "8-4-4-4-12 hex digits");
            }
        }
        assertThat(store.deadLetters().orElseThrow().deadLetter(a.messageId())).as("nothing replayed or purged").isPresent();
        Result upper = run("dead-letters", "show", id.toUpperCase(Locale.ROOT), "-c", config.toString());
        assertThat(upper.code()).as("either case").isZero();
    }
}
