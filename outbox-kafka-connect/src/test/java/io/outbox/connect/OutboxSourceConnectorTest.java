package io.outbox.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.spi.support.BucketRange;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.errors.ConnectException;
import org.junit.jupiter.api.Test;

/** The connector's configuration checks and its task ranges, without a runtime. */
class OutboxSourceConnectorTest {

    private static Map<String, String> config() {
        Map<String, String> props = new HashMap<>();
        props.put("name", "orders");
        props.put("connector.class", OutboxSourceConnector.class.getName());
        props.put("store", "memory");
        props.put("relay.bucket.count", "10");
        props.put("key.converter", OutboxConnectorConfig.BYTE_ARRAY_CONVERTER);
        props.put("value.converter", OutboxConnectorConfig.BYTE_ARRAY_CONVERTER);
        props.put("header.converter", OutboxConnectorConfig.BYTE_ARRAY_CONVERTER);
        return props;
    }

    private static Map<String, List<String>> errors(Map<String, String> props) {
        Map<String, List<String>> errors = new TreeMap<>();
        for (ConfigValue value : new OutboxSourceConnector().validate(props).configValues()) {
            if (!value.errorMessages().isEmpty()) {
                errors.put(value.name(), value.errorMessages());
            }
        }
        return errors;
    }

    @Test
    void x1_taskConfigsSplitTheBucketsIntoContiguousRanges() {
        OutboxSourceConnector connector = new OutboxSourceConnector();
        connector.start(config());
        List<Map<String, String>> tasks = connector.taskConfigs(3);
        assertThat(tasks).hasSize(3);
        assertThat(tasks.stream().map(OutboxSourceConnector::taskRange).toList())
                .containsExactly(new BucketRange(0, 4), new BucketRange(4, 7), new BucketRange(7, 10));
        assertThat(tasks.get(2)).containsEntry(OutboxSourceConnector.TASK_INDEX, "2").containsEntry("store", "memory");
        assertThat(connector.taskConfigs(64)).as("never more tasks than buckets").hasSize(10);
        assertThat(OutboxSourceConnector.ranges(10, 1)).containsExactly(new BucketRange(0, 10));
    }

    @Test
    void x1_taskRelayIdsSortInTaskOrder() {
        String task2 = OutboxConnectorConfig.relayId("orders", 2, "ffffffff");
        String task10 = OutboxConnectorConfig.relayId("orders", 10, "00000000");
        assertThat(task2).isEqualTo("orders-00002-ffffffff");
        assertThat(task2).isLessThan(task10);
    }

    @Test
    void x2_eachBadSettingIsReportedOnItself() {
        assertThat(errors(config())).isEmpty();
        Map<String, String> props = config();
        props.put("relay.batch.size", "0");
        props.put("relay.id", "mine");
        props.put("store.unknown", "x");
        props.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        props.remove("header.converter");
        props.put("notify.transport", "carrier-pigeon");
        Map<String, List<String>> errors = errors(props);
        assertThat(errors).containsOnlyKeys("relay.batch.size", "relay.id", "store.unknown", "value.converter",
                "header.converter", "notify.transport");
        assertThat(errors.get("header.converter").toString()).contains("ByteArrayConverter", "not set");
        assertThat(errors.get("relay.id").toString()).contains("set by each task");
    }

    @Test
    void x2_rulesAcrossSettingsNameTheSettingsAsWritten() {
        Map<String, String> props = config();
        props.put("relay.lease.duration.ms", "5000");
        props.put("relay.lease.renew.interval.ms", "9000");
        assertThat(errors(props)).containsOnlyKeys("relay.lease.renew.interval.ms");
        assertThat(errors(props).get("relay.lease.renew.interval.ms").get(0))
                .contains("relay.lease.renew.interval.ms (9000) must be less than relay.lease.duration.ms (5000)");
        props = config();
        props.put("store", "no-such-store");
        assertThat(errors(props)).containsOnlyKeys("store");
    }

    @Test
    void x3_exactlyOnceNeedsConnectorDefinedTransactions() {
        Map<String, String> props = config();
        props.put("exactly.once.support", "required");
        assertThat(errors(props)).containsOnlyKeys("transaction.boundary");
        props.put("transaction.boundary", "poll");
        assertThat(errors(props)).containsOnlyKeys("transaction.boundary");
        props.put("transaction.boundary", "connector");
        assertThat(errors(props)).isEmpty();
    }

    @Test
    void startRefusesAnInvalidConfigurationNamingTheSetting() {
        Map<String, String> props = config();
        props.put("relay.bucket.count", "0");
        assertThatThrownBy(() -> new OutboxSourceConnector().start(props)).isInstanceOf(ConnectException.class)
                .hasMessageContaining("relay.bucket.count");
    }
}
