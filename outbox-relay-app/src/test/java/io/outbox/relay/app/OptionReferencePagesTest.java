package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.connect.OutboxConnectorConfig;
import io.outbox.notify.NotificationTransportProvider;
import io.outbox.notify.NotifySettings;
import io.outbox.notify.postgres.PostgresNotificationTransportProvider;
import io.outbox.notify.redis.RedisNotificationTransportProvider;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.spi.OutboxStoreProvider;
import io.outbox.store.dynamodb.DynamoDbOutboxStoreProvider;
import io.outbox.store.jdbc.JdbcOutboxStoreProvider;
import io.outbox.store.mongodb.MongoOutboxStoreProvider;
import io.outbox.tck.InMemoryOutboxStoreProvider;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.apache.kafka.common.config.ConfigDef;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The option reference pages under {@code docs/reference} are generated from the {@link ConfigDef}s
 * that define the options ({@link RelayOptions#configDef()}, {@link KafkaOutboxPublisher#configDef()},
 * each store provider's {@link OutboxStoreProvider#configDef()}, {@link OutboxConnectorConfig#configDef()})
 * and each notification transport's {@link NotificationTransportProvider#configDef()}, with the same {@link SettingsHelp.Facts} the standalone
 * relay's {@code --help} shows (rule R10: one definition per option). The build fails when a committed
 * page is not what they make. Regenerate the pages with
 * {@code mvn -B -ntp -pl outbox-relay-app -am test -Dtest=OptionReferencePagesTest -Dsurefire.failIfNoSpecifiedTests=false -Doption.pages=write}.
 */
class OptionReferencePagesTest {

    /** The pages' directory, from the module's directory. */
    static final Path DIR = Path.of("..", "docs", "reference");

    private static final String REGENERATE = "mvn -B -ntp -pl outbox-relay-app -am test "
            + "-Dtest=OptionReferencePagesTest -Dsurefire.failIfNoSpecifiedTests=false -Doption.pages=write";

    /** The stores documented, in this order. */
    private static final List<OutboxStoreProvider> STORES = List.of(new JdbcOutboxStoreProvider(),
            new MongoOutboxStoreProvider(), new DynamoDbOutboxStoreProvider(), new InMemoryOutboxStoreProvider());

    /** The notification transports documented, in this order. */
    private static final List<NotificationTransportProvider> TRANSPORTS = List.of(
            new RedisNotificationTransportProvider(), new PostgresNotificationTransportProvider());

    @Test
    void r10_theCommittedOptionPagesAreTheGeneratedOnes() throws IOException {
        for (Map.Entry<String, String> page : pages().entrySet()) {
            Path path = DIR.resolve(page.getKey());
            assertThat(path).as("%s; generate it with: %s", path, REGENERATE).exists();
            assertThat(Files.readString(path, StandardCharsets.UTF_8))
                    .as("%s is generated; regenerate it with: %s", path, REGENERATE).isEqualTo(page.getValue());
        }
    }

    @Test
    @EnabledIfSystemProperty(named = "option.pages", matches = "write")
    void writeThePages() throws IOException {
        Files.createDirectories(DIR);
        for (Map.Entry<String, String> page : pages().entrySet()) {
            Files.writeString(DIR.resolve(page.getKey()), page.getValue(), StandardCharsets.UTF_8);
        }
    }

    /** Every option of every definition has a row: the pages leave none out. */
    @Test
    void r10_everyOptionHasARow() {
        Map<String, String> pages = pages();
        RelayOptions.configDef().names().forEach(key -> assertThat(pages.get("relay-options.md"))
                .contains("| `" + key + "` | `" + RelayConfiguration.relayFileKey(key) + "`"));
        KafkaOutboxPublisher.configDef().names().forEach(key -> assertThat(pages.get("relay-options.md"))
                .contains("| `" + key + "` |"));
        TRANSPORTS.forEach(t -> t.configDef().names().forEach(key -> assertThat(pages.get("relay-options.md"))
                .contains("| `" + key + "` | `notify." + t.name() + "." + key + "`")));
        STORES.forEach(s -> s.configDef().names().forEach(key -> assertThat(pages.get("store-options.md"))
                .contains("| `" + key + "` | `store." + key + "`")));
        HttpSettings.configDef().names().forEach(key -> assertThat(pages.get("relay-options.md"))
                .contains("| `" + key + "` | `" + key + "`"));
        OutboxConnectorConfig.configDef().names().forEach(key -> assertThat(pages.get("connector-options.md"))
                .contains("| `" + key + "` |"));
    }

    @Test
    void r10_thePublishersBuilderHasAMethodOfEachOptionsName() {
        List<String> methods = Arrays.stream(KafkaOutboxPublisher.Builder.class.getMethods())
                .map(Method::getName).toList();
        KafkaOutboxPublisher.configDef().names().forEach(key -> assertThat(methods)
                .as("the builder method the page names for %s", key).contains(camelCase(key)));
    }

    /** {@code message.id.header} as {@code messageIdHeader}. */
    private static String camelCase(String key) {
        StringBuilder name = new StringBuilder();
        for (String part : key.split("\\.")) {
            name.append(name.length() == 0 ? part : Character.toUpperCase(part.charAt(0)) + part.substring(1));
        }
        return name.toString();
    }

    /** The pages by file name. */
    static Map<String, String> pages() {
        Map<String, String> pages = new TreeMap<>();
        pages.put("relay-options.md", relayPage());
        pages.put("store-options.md", storePage());
        pages.put("connector-options.md", connectorPage());
        return pages;
    }

    private static StringBuilder header(String title, String sources) {
        return new StringBuilder("# ").append(title).append("\n\n<!-- Generated by outbox-relay-app's ")
                .append("OptionReferencePagesTest from ").append(sources).append(". Do not edit: the build fails when ")
                .append("this page differs from what they make. Regenerate it with:\n     ").append(REGENERATE)
                .append(" -->\n\n");
    }

    private static String relayPage() {
        StringBuilder s = header("Relay options", "RelayOptions.configDef(), KafkaOutboxPublisher.configDef(), "
                + "the publisher's enforced producer settings and the notification transports' settings");
        s.append("In code, `RelayOptions.fromProperties(Map)` takes the keys of the first table and "
                + "`RelayOptions.builder()` has one method per option; the standalone relay takes them under "
                + "`relay.`, in its file or from the environment; the Kafka Connect connector as in "
                + "[connector-options.md](connector-options.md); the Spring Boot starter as `outbox.*` properties "
                + "([spring-boot-properties.md](spring-boot-properties.md)). `build()` checks every value against "
                + "the valid values below and fails naming the option and the value (rule R10). Durations are in "
                + "milliseconds.\n\n");
        s.append("## Relay (`RelayOptions.configDef()`)\n\n");
        SettingsHelp.table(s, RelayOptions.configDef().configKeys().values(), RelayConfiguration::relayFileKey,
                SettingsHelp::relayDefault);
        s.append("\n## Kafka publisher (`KafkaOutboxPublisher.configDef()`)\n\n");
        s.append("In code: `KafkaOutboxPublisher.builder(producerConfig)` and its method of the same name.\n\n");
        SettingsHelp.table(s, KafkaOutboxPublisher.configDef().configKeys().values(), RelayConfiguration::relayFileKey,
                key -> null);
        s.append("\n## Kafka producer settings the publisher enforces (rule K1)\n\n");
        s.append("Every other producer setting is Kafka's own (the standalone relay takes it as `kafka.<setting>`); "
                + "an overridden value is logged at WARN.\n\n| producer setting | what the publisher does |\n"
                + "|---|---|\n");
        SettingsHelp.ENFORCED_KAFKA.forEach((key, rule) -> s.append("| `").append(key).append("` | ")
                .append(SettingsHelp.cell(rule)).append(" |\n"));
        new TreeMap<>(SettingsHelp.KAFKA_DEFAULTS).forEach((key, value) -> s.append("| `").append(key)
                .append("` | default ").append(SettingsHelp.cell(value)).append(" |\n"));
        s.append("\n## HTTP endpoint of the standalone relay (`http.*`)\n\n");
        s.append("Off unless `").append(HttpSettings.PORT).append("` is set; the endpoints are listed in "
                + "[../standalone-relay.md](../standalone-relay.md).\n\n");
        SettingsHelp.table(s, HttpSettings.configDef().configKeys().values(), key -> key, key -> null);
        s.append("\n## Notifications (`").append(NotifySettings.TRANSPORT).append("`)\n\n");
        s.append("`").append(NotifySettings.TRANSPORT).append("` is `").append(NotifySettings.NONE)
                .append("` (the default: polling only) or a transport's name; its settings follow as `")
                .append(NotifySettings.PREFIX).append("<transport>.<setting>` in the standalone relay, or go to ")
                .append("`NotificationTransports.open(name, settings)` without the prefix.\n");
        for (NotificationTransportProvider transport : TRANSPORTS) {
            section(s, "###", transport.name(), transport, transport.configDef(),
                    key -> NotifySettings.PREFIX + transport.name() + "." + key);
        }
        return s.toString();
    }

    private static String storePage() {
        StringBuilder s = header("Store options", "each store provider's configDef()");
        s.append("A relay opens a store by name with `OutboxStores.open(name, settings)`; the standalone relay "
                + "takes `store=<name>` and each setting as `store.<setting>`, in its file or from the environment; "
                + "the Kafka Connect connector takes `store` and `store.<setting>` too. Unknown keys and bad values "
                + "are refused, naming the key; a password is never shown or logged.\n");
        for (OutboxStoreProvider store : STORES) {
            section(s, "##", store.name(), store, store.configDef(), key -> RelayConfiguration.STORE_PREFIX + key);
        }
        return s.toString();
    }

    /** A heading naming a provider and its class, then the table of its settings. */
    private static void section(StringBuilder s, String level, String name, Object provider, ConfigDef settings,
                                UnaryOperator<String> fileKey) {
        s.append('\n').append(level).append(' ').append(name).append(" (`").append(provider.getClass().getSimpleName())
                .append("`)\n\n");
        SettingsHelp.table(s, settings.configKeys().values(), fileKey, key -> null);
    }

    private static String connectorPage() {
        StringBuilder s = header("Kafka Connect connector options", "OutboxConnectorConfig.configDef()");
        s.append("The settings of `io.outbox.connect.OutboxSourceConnector`, beside Connect's own (see "
                + "[kafka-connect.md](../kafka-connect.md)). The relay options are those of "
                + "[relay-options.md](relay-options.md) under `relay.`, less the ones each task sets itself; the "
                + "store's settings follow as `store.<setting>`, as in [store-options.md](store-options.md).\n\n");
        SettingsHelp.table(s, OutboxConnectorConfig.configDef().configKeys().values(), null, key -> null);
        return s.toString();
    }
}
