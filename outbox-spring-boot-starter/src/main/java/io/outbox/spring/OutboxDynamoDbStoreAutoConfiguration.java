package io.outbox.spring;

import io.outbox.store.dynamodb.DynamoDbOutboxStore;
import io.outbox.spi.OutboxStore;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The DynamoDB store ({@link DynamoDbOutboxStore}) on the application's {@code DynamoDbClient}, when
 * {@code outbox.store} is {@code dynamodb} or unset and no other store was built. Backs off when the
 * application defines an {@link OutboxStore}.
 */
@AutoConfiguration(after = OutboxMongoStoreAutoConfiguration.class)
@EnableConfigurationProperties(OutboxProperties.class)
@ConditionalOnClass(name = "software.amazon.awssdk.services.dynamodb.DynamoDbClient",
        value = DynamoDbOutboxStore.class)
@ConditionalOnBean(type = "software.amazon.awssdk.services.dynamodb.DynamoDbClient")
@ConditionalOnProperty(prefix = "outbox", name = "store", havingValue = "dynamodb", matchIfMissing = true)
public class OutboxDynamoDbStoreAutoConfiguration {

    /** Created by Spring. */
    public OutboxDynamoDbStoreAutoConfiguration() {
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
    public DynamoDbOutboxStore outboxStore(DynamoDbClient client,
                                    OutboxProperties properties) {
        DynamoDbOutboxStore store = DynamoDbOutboxStore.builder(client)
                .messagesTable(properties.dynamodb().messagesTable())
                .coordinationTable(properties.dynamodb().coordinationTable())
                .build();
        if (properties.createSchema()) {
            store.createSchema();
        }
        return store;
    }
}
