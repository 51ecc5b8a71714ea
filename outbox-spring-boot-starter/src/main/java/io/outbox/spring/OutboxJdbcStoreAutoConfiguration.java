package io.outbox.spring;

import io.outbox.store.jdbc.JdbcOutboxStore;
import javax.sql.DataSource;
import io.outbox.spi.OutboxStore;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The JDBC store ({@link JdbcOutboxStore}) on the application's {@code DataSource}, when
 * {@code outbox.store} is {@code jdbc} or unset; the first store auto-configuration, so a
 * {@code DataSource} wins over other clients unless {@code outbox.store} says otherwise. Backs off
 * when the application defines an {@link OutboxStore}.
 */
@AutoConfiguration(afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@EnableConfigurationProperties(OutboxProperties.class)
@ConditionalOnClass({JdbcOutboxStore.class, DataSource.class})
@ConditionalOnBean(DataSource.class)
@ConditionalOnProperty(prefix = "outbox", name = "store", havingValue = "jdbc", matchIfMissing = true)
public class OutboxJdbcStoreAutoConfiguration {

    /** Created by Spring. */
    public OutboxJdbcStoreAutoConfiguration() {
    }

    /**
     * The store, its schema created first when {@code outbox.create-schema} is true.
     *
     * @param dataSource the application's data source
     * @param properties the {@code outbox.*} settings
     * @return the store; closed with the context (the data source stays the application's)
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(OutboxStore.class)
    public JdbcOutboxStore outboxStore(DataSource dataSource, OutboxProperties properties) {
        JdbcOutboxStore store = JdbcOutboxStore.builder(dataSource)
                .tablePrefix(properties.jdbc().tablePrefix())
                .schema(properties.jdbc().schema())
                .build();
        if (properties.createSchema()) {
            store.createSchema();
        }
        return store;
    }
}
