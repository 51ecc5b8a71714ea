package io.outbox.relay;

import io.outbox.spi.CorruptHeadersException;
import io.outbox.spi.CorruptMessageException;
import io.outbox.spi.OutboxMisconfigurationException;
import java.lang.reflect.Method;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.protocol.Errors;

/**
 * The one table of the errors a relay meets from Kafka and from each store's driver, each with its
 * {@link FailureKind} (rules R12, R13). {@link FailureKind#classify} and the relay's handling of
 * store errors read it; the README's table is generated from {@link #ROWS}.
 *
 * <p>Driver errors are matched by class name, SQLState or vendor code, so the relay needs none of
 * the drivers on its class path. A failure is looked up along its cause chain ({@link #find}). An error no row matches is retriable when it came from
 * a publish and store-transient when it came from a store call.
 *
 * <p>Fatal rows come in two sorts. {@link Row#atStartOnly()} false: the relay stops whenever it
 * meets one (R6). True: a refusal no retry heals (a login, a password, a grant, an ACL, a version,
 * a setting); it stops the relay when it comes before the first good contact with that side (the
 * store's first completed lease round, the broker's first acknowledged record), and after that it
 * is logged at ERROR, reported by {@link OutboxRelay#refusal()} (health DOWN) and retried, since
 * whoever revoked it may restore it. Immutable and thread-safe.
 */
public final class ErrorTable {

    /**
     * One row.
     *
     * @param side where the error comes from: {@code Kafka}, {@code relay}, {@code store (any)},
     *     {@code JDBC}, {@code PostgreSQL}, {@code MariaDB/MySQL}, {@code MongoDB} or {@code DynamoDB}
     * @param error what matches, as the README shows it
     * @param kind the failure kind
     * @param atStartOnly for {@link FailureKind#FATAL}: true if only fatal before the first good
     *     contact (see the class comment); false otherwise
     * @param meaning the cause, and what to change
     * @param matcher tests one link of a cause chain; not shown
     */
    public record Row(String side, String error, FailureKind kind, boolean atStartOnly, String meaning,
                      Predicate<Throwable> matcher) {

        /**
         * Validates the row.
         *
         * @param side where the error comes from
         * @param error what matches
         * @param kind the failure kind
         * @param atStartOnly whether a fatal row is fatal only before the first good contact
         * @param meaning the cause and what to change
         * @param matcher tests one link of a cause chain
         * @throws NullPointerException if a component is null
         * @throws IllegalArgumentException if {@code atStartOnly} is set on a kind other than fatal
         */
        public Row {
            Objects.requireNonNull(side, "side");
            Objects.requireNonNull(error, "error");
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(meaning, "meaning");
            Objects.requireNonNull(matcher, "matcher");
            if (atStartOnly && kind != FailureKind.FATAL) {
                throw new IllegalArgumentException("atStartOnly applies to fatal rows only, not " + kind);
            }
        }

        /**
         * Whether this row stops the relay now.
         *
         * @param started whether the side the error came from had its first good contact
         * @return true for a fatal row, unless it is {@link #atStartOnly()} and the side started
         */
        public boolean stops(boolean started) {
            return kind == FailureKind.FATAL && !(atStartOnly && started);
        }

        /**
         * What the relay does, as the README shows it.
         *
         * @return one sentence
         */
        public String handling() {
            return switch (kind) {
                case RETRIABLE -> "backs the bucket off and retries; never counted against a message";
                case MESSAGE -> "counts the failure against the message; `poison.policy` decides (R12)";
                case STORE -> "drops the lease state, backs the whole loop off and retries (R3)";
                case FATAL -> atStartOnly
                        ? "before the first good contact: stops the relay (R6: exit 3; the starter's start fails "
                                + "when it comes within `outbox.relay.start-timeout`, else its health is DOWN); "
                                + "after it: one ERROR line, `refusal()` and health DOWN, retried with backoff"
                        : "stops the relay (R6)";
            };
        }
    }

    private static final String KAFKA = "Kafka";
    private static final String ERRORS = "org.apache.kafka.common.errors.";

    /** Every row, in lookup order. */
    public static final List<Row> ROWS = List.of(
            new Row("relay", "`OutboxMisconfigurationException`", FailureKind.FATAL, false,
                    "a setting or a store's state that cannot work: writers and relay disagree on `bucket.count` (S8), "
                            + "a table, column or index the store needs is absent, a publish over "
                            + "`max.publish.duration.ms`", type(OutboxMisconfigurationException.class.getName())),
            new Row("relay", "`Error` (out of memory, a class missing)", FailureKind.FATAL, false,
                    "the process cannot go on", t -> t instanceof Error),
            new Row(KAFKA, "`RecordTooLargeException`, `RecordBatchTooLargeException`", FailureKind.MESSAGE, false,
                    "the record is over `max.request.size` or the topic's `max.message.bytes`",
                    anyType(ERRORS + "RecordTooLargeException", ERRORS + "RecordBatchTooLargeException")),
            new Row(KAFKA, "`InvalidTopicException`", FailureKind.MESSAGE, false,
                    "an illegal topic name, or one the cluster refuses to create (`a_b` beside `a.b`)",
                    type(ERRORS + "InvalidTopicException")),
            new Row(KAFKA, "`InvalidRecordException` (`PartitionNotInTopicException`)", FailureKind.MESSAGE, false,
                    "a record the broker refuses, or a partition the topic does not have after a metadata refresh",
                    type("org.apache.kafka.common.InvalidRecordException")),
            new Row(KAFKA, "`InvalidTxnTimeoutException`, or a `KafkaException` with its protocol message (kafka-clients "
                    + "4.4 reports it as `Unexpected error in InitProducerIdResponse; The transaction timeout is larger "
                    + "than ...`)", FailureKind.FATAL, true,
                    "`transaction.timeout.ms` is above the broker's `transaction.max.timeout.ms`: lower the producer's "
                            + "or raise the broker's", type(ERRORS + "InvalidTxnTimeoutException")
                            .or(t -> t instanceof KafkaException && t.getMessage() != null
                                    && t.getMessage().contains(Errors.INVALID_TRANSACTION_TIMEOUT.message()))),
            new Row(KAFKA, "`AuthenticationException` (`SaslAuthenticationException`, `SslAuthenticationException`)",
                    FailureKind.FATAL, true, "the broker refused the producer's login: check `sasl.jaas.config`, "
                            + "`sasl.mechanism`, `security.protocol` and the certificates",
                    type(ERRORS + "AuthenticationException")),
            new Row(KAFKA, "`AuthorizationException` (`TopicAuthorizationException`, "
                    + "`TransactionalIdAuthorizationException`, `ClusterAuthorizationException`)", FailureKind.FATAL, true,
                    "an ACL denies the producer: it needs WRITE and DESCRIBE on the topics and, in the transactional "
                            + "mode, on the transactional ids `<prefix>-*`", type(ERRORS + "AuthorizationException")),
            new Row(KAFKA, "`UnsupportedVersionException`", FailureKind.FATAL, true,
                    "the broker is too old for a feature the producer uses (idempotence, transactions)",
                    type(ERRORS + "UnsupportedVersionException")),
            new Row(KAFKA, "`InvalidConfigurationException` (other than `InvalidTopicException`, above)",
                    FailureKind.FATAL, true, "the broker refuses a setting of the request", type(ERRORS + "InvalidConfigurationException")),
            new Row(KAFKA, "`BrokerUnreachableException` (a metadata wait timed out and no broker answered an Admin "
                    + "request either)", FailureKind.RETRIABLE, false, "a wrong `bootstrap.servers`, or the cluster is "
                    + "down: the publisher logs one WARN line at most every 30 s naming the bootstrap servers and the "
                    + "time since the last successful contact; `OutboxRelay.brokerUnreachable()` and the starter's "
                    + "health show it", type(BrokerUnreachableException.class.getName())),
            new Row(KAFKA, "`RetriableException` (broker down, timeouts, not enough replicas, leader changes) and every "
                    + "Kafka error not listed above", FailureKind.RETRIABLE, false,
                    "the broker or the network; retried for ever (R7)", type(ERRORS + "RetriableException")),
            new Row("store (any)", "`CorruptMessageException`, `CorruptHeadersException`", FailureKind.MESSAGE, false,
                    "a row the store cannot decode; its bucket's rows ahead of it are published",
                    anyType(CorruptMessageException.class.getName(), CorruptHeadersException.class.getName())),
            new Row("JDBC", "`SQLException` with SQLState class 28", FailureKind.FATAL, true,
                    "the database refused the login: a wrong user or password (PostgreSQL 28P01, 28000; "
                            + "MariaDB/MySQL 1045)", sqlStateClass("28")),
            new Row("PostgreSQL", "`SQLException` with SQLState 42501", FailureKind.FATAL, true,
                    "the role lacks a grant on an outbox table (`GRANT SELECT, INSERT, UPDATE, DELETE`)",
                    sqlState("42501")),
            new Row("MariaDB/MySQL", "`SQLException` with error 1044, 1142, 1143 or 1227", FailureKind.FATAL, true,
                    "the user lacks a grant on the database, a table, a column, or an operation",
                    vendorCode(1044, 1142, 1143, 1227)),
            new Row("JDBC", "`SQLException` with SQLState class 08, 40, 53, 57 or HYT; `SQLTransientException`",
                    FailureKind.STORE, false, "no connection, a lock conflict, too many connections, a server "
                            + "starting or stopping, a timeout", t -> t instanceof java.sql.SQLTransientException
                            || sqlStateClass("08", "40", "53", "57", "HYT").test(t)),
            new Row("MongoDB", "`MongoSecurityException`", FailureKind.FATAL, true,
                    "the server refused the login (`authSource`, user, password, mechanism)",
                    type("com.mongodb.MongoSecurityException")),
            new Row("MongoDB", "`MongoServerException` with code 13 (Unauthorized)", FailureKind.FATAL, true,
                    "the user lacks a role on the outbox's database",
                    property("com.mongodb.MongoServerException", Set.of("13"), "getCode")),
            new Row("DynamoDB", "`AwsServiceException` with error code `UnrecognizedClientException`, "
                    + "`InvalidSignatureException`, `MissingAuthenticationTokenException` or `AccessDeniedException`",
                    FailureKind.FATAL, true, "wrong or missing credentials, or an IAM policy that denies an action on "
                            + "the outbox's tables",
                    property("software.amazon.awssdk.awscore.exception.AwsServiceException",
                            Set.of("UnrecognizedClientException", "InvalidSignatureException",
                                    "MissingAuthenticationTokenException", "AccessDeniedException"),
                            "awsErrorDetails", "errorCode")));

    private ErrorTable() {
    }

    /**
     * The row of a failure: the first link of its cause chain (16 links at most, outermost first)
     * that a fatal or message row matches, so a refusal wrapped in a retriable error still counts;
     * failing that, the first link any row matches.
     *
     * @param error the failure; null gives empty
     * @return the row, or empty when none matches (retriable from a publish, store-transient from a store call)
     */
    public static Optional<Row> find(Throwable error) {
        Row other = null;
        int depth = 0;
        for (Throwable t = error; t != null && depth < 16; t = t.getCause() == t ? null : t.getCause(), depth++) {
            for (Row row : ROWS) {
                if (row.matcher().test(t)) {
                    if (row.kind() == FailureKind.FATAL || row.kind() == FailureKind.MESSAGE) {
                        return Optional.of(row);
                    }
                    other = other == null ? row : other;
                }
            }
        }
        return Optional.ofNullable(other);
    }

    /**
     * The refusal no retry heals in a failure's cause chain (16 links at most, outermost first):
     * the first link whose first matching row is a fatal row {@link Row#atStartOnly()}, also
     * beneath an {@link OutboxMisconfigurationException} a store wrapped it in.
     *
     * @param error the failure; null gives empty
     * @return the row, or empty
     */
    public static Optional<Row> refusal(Throwable error) {
        int depth = 0;
        for (Throwable t = error; t != null && depth < 16; t = t.getCause() == t ? null : t.getCause(), depth++) {
            for (Row row : ROWS) {
                if (row.matcher().test(t)) {
                    if (row.atStartOnly()) {
                        return Optional.of(row);
                    }
                    break; // this link is something else (InvalidTopicException is an InvalidConfigurationException)
                }
            }
        }
        return Optional.empty();
    }

    private static Predicate<Throwable> type(String className) {
        return t -> isA(t.getClass(), className);
    }

    private static Predicate<Throwable> anyType(String... classNames) {
        return t -> Arrays.stream(classNames).anyMatch(name -> isA(t.getClass(), name));
    }

    private static boolean isA(Class<?> type, String className) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            if (c.getName().equals(className)) {
                return true;
            }
        }
        return false;
    }

    private static Predicate<Throwable> sqlState(String state) {
        return t -> t instanceof SQLException sql && state.equals(sql.getSQLState());
    }

    private static Predicate<Throwable> sqlStateClass(String... prefixes) {
        return t -> t instanceof SQLException sql && sql.getSQLState() != null
                && Arrays.stream(prefixes).anyMatch(sql.getSQLState()::startsWith);
    }

    private static Predicate<Throwable> vendorCode(int... codes) {
        return t -> t instanceof SQLException sql && Arrays.stream(codes).anyMatch(c -> c == sql.getErrorCode());
    }

    /**
     * A driver exception whose public no-argument getters, called in turn, give one of the values
     * (as a string): read by reflection so the relay does not depend on the driver.
     */
    private static Predicate<Throwable> property(String className, Set<String> values, String... getters) {
        return t -> {
            if (!isA(t.getClass(), className)) {
                return false;
            }
            Object value = t;
            try {
                for (String getter : getters) {
                    if (value == null) {
                        return false;
                    }
                    Method method = value.getClass().getMethod(getter);
                    value = method.invoke(value);
                }
            } catch (ReflectiveOperationException | RuntimeException e) {
                return false;
            }
            return value != null && values.contains(String.valueOf(value));
        };
    }
}
