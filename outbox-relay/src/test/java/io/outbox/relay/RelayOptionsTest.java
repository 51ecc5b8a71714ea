package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.spi.OutboxMisconfigurationException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RelayOptionsTest {

    @Test
    void r10_theDefaultsAreTheDesignsDefaults() {
        RelayOptions options = RelayOptions.defaults();

        assertThat(options.bucketCount()).isEqualTo(8);
        assertThat(options.batchSize()).isEqualTo(500);
        assertThat(options.pollInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(options.leaseDuration()).isEqualTo(Duration.ofSeconds(30));
        assertThat(options.leaseRenewInterval()).isEqualTo(Duration.ofSeconds(10));
        assertThat(options.errorBackoff()).isEqualTo(Duration.ofSeconds(1));
        assertThat(options.maxErrorBackoff()).isEqualTo(Duration.ofSeconds(30));
        assertThat(options.maxPublishDuration()).isNull();
        assertThat(options.closeTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(options.storeConcurrency()).isEqualTo(4);
    }

    @Test
    void r10_theDefaultRelayIdNamesHostAndProcessAndDiffersEachTime() {
        String id = RelayOptions.defaults().relayId();

        assertThat(id).matches("[A-Za-z0-9._-]+-" + ProcessHandle.current().pid() + "-[0-9a-f]{8}");
        assertThat(RelayOptions.defaults().relayId()).isNotEqualTo(id);
    }

    static Stream<Arguments> badOptions() {
        return Stream.of(
                bad(b -> b.bucketCount(0), "relay option bucket.count must be in [1, 65536] but was 0"),
                bad(b -> b.batchSize(-3), "relay option batch.size must be in [1, 100000] but was -3"),
                bad(b -> b.pollInterval(Duration.ZERO), "relay option poll.interval.ms must be in [1, 86400000] ms but was 0 ms"),
                bad(b -> b.pollInterval(null), "relay option poll.interval.ms must not be null but was null"),
                bad(b -> b.leaseDuration(Duration.ofDays(2)), "relay option lease.duration.ms must be in [2, 86400000] ms but was PT48H"),
                bad(b -> b.leaseRenewInterval(Duration.ofSeconds(30)),
                        "relay options: lease.renew.interval.ms (30000) must be less than lease.duration.ms (30000)"),
                bad(b -> b.errorBackoff(Duration.ofMillis(-5)), "relay option error.backoff.ms must be in [1, 86400000] ms but was -5 ms"),
                bad(b -> b.maxErrorBackoff(Duration.ofMillis(500)),
                        "relay options: error.backoff.max.ms (500) must be at least error.backoff.ms (1000)"),
                bad(b -> b.maxPublishDuration(Duration.ofSeconds(20)),
                        "relay options: max.publish.duration.ms (20000) plus lease.renew.interval.ms (10000) must be less "
                                + "than lease.duration.ms (30000), so that a publish that starts on a fresh lease ends "
                                + "before the lease does"),
                bad(b -> b.closeTimeout(Duration.ofMillis(-1)), "relay option close.timeout.ms must be in [0, 86400000] ms but was -1 ms"),
                bad(b -> b.storeConcurrency(0), "relay option store.concurrency must be in [1, 256] but was 0"),
                bad(b -> b.storeConcurrency(-1), "relay option store.concurrency must be in [1, 256] but was -1"),
                bad(b -> b.relayId("a\tb"), "relay option relay.id must not contain control characters: 'a?b'"),
                bad(b -> b.relayId(" "), "relay option relay.id must not be blank but was ' '"),
                bad(b -> b.bucketCount(65_537), "relay option bucket.count must be in [1, 65536] but was 65537"),
                bad(b -> b.maxPublishDuration(Duration.ZERO),
                        "relay option max.publish.duration.ms must be in [1, 86400000] ms but was 0 ms"));
    }

    private static Arguments bad(UnaryOperator<RelayOptions.Builder> change, String message) {
        return Arguments.of(change, message);
    }

    @ParameterizedTest
    @MethodSource("badOptions")
    void r10_everyOptionIsValidatedNamingTheKeyAndTheBadValue(UnaryOperator<RelayOptions.Builder> change,
                                                              String message) {
        assertThatThrownBy(() -> change.apply(RelayOptions.builder()).build())
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessage(message);
    }

    @Test
    void r10_propertiesRoundTripAndEveryKeyIsParsed() {
        RelayOptions options = RelayOptions.builder().relayId("relay-7").bucketCount(12).batchSize(50)
                .pollInterval(Duration.ofMillis(250)).leaseDuration(Duration.ofSeconds(60))
                .leaseRenewInterval(Duration.ofSeconds(5)).errorBackoff(Duration.ofMillis(100))
                .maxErrorBackoff(Duration.ofSeconds(8)).maxPublishDuration(Duration.ofSeconds(40))
                .closeTimeout(Duration.ZERO).storeConcurrency(7).batchMaxBytes(4_000_000L).build();

        Map<String, String> properties = options.toProperties();

        assertThat(properties).containsOnlyKeys(RelayOptions.configDef().names());
        assertThat(RelayOptions.fromProperties(properties)).isEqualTo(options);
        assertThat(options.toBuilder().build()).isEqualTo(options);
    }

    @Test
    void r10_missingPropertiesTakeTheirDefaults() {
        RelayOptions options = RelayOptions.fromProperties(Map.of("bucket.count", "16", "lease.duration.ms", "45000"));

        assertThat(options.bucketCount()).isEqualTo(16);
        assertThat(options.leaseDuration()).isEqualTo(Duration.ofSeconds(45));
        assertThat(options.batchSize()).isEqualTo(500);
        assertThat(options.relayId()).isNotBlank();
    }

    @Test
    void r10_unknownOrMalformedPropertiesAreRefusedNamingThem() {
        assertThatThrownBy(() -> RelayOptions.fromProperties(Map.of("bucket.cont", "8")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageStartingWith("unknown relay option(s) [bucket.cont]; the relay accepts [batch.max.bytes, "
                        + "batch.size, ");
        assertThatThrownBy(() -> RelayOptions.fromProperties(Map.of("batch.size", "lots")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("batch.size").hasMessageContaining("lots");
        Map<String, String> outOfRange = new HashMap<>();
        outOfRange.put("lease.renew.interval.ms", "0");
        assertThatThrownBy(() -> RelayOptions.fromProperties(outOfRange))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("lease.renew.interval.ms").hasMessageContaining("0");
    }

    @Test
    void r10_propertiesAndTheBuilderReportAnOutOfRangeValueTheSameWay() {
        assertThatThrownBy(() -> RelayOptions.fromProperties(Map.of("store.concurrency", "300")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessage("relay option store.concurrency must be in [1, 256] but was 300");
        assertThatThrownBy(() -> RelayOptions.builder().storeConcurrency(300).build())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessage("relay option store.concurrency must be in [1, 256] but was 300");
    }

    @Test
    void r10_theBuilderStartsFromTheConfigDefDefaults() {
        RelayOptions options = RelayOptions.builder().relayId("r").build();
        Map<String, String> properties = options.toProperties();

        RelayOptions.configDef().configKeys().forEach((key, definition) -> {
            if (definition.defaultValue != null) {
                assertThat(properties.get(key)).as(key).isEqualTo(String.valueOf(definition.defaultValue));
            }
        });
    }

    @Test
    void r10_theConfigDefsRangesAreTheOnesBuildEnforces() {
        var keys = RelayOptions.configDef().configKeys();

        assertThat(keys.get("bucket.count").validator).hasToString("1-65536");
        assertThat(keys.get("poll.interval.ms").validator).hasToString("1 ms-1 day");
        assertThat(keys.get("close.timeout.ms").validator).hasToString("0 ms-1 day");
        assertThat(RelayOptions.builder().closeTimeout(Duration.ZERO).build().closeTimeout()).isZero();
        assertThat(RelayOptions.builder().bucketCount(65_536).build().bucketCount()).isEqualTo(65_536);
        assertThatThrownBy(() -> RelayOptions.configDef().parse(Map.of("batch.size", "0")))
                .hasMessage("relay option batch.size must be in [1, 100000] but was 0");
        assertThat(keys.get("prefetch").validator).hasToString("true or false");
        assertThat(RelayOptions.fromProperties(Map.of("prefetch", "false")).prefetch()).isFalse();
        assertThat(RelayOptions.defaults().prefetch()).isTrue();
        assertThatThrownBy(() -> RelayOptions.fromProperties(Map.of("prefetch", "sometimes")))
                .isInstanceOf(io.outbox.spi.OutboxMisconfigurationException.class)
                .hasMessage("relay option prefetch must be true or false but was 'sometimes'");
        assertThat(RelayOptions.fromProperties(Map.of("metrics.backlog.bucket0.owner.only", "true"))
                .backlogSampledByBucketZeroOwner()).isTrue();
        assertThat(RelayOptions.defaults().backlogSampledByBucketZeroOwner()).isFalse();
    }

    @Test
    void s1_theDefaultByteBudgetIsAQuarterOfTheHeapSharedByTheBatchesHeldAtOnceWithAFloor() {
        long mib = 1L << 20;
        assertThat(RelayOptions.defaultBatchMaxBytes(256 * mib, 8, true)).as("256 MiB / 4 / (8 buckets x 2)")
                .isEqualTo(4 * mib);
        assertThat(RelayOptions.defaultBatchMaxBytes(256 * mib, 8, false)).as("without prefetch").isEqualTo(8 * mib);
        assertThat(RelayOptions.defaultBatchMaxBytes(4096 * mib, 8, true)).isEqualTo(64 * mib);
        assertThat(RelayOptions.defaultBatchMaxBytes(256 * mib, 65_536, true)).as("the floor").isEqualTo(mib);
        assertThat(RelayOptions.defaultBatchMaxBytes(Long.MAX_VALUE, 1, false)).as("an unlimited heap: the cap")
                .isEqualTo(RelayOptions.MAX_BATCH_MAX_BYTES);
        RelayOptions derived = RelayOptions.builder().bucketCount(8).prefetch(true).build();
        assertThat(derived.batchMaxBytes())
                .isEqualTo(RelayOptions.defaultBatchMaxBytes(Runtime.getRuntime().maxMemory(), 8, true));
        assertThat(derived.toProperties()).as("a derived budget is not a setting").doesNotContainKey("batch.max.bytes");
        assertThat(RelayOptions.fromProperties(Map.of("batch.max.bytes", "1048576")).batchMaxBytes())
                .isEqualTo(mib);
    }

    @Test
    void s1_r10_aBadByteBudgetIsRefusedNamingTheOptionAndTheValue() {
        assertThatThrownBy(() -> RelayOptions.builder().batchMaxBytes(0L).build())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessage("relay option batch.max.bytes must be in [1, 1099511627776] but was 0");
        assertThatThrownBy(() -> RelayOptions.fromProperties(Map.of("batch.max.bytes", "-5")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessage("relay option batch.max.bytes must be in [1, 1099511627776] but was -5");
        assertThatThrownBy(() -> RelayOptions.fromProperties(Map.of("batch.max.bytes", "4MB")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessage("relay option batch.max.bytes must be a long (bytes) but was '4MB'");
    }

    @Test
    void r10_theConfigDefDocumentsEveryOptionWithItsDefault() {
        var keys = RelayOptions.configDef().configKeys();

        assertThat(keys).hasSize(16).doesNotContainKey("message.id.header");
        assertThat(keys.get("batch.max.bytes").defaultValue).as("derived from the heap").isNull();
        assertThat(keys.get("batch.max.bytes").validator).hasToString("1-1099511627776 bytes");
        assertThat(keys.get("prefetch").defaultValue).isEqualTo(true);
        assertThat(keys.get("metrics.backlog.bucket0.owner.only").defaultValue).isEqualTo(false);
        assertThat(keys.get("poison.policy").defaultValue).isEqualTo("block");
        assertThat(keys.get("bucket.count").defaultValue).isEqualTo(8);
        assertThat(keys.get("poll.interval.ms").defaultValue).isEqualTo(1000L);
        assertThat(keys.get("max.publish.duration.ms").defaultValue).isNull();
        assertThat(keys.values()).allSatisfy(k -> assertThat(k.documentation).isNotBlank());
    }
}
