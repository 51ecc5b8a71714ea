package io.outbox.demo;

import com.mongodb.ConnectionString;
import io.outbox.relay.internal.Redactor;
import io.outbox.store.jdbc.JdbcDialect;
import java.net.URI;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine;

/** Which store the orders and the outbox live in, and how to reach it: the options both commands share. */
final class StoreOptions {

    /**
     * The JDBC URL prefixes the demo runs on: those whose SQL dialect the JDBC store knows and
     * whose driver the demo bundles (MariaDB Connector/J talks to MySQL too, as jdbc:mariadb:).
     */
    static final List<String> JDBC_URL_PREFIXES = List.of("jdbc:h2:", "jdbc:postgresql:", "jdbc:mariadb:");

    @Option(names = "--store", paramLabel = "STORE", converter = StoreKind.Converter.class,
            completionCandidates = StoreKind.Names.class,
            description = "Where orders and outbox messages live: ${COMPLETION-CANDIDATES}. "
                    + "Default: the store whose connection option is given, else jdbc on an embedded H2 database.")
    StoreKind store;

    @Option(names = "--jdbc-url", paramLabel = "URL",
            description = "JDBC URL of PostgreSQL, MariaDB/MySQL or H2, starting with jdbc:h2:, jdbc:postgresql: "
                    + "or jdbc:mariadb: (for MySQL too), e.g. jdbc:postgresql://127.0.0.1:5432/test. "
                    + "Default: an in-memory H2 database in this process.")
    String jdbcUrl;

    @Option(names = "--jdbc-user", paramLabel = "USER", description = "Database user.")
    String jdbcUser;

    @Option(names = "--jdbc-password", paramLabel = "PASSWORD", description = "Database password.")
    String jdbcPassword;

    @Option(names = "--mongodb-uri", paramLabel = "URI",
            description = "MongoDB connection string of a replica set (transactions need one), "
                    + "e.g. mongodb://127.0.0.1:27017/?replicaSet=rs0.")
    String mongodbUri;

    @Option(names = "--mongodb-database", paramLabel = "NAME",
            description = "Database of the run's collections. Default: the connection string's, else "
                    + MongoDemoDatabase.DEFAULT_DATABASE + ".")
    String mongodbDatabase;

    @Option(names = "--dynamodb-endpoint", paramLabel = "URL",
            description = "DynamoDB endpoint, e.g. http://127.0.0.1:8000 for an emulator (dynoxide); without it, "
                    + "AWS with the SDK's default region and credentials. With an endpoint and no "
                    + "AWS_ACCESS_KEY_ID in the environment, dummy credentials are used.")
    String dynamodbEndpoint;

    @Option(names = "--dynamodb-region", paramLabel = "REGION",
            description = "AWS region. Default: " + DynamoDbDemoDatabase.DEFAULT_EMULATOR_REGION
                    + " with --dynamodb-endpoint, else the SDK's default.")
    String dynamodbRegion;

    @Option(names = "--keep",
            description = "Keep the run's tables (or collections) and topic instead of dropping them at the end.")
    boolean keep;

    /**
     * Checks the options together and decides the store.
     *
     * @throws ParameterException naming the offending option and value
     */
    StoreKind resolve(CommandLine commandLine) {
        Map<StoreKind, List<String>> given = new LinkedHashMap<>();
        note(given, StoreKind.JDBC, "--jdbc-url", jdbcUrl);
        note(given, StoreKind.JDBC, "--jdbc-user", jdbcUser);
        note(given, StoreKind.JDBC, "--jdbc-password", jdbcPassword);
        note(given, StoreKind.MONGODB, "--mongodb-uri", mongodbUri);
        note(given, StoreKind.MONGODB, "--mongodb-database", mongodbDatabase);
        note(given, StoreKind.DYNAMODB, "--dynamodb-endpoint", dynamodbEndpoint);
        note(given, StoreKind.DYNAMODB, "--dynamodb-region", dynamodbRegion);
        StoreKind kind = store;
        if (kind == null) {
            if (given.size() > 1) {
                List<String> options = new ArrayList<>();
                given.values().forEach(options::addAll);
                throw new ParameterException(commandLine, "options of several stores given (" + String.join(", ",
                        options) + "); choose one store with --store");
            }
            kind = given.isEmpty() ? StoreKind.JDBC : given.keySet().iterator().next();
        }
        for (Map.Entry<StoreKind, List<String>> e : given.entrySet()) {
            if (e.getKey() != kind) {
                throw new ParameterException(commandLine, e.getValue().get(0) + " is only used with --store "
                        + e.getKey().cliName() + ", not with --store " + kind.cliName());
            }
        }
        switch (kind) {
            case JDBC -> checkJdbcUrl(commandLine);
            case MONGODB -> checkMongodbUri(commandLine);
            case DYNAMODB -> checkDynamodbEndpoint(commandLine);
            default -> throw new IllegalStateException("unknown store " + kind);
        }
        return kind;
    }

    private static void note(Map<StoreKind, List<String>> given, StoreKind kind, String option, String value) {
        if (value != null) {
            given.computeIfAbsent(kind, k -> new ArrayList<>()).add(option);
        }
    }

    private void checkJdbcUrl(CommandLine commandLine) {
        if (jdbcUrl == null) {
            return;
        }
        boolean supported;
        try {
            JdbcDialect.forUrl(jdbcUrl);
            DriverManager.getDriver(jdbcUrl);
            supported = true;
        } catch (IllegalArgumentException | SQLException noDialectOrDriver) {
            supported = false;
        }
        if (!supported) {
            throw new ParameterException(commandLine, "--jdbc-url '" + redactor().redact(jdbcUrl)
                    + "' is not supported: the demo runs on JDBC URLs starting with "
                    + String.join(", ", JDBC_URL_PREFIXES) + " (for MySQL, use jdbc:mariadb:)");
        }
    }

    /** A redactor that hides the password and every secret inside the connection options given. */
    Redactor redactor() {
        return redactor(jdbcPassword, jdbcUrl, mongodbUri, dynamodbEndpoint);
    }

    /**
     * A redactor for what a command prints, from the values its store options hold now (parsed or
     * partly parsed); one that knows no secrets when the command has no store options.
     *
     * @param spec the command whose options to read
     */
    static Redactor redactor(CommandSpec spec) {
        return redactor(value(spec, "--jdbc-password"), value(spec, "--jdbc-url"), value(spec, "--mongodb-uri"),
                value(spec, "--dynamodb-endpoint"));
    }

    /**
     * A redactor that hides a password and the secrets inside URLs (a URL's password, a
     * {@code password=} parameter), and whatever else its patterns recognize.
     *
     * @param password the password, or null
     * @param urls the URLs; null ones are skipped
     */
    static Redactor redactor(String password, String... urls) {
        Set<String> secrets = new LinkedHashSet<>();
        secrets.add(password);
        for (String url : urls) {
            secrets.addAll(Redactor.embeddedSecrets(url));
        }
        return Redactor.of(secrets);
    }

    private static String value(CommandSpec spec, String name) {
        OptionSpec option = spec.findOption(name);
        return option != null && option.getValue() instanceof String text ? text : null;
    }

    private void checkMongodbUri(CommandLine commandLine) {
        if (mongodbUri == null) {
            throw new ParameterException(commandLine, "--store mongodb needs --mongodb-uri, the connection string of a "
                    + "replica set (transactions need one), e.g. mongodb://127.0.0.1:27017/?replicaSet=rs0");
        }
        try {
            new ConnectionString(mongodbUri);
        } catch (IllegalArgumentException e) {
            // The driver's message, not the value: a connection string may hold a password.
            throw new ParameterException(commandLine, "--mongodb-uri is not a MongoDB connection string: "
                    + e.getMessage());
        }
    }

    private void checkDynamodbEndpoint(CommandLine commandLine) {
        if (dynamodbEndpoint == null) {
            return;
        }
        URI uri;
        try {
            uri = URI.create(dynamodbEndpoint.trim());
        } catch (IllegalArgumentException e) {
            uri = null;
        }
        if (uri == null || uri.getScheme() == null || uri.getHost() == null) {
            throw new ParameterException(commandLine, "--dynamodb-endpoint '" + redactor().redact(dynamodbEndpoint)
                    + "' is not a URL such as http://127.0.0.1:8000");
        }
    }

    /**
     * Opens the run's database; call {@link #resolve} first.
     *
     * @param runId the run id, part of every table name
     * @param connections how many writers will use it at once
     */
    DemoDatabase open(StoreKind kind, String runId, int connections) {
        String prefix = "demo_" + runId + "_";
        return switch (kind) {
            case JDBC -> jdbcUrl == null
                    ? new JdbcDemoDatabase("jdbc:h2:mem:outbox_demo_" + runId + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000"
                            // closed by the run (also on Ctrl-C, from its shutdown hook), not by H2's own hook
                            + ";DB_CLOSE_ON_EXIT=FALSE",
                            "sa", "", true, prefix, connections)
                    : new JdbcDemoDatabase(jdbcUrl, jdbcUser, jdbcPassword, false, prefix, connections);
            case MONGODB -> new MongoDemoDatabase(mongodbUri, mongodbDatabase, prefix);
            case DYNAMODB -> new DynamoDbDemoDatabase(dynamodbEndpoint == null ? null : dynamodbEndpoint.trim(),
                    dynamodbRegion, prefix);
        };
    }
}
