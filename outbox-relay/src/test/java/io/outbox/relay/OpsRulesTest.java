package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The alert rules ({@code ops/prometheus/outbox-alerts.yml}) and the dashboard
 * ({@code ops/grafana/outbox-dashboard.json}) name only metrics the relay registers (O3), every
 * alert the operations need is there with a unit test of its own, and {@code promtool} accepts
 * the rules and passes their unit tests.
 */
class OpsRulesTest {

    /** The alerts the operations docs promise, by the condition they watch. */
    private static final List<String> ALERTS = List.of(
            "OutboxDeliveryStalled", // stalled delivery
            "OutboxBucketsStalledBehindAFailingMessage", // stalled buckets
            "OutboxOldestPendingTooOld", // oldest pending age over a threshold
            "OutboxBucketsUnowned", // unowned buckets longer than a lease
            "OutboxPublishFailures", // publish failures
            "OutboxLeaseExpirations", // lease expirations
            "OutboxDeadLettersGrowing", // dead letters growing
            "OutboxWakeUpTransportDown"); // wake-up transport down

    @Test
    void o3_everyMetricTheRulesAndTheDashboardNameIsOneTheRelayRegisters() {
        String rules = OpsFiles.read(OpsFiles.RULES);
        Set<String> recorded = matches(rules, "- record: (\\S+)");
        Set<String> known = new TreeSet<>(OpsFiles.registeredSeries());
        known.addAll(recorded);
        Set<String> inRules = OpsFiles.metricNames(rules);
        Set<String> inDashboard = OpsFiles.metricNames(OpsFiles.read(OpsFiles.DASHBOARD));
        assertThat(inRules).as("metrics the rules name").isNotEmpty().allMatch(known::contains,
                "is registered by the relay (RelayMeter) or recorded by the rules; known: " + known);
        assertThat(inDashboard).as("metrics the dashboard names").isNotEmpty().allMatch(known::contains,
                "is registered by the relay (RelayMeter) or recorded by the rules; known: " + known);
        Set<String> shown = new TreeSet<>(inRules);
        shown.addAll(inDashboard);
        for (RelayMeter meter : RelayMeter.values()) {
            assertThat(meter.prometheusSeries()).as("%s is used by the rules or the dashboard", meter)
                    .anyMatch(series -> shown.contains(series) || shown.contains(series.replace("_bucket", "")));
        }
    }

    @Test
    void everyAlertNeededIsThereAndHasAUnitTest() {
        Set<String> alerts = matches(OpsFiles.read(OpsFiles.RULES), "- alert: (\\S+)");
        Set<String> tested = matches(OpsFiles.read(OpsFiles.RULE_TESTS), "alertname: (\\S+)");
        assertThat(alerts).containsAll(ALERTS);
        assertThat(tested).as("alerts with a unit test").containsAll(alerts);
    }

    @Test
    void promtoolChecksTheRulesAndPassesTheirUnitTests() throws Exception {
        String promtool = OpsFiles.tool("OUTBOX_TEST_PROMTOOL", "promtool").toString();
        OpsFiles.Result check = OpsFiles.run(OpsFiles.RULES.getParent(),
                List.of(promtool, "check", "rules", OpsFiles.RULES.getFileName().toString()));
        assertThat(check.status()).as("promtool check rules: %s", check.output()).isZero();
        OpsFiles.Result test = OpsFiles.run(OpsFiles.RULES.getParent(),
                List.of(promtool, "test", "rules", OpsFiles.RULE_TESTS.getFileName().toString()));
        assertThat(test.status()).as("promtool test rules: %s", test.output()).isZero();
        assertThat(test.output()).contains("SUCCESS");
    }

    private static Set<String> matches(String text, String regex) {
        Set<String> found = new TreeSet<>();
        Matcher m = Pattern.compile(regex).matcher(text);
        while (m.find()) {
            found.add(m.group(1));
        }
        return found;
    }
}
