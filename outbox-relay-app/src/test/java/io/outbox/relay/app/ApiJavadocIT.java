package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The API's Javadoc, as the README's reference links it: every module the relay is built from has
 * its Javadoc jar and its {@code target/reports/apidocs/index.html}, holding the module's API types
 * and none of an {@code internal} package.
 */
class ApiJavadocIT {

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "outbox-spi, io/outbox/spi/OutboxStore.html",
        "outbox-relay, io/outbox/relay/OutboxRelay.html",
        "outbox-store-jdbc, io/outbox/store/jdbc/JdbcOutboxStore.html",
        "outbox-store-mongodb, io/outbox/store/mongodb/MongoOutboxStore.html",
        "outbox-store-dynamodb, io/outbox/store/dynamodb/DynamoDbOutboxStore.html",
        "outbox-notify-redis, io/outbox/notify/redis/RedisNotificationTransport.html",
        "outbox-notify-postgres, io/outbox/notify/postgres/PostgresNotificationTransport.html"
    })
    void theModulesJavadocHoldsItsApiAndNoInternalPackage(String module, String apiType) throws IOException {
        Assumptions.assumeFalse("true".equals(System.getProperty("maven.javadoc.skip")),
                "the build skipped the Javadoc (-Dmaven.javadoc.skip=true)");
        Path target = Path.of(System.getProperty("user.dir")).resolveSibling(module).resolve("target");
        assertThat(target.resolve("reports/apidocs/index.html")).as("%s's Javadoc, as the README links it", module)
                .isRegularFile();
        Path jar;
        try (Stream<Path> files = Files.list(target)) {
            jar = files.filter(f -> f.getFileName().toString().endsWith("-javadoc.jar")).findFirst().orElse(null);
        }
        assertThat(jar).as("%s's Javadoc jar in %s", module, target).isNotNull();
        try (JarFile javadoc = new JarFile(jar.toFile())) {
            List<String> names = Collections.list(javadoc.entries()).stream().map(JarEntry::getName).toList();
            assertThat(names).as("%s", jar.getFileName()).contains("index.html", apiType);
            assertThat(names).as("pages of an internal package in %s", jar.getFileName())
                    .noneMatch(name -> name.contains("/internal/"));
        }
    }
}
