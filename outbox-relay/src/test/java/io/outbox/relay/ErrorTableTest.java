package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.spi.CorruptMessageException;
import io.outbox.spi.OutboxMisconfigurationException;
import java.sql.SQLException;
import java.sql.SQLInvalidAuthorizationSpecException;
import java.sql.SQLSyntaxErrorException;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.InvalidTxnTimeoutException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

/** Rules R12, R13: the rows of {@link ErrorTable} class the errors they name, wrapped or not. */
class ErrorTableTest {

    @Test
    void r13_kafkaRefusalsAreFatalOnlyBeforeTheFirstGoodContact() {
        List<Throwable> refusals = List.of(new InvalidTxnTimeoutException("above transaction.max.timeout.ms"),
                new SaslAuthenticationException("Authentication failed: Invalid username or password"),
                new TopicAuthorizationException("denied"), new TransactionalIdAuthorizationException("denied"),
                new ClusterAuthorizationException("denied"), new UnsupportedVersionException("old broker"),
                new InvalidConfigurationException("refused"),
                new KafkaException("Unexpected error in InitProducerIdResponse; "
                        + Errors.INVALID_TRANSACTION_TIMEOUT.message()));
        for (Throwable refusal : refusals) {
            for (Throwable error : List.of(refusal, new KafkaException("wrapped", refusal),
                    new ExecutionException(new TimeoutException("outer retriable", refusal)))) {
                ErrorTable.Row row = ErrorTable.find(error).orElseThrow();
                assertThat(row.kind()).as("%s", error).isEqualTo(FailureKind.FATAL);
                assertThat(row.atStartOnly()).as("%s", error).isTrue();
                assertThat(row.stops(false)).as("%s before a good start", error).isTrue();
                assertThat(row.stops(true)).as("%s after a good start", error).isFalse();
                assertThat(row.side()).isEqualTo("Kafka");
                assertThat(FailureKind.classify(error)).isEqualTo(FailureKind.FATAL);
                assertThat(ErrorTable.refusal(new OutboxMisconfigurationException("wrapped", error))).contains(row);
            }
        }
    }

    @Test
    void r6_aMisconfigurationOrAnErrorStopsTheRelayWhenever() {
        for (Throwable error : List.of(new OutboxMisconfigurationException("bucket 9 outside [0, 8)"),
                new OutOfMemoryError("test"), new RuntimeException(new OutboxMisconfigurationException("x")))) {
            ErrorTable.Row row = ErrorTable.find(error).orElseThrow();
            assertThat(row.kind()).isEqualTo(FailureKind.FATAL);
            assertThat(row.stops(true)).as("%s", error).isTrue();
        }
    }

    @Test
    void r12_messageAndRetriableRowsAreWhatTheyWere() {
        assertThat(FailureKind.classify(new RecordTooLargeException("big"))).isEqualTo(FailureKind.MESSAGE);
        assertThat(FailureKind.classify(new KafkaException(new RecordTooLargeException("big"))))
                .isEqualTo(FailureKind.MESSAGE);
        assertThat(FailureKind.classify(new CorruptMessageException(3, UUID.randomUUID(), List.of(), "bad blob",
                null))).isEqualTo(FailureKind.MESSAGE);
        InvalidTopicException collides = new InvalidTopicException("Topic 'a_b' collides with existing topic: a.b");
        assertThat(FailureKind.classify(collides)).as("an InvalidConfigurationException, but the message's own")
                .isEqualTo(FailureKind.MESSAGE);
        assertThat(ErrorTable.refusal(collides)).isEmpty();
        assertThat(FailureKind.classify(new NotEnoughReplicasException("one replica"))).isEqualTo(FailureKind.RETRIABLE);
        assertThat(FailureKind.classify(new IllegalStateException("anything else"))).isEqualTo(FailureKind.RETRIABLE);
        assertThat(FailureKind.classify(null)).isEqualTo(FailureKind.RETRIABLE);
        assertThat(ErrorTable.find(new IllegalStateException("anything else"))).isEmpty();
    }

    @Test
    void r13_databaseLoginsAndGrantsAreFatalOnlyBeforeTheFirstGoodContact() {
        List<SQLException> refusals = List.of(
                new SQLException("password authentication failed for user \"relay\"", "28P01"),
                new SQLInvalidAuthorizationSpecException("Access denied for user 'relay'@'localhost'", "28000", 1045),
                new SQLException("permission denied for table outbox_messages", "42501"),
                new SQLSyntaxErrorException("SELECT command denied to user 'relay'", "42000", 1142),
                new SQLSyntaxErrorException("Access denied for user 'relay' to database 'test'", "42000", 1044));
        for (SQLException refusal : refusals) {
            for (Throwable error : List.of(refusal, new IllegalStateException("pool", refusal))) {
                ErrorTable.Row row = ErrorTable.find(error).orElseThrow();
                assertThat(row.kind()).as("%s", error).isEqualTo(FailureKind.FATAL);
                assertThat(row.atStartOnly()).as("%s", error).isTrue();
            }
        }
    }

    @Test
    void r13_aLostConnectionOrALockConflictIsStoreTransientAndNeverStoreFromClassify() {
        for (SQLException error : List.of(new SQLException("connection refused", "08001"),
                new SQLException("deadlock", "40P01"), new SQLException("too many connections", "53300"),
                new SQLException("the database system is starting up", "57P03"))) {
            assertThat(ErrorTable.find(error).orElseThrow().kind()).as("%s", error).isEqualTo(FailureKind.STORE);
            assertThat(FailureKind.classify(error)).isEqualTo(FailureKind.RETRIABLE);
        }
        assertThat(ErrorTable.find(new SQLException("syntax", "42601"))).isEmpty();
        assertThat(ErrorTable.find(new SQLException("general", "HY000", 1))).isEmpty();
    }

    @Test
    void onlyAFatalRowMayBeFatalOnlyAtStart() {
        assertThatThrownBy(() -> new ErrorTable.Row("Kafka", "x", FailureKind.RETRIABLE, true, "m", t -> true))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("RETRIABLE");
        assertThat(ErrorTable.ROWS).allSatisfy(row -> assertThat(row.handling()).isNotBlank());
    }
}
