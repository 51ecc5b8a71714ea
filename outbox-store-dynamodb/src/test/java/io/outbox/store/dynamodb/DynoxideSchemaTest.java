package io.outbox.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.spi.OutboxMisconfigurationException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.protocols.jsoncore.JsonNode;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;

/**
 * The shipped CloudFormation template and AWS CLI commands against the tables {@code createSchema()}
 * makes, and what {@code verifySchema()} refuses (R6, R13), on dynoxide (an emulator).
 */
class DynoxideSchemaTest {

    private DynamoDbClient client;
    private final List<String> tables = new ArrayList<>();

    @BeforeEach
    void connect() {
        client = DynamoDbBackend.dynoxide().newClient();
    }

    @AfterEach
    void dropTables() {
        for (String table : tables) {
            try {
                client.deleteTable(r -> r.tableName(table));
            } catch (ResourceNotFoundException gone) {
                // nothing to drop
            }
        }
        client.close();
    }

    private String uniqueName(String role) {
        String name = "schema_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) + "_" + role;
        tables.add(name);
        return name;
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = DynoxideSchemaTest.class.getClassLoader().getResourceAsStream(
                DynamoDbOutboxTables.DEFINITIONS + name)) {
            assertThat(in).as("resource %s", DynamoDbOutboxTables.DEFINITIONS + name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** The tables createSchema() makes, by role: messages, coordination, inbox. */
    private Map<String, String> createdBySchema() {
        DynamoDbOutboxOptions options = DynamoDbOutboxOptions.builder().messagesTable(uniqueName("messages"))
                .coordinationTable(uniqueName("coordination")).build();
        DynamoDbBackend.createTables(client, options);
        String inbox = uniqueName("inbox");
        DynamoDbInbox.builder(client).table(inbox).build().createSchema(Duration.ofMinutes(1));
        return describe(Map.of("messages", options.messagesTable(), "coordination", options.coordinationTable(),
                "inbox", inbox));
    }

    /**
     * The template's tables, created through the SDK from their properties, are the ones
     * createSchema() makes; each is kept when the stack is deleted, the inbox's made only when named.
     */
    @Test
    void theCloudFormationTablesAreTheOnesCreateSchemaMakes() throws IOException {
        Map<String, JsonNode> resources = JsonNode.parser().parse(resource("outbox-tables.cloudformation.json"))
                .field("Resources").orElseThrow().asObject();
        Map<String, String> roles = Map.of("OutboxMessagesTable", "messages", "OutboxCoordinationTable",
                "coordination", "OutboxInboxTable", "inbox");
        assertThat(resources.keySet()).containsExactlyInAnyOrderElementsOf(roles.keySet());
        Map<String, String> made = new LinkedHashMap<>();
        resources.forEach((id, resource) -> {
            assertThat(resource.field("Type").orElseThrow().asString()).isEqualTo("AWS::DynamoDB::Table");
            assertThat(resource.field("DeletionPolicy").orElseThrow().asString()).as("kept with the stack deleted")
                    .isEqualTo("Retain");
            assertThat(resource.field("Condition").map(JsonNode::asString)).as("made only when named")
                    .isEqualTo(id.equals("OutboxInboxTable") ? Optional.of("WithInbox")
                            : Optional.empty());
            Map<String, JsonNode> properties = resource.field("Properties").orElseThrow().asObject();
            assertThat(properties.keySet()).as("properties this test creates").containsExactlyInAnyOrder(
                    "TableName", "BillingMode", "AttributeDefinitions", "KeySchema");
            String name = uniqueName(roles.get(id));
            client.createTable(request(name, properties.get("BillingMode").asString(),
                    properties.get("AttributeDefinitions"), properties.get("KeySchema")));
            made.put(roles.get(id), name);
        });
        assertThat(describe(made)).isEqualTo(createdBySchema());
    }

    /** The CLI lines' arguments, sent through the SDK, make the tables createSchema() makes. */
    @Test
    void theCliCommandsCreateTheTablesCreateSchemaMakes() throws IOException {
        String script = resource("create-tables.sh");
        Matcher line = Pattern.compile("aws dynamodb create-table --table-name \"\\$\\{OUTBOX_(\\w+)_TABLE(?::-\\w+)?\\}\""
                + " --billing-mode (\\w+) --attribute-definitions '(\\[[^']*\\])' --key-schema '(\\[[^']*\\])'\n")
                .matcher(script);
        Map<String, String> made = new LinkedHashMap<>();
        while (line.find()) {
            String role = line.group(1).toLowerCase(Locale.ROOT);
            String name = uniqueName(role);
            client.createTable(request(name, line.group(2), JsonNode.parser().parse(line.group(3)),
                    JsonNode.parser().parse(line.group(4))));
            made.put(role, name);
        }
        assertThat(made).as("create-table lines read").hasSize(script.split("aws dynamodb create-table", -1).length - 1)
                .containsOnlyKeys("messages", "coordination", "inbox");
        assertThat(script).contains("${OUTBOX_MESSAGES_TABLE:-" + DynamoDbOutboxOptions.DEFAULT_MESSAGES_TABLE + "}",
                "${OUTBOX_COORDINATION_TABLE:-" + DynamoDbOutboxOptions.DEFAULT_COORDINATION_TABLE + "}");
        assertThat(describe(made)).isEqualTo(createdBySchema());
    }

    /**
     * R13: a table whose keys have swapped roles, another type or no sort key is refused at the
     * check, naming the table and the key schema it needs; the queries of the store would fail on it.
     */
    @Test
    void R13_aTableWithKeysOfOtherRolesTypesOrNoSortKeyIsRefused() {
        String swapped = uniqueName("messages");
        client.createTable(table(swapped, "seq", "bucket", ScalarAttributeType.N));
        String stringKeys = uniqueName("messages");
        client.createTable(table(stringKeys, "bucket", "seq", ScalarAttributeType.S));
        String noSortKey = uniqueName("coordination");
        client.createTable(CreateTableRequest.builder().tableName(noSortKey).billingMode("PAY_PER_REQUEST")
                .attributeDefinitions(AttributeDefinition.builder().attributeName("pk").attributeType("S").build())
                .keySchema(KeySchemaElement.builder().attributeName("pk").keyType(KeyType.HASH).build()).build());
        String coordination = uniqueName("coordination");
        client.createTable(DynamoDbOutboxTables.coordinationTableRequest(coordination));
        String messages = uniqueName("messages");
        client.createTable(DynamoDbOutboxTables.messagesTableRequest(messages));

        for (String wrong : List.of(swapped, stringKeys)) {
            assertThatThrownBy(() -> DynamoDbOutboxStore.builder(client).messagesTable(wrong)
                    .coordinationTable(coordination).build().verifySchema())
                    .isInstanceOf(OutboxMisconfigurationException.class)
                    .hasMessageContaining("outbox table " + wrong + " does not have the key schema the outbox needs "
                            + "{HASH=bucket (N), RANGE=seq (N)}")
                    .hasMessageContaining(DynamoDbOutboxTables.DEFINITIONS);
        }
        assertThatThrownBy(() -> DynamoDbOutboxStore.builder(client).messagesTable(messages)
                .coordinationTable(noSortKey).build().verifySchema())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("outbox table " + noSortKey + " does not have the key schema the outbox needs "
                        + "{HASH=pk (S), RANGE=sk (S)}");
        DynamoDbOutboxStore.builder(client).messagesTable(messages).coordinationTable(coordination).build()
                .verifySchema();
    }

    private static CreateTableRequest table(String name, String hash, String range, ScalarAttributeType type) {
        return CreateTableRequest.builder().tableName(name).billingMode("PAY_PER_REQUEST")
                .attributeDefinitions(AttributeDefinition.builder().attributeName(hash).attributeType(type).build(),
                        AttributeDefinition.builder().attributeName(range).attributeType(type).build())
                .keySchema(KeySchemaElement.builder().attributeName(hash).keyType(KeyType.HASH).build(),
                        KeySchemaElement.builder().attributeName(range).keyType(KeyType.RANGE).build())
                .build();
    }

    private static CreateTableRequest request(String name, String billingMode, JsonNode attributes, JsonNode keys) {
        return CreateTableRequest.builder().tableName(name).billingMode(billingMode)
                .attributeDefinitions(attributes.asArray().stream().map(a -> AttributeDefinition.builder()
                        .attributeName(a.field("AttributeName").orElseThrow().asString())
                        .attributeType(a.field("AttributeType").orElseThrow().asString()).build()).toList())
                .keySchema(keys.asArray().stream().map(k -> KeySchemaElement.builder()
                        .attributeName(k.field("AttributeName").orElseThrow().asString())
                        .keyType(k.field("KeyType").orElseThrow().asString()).build()).toList())
                .build();
    }

    /**
     * What DescribeTable says of each table, by role: key schema, attribute definitions, billing
     * mode, secondary indexes, stream.
     */
    private Map<String, String> describe(Map<String, String> byRole) {
        Map<String, String> described = new TreeMap<>();
        byRole.forEach((role, name) -> {
            TableDescription t = client.describeTable(r -> r.tableName(name)).table();
            List<String> attributes = new ArrayList<>(t.attributeDefinitions().stream()
                    .map(a -> a.attributeName() + ":" + a.attributeTypeAsString()).toList());
            attributes.sort(null);
            described.put(role, "keys " + t.keySchema().stream().map(k -> k.keyTypeAsString() + ":" + k.attributeName())
                    .toList() + " attributes " + attributes + " billing "
                    + (t.billingModeSummary() == null ? null : t.billingModeSummary().billingModeAsString())
                    + " gsi " + t.globalSecondaryIndexes() + " lsi " + t.localSecondaryIndexes() + " stream "
                    + t.streamSpecification());
        });
        return described;
    }
}
