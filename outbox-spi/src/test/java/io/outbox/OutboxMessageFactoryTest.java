package io.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.IntegerSerializer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;

/** Rules E1-E3 through {@link OutboxMessageFactory}. */
class OutboxMessageFactoryTest {

    private static final Clock FIXED = Clock.fixed(Instant.parse("2026-03-04T05:06:07.891234Z"), ZoneOffset.UTC);

    private static OutboxMessageFactory<String, String> strings(int bucketCount) {
        return OutboxMessageFactory.builder(bucketCount).keySerializer(new StringSerializer())
                .valueSerializer(new StringSerializer()).clock(FIXED).build();
    }

    @Test
    void e1_createSerializesWithTheBoundSerializersAndStampsTheBoundClock() {
        AtomicInteger keyCalls = new AtomicInteger();
        Serializer<Integer> countingKey = (topic, data) -> {
            keyCalls.incrementAndGet();
            return new IntegerSerializer().serialize(topic, data);
        };
        OutboxMessageFactory<Integer, String> factory = OutboxMessageFactory.builder(8).keySerializer(countingKey)
                .valueSerializer(new StringSerializer()).clock(FIXED).build();

        OutboxMessage m = factory.create("orders", 42, "v");

        assertThat(keyCalls).hasValue(1);
        assertThat(m.topic()).isEqualTo("orders");
        assertThat(m.key()).isEqualTo(new IntegerSerializer().serialize("orders", 42));
        assertThat(m.value()).isEqualTo("v".getBytes(StandardCharsets.UTF_8));
        assertThat(m.createdAt()).isEqualTo(Instant.parse("2026-03-04T05:06:07.891Z"));
        assertThat(m.headers()).isEmpty();
        assertThat(m.partition()).isNull();
    }

    @Test
    void e1_createMatchesOutboxMessageCreateExceptForTheRandomId() {
        OutboxMessageFactory<String, String> factory = strings(16);
        List<Header> headers = List.of(new RecordHeader("h", new byte[] {1}), new RecordHeader("h", null));

        OutboxMessage viaFactory = factory.create("orders", "k-7", "v", headers, 5);
        OutboxMessage direct = OutboxMessage.create("orders", "k-7", "v", new StringSerializer(),
                new StringSerializer(), headers, 16, 5, FIXED);

        assertThat(viaFactory.messageId()).isNotEqualTo(direct.messageId());
        assertThat(viaFactory.bucket()).isEqualTo(direct.bucket());
        assertThat(viaFactory.key()).isEqualTo(direct.key());
        assertThat(viaFactory.value()).isEqualTo(direct.value());
        assertThat(viaFactory.headers()).isEqualTo(direct.headers());
        assertThat(viaFactory.partition()).isEqualTo(5);
        assertThat(viaFactory.createdAt()).isEqualTo(direct.createdAt());
    }

    @Test
    void e2_bucketIsKafkasKeyedPlacementOrThePartitionModuloTheBoundCount() {
        OutboxMessageFactory<String, String> factory = strings(12);
        byte[] key = "customer-17".getBytes(StandardCharsets.UTF_8);

        assertThat(factory.create("t", "customer-17", "v").bucket())
                .isEqualTo(Utils.toPositive(Utils.murmur2(key)) % 12);
        assertThat(factory.create("t", "customer-17", "v", List.of(), 29).bucket()).isEqualTo(29 % 12);
        OutboxMessage keyless = factory.create("t", null, "v");
        assertThat(keyless.bucket()).isEqualTo(OutboxBucket.of(null, null, keyless.messageId(), 12));
    }

    @Test
    void e1_headersAreCopiedInOrderWithRepeatsAndNullValues() {
        List<Header> headers = new ArrayList<>(List.of(new RecordHeader("a", new byte[] {1}),
                new RecordHeader("a", null), new RecordHeader("b", new byte[0])));
        OutboxMessage m = strings(4).create("t", "k", "v", headers);
        headers.clear();

        assertThat(m.headers()).containsExactly(OutboxHeader.of("a", new byte[] {1}), OutboxHeader.of("a", null),
                OutboxHeader.of("b", new byte[0]));
    }

    @Test
    void e3_createRefusesWhatOutboxMessageCreateRefuses() {
        OutboxMessageFactory<String, String> factory = strings(4);

        assertThatThrownBy(() -> factory.create("bad topic", "k", "v"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'bad topic'");
        assertThatThrownBy(() -> factory.create("t", "k", "v", List.of(), -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("partition must be >= 0 or null but was -1");
        assertThatNullPointerException().isThrownBy(() -> factory.create(null, "k", "v"))
                .withMessage("topic must not be null");
        assertThatNullPointerException().isThrownBy(() -> factory.create("t", "k", "v", null))
                .withMessage("headers must not be null");
    }

    @Test
    void e3_buildRefusesABadBucketCountAndMissingSerializersNamingThem() {
        assertThatThrownBy(() -> OutboxMessageFactory.builder(0).keySerializer(new StringSerializer())
                .valueSerializer(new StringSerializer()).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessage("bucketCount must be >= 1 but was 0");
        assertThatNullPointerException().isThrownBy(() -> OutboxMessageFactory.builder(4)
                        .valueSerializer(new StringSerializer()).build())
                .withMessageContaining("keySerializer must be set");
        assertThatNullPointerException().isThrownBy(() -> OutboxMessageFactory.builder(4)
                        .keySerializer(new StringSerializer()).build())
                .withMessageContaining("valueSerializer must be set");
        assertThatNullPointerException().isThrownBy(() -> OutboxMessageFactory.builder(4)
                        .keySerializer(new StringSerializer()).valueSerializer(new StringSerializer()).clock(null)
                        .build())
                .withMessage("clock must not be null");
    }

    @Test
    void builderIsImmutableSoOneBaseBuilderServesSeveralFactories() {
        OutboxMessageFactory.Builder<String, Object> base = OutboxMessageFactory.builder(4)
                .keySerializer(new StringSerializer());
        OutboxMessageFactory<String, String> strings = base.valueSerializer(new StringSerializer()).build();
        OutboxMessageFactory<String, Integer> ints = base.valueSerializer(new IntegerSerializer()).build();

        assertThat(strings.valueSerializer()).isInstanceOf(StringSerializer.class);
        assertThat(ints.valueSerializer()).isInstanceOf(IntegerSerializer.class);
        assertThat(strings.bucketCount()).isEqualTo(4);
        assertThat(strings.clock()).isEqualTo(Clock.systemUTC());
    }

    @Test
    void s12_oneFactoryIsSharedByManyThreads() throws Exception {
        OutboxMessageFactory<String, String> factory = strings(64);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<List<OutboxMessage>>> results = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                results.add(pool.submit(() -> {
                    List<OutboxMessage> made = new ArrayList<>();
                    for (int i = 0; i < 2_000; i++) {
                        made.add(factory.create("t", "k" + thread + "-" + i, "v" + i));
                    }
                    return made;
                }));
            }
            Set<UUID> ids = new HashSet<>();
            for (int t = 0; t < 4; t++) {
                List<OutboxMessage> made = results.get(t).get();
                for (int i = 0; i < made.size(); i++) {
                    OutboxMessage m = made.get(i);
                    byte[] key = ("k" + t + "-" + i).getBytes(StandardCharsets.UTF_8);
                    assertThat(m.key()).isEqualTo(key);
                    assertThat(m.bucket()).isEqualTo(Utils.toPositive(Utils.murmur2(key)) % 64);
                    ids.add(m.messageId());
                }
            }
            assertThat(ids).hasSize(8_000);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void toStringNamesTheSettings() {
        assertThat(strings(4).toString()).contains("bucketCount=4").contains(StringSerializer.class.getName());
    }
}
