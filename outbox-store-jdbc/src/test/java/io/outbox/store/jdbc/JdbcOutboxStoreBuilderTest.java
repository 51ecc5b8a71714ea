package io.outbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** {@link JdbcOutboxStore.Builder}: building touches no database; the store and its writer agree. */
class JdbcOutboxStoreBuilderTest {

    private final AtomicInteger calls = new AtomicInteger();

    /** A data source that counts and refuses every call. */
    private final DataSource refusing = (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                if (method.getDeclaringClass() == Object.class) {
                    return method.getName().equals("toString") ? "refusing" : method.invoke(this, args);
                }
                calls.incrementAndGet();
                throw new IllegalStateException("no database here: " + method.getName());
            });

    @Test
    void buildOpensNoConnection() {
        JdbcOutboxStore store = JdbcOutboxStore.builder(refusing).tablePrefix("app_").build();
        assertThat(store.tables().messages()).isEqualTo("app_messages");
        store.close();
        assertThat(calls).as("calls on the data source").hasValue(0);
    }

    @Test
    void s10_theStoreAndItsWriterStateTheSamePayloadLimit() {
        JdbcOutboxStore defaults = JdbcOutboxStore.builder(refusing).build();
        assertThat(defaults.maxPayloadBytes()).isEqualTo(JdbcOutboxStore.DEFAULT_MAX_PAYLOAD_BYTES);
        assertThat(defaults.writer().maxPayloadBytes()).isEqualTo(JdbcOutboxStore.DEFAULT_MAX_PAYLOAD_BYTES);
        JdbcOutboxStore small = JdbcOutboxStore.builder(refusing).maxPayloadBytes(1_024).build();
        assertThat(small.maxPayloadBytes()).isEqualTo(1_024);
        assertThat(small.writer().maxPayloadBytes()).isEqualTo(1_024);
        assertThat(small.writer()).isSameAs(small.writer());
        assertThat(small.writer().tables()).isEqualTo(small.tables());
        assertThatThrownBy(() -> JdbcOutboxStore.builder(refusing).maxPayloadBytes(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxPayloadBytes must be >= 0 but was -1");
    }
}
