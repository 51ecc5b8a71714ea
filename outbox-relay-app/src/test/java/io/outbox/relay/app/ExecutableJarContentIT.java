package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Collections;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** What the shade plugin put into the executable jar: merged service files, one manifest, no signatures. */
class ExecutableJarContentIT {

    private static List<String> serviceEntries(JarFile jar, String service) throws IOException {
        JarEntry entry = jar.getJarEntry("META-INF/services/" + service);
        assertThat(entry).as("service file of %s", service).isNotNull();
        try (InputStream in = jar.getInputStream(entry)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().map(String::trim)
                    .filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
        }
    }

    @Test
    void everyStoreProviderJdbcDriverAndLoggingProviderIsRegistered() throws IOException {
        try (JarFile jar = new JarFile(RelayProcess.jar().toFile())) {
            assertThat(serviceEntries(jar, "io.outbox.spi.OutboxStoreProvider")).containsExactlyInAnyOrder(
                    "io.outbox.store.jdbc.JdbcOutboxStoreProvider",
                    "io.outbox.store.mongodb.MongoOutboxStoreProvider",
                    "io.outbox.store.dynamodb.DynamoDbOutboxStoreProvider");
            assertThat(serviceEntries(jar, "java.sql.Driver"))
                    .contains("org.postgresql.Driver", "org.mariadb.jdbc.Driver", "org.h2.Driver");
            assertThat(serviceEntries(jar, "org.slf4j.spi.SLF4JServiceProvider"))
                    .containsExactly("org.apache.logging.slf4j.SLF4JServiceProvider");
            assertThat(serviceEntries(jar, "io.outbox.notify.NotificationTransportProvider")).containsExactlyInAnyOrder(
                    "io.outbox.notify.redis.RedisNotificationTransportProvider",
                    "io.outbox.notify.postgres.PostgresNotificationTransportProvider");
            assertThat(serviceEntries(jar, "software.amazon.awssdk.http.SdkHttpService"))
                    .containsExactly("software.amazon.awssdk.http.urlconnection.UrlConnectionSdkHttpService");
        }
    }

    @Test
    void theManifestStartsTheRelayAndTheJarHoldsNoSignatureAndOneLog4jPluginCache() throws IOException {
        try (JarFile jar = new JarFile(RelayProcess.jar().toFile())) {
            Attributes manifest = jar.getManifest().getMainAttributes();
            assertThat(manifest.getValue("Main-Class")).isEqualTo(StandaloneRelay.class.getName());
            assertThat(manifest.getValue("Multi-Release")).isEqualTo("true");
            List<String> names = Collections.list(jar.entries()).stream().map(JarEntry::getName)
                    .collect(Collectors.toList());
            assertThat(names).filteredOn(n -> n.matches("META-INF/[^/]+\\.(SF|DSA|RSA|EC)")).isEmpty();
            assertThat(names).filteredOn(n -> n.endsWith("Log4j2Plugins.dat"))
                    .containsExactly("META-INF/org/apache/logging/log4j/core/config/plugins/Log4j2Plugins.dat");
            assertThat(names).contains("log4j2.xml", "log4j2.component.properties",
                    "io/outbox/relay/app/version.properties");
            // Netty comes only with Lettuce (the Redis notification transport); the AWS SDK's Netty client stays out.
            assertThat(names).contains("io/lettuce/core/RedisClient.class");
            assertThat(names).filteredOn(n -> n.startsWith("software/amazon/awssdk/http/nio/netty/")).isEmpty();
            assertThat(names).filteredOn(n -> n.startsWith("picocli/")).isNotEmpty();
        }
        assertThat(Files.size(RelayProcess.jar())).isLessThan(60L * 1024 * 1024);
    }
}
