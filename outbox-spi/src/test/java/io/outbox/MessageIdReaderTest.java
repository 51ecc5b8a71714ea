package io.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.InvalidMessageIdException.Problem;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.Test;

/** Rule I1's input: the message id read from a consumed record, never accepted silently when absent or bad. */
class MessageIdReaderTest {

    private static ConsumerRecord<String, String> record(byte[]... headerValues) {
        ConsumerRecord<String, String> record = new ConsumerRecord<>("orders", 3, 1234L, "key", "value");
        for (byte[] value : headerValues) {
            record.headers().add(new RecordHeader(MessageIdReader.DEFAULT_HEADER, value));
        }
        return record;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void I1_readsTheRelaysHeader() {
        UUID id = UUID.randomUUID();
        assertThat(MessageIdReader.messageId(record(utf8(id.toString())))).isEqualTo(id);
        assertThat(MessageIdReader.defaults().read(record(utf8(id.toString().toUpperCase())))).contains(id);
    }

    @Test
    void I1_theLastHeaderOfTheNameWins_asTheRelayStampsAfterTheMessagesOwnHeaders() {
        UUID own = UUID.randomUUID();
        UUID stamped = UUID.randomUUID();
        assertThat(MessageIdReader.messageId(record(utf8(own.toString()), utf8(stamped.toString())))).isEqualTo(stamped);
    }

    @Test
    void I1_aMissingHeaderFailsNamingTheRecordAndTheHeader() {
        assertThatThrownBy(() -> MessageIdReader.messageId(record()))
                .isInstanceOfSatisfying(InvalidMessageIdException.class, e -> {
                    assertThat(e.problem()).isEqualTo(Problem.MISSING);
                    assertThat(e.topic()).isEqualTo("orders");
                    assertThat(e.partition()).isEqualTo(3);
                    assertThat(e.offset()).isEqualTo(1234L);
                })
                .hasMessageContaining("orders-3@1234").hasMessageContaining("x-outbox-message-id")
                .hasMessageNotContaining("value");
    }

    @Test
    void I1_aNullValueFails() {
        assertThatThrownBy(() -> MessageIdReader.messageId(record((byte[]) null)))
                .isInstanceOfSatisfying(InvalidMessageIdException.class,
                        e -> assertThat(e.problem()).isEqualTo(Problem.NULL_VALUE));
    }

    @Test
    void I1_malformedValuesFailShowingTheBytesEscaped() {
        for (String bad : new String[] {"", "not-a-uuid", "1-2-3-4-5", UUID.randomUUID() + " ",
                "g" + UUID.randomUUID().toString().substring(1), UUID.randomUUID().toString().replace("-", "")}) {
            assertThatThrownBy(() -> MessageIdReader.messageId(record(utf8(bad))))
                    .as("value '%s'", bad)
                    .isInstanceOfSatisfying(InvalidMessageIdException.class,
                            e -> assertThat(e.problem()).isEqualTo(Problem.MALFORMED));
        }
        assertThatThrownBy(() -> MessageIdReader.messageId(record(new byte[] {(byte) 0xff, '\n', 'a'})))
                .hasMessageContaining("'\\xff\\x0aa'");
    }

    @Test
    void I1_skipPolicyReturnsEmptyAndCoordinatesPolicyAStableId() {
        MessageIdReader skip = MessageIdReader.of(MessageIdReader.DEFAULT_HEADER, MessageIdReader.Policy.SKIP);
        assertThat(skip.read(record())).isEmpty();
        MessageIdReader coordinates = MessageIdReader.of(MessageIdReader.DEFAULT_HEADER,
                MessageIdReader.Policy.RECORD_COORDINATES);
        UUID a = coordinates.read(record(utf8("bad"))).orElseThrow();
        assertThat(coordinates.read(record())).contains(a);
        assertThat(a).isNotEqualTo(MessageIdReader.coordinatesId(new ConsumerRecord<>("orders", 3, 1235L, "k", "v")));
        UUID id = UUID.randomUUID();
        assertThat(coordinates.read(record(utf8(id.toString())))).as("a valid header still wins").contains(id);
    }

    @Test
    void I1_aCustomPolicySeesTheProblemAndAnotherHeaderNameIsRead() {
        MessageIdReader reader = MessageIdReader.of("my-id", (record, problem) -> {
            assertThat(problem.problem()).isEqualTo(Problem.MISSING);
            return Optional.empty();
        });
        assertThat(reader.read(record(utf8(UUID.randomUUID().toString())))).isEmpty();
        MessageIdReader nulls = MessageIdReader.of("my-id", (record, problem) -> null);
        assertThatThrownBy(() -> nulls.read(record())).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("policy returned null");
        assertThatThrownBy(() -> MessageIdReader.of("", MessageIdReader.Policy.FAIL))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
