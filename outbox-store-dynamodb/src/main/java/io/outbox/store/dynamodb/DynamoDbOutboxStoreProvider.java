package io.outbox.store.dynamodb;

import com.google.auto.service.AutoService;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.CloseableOutboxStore;
import io.outbox.spi.OutboxStoreProvider;
import io.outbox.spi.support.OutboxStoreConfig;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.types.Password;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.retry.RetryMode;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClientBuilder;

/**
 * Provider of {@link DynamoDbOutboxStore} under the name {@value #NAME}. Each {@link #create} builds
 * its own {@link DynamoDbClient} (URL-connection HTTP client, the retry strategy below) that the
 * store owns and closes.
 *
 * <table>
 *   <caption>Settings</caption>
 *   <tr><th>key</th><th>type</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@value #ENDPOINT}</td><td>string</td><td>none</td><td>endpoint URL, for an emulator or a
 *       VPC endpoint; none means the region's public endpoint</td></tr>
 *   <tr><td>{@value #REGION}</td><td>string</td><td>none</td><td>AWS region; none means the SDK's default
 *       region chain ({@code AWS_REGION}, profile, instance metadata)</td></tr>
 *   <tr><td>{@value #MESSAGES_TABLE}</td><td>string</td><td>{@code outbox_messages}</td><td>messages table</td></tr>
 *   <tr><td>{@value #COORDINATION_TABLE}</td><td>string</td><td>{@code outbox_coordination}</td>
 *       <td>coordination table</td></tr>
 *   <tr><td>{@value #CREATE_TABLES}</td><td>boolean</td><td>false</td><td>create missing tables at
 *       start-up and wait until ACTIVE; when false, check at start-up that they exist</td></tr>
 *   <tr><td>{@value #ACCESS_KEY_ID}</td><td>string</td><td>none</td><td>static credentials, with the
 *       secret; none means the SDK's default credentials chain</td></tr>
 *   <tr><td>{@value #SECRET_ACCESS_KEY}</td><td>password</td><td>none</td><td>the secret of the access
 *       key; never logged</td></tr>
 *   <tr><td>{@value #RETRY_MODE}</td><td>string</td><td>{@code standard}</td><td>{@code standard} or
 *       {@code adaptive} (client-side rate limiting under throttling)</td></tr>
 *   <tr><td>{@value #RETRY_MAX_ATTEMPTS}</td><td>int</td><td>10</td><td>attempts per call, the first
 *       included, for throttling, 5xx and network errors</td></tr>
 * </table>
 */
@AutoService(OutboxStoreProvider.class)
public final class DynamoDbOutboxStoreProvider implements OutboxStoreProvider {

    /** The provider name. */
    public static final String NAME = "dynamodb";

    /** Setting: endpoint URL override. */
    public static final String ENDPOINT = "endpoint";
    /** Setting: AWS region. */
    public static final String REGION = "region";
    /** Setting: messages table name. */
    public static final String MESSAGES_TABLE = "messages.table";
    /** Setting: coordination table name. */
    public static final String COORDINATION_TABLE = "coordination.table";
    /** Setting: create the tables at start-up. */
    public static final String CREATE_TABLES = "create.tables";
    /** Setting: static access key id. */
    public static final String ACCESS_KEY_ID = "access.key.id";
    /** Setting: static secret access key (a password: never logged). */
    public static final String SECRET_ACCESS_KEY = "secret.access.key";
    /** Setting: the SDK retry mode. */
    public static final String RETRY_MODE = "retry.mode";
    /** Setting: attempts per call. */
    public static final String RETRY_MAX_ATTEMPTS = "retry.max.attempts";

    /** Default of {@value #RETRY_MAX_ATTEMPTS}. */
    public static final int DEFAULT_RETRY_MAX_ATTEMPTS = 10;

    private static final ConfigDef CONFIG = new ConfigDef()
            .define(ENDPOINT, ConfigDef.Type.STRING, null, DynamoDbOutboxStoreProvider::validateEndpoint,
                    ConfigDef.Importance.MEDIUM, "DynamoDB endpoint URL, http:// or https:// with a host (an "
                            + "emulator, a VPC endpoint); unset for the region's public endpoint.")
            .define(REGION, ConfigDef.Type.STRING, null, ConfigDef.Importance.HIGH,
                    "AWS region, for example eu-west-1; unset for the SDK's default region chain.")
            .define(MESSAGES_TABLE, ConfigDef.Type.STRING, DynamoDbOutboxOptions.DEFAULT_MESSAGES_TABLE,
                    DynamoDbOutboxStoreProvider::validateTable, ConfigDef.Importance.HIGH,
                    "Name of the messages table: 3 to 255 characters of [a-zA-Z0-9_.-].")
            .define(COORDINATION_TABLE, ConfigDef.Type.STRING, DynamoDbOutboxOptions.DEFAULT_COORDINATION_TABLE,
                    DynamoDbOutboxStoreProvider::validateTable, ConfigDef.Importance.HIGH,
                    "Name of the coordination table (leases, heartbeats, counters): 3 to 255 characters of "
                            + "[a-zA-Z0-9_.-], not the messages table's.")
            .define(CREATE_TABLES, ConfigDef.Type.BOOLEAN, false, ConfigDef.Importance.LOW,
                    "Create missing tables (on-demand billing) at start-up and wait until they are ACTIVE. "
                            + "When false, check that they exist and fail naming those that do not.")
            .define(ACCESS_KEY_ID, ConfigDef.Type.STRING, null, ConfigDef.Importance.MEDIUM,
                    "Static access key id; unset for the SDK's default credentials chain.")
            .define(SECRET_ACCESS_KEY, ConfigDef.Type.PASSWORD, null, ConfigDef.Importance.MEDIUM,
                    "Secret of the static access key; required with " + ACCESS_KEY_ID + ".")
            .define(RETRY_MODE, ConfigDef.Type.STRING, "standard",
                    ConfigDef.CaseInsensitiveValidString.in("standard", "adaptive"), ConfigDef.Importance.LOW,
                    "SDK retry mode: standard, or adaptive to also rate-limit the client under throttling.")
            .define(RETRY_MAX_ATTEMPTS, ConfigDef.Type.INT, DEFAULT_RETRY_MAX_ATTEMPTS, ConfigDef.Range.atLeast(1),
                    ConfigDef.Importance.LOW, "Attempts per DynamoDB call, the first included, for throttling,"
                            + " 5xx and network errors.");

    /** Creates the provider; called by {@link java.util.ServiceLoader}. */
    public DynamoDbOutboxStoreProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    /** {@inheritDoc} */
    @Override
    public Set<String> schemaChangingSettings() {
        return Set.of(CREATE_TABLES);
    }

    @Override
    public ConfigDef configDef() {
        return CONFIG;
    }

    /**
     * Validates the settings as {@link #create(Map)} does, without connecting: each setting
     * (the endpoint an http or https URL, each table name DynamoDB's rule), two different table
     * names, and an access key given with its secret or neither. {@link #create(Map)} runs exactly
     * these checks first. With {@value #REGION} set, it also builds the client and closes it, as
     * {@link #create(Map)} builds it (no request is sent), so a region the SDK cannot use
     * ({@code not a region}) is refused here too; without it, the SDK finds the region at start
     * (its default chain may ask the instance metadata service), so that is not checked.
     *
     * @param config the settings; not null
     * @throws OutboxMisconfigurationException naming the bad setting, never the secret
     */
    @Override
    public void validate(Map<String, String> config) {
        OutboxStoreConfig parsed = settings(config);
        String region = parsed.getString(REGION);
        if (region != null && !region.isBlank()) {
            buildClient(parsed).close();
        }
    }

    /** The parsed settings, after every check that needs no client. */
    private static OutboxStoreConfig settings(Map<String, String> config) {
        OutboxStoreConfig parsed = OutboxStoreConfig.parse(NAME, CONFIG, config);
        if (parsed.getString(MESSAGES_TABLE).equals(parsed.getString(COORDINATION_TABLE))) {
            throw new OutboxMisconfigurationException("invalid setting for the '" + NAME + "' outbox store: "
                    + MESSAGES_TABLE + " and " + COORDINATION_TABLE + " must differ but both are '"
                    + parsed.getString(MESSAGES_TABLE) + "'");
        }
        if ((parsed.getString(ACCESS_KEY_ID) == null) != (parsed.getPassword(SECRET_ACCESS_KEY) == null)) {
            throw new OutboxMisconfigurationException("the '" + NAME + "' outbox store needs both " + ACCESS_KEY_ID
                    + " and " + SECRET_ACCESS_KEY + ", or neither (for the SDK's default credentials chain)");
        }
        return parsed;
    }

    /** Checks a table name setting with the other settings, so a check without connecting refuses it too. */
    private static void validateTable(String name, Object value) {
        try {
            DynamoDbOutboxOptions.requireTableName(name, (String) value);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new ConfigException(name, value, "a DynamoDB table name is 3 to 255 characters of [a-zA-Z0-9_.-]");
        }
    }

    @Override
    public CloseableOutboxStore create(Map<String, String> config) {
        OutboxStoreConfig parsed = settings(config);
        DynamoDbClient client = buildClient(parsed);
        DynamoDbOutboxStore store;
        try {
            store = DynamoDbOutboxStore.builder(client)
                    .messagesTable(parsed.getString(MESSAGES_TABLE))
                    .coordinationTable(parsed.getString(COORDINATION_TABLE))
                    .closeClient(true)
                    .build();
        } catch (IllegalArgumentException e) {
            client.close();
            throw new OutboxMisconfigurationException("invalid setting for the '" + NAME + "' outbox store: "
                    + e.getMessage(), e);
        }
        try {
            if (parsed.getBoolean(CREATE_TABLES)) {
                store.createSchema();
            } else {
                store.verifySchema();
            }
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
        return store;
    }

    /**
     * Builds the client the settings describe.
     *
     * @param config parsed settings
     * @param interceptors execution interceptors to add (tests count attempts with one)
     * @return a new client; the caller closes it
     * @throws OutboxMisconfigurationException on an unusable endpoint, region or credentials setting
     */
    static DynamoDbClient buildClient(OutboxStoreConfig config, ExecutionInterceptor... interceptors) {
        DynamoDbClientBuilder builder = DynamoDbClient.builder()
                .httpClientBuilder(UrlConnectionHttpClient.builder());
        String endpoint = config.getString(ENDPOINT);
        if (endpoint != null && !endpoint.isBlank()) {
            builder.endpointOverride(endpointUri(endpoint));
        }
        String region = config.getString(REGION);
        if (region != null && !region.isBlank()) {
            builder.region(Region.of(region.trim()));
        }
        String accessKey = config.getString(ACCESS_KEY_ID);
        Password secret = config.getPassword(SECRET_ACCESS_KEY);
        if ((accessKey == null) != (secret == null)) {
            throw new OutboxMisconfigurationException("the '" + NAME + "' outbox store needs both " + ACCESS_KEY_ID
                    + " and " + SECRET_ACCESS_KEY + ", or neither (for the SDK's default credentials chain)");
        }
        if (accessKey != null) {
            builder.credentialsProvider(StaticCredentialsProvider.create(
                    AwsBasicCredentials.create(accessKey, secret.value())));
        }
        RetryMode mode = "adaptive".equals(config.getString(RETRY_MODE).toLowerCase(Locale.ROOT))
                ? RetryMode.ADAPTIVE_V2 : RetryMode.STANDARD;
        int attempts = config.getInt(RETRY_MAX_ATTEMPTS);
        builder.overrideConfiguration(o -> o.retryStrategy(mode).retryStrategy(b -> b.maxAttempts(attempts))
                .executionInterceptors(List.of(interceptors)));
        try {
            return builder.build();
        } catch (SdkClientException e) {
            if (region != null && !region.isBlank()) {
                throw new OutboxMisconfigurationException("invalid setting for the '" + NAME + "' outbox store: "
                        + "Invalid value for configuration " + REGION + ": the SDK cannot build a DynamoDB client "
                        + "with it: " + e.getMessage(), e);
            }
            throw new OutboxMisconfigurationException("the '" + NAME + "' outbox store cannot build its DynamoDB"
                    + " client (set " + REGION + " if no default region is configured): " + e.getMessage(), e);
        }
    }

    /** Checks {@value #ENDPOINT} with the other settings, so a check without connecting refuses it too. */
    private static void validateEndpoint(String name, Object value) {
        if (value != null && !((String) value).isEmpty()) {
            try {
                endpointUri((String) value);
            } catch (OutboxMisconfigurationException e) {
                throw new ConfigException(name, value, "not an http:// or https:// URL with a host, such as "
                        + "http://127.0.0.1:8000");
            }
        }
    }

    private static URI endpointUri(String endpoint) {
        try {
            URI uri = new URI(endpoint);
            String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
            if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null) {
                throw new URISyntaxException(endpoint, "expected an http:// or https:// URL such as "
                        + "http://127.0.0.1:8000");
            }
            return uri;
        } catch (URISyntaxException e) {
            throw new OutboxMisconfigurationException("invalid setting " + ENDPOINT + "='" + endpoint + "' for the '"
                    + NAME + "' outbox store: " + e.getMessage(), e);
        }
    }
}
