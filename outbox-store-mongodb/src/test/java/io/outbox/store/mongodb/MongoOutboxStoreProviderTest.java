package io.outbox.store.mongodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.OutboxStores;
import io.outbox.spi.support.OutboxStoreConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.config.ConfigDef;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Provider settings, their validation, secrecy of the connection string and client ownership. */
class MongoOutboxStoreProviderTest {

    private static final String PASSWORD = "s3cr3t-Pa55";

    private String connectionString;

    @BeforeEach
    void locateServer() {
        connectionString = InProcessMongo.connectionString();
    }

    private static OutboxStore open(Map<String, String> config) {
        return OutboxStores.open(MongoOutboxStoreProvider.NAME, config);
    }

    private static List<String> messagesOf(Throwable thrown) {
        List<String> messages = new ArrayList<>();
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            messages.add(String.valueOf(t.getMessage()));
            messages.add(t.toString());
        }
        return messages;
    }

    @Test
    void discovery_theProviderIsFoundByName() {
        assertThat(OutboxStores.provider("mongodb")).isInstanceOf(MongoOutboxStoreProvider.class);
    }

    @Test
    void aStoreFromTheProviderUsesTheSettingsAndClosesItsOwnClient() {
        // The index, which a store without create.indexes requires, made by one with it.
        ((MongoOutboxStore) open(Map.of("connection.string", connectionString, "database", "provided",
                "collection.prefix", "app1_"))).close();
        MongoOutboxStore store = (MongoOutboxStore) open(Map.of("connection.string", connectionString,
                "database", "provided", "collection.prefix", "app1_", "create.indexes", "false"));
        assertThat(store.options().database()).isEqualTo("provided");
        assertThat(store.options().messagesCollection()).isEqualTo("app1_messages");
        assertThat(store.bucketsWithPending(List.of(0, 1))).isEmpty();
        store.close();
        assertThatThrownBy(() -> store.bucketsWithPending(List.of(0))).as("its client is closed")
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void R6_withoutCreateIndexesAnAbsentIndexIsRefusedNamingItAndTheSetting() {
        String prefix = "ix" + UUID.randomUUID().toString().replace("-", "").substring(0, 10) + "_";
        Map<String, String> settings = Map.of("connection.string", connectionString, "database", "provided",
                "collection.prefix", prefix, "create.indexes", "false");
        assertThatThrownBy(() -> open(settings))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("provided." + prefix + "messages")
                .hasMessageContaining("unique index on exactly {bucket: 1, seq: 1}")
                .hasMessageContaining("create.indexes=true");
        try (MongoOutboxStore created = (MongoOutboxStore) open(Map.of("connection.string", connectionString,
                "database", "provided", "collection.prefix", prefix))) {
            created.verifySchema(); // the index exists now
        }
        try (MongoOutboxStore verified = (MongoOutboxStore) open(settings)) {
            assertThat(verified.bucketsWithPending(List.of(0))).isEmpty();
        }
    }

    @Test
    void theDatabaseDefaultsToTheOneInTheConnectionString() {
        try (MongoOutboxStore store = (MongoOutboxStore) open(Map.of("connection.string",
                connectionString + "/fromuri"))) {
            assertThat(store.options().database()).isEqualTo("fromuri");
            assertThat(store.options().collectionPrefix()).isEqualTo(MongoOutboxOptions.DEFAULT_COLLECTION_PREFIX);
            store.verifySchema(); // created on start
        }
    }

    @Test
    void withoutAnyDatabaseTheErrorNamesTheSetting() {
        assertThatThrownBy(() -> open(Map.of("connection.string", connectionString)))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("'database'");
    }

    @Test
    void theConnectionStringIsRequired() {
        assertThatThrownBy(() -> open(Map.of("database", "db")))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("connection.string");
    }

    @Test
    void unknownSettingsAreRefused() {
        assertThatThrownBy(() -> open(Map.of("connection.string", connectionString, "database", "db",
                "colection.prefix", "x_")))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("colection.prefix");
    }

    @Test
    void anInvalidPrefixOrDatabaseNamesTheSetting() {
        assertThatThrownBy(() -> open(Map.of("connection.string", connectionString, "database", "db",
                "collection.prefix", "bad prefix")))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("collection.prefix");
        assertThatThrownBy(() -> open(Map.of("connection.string", connectionString, "database", "a.b")))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("database");
    }

    @Test
    void aBadConnectionStringIsReportedWithoutItsValue() {
        for (String bad : List.of("mongodb://user:" + PASSWORD + "@host:notaport/db",
                "mongodb://user:" + PASSWORD + "@@host/db", "http://user:" + PASSWORD + "@host/db",
                "mongodb://user:" + PASSWORD + "%zz@host/db")) {
            Throwable thrown = catchThrowable(() -> open(Map.of("connection.string", bad, "database", "db")));
            assertThat(thrown).isInstanceOf(OutboxMisconfigurationException.class)
                    .hasMessageContaining("connection.string");
            assertThat(messagesOf(thrown)).as("nothing of %s leaks", bad).noneMatch(m -> m.contains(PASSWORD));
        }
    }

    @Test
    void theConnectionStringIsAPasswordSettingAndHiddenWhenPrinted() {
        ConfigDef definition = new MongoOutboxStoreProvider().configDef();
        assertThat(definition.configKeys().get("connection.string").type).isEqualTo(ConfigDef.Type.PASSWORD);
        OutboxStoreConfig parsed = OutboxStoreConfig.parse("mongodb", definition,
                Map.of("connection.string", "mongodb://u:" + PASSWORD + "@h/db"));
        assertThat(parsed.toString()).doesNotContain(PASSWORD);
    }

    @Test
    void R6_aMalformedConnectionStringIsRefusedByTheSettingsCheckWithoutConnecting() {
        ConfigDef definition = new MongoOutboxStoreProvider().configDef();
        for (String bad : List.of("mongodb://u:" + PASSWORD + "@127.0.0.1:notaport/db", "mongo://127.0.0.1/db")) {
            Throwable thrown = catchThrowable(() -> OutboxStoreConfig.parse("mongodb", definition,
                    Map.of("connection.string", bad)));
            assertThat(thrown).isInstanceOf(OutboxMisconfigurationException.class)
                    .hasMessageContaining("connection.string").hasMessageContaining("value hidden");
            assertThat(messagesOf(thrown)).as("nothing of %s leaks", bad).noneMatch(m -> m.contains(PASSWORD));
        }
    }

    @Test
    void identifiersAreTakenAsWrittenAndAnEmptyPrefixIsRefused() {
        assertThatThrownBy(() -> open(Map.of("connection.string", connectionString, "database", "db",
                "collection.prefix", "abc ")))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("collection.prefix='abc '");
        assertThatThrownBy(() -> open(Map.of("connection.string", connectionString, "database", "db\u0000")))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("database='db\\u0000'");
        assertThatThrownBy(() -> open(Map.of("connection.string", connectionString, "database", "db",
                "collection.prefix", "")))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("collection.prefix")
                .hasMessageContaining("must not be empty");
    }

    @Test
    void validateRefusesWhatCreateRefusesWithoutConnecting() {
        MongoOutboxStoreProvider provider = new MongoOutboxStoreProvider();
        Map<String, String> noDatabase = Map.of("connection.string", "mongodb://nowhere.invalid:27017");
        Throwable atCheck = catchThrowable(() -> provider.validate(noDatabase));
        Throwable atStart = catchThrowable(() -> provider.create(noDatabase));
        assertThat(atCheck).isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("database");
        assertThat(atCheck).hasMessage(atStart.getMessage());
        provider.validate(Map.of("connection.string", "mongodb://nowhere.invalid:27017/db"));
    }

    @Test
    void theDatabaseInTheConnectionStringsPathFollowsTheSettingsRuleAtCheckAndStart() {
        MongoOutboxStoreProvider provider = new MongoOutboxStoreProvider();
        for (String database : List.of("a$b", "d".repeat(64))) {
            Map<String, String> config = Map.of("connection.string", "mongodb://u:" + PASSWORD
                    + "@nowhere.invalid:27017/" + database);
            Throwable atCheck = catchThrowable(() -> provider.validate(config));
            assertThat(atCheck).as(database).isInstanceOf(OutboxMisconfigurationException.class)
                    .hasMessageContaining("connection.string's path").hasMessageContaining("'" + database + "'")
                    .hasMessageNotContaining(PASSWORD);
            assertThat(catchThrowable(() -> provider.create(config))).hasMessage(atCheck.getMessage());
            Throwable asSetting = catchThrowable(() -> provider.validate(Map.of("connection.string",
                    "mongodb://nowhere.invalid:27017", "database", database)));
            assertThat(asSetting).as("the same rule as the setting").isInstanceOf(OutboxMisconfigurationException.class);
        }
    }
}
