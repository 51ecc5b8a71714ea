package io.outbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.fail;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.outbox.store.mongodb.MongoOutboxStore;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.mongodb.MongoDatabaseFactory;
import org.springframework.data.mongodb.MongoTransactionManager;
import org.springframework.data.mongodb.core.SimpleMongoClientDatabaseFactory;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The transactional {@link Outbox} on MongoDB (rule E4) through Spring Data MongoDB's
 * {@link MongoTransactionManager}, on the jongodb emulator (it has transactions; see TESTING.md).
 * The relay is off: jongodb's leases are not atomic, and these tests only write.
 */
class MongoTransactionalOutboxTest {

    static final String URI_VARIABLE = "OUTBOX_TEST_JONGODB_URI";
    static final String DATABASE = "sbtx_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);

    static String uri() {
        String uri = System.getenv(URI_VARIABLE);
        if (uri == null || uri.isBlank()) {
            fail(URI_VARIABLE + " is not set. This test needs the jongodb MongoDB emulator; scripts/test.sh "
                    + "installs and starts it and sets the variable.");
        }
        return uri;
    }

    @Configuration(proxyBeanMethods = false)
    static class MongoWithTransactions {
        @Bean(destroyMethod = "close")
        MongoClient mongoClient() {
            return MongoClients.create(uri());
        }

        @Bean
        MongoDatabaseFactory mongoDatabaseFactory(MongoClient client) {
            return new SimpleMongoClientDatabaseFactory(client, DATABASE);
        }

        @Bean
        MongoTransactionManager transactionManager(MongoDatabaseFactory factory) {
            return new MongoTransactionManager(factory);
        }

        @Bean
        io.outbox.OutboxCommitNotifier recordingNotifier() {
            return NOTIFIED::add;
        }
    }

    static final List<int[]> NOTIFIED = new CopyOnWriteArrayList<>();

    private static ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OutboxJdbcStoreAutoConfiguration.class,
                        OutboxMongoStoreAutoConfiguration.class, OutboxDynamoDbStoreAutoConfiguration.class,
                        OutboxAutoConfiguration.class))
                .withUserConfiguration(MongoWithTransactions.class)
                .withPropertyValues("outbox.relay.enabled=false", "outbox.mongodb.database=" + DATABASE,
                        "outbox.mongodb.collection-prefix=p" + UUID.randomUUID().toString().substring(0, 6) + "_");
    }

    @Test
    void e4_enqueueJoinsTheMongoTransaction_commitKeeps_rollbackDrops_noTransactionFails() {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            Outbox outbox = context.getBean(Outbox.class);
            assertThat(outbox).isInstanceOf(MongoTransactionalOutbox.class);
            MongoOutboxStore store = context.getBean(MongoOutboxStore.class);
            MongoClient client = context.getBean(MongoClient.class);
            String collection = store.options().messagesCollection();
            TransactionTemplate tx = new TransactionTemplate(context.getBean(MongoTransactionManager.class));
            NOTIFIED.clear();

            int bucket = tx.execute(s -> {
                MongoDatabaseFactory factory = context.getBean(MongoDatabaseFactory.class);
                org.springframework.data.mongodb.MongoDatabaseUtils.getDatabase(factory)
                        .getCollection("orders").insertOne(new Document("_id", "order-1"));
                return outbox.enqueue("orders", "customer-1", "{}").bucket();
            });
            tx.executeWithoutResult(s -> {
                outbox.enqueue("orders", "customer-1", "rolled back");
                s.setRollbackOnly();
            });
            assertThatThrownBy(() -> outbox.enqueue("orders", "customer-1", "no transaction"))
                    .isInstanceOf(IllegalTransactionStateException.class);

            assertThat(client.getDatabase(DATABASE).getCollection(collection).countDocuments()).isEqualTo(1);
            assertThat(client.getDatabase(DATABASE).getCollection("orders").countDocuments()).isEqualTo(1);
            assertThat(NOTIFIED).hasSize(1);
            assertThat(NOTIFIED.get(0)).containsExactly(bucket);
        });
    }
}
