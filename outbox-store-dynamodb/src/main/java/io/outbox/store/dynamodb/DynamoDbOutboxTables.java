package io.outbox.store.dynamodb;

import io.outbox.spi.OutboxMisconfigurationException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;

/**
 * The two tables of a DynamoDB outbox, as {@link CreateTableRequest}s to copy into infrastructure
 * code; {@link DynamoDbOutboxStore#createSchema()} makes them from the application or a test, and
 * {@link DynamoDbOutboxStore#verifySchema()} checks them.
 *
 * <table>
 *   <caption>Tables (both on-demand billing, no indexes, no TTL: pending rows never expire, S9)</caption>
 *   <tr><th>table</th><th>partition key</th><th>sort key</th><th>other attributes</th></tr>
 *   <tr><td>messages</td><td>{@code bucket} (N)</td><td>{@code seq} (N)</td>
 *       <td>{@code id} S, {@code topic} S, {@code key} B, {@code value} B, {@code headers} B,
 *       {@code partition} N, {@code createdAt} N</td></tr>
 *   <tr><td>coordination</td><td>{@code pk} (S)</td><td>{@code sk} (S)</td>
 *       <td>leases and heartbeats under {@code pk = "fleet"}, sequence counters under
 *       {@code pk = "counter"}</td></tr>
 * </table>
 *
 * <p>Stateless and thread-safe.
 */
public final class DynamoDbOutboxTables {

    /**
     * Where the jar keeps the tables' definitions for infrastructure code: a CloudFormation
     * template ({@code outbox-tables.cloudformation.json}) and AWS CLI commands
     * ({@code create-tables.sh}), checked against these requests by a test.
     */
    public static final String DEFINITIONS = "db/outbox/dynamodb/";

    /** How long {@link DynamoDbOutboxStore#createSchema()} waits for each table to be ACTIVE. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(5);

    private DynamoDbOutboxTables() {
    }

    /**
     * The messages table: partition key {@code bucket} (N), sort key {@code seq} (N), on-demand.
     *
     * @param tableName the table name; not null
     * @return the request; send it with {@code DynamoDbClient.createTable}
     */
    public static CreateTableRequest messagesTableRequest(String tableName) {
        return request(tableName, MessageItems.BUCKET, ScalarAttributeType.N, MessageItems.SEQ, ScalarAttributeType.N);
    }

    /**
     * The coordination table: partition key {@code pk} (S), sort key {@code sk} (S), on-demand.
     *
     * @param tableName the table name; not null
     * @return the request; send it with {@code DynamoDbClient.createTable}
     */
    public static CreateTableRequest coordinationTableRequest(String tableName) {
        return request(tableName, CoordinationItems.PK, ScalarAttributeType.S, CoordinationItems.SK,
                ScalarAttributeType.S);
    }

    /**
     * Creates both tables unless they exist, and waits until both are ACTIVE, at most
     * {@link #DEFAULT_TIMEOUT}. Idempotent: safe to call from every instance at start-up.
     *
     * @param client the client; not null
     * @param options the table names; not null
     * @throws OutboxMisconfigurationException if a table exists with another key schema
     * @throws IllegalStateException if a table is not ACTIVE in time, or the thread is interrupted
     * @throws software.amazon.awssdk.core.exception.SdkException on a DynamoDB error
     */
    static void create(DynamoDbClient client, DynamoDbOutboxOptions options) {
        create(client, options, DEFAULT_TIMEOUT);
    }

    /**
     * Creates both tables unless they exist, and waits until both are ACTIVE.
     *
     * @param client the client; not null
     * @param options the table names; not null
     * @param timeout how long to wait for each table; not null, positive
     * @throws OutboxMisconfigurationException if a table exists with another key schema
     * @throws IllegalStateException if a table is not ACTIVE in time, or the thread is interrupted
     * @throws software.amazon.awssdk.core.exception.SdkException on a DynamoDB error
     */
    static void create(DynamoDbClient client, DynamoDbOutboxOptions options, Duration timeout) {
        Objects.requireNonNull(client, "client must not be null");
        Objects.requireNonNull(options, "options must not be null");
        Objects.requireNonNull(timeout, "timeout must not be null");
        createAndAwait(client, messagesTableRequest(options.messagesTable()), timeout);
        createAndAwait(client, coordinationTableRequest(options.coordinationTable()), timeout);
    }

    /**
     * Checks that both tables exist and have the outbox's key schema, so that a store on absent
     * tables fails at start-up instead of on each call. Per table it sends a {@code GetItem} of a
     * key no outbox item has, which DynamoDB refuses unless both keys have the outbox's names and
     * types, and a {@code Query} whose key condition puts an equality on the partition key and a
     * range on the sort key, as the store's own queries do, which it refuses unless the keys have
     * those roles. Both read nothing and need no permission beyond what the store uses anyway (no
     * {@code DescribeTable}). The tables need no secondary index: the store queries none. The
     * provider calls it when {@value DynamoDbOutboxStoreProvider#CREATE_TABLES} is off.
     *
     * @param client the client; not null
     * @param options the table names; not null
     * @throws OutboxMisconfigurationException naming every absent table and how to create it, or a
     *     table whose key schema differs and the key schema it needs; rule R6 makes it fatal
     * @throws software.amazon.awssdk.core.exception.SdkException on another DynamoDB error (a
     *     network error, throttling, missing permission)
     */
    static void verify(DynamoDbClient client, DynamoDbOutboxOptions options) {
        Objects.requireNonNull(client, "client must not be null");
        Objects.requireNonNull(options, "options must not be null");
        List<String> absent = new ArrayList<>();
        probe(client, messagesTableRequest(options.messagesTable()), AttributeValue.fromN("-1"),
                AttributeValue.fromN("-1"), absent);
        probe(client, coordinationTableRequest(options.coordinationTable()), AttributeValue.fromS("outbox-verify"),
                AttributeValue.fromS("outbox-verify"), absent);
        if (!absent.isEmpty()) {
            throw new OutboxMisconfigurationException("outbox table(s) " + absent + " do not exist (or are not "
                    + "visible in this region and account); create them (DynamoDbOutboxTables.messagesTableRequest "
                    + "and coordinationTableRequest, or the CloudFormation and AWS CLI definitions shipped as "
                    + DEFINITIONS + "), or set " + DynamoDbOutboxStoreProvider.CREATE_TABLES
                    + "=true to have the store create them at start-up");
        }
    }

    private static void probe(DynamoDbClient client, CreateTableRequest expected, AttributeValue hash,
                              AttributeValue range, List<String> absent) {
        String hashKey = expected.keySchema().get(0).attributeName();
        String rangeKey = expected.keySchema().get(1).attributeName();
        try {
            client.getItem(r -> r.tableName(expected.tableName()).key(Map.of(hashKey, hash, rangeKey, range))
                    .projectionExpression("#h").expressionAttributeNames(Map.of("#h", hashKey)));
            client.query(r -> r.tableName(expected.tableName()).limit(1)
                    .keyConditionExpression("#h = :h AND #r > :r")
                    .expressionAttributeNames(Map.of("#h", hashKey, "#r", rangeKey))
                    .expressionAttributeValues(Map.of(":h", hash, ":r", range))
                    .projectionExpression("#h"));
        } catch (ResourceNotFoundException e) {
            absent.add(expected.tableName());
        } catch (DynamoDbException e) {
            if (e.statusCode() != 400 || e.awsErrorDetails() == null
                    || !"ValidationException".equals(e.awsErrorDetails().errorCode())) {
                throw e;
            }
            throw new OutboxMisconfigurationException("outbox table " + expected.tableName() + " does not have the"
                    + " key schema the outbox needs " + keys(expected.keySchema(), expected.attributeDefinitions())
                    + " (" + e.awsErrorDetails().errorMessage() + "); a key schema cannot be changed: use another table"
                    + " name, or recreate the table with that key schema (DynamoDbOutboxTables, or the definitions "
                    + "shipped as " + DEFINITIONS + ")", e);
        }
    }

    private static CreateTableRequest request(String tableName, String hashKey, ScalarAttributeType hashType,
                                              String rangeKey, ScalarAttributeType rangeType) {
        Objects.requireNonNull(tableName, "tableName must not be null");
        return CreateTableRequest.builder()
                .tableName(tableName)
                .billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(
                        AttributeDefinition.builder().attributeName(hashKey).attributeType(hashType).build(),
                        AttributeDefinition.builder().attributeName(rangeKey).attributeType(rangeType).build())
                .keySchema(
                        KeySchemaElement.builder().attributeName(hashKey).keyType(KeyType.HASH).build(),
                        KeySchemaElement.builder().attributeName(rangeKey).keyType(KeyType.RANGE).build())
                .build();
    }

    private static void createAndAwait(DynamoDbClient client, CreateTableRequest request, Duration timeout) {
        try {
            client.createTable(request);
        } catch (ResourceInUseException exists) {
            // Created before, or being created by another instance: wait for it and check its keys.
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        long pause = 50;
        while (true) {
            TableDescription table = describeOrNull(client, request.tableName());
            if (table != null && table.tableStatus() == TableStatus.ACTIVE) {
                requireSameKeys(request, table);
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("outbox table " + request.tableName() + " is not ACTIVE after "
                        + timeout + " (status " + (table == null ? "not found" : table.tableStatusAsString()) + ")");
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for outbox table " + request.tableName(), e);
            }
            pause = Math.min(2_000, pause * 2);
        }
    }

    private static TableDescription describeOrNull(DynamoDbClient client, String tableName) {
        try {
            return client.describeTable(r -> r.tableName(tableName)).table();
        } catch (ResourceNotFoundException notYetVisible) {
            return null;
        }
    }

    private static void requireSameKeys(CreateTableRequest expected, TableDescription actual) {
        Map<String, String> want = keys(expected.keySchema(), expected.attributeDefinitions());
        Map<String, String> have = keys(actual.keySchema(), actual.attributeDefinitions());
        if (!want.equals(have)) {
            throw new OutboxMisconfigurationException("table " + expected.tableName() + " exists with key schema "
                    + have + " but the outbox needs " + want + "; use another table name or recreate it");
        }
    }

    private static Map<String, String> keys(Iterable<KeySchemaElement> schema, Iterable<AttributeDefinition> types) {
        Map<String, String> typeByName = new TreeMap<>();
        types.forEach(d -> typeByName.put(d.attributeName(), d.attributeTypeAsString()));
        Map<String, String> keys = new TreeMap<>();
        schema.forEach(k -> keys.put(k.keyTypeAsString(), k.attributeName() + " (" + typeByName.get(k.attributeName())
                + ")"));
        return keys;
    }
}
