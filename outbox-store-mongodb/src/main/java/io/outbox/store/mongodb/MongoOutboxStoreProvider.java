package io.outbox.store.mongodb;

import com.google.auto.service.AutoService;
import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.CloseableOutboxStore;
import io.outbox.spi.OutboxStoreProvider;
import io.outbox.spi.support.OutboxStoreConfig;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.types.Password;

/**
 * Provider of {@link MongoOutboxStore} under the name {@value #NAME}, found by
 * {@link io.outbox.spi.OutboxStores#open(String, Map)}. Each call to {@link #create(Map)} opens a
 * new {@code MongoClient} that the returned store owns and closes when it is closed. The store
 * uses the system UTC clock.
 *
 * <table>
 *   <caption>Settings</caption>
 *   <tr><th>key</th><th>type</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@value #CONNECTION_STRING}</td><td>password</td><td>(required)</td>
 *       <td>the MongoDB connection string; may hold credentials and is never logged or echoed</td></tr>
 *   <tr><td>{@value #DATABASE}</td><td>string</td><td>the connection string's database</td>
 *       <td>the database of the outbox collections</td></tr>
 *   <tr><td>{@value #COLLECTION_PREFIX}</td><td>string</td>
 *       <td>{@value MongoOutboxOptions#DEFAULT_COLLECTION_PREFIX}</td>
 *       <td>prefix of the four collection names; not empty (in code,
 *       {@code MongoOutboxStore.Builder#collectionPrefix} still takes "")</td></tr>
 *   <tr><td>{@value #CREATE_INDEXES}</td><td>boolean</td><td>true</td>
 *       <td>create the unique {@code (bucket, seq)} index on start, idempotently; when false,
 *       check on start that it exists</td></tr>
 * </table>
 * Unknown keys are refused. A connection string that can never work (it does not parse: a port
 * that is not a number, an unknown scheme) is an {@link OutboxMisconfigurationException}, checked
 * with the other settings before anything connects; a server that is unreachable is an ordinary
 * exception the relay retries. Thread-safe.
 */
@AutoService(OutboxStoreProvider.class)
public final class MongoOutboxStoreProvider implements OutboxStoreProvider {

    /** The provider name. */
    public static final String NAME = "mongodb";

    /** Setting: the MongoDB connection string (type password: it may hold credentials). Required. */
    public static final String CONNECTION_STRING = "connection.string";

    /** Setting: the database name. Defaults to the database in the connection string's path. */
    public static final String DATABASE = "database";

    /** Setting: the collection name prefix. */
    public static final String COLLECTION_PREFIX = "collection.prefix";

    /** Setting: whether to create the index on start. */
    public static final String CREATE_INDEXES = "create.indexes";

    private static final ConfigDef CONFIG = new ConfigDef()
            .define(CONNECTION_STRING, ConfigDef.Type.PASSWORD, ConfigDef.NO_DEFAULT_VALUE,
                    MongoOutboxStoreProvider::validateConnectionString, ConfigDef.Importance.HIGH,
                    "The MongoDB connection string, for example mongodb://host1,host2/orders?replicaSet=rs0. "
                            + "It may hold credentials; it is never logged, and a malformed one is reported without "
                            + "its value. Put driver options such as timeoutMS, "
                            + "tls or authSource here.")
            .define(DATABASE, ConfigDef.Type.STRING, null, MongoOutboxStoreProvider::validateDatabase,
                    ConfigDef.Importance.HIGH,
                    "The database holding the outbox collections. Defaults to the database named in the "
                            + "connection string's path; one of the two is required.")
            .define(COLLECTION_PREFIX, ConfigDef.Type.STRING, MongoOutboxOptions.DEFAULT_COLLECTION_PREFIX,
                    MongoOutboxStoreProvider::validatePrefix, ConfigDef.Importance.MEDIUM,
                    "Prefix of the collection names <prefix>messages, <prefix>sequences, <prefix>leases and "
                            + "<prefix>relays. 1 to 64 characters of [A-Za-z0-9_.-].")
            .define(CREATE_INDEXES, ConfigDef.Type.BOOLEAN, true, ConfigDef.Importance.LOW,
                    "Whether to create the unique index " + MongoOutboxStore.MESSAGES_INDEX + " on (bucket, seq) "
                            + "of the messages collection on start (idempotent). Turn off when indexes are managed "
                            + "elsewhere: the store then checks that the index exists and fails naming it if not.");

    /** Creates the provider; called by {@link java.util.ServiceLoader}. */
    public MongoOutboxStoreProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    /** {@inheritDoc} */
    @Override
    public Set<String> schemaChangingSettings() {
        return Set.of(CREATE_INDEXES);
    }

    @Override
    public ConfigDef configDef() {
        return CONFIG;
    }

    /**
     * Opens a store that owns a new {@code MongoClient}.
     *
     * @param config the settings (see the class documentation); not null
     * @return a new store; close it to close its client
     * @throws OutboxMisconfigurationException if a setting is unknown, missing or invalid (a bad
     *     connection string is reported without its value or the driver's message, which could
     *     echo a password), or, without {@value #CREATE_INDEXES}, the unique index on
     *     {@code (bucket, seq)} is absent ({@link MongoOutboxStore#verifySchema()})
     * @throws com.mongodb.MongoException if the index cannot be created (the server is
     *     unreachable within the driver's server selection timeout, say)
     */
    @Override
    public CloseableOutboxStore create(Map<String, String> config) {
        OutboxStoreConfig parsed = OutboxStoreConfig.parse(NAME, CONFIG, config);
        ConnectionString connectionString = connectionString(parsed.getPassword(CONNECTION_STRING).value());
        String database = database(parsed, connectionString);
        MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(connectionString)
                .build());
        MongoOutboxStore store;
        try {
            store = MongoOutboxStore.builder(client)
                    .database(database)
                    .collectionPrefix(parsed.getString(COLLECTION_PREFIX))
                    .closeClient(true)
                    .build();
        } catch (IllegalArgumentException e) {
            client.close();
            throw new OutboxMisconfigurationException("invalid setting for the '" + NAME + "' outbox store: "
                    + e.getMessage(), e);
        }
        try {
            if (parsed.getBoolean(CREATE_INDEXES)) {
                store.createSchema();
            } else {
                store.verifySchema();
            }
            return store;
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
    }

    /**
     * Validates the settings as {@link #create(Map)} does, without connecting: each setting (the
     * connection string parsed), and a database named by {@value #DATABASE} or the connection string.
     *
     * @param config the settings; not null
     * @throws OutboxMisconfigurationException naming the bad setting, never the connection string
     */
    @Override
    public void validate(Map<String, String> config) {
        OutboxStoreConfig parsed = OutboxStoreConfig.parse(NAME, CONFIG, config);
        database(parsed, connectionString(parsed.getPassword(CONNECTION_STRING).value()));
    }

    private static String database(OutboxStoreConfig parsed, ConnectionString connectionString) {
        String database = parsed.getString(DATABASE);
        if (database != null) {
            return database; // checked by its validator
        }
        database = connectionString.getDatabase();
        if (database == null) {
            throw new OutboxMisconfigurationException("the '" + NAME + "' outbox store needs a database: set '"
                    + DATABASE + "' or name one in the connection string's path (mongodb://host/DATABASE)");
        }
        try {
            // The same rule as the setting, so a check refuses what a start would (the name is no secret).
            return MongoOutboxOptions.requireDatabaseName(database);
        } catch (IllegalArgumentException e) {
            throw new OutboxMisconfigurationException("invalid setting for the '" + NAME + "' outbox store: the "
                    + "database in " + CONNECTION_STRING + "'s path: " + e.getMessage() + "; set '" + DATABASE
                    + "' to override it", e);
        }
    }

    /** Parses the connection string without ever echoing it: it may hold a password. */
    private static ConnectionString connectionString(String value) {
        try {
            return new ConnectionString(value);
        } catch (IllegalArgumentException e) {
            // Neither the value nor the driver's message (which can quote parts of it) is shown.
            throw new OutboxMisconfigurationException("invalid setting for the '" + NAME + "' outbox store: '"
                    + CONNECTION_STRING + "' is not a valid MongoDB connection string (value hidden). Check that it "
                    + "starts with mongodb:// or mongodb+srv://, names at least one host, and that the user name "
                    + "and password are URL-encoded.");
        }
    }

    private static void validateDatabase(String name, Object value) {
        if (value != null) {
            try {
                MongoOutboxOptions.requireDatabaseName((String) value);
            } catch (IllegalArgumentException e) {
                throw new ConfigException(name, value, e.getMessage());
            }
        }
    }

    /**
     * Parses the connection string as a start would, so a configuration check without connecting
     * refuses what a start refuses (a port that is not a number, an unknown scheme). The error
     * never shows the value.
     */
    private static void validateConnectionString(String name, Object value) {
        if (value instanceof Password password) {
            try {
                connectionString(password.value());
            } catch (OutboxMisconfigurationException e) {
                throw new ConfigException(name, value, "not a valid MongoDB connection string (value hidden): check "
                        + "that it starts with mongodb:// or mongodb+srv://, names at least one host with a numeric "
                        + "port, and that the user name and password are URL-encoded");
            }
        }
    }

    private static void validatePrefix(String name, Object value) {
        if ("".equals(value)) {
            // Collections named messages, leases, relays would sit among the application's own.
            throw new ConfigException(name, value, "must not be empty: leave it unset for the default '"
                    + MongoOutboxOptions.DEFAULT_COLLECTION_PREFIX + "'");
        }
        try {
            MongoOutboxOptions.requireCollectionPrefix((String) value);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new ConfigException(name, value, e.getMessage());
        }
    }
}
