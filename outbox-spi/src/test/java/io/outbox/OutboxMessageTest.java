package io.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.spi.support.StoredMessages;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Rules E1 and E3. */
class OutboxMessageTest {

    private static final StringSerializer STRING = new StringSerializer();

    @Test
    void e1_serializesOnceStampsClockAndKeepsHeadersInOrder() {
        int[] calls = new int[2];
        Serializer<String> key = (topic, data) -> {
            calls[0]++;
            return STRING.serialize(topic, data);
        };
        Serializer<String> value = (topic, data) -> {
            calls[1]++;
            return STRING.serialize(topic, data);
        };
        Clock clock = Clock.fixed(Instant.parse("2026-01-02T03:04:05.678912Z"), ZoneOffset.UTC);
        List<Header> headers = List.of(new RecordHeader("a", new byte[] {1}), new RecordHeader("a", null),
                new RecordHeader("ü", new byte[0]));
        OutboxMessage m = OutboxMessage.create("orders.v1", "k", "v", key, value, headers, 8, null, clock);

        assertThat(calls).containsExactly(1, 1);
        assertThat(m.topic()).isEqualTo("orders.v1");
        assertThat(m.key()).isEqualTo("k".getBytes(StandardCharsets.UTF_8));
        assertThat(m.value()).isEqualTo("v".getBytes(StandardCharsets.UTF_8));
        assertThat(m.createdAt()).isEqualTo(Instant.parse("2026-01-02T03:04:05.678Z"));
        assertThat(m.headers()).containsExactly(OutboxHeader.of("a", new byte[] {1}), OutboxHeader.of("a", null),
                OutboxHeader.of("ü", new byte[0]));
        assertThat(m.partition()).isNull();
        assertThat(m.messageId()).isNotNull();
    }

    @Test
    void e1_serializerMaySeeAndAddHeadersAsWithKafkaProducer() {
        Serializer<String> schemaAware = new Serializer<>() {
            @Override
            public byte[] serialize(String topic, String data) {
                throw new AssertionError("the headers variant must be called");
            }

            @Override
            public byte[] serialize(String topic, Headers headers, String data) {
                assertThat(headers.lastHeader("trace")).isNotNull();
                headers.add("schema-id", new byte[] {42});
                return data.getBytes(StandardCharsets.UTF_8);
            }
        };
        OutboxMessage m = OutboxMessage.create("t", "k", "v", STRING, schemaAware,
                List.of(OutboxHeader.ofUtf8("trace", "abc")), 4);
        assertThat(m.headers()).extracting(OutboxHeader::key).containsExactly("trace", "schema-id");
    }

    @Test
    void e1_messageIdsAreRandom() {
        UUID a = OutboxMessage.create("t", "k", "v", STRING, STRING, 1).messageId();
        UUID b = OutboxMessage.create("t", "k", "v", STRING, STRING, 1).messageId();
        assertThat(a).isNotEqualTo(b);
        assertThat(a.version()).isEqualTo(4);
    }

    @Test
    void s10_nullAndEmptyKeyAndValueStayDistinct() {
        ByteArraySerializer bytes = new ByteArraySerializer();
        OutboxMessage nulls = OutboxMessage.create("t", null, null, bytes, bytes, 4);
        OutboxMessage empties = OutboxMessage.create("t", new byte[0], new byte[0], bytes, bytes, 4);
        assertThat(nulls.key()).isNull();
        assertThat(nulls.value()).isNull();
        assertThat(nulls.keyLength()).isEqualTo(-1);
        assertThat(empties.key()).isEmpty();
        assertThat(empties.value()).isEmpty();
        assertThat(empties.keyLength()).isZero();
    }

    @Test
    void s10_isImmutable() {
        byte[] key = {4};
        byte[] value = {1, 2, 3};
        byte[] headerValue = {9};
        ByteArraySerializer bytes = new ByteArraySerializer(); // hands back its argument itself
        OutboxMessage m = OutboxMessage.create("t", key, value, bytes, bytes,
                List.of(new RecordHeader("h", headerValue)), 4);
        key[0] = 7;
        value[0] = 7;
        headerValue[0] = 7;
        m.value()[1] = 7;
        m.key()[0] = 7;
        m.headers().get(0).value()[0] = 8;
        assertThat(m.key()).containsExactly(4);
        assertThat(m.value()).containsExactly(1, 2, 3);
        assertThat(m.headers().get(0).value()).containsExactly(9);
        assertThatThrownBy(() -> m.headers().add(OutboxHeader.of("x", null)))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void toStringNeverShowsPayload() {
        OutboxMessage m = OutboxMessage.create("t", "secret-key", "secret-value", STRING, STRING,
                List.of(OutboxHeader.ofUtf8("auth", "secret-header")), 4);
        assertThat(m.toString()).doesNotContain("secret").contains(m.messageId().toString()).contains("10 bytes");
    }

    @Test
    void s10_messagesAreEqualByContent() {
        ByteArraySerializer bytes = new ByteArraySerializer();
        Clock clock = Clock.fixed(Instant.parse("2026-01-02T03:04:05.678Z"), ZoneOffset.UTC);
        OutboxMessage m = OutboxMessage.create("t", new byte[] {1}, new byte[] {2}, bytes, bytes,
                List.of(OutboxHeader.of("h", new byte[] {3})), 4, 1, clock);
        OutboxMessage same = withValue(m, m.value());
        assertThat(same).isNotSameAs(m).isEqualTo(m).hasSameHashCodeAs(m);
        assertThat(withValue(m, new byte[] {2, 0})).isNotEqualTo(m);
        assertThat(withValue(m, null)).isNotEqualTo(m);
        assertThat(OutboxMessage.create("t", new byte[] {1}, new byte[] {2}, bytes, bytes,
                List.of(OutboxHeader.of("h", new byte[] {3})), 4, 1, clock))
                .as("another message id").isNotEqualTo(m);
        assertThat(m).isNotEqualTo(null).isNotEqualTo("t");
    }

    @Test
    void toStringNamesTheTypeAndTheSizesOnly() {
        OutboxMessage m = OutboxMessage.create("t", "k", "vv", STRING, STRING, 4);
        assertThat(m.toString()).startsWith("OutboxMessage[messageId=" + m.messageId())
                .contains("key=1 bytes").contains("value=2 bytes").contains("headers=0");
    }

    /** The same message but for its value, as a store would rebuild it. */
    private static OutboxMessage withValue(OutboxMessage m, byte[] value) {
        return StoredMessages.rebuild(m.messageId(), m.bucket(), m.topic(), m.key(), value, m.headers(), m.partition(),
                m.createdAt());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", ".", "..", "has space", "slash/no", "ümlaut", "tab\t", "a@b", "a[b", "a`b", "a{b",
            "a:b", "a+b", "a,b", "a\u0000b", "\u0130i"})
    void e3_illegalTopicsAreRefusedNamingTheValue(String topic) {
        assertThatThrownBy(() -> OutboxMessage.create(topic, "k", "v", STRING, STRING, 4))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("topic");
        if (!topic.isEmpty()) {
            assertThatThrownBy(() -> OutboxMessage.create(topic, "k", "v", STRING, STRING, 4))
                    .hasMessageContaining("'" + topic + "'");
        }
    }

    @Test
    void e3_topicLengthLimitIs249() {
        String ok = "a".repeat(249);
        assertThat(OutboxMessage.create(ok, "k", "v", STRING, STRING, 4).topic()).isEqualTo(ok);
        assertThatThrownBy(() -> OutboxMessage.create(ok + "a", "k", "v", STRING, STRING, 4))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("249").hasMessageContaining("250");
        String every = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
        assertThat(OutboxMessage.create(every, "k", "v", STRING, STRING, 4).topic()).isEqualTo(every);
    }

    @Test
    void e3_bucketCountPartitionSerializersAndHeadersAreValidated() {
        assertThatThrownBy(() -> OutboxMessage.create("t", "k", "v", STRING, STRING, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("bucketCount must be >= 1 but was 0");
        assertThatThrownBy(() -> OutboxMessage.create("t", "k", "v", STRING, STRING, List.of(), 4, -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("partition must be >= 0 or null but was -1");
        assertThatNullPointerException().isThrownBy(() -> OutboxMessage.create("t", "k", "v", null, STRING, 4))
                .withMessageContaining("keySerializer");
        assertThatNullPointerException().isThrownBy(() -> OutboxMessage.create("t", "k", "v", STRING, null, 4))
                .withMessageContaining("valueSerializer");
        assertThatNullPointerException().isThrownBy(() -> OutboxMessage.create("t", "k", "v", STRING, STRING,
                null, 4)).withMessageContaining("headers");
        List<Header> withNull = new ArrayList<>();
        withNull.add(null);
        assertThatNullPointerException().isThrownBy(() -> OutboxMessage.create("t", "k", "v", STRING, STRING,
                withNull, 4));
        assertThatThrownBy(() -> OutboxMessage.create("t", "k", "v", STRING, STRING,
                List.of(OutboxHeader.of("bad\uD800", null)), 4))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lone surrogate")
                .hasMessageContaining("bad\\ud800");
    }

    @Test
    void e3_nothingIsSerializedWhenArgumentsAreInvalid() {
        Serializer<String> failing = (topic, data) -> {
            throw new AssertionError("must not serialize");
        };
        assertThatThrownBy(() -> OutboxMessage.create("bad topic", "k", "v", failing, failing, 4))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
