package io.outbox.store.mongodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import io.outbox.spi.OutboxMisconfigurationException;
import java.time.Duration;
import java.util.UUID;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** MongoInbox's guards (I1) and index methods, on jongodb. */
class JongodbInboxTest {

    private static String prefix() {
        return "inboxt_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10) + "_";
    }

    @Test
    void I1_aSessionWithoutATransactionIsRefused() {
        try (MongoClient client = Jongodb.connect(); ClientSession session = client.startSession()) {
            MongoInbox inbox = MongoInbox.builder(client).database(AbstractMongoInboxTck.DATABASE).collectionPrefix(prefix())
                    .build();
            assertThatThrownBy(() -> inbox.firstDelivery(session, "billing", UUID.randomUUID()))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("no active transaction");
            assertThatThrownBy(() -> inbox.firstDelivery(session, "", UUID.randomUUID()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("consumerName");
        }
    }

    @Test
    void verifyIndexesNamesTheMissingUniqueIndex() {
        try (MongoClient client = Jongodb.connect()) {
            String prefix = prefix();
            client.getDatabase(AbstractMongoInboxTck.DATABASE).getCollection(prefix + "inbox")
                    .insertOne(new Document("seed", 1));
            MongoInbox bare = MongoInbox.builder(client).database(AbstractMongoInboxTck.DATABASE).collectionPrefix(prefix)
                    .build();
            assertThatThrownBy(bare::verifySchema).isInstanceOf(OutboxMisconfigurationException.class)
                    .hasMessageContaining(prefix + "inbox").hasMessageContaining("unique");
            bare.createSchema();
            bare.verifySchema();
            assertThat(bare.collectionName()).isEqualTo(prefix + "inbox");
            client.getDatabase(AbstractMongoInboxTck.DATABASE).getCollection(prefix + "inbox").deleteMany(new Document());
        }
    }

    @Test
    void badSettingsAreRefusedNamingTheValue() {
        try (MongoClient client = Jongodb.connect()) {
            assertThatThrownBy(() -> MongoInbox.builder(client).database("a/b").build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a/b");
            assertThatThrownBy(() -> MongoInbox.builder(client).database("db").collectionPrefix("$x").build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("$x");
            assertThatThrownBy(() -> MongoInbox.builder(client).database("db").retention(Duration.ZERO).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retention");
            assertThatThrownBy(() -> MongoInbox.builder(client).database("db").cleanupBatchSize(10_001).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("10001");
        }
    }
}
