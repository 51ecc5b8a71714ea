package io.outbox.spring;

import com.mongodb.client.MongoClient;
import io.outbox.store.mongodb.MongoOutboxStore;
import io.outbox.spi.OutboxStore;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The MongoDB store ({@link MongoOutboxStore}) on the application's {@code MongoClient}, when
 * {@code outbox.store} is {@code mongodb} or unset and no other store was built. Backs off when the
 * application defines an {@link OutboxStore}.
 */
@AutoConfiguration(after = OutboxJdbcStoreAutoConfiguration.class,
        afterName = "org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration")
@EnableConfigurationProperties(OutboxProperties.class)
@ConditionalOnClass(name = "com.mongodb.client.MongoClient", value = MongoOutboxStore.class)
@ConditionalOnBean(type = "com.mongodb.client.MongoClient")
@ConditionalOnProperty(prefix = "outbox", name = "store", havingValue = "mongodb", matchIfMissing = true)
public class OutboxMongoStoreAutoConfiguration {

    /** Created by Spring. */
    public OutboxMongoStoreAutoConfiguration() {
    }

    /**
     * The store, its schema created first when {@code outbox.create-schema} is true.
     *
     * @param client the application's client
     * @param properties the {@code outbox.*} settings
     * @return the store; closed with the context (the client stays the application's)
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(OutboxStore.class)
    public MongoOutboxStore outboxStore(MongoClient client, OutboxProperties properties) {
        MongoOutboxStore.Builder builder = MongoOutboxStore.builder(client)
                .collectionPrefix(properties.mongodb().collectionPrefix());
        if (properties.mongodb().database() != null) {
            builder.database(properties.mongodb().database());
        }
        MongoOutboxStore store = builder.build();
        if (properties.createSchema()) {
            store.createSchema();
        }
        return store;
    }
}
