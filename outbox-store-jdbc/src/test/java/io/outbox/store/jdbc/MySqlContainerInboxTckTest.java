package io.outbox.store.jdbc;

import java.time.Duration;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.utility.DockerImageName;

/**
 * The inbox kit against a real MySQL 8.4 server in a container, through the MariaDB driver.
 * Skipped, and reported as skipped, where Docker is missing.
 */
@Testcontainers(disabledWithoutDocker = true)
class MySqlContainerInboxTckTest extends JdbcInboxTckBase {

    @Container
    private static final GenericContainer<?> MYSQL = new GenericContainer<>(DockerImageName.parse("mysql:8.4"))
            .withEnv("MYSQL_ROOT_PASSWORD", "test")
            .withEnv("MYSQL_DATABASE", "test")
            .withExposedPorts(3306)
            .waitingFor(Wait.forLogMessage(".*ready for connections.*port: 3306.*", 1))
            .withStartupTimeout(Duration.ofMinutes(3));

    @Override
    TestDatabase database() {
        return new TestDatabase("MySQL 8.4 (Testcontainers)", "jdbc:mariadb://" + MYSQL.getHost() + ":"
                + MYSQL.getMappedPort(3306) + "/test?allowPublicKeyRetrieval=true", "root", "test",
                "the container did not start");
    }
}
