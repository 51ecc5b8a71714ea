package io.outbox.spring.sample;

import io.outbox.embedded.EmbeddedKafkaBroker;
import org.springframework.test.context.DynamicPropertyRegistry;

/** The PostgreSQL and Kafka settings the sample tests run with; tables named with a unique suffix. */
final class SampleDatabase {

    static final String URL = env("OUTBOX_TEST_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/test");
    static final String USER = env("OUTBOX_TEST_POSTGRES_USER", "postgres");

    private SampleDatabase() {
    }

    static void register(DynamicPropertyRegistry registry, String suffix, EmbeddedKafkaBroker broker,
                         String pollInterval) {
        registry.add("spring.datasource.url", () -> URL);
        registry.add("spring.datasource.username", () -> USER);
        registry.add("spring.kafka.bootstrap-servers", broker::bootstrapServers);
        registry.add("sample.orders-table", () -> "sb_orders_" + suffix);
        registry.add("outbox.jdbc.table-prefix", () -> "sb_" + suffix + "_");
        registry.add("outbox.create-schema", () -> "true");
        registry.add("outbox.bucket-count", () -> "4");
        registry.add("outbox.relay.poll-interval", () -> pollInterval);
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }
}
