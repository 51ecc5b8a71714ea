package io.outbox.store.mongodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.IndexOptions;
import io.outbox.spi.OutboxMisconfigurationException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The shipped mongosh index script against what {@code createSchema()} creates, and what
 * {@code verifySchema()} finds missing (R13), on mongo-java-server (an emulator, in process).
 */
class InProcessMongoSchemaTest {

    /** The script the jar ships. */
    static final String SCRIPT = "db/outbox/mongodb/outbox-indexes.js";

    /** One {@code createIndex} line of the script: the collection's suffix, the key and option documents. */
    private static final Pattern CREATE_INDEX = Pattern.compile(
            "db\\.getCollection\\(prefix \\+ \"(\\w+)\"\\)\\.createIndex\\((\\{[^}]*\\}), (\\{[^}]*\\})\\);");

    private MongoClient client;
    private final List<MongoDatabase> databases = new ArrayList<>();

    @BeforeEach
    void connect() {
        client = MongoClients.create(InProcessMongo.connectionString());
    }

    @AfterEach
    void dropDatabases() {
        databases.forEach(MongoDatabase::drop);
        client.close();
    }

    private MongoDatabase freshDatabase() {
        MongoDatabase database = client.getDatabase("schema_" + UUID.randomUUID().toString().substring(0, 8));
        databases.add(database);
        return database;
    }

    private MongoOutboxStore store(MongoDatabase database) {
        return MongoOutboxStore.builder(client).database(database.getName()).build();
    }

    private MongoInbox inbox(MongoDatabase database) {
        return MongoInbox.builder(client).database(database.getName()).build();
    }

    /** The script's indexes, created from its key and option documents, are the ones createSchema() creates. */
    @Test
    void theIndexScriptCreatesTheIndexesCreateSchemaCreates() throws IOException {
        String script;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream(SCRIPT)) {
            assertThat(in).as("resource %s", SCRIPT).isNotNull();
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        MongoDatabase byScript = freshDatabase();
        Matcher line = CREATE_INDEX.matcher(script);
        int created = 0;
        while (line.find()) {
            Document options = Document.parse(line.group(3));
            assertThat(options.keySet()).as("options the test applies").isSubsetOf("unique", "name");
            byScript.getCollection(MongoOutboxOptions.DEFAULT_COLLECTION_PREFIX + line.group(1)).createIndex(
                    Document.parse(line.group(2)), new IndexOptions().unique(options.getBoolean("unique", false))
                            .name(options.getString("name")));
            created++;
        }
        assertThat(created).as("createIndex lines read").isEqualTo(script.split("\\.createIndex\\(", -1).length - 1)
                .isEqualTo(3);

        MongoDatabase bySchema = freshDatabase();
        store(bySchema).createSchema();
        inbox(bySchema).createSchema();
        assertThat(indexes(byScript)).isEqualTo(indexes(bySchema)).containsKeys("outbox_messages", "outbox_inbox");
    }

    /** R13: each index the store or the inbox needs, dropped, fails verifySchema() naming it and how to create it. */
    @Test
    void R13_eachIndexNeededIsCheckedAndItsAbsenceNamesKeysAndCommand() {
        MongoDatabase database = freshDatabase();
        MongoOutboxStore store = store(database);
        MongoInbox inbox = inbox(database);
        store.createSchema();
        inbox.createSchema();
        store.verifySchema();
        inbox.verifySchema();

        MongoCollection<Document> messages = database.getCollection("outbox_messages");
        messages.dropIndex(MongoOutboxStore.MESSAGES_INDEX);
        assertThatThrownBy(store::verifySchema).isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("the outbox messages collection " + database.getName() + ".outbox_messages has no "
                        + "unique index on exactly {bucket: 1, seq: 1}")
                .hasMessageContaining("db.getCollection(\"outbox_messages\").createIndex({bucket: 1, seq: 1}, "
                        + "{unique: true, name: \"bucket_seq_unique\"})");
        messages.createIndex(new Document("bucket", 1).append("seq", 1), new IndexOptions().name("not_unique"));
        assertThatThrownBy(store::verifySchema).isInstanceOf(OutboxMisconfigurationException.class);
        messages.dropIndex("not_unique");
        messages.createIndex(new Document("bucket", 1).append("seq", 1), new IndexOptions().unique(true)
                .name("renamed"));
        store.verifySchema();

        MongoCollection<Document> markers = database.getCollection("outbox_inbox");
        markers.dropIndex(MongoInbox.SEEN_AT_INDEX);
        assertThatThrownBy(inbox::verifySchema).isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("the inbox collection " + database.getName() + ".outbox_inbox has no index whose "
                        + "leading keys are {seenAt: 1}")
                .hasMessageContaining("createIndex({seenAt: 1}, {name: \"seenAt\"})");
        markers.createIndex(new Document("seenAt", 1).append("consumer", 1), new IndexOptions().name("renamed"));
        inbox.verifySchema();
        markers.dropIndex(MongoInbox.UNIQUE_INDEX);
        assertThatThrownBy(inbox::verifySchema).isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("has no unique index on exactly {consumer: 1, messageId: 1}");
    }

    /** Each collection's indexes but {@code _id}'s: name, key and uniqueness. */
    private static Map<String, List<String>> indexes(MongoDatabase database) {
        Map<String, List<String>> all = new TreeMap<>();
        for (String collection : database.listCollectionNames()) {
            List<String> found = new ArrayList<>();
            for (Document index : database.getCollection(collection).listIndexes()) {
                if (!"_id_".equals(index.getString("name"))) {
                    found.add(index.getString("name") + " " + index.get("key", Document.class).toJson() + " unique="
                            + index.getBoolean("unique", false));
                }
            }
            found.sort(null);
            all.put(collection, found);
        }
        return all;
    }
}
