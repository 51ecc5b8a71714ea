package io.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The application's package depends on nothing of the store contract: {@code io.outbox} names no
 * type of {@code io.outbox.spi} or {@code io.outbox.spi.support} in its code, so the SPI may use
 * the message without a cycle between the two (Javadoc may still point at them).
 */
class PackageDependenciesTest {

    private static final Path APPLICATION_PACKAGE = Path.of("src/main/java/io/outbox");

    @Test
    void theApplicationPackageUsesNothingOfTheSpi() throws IOException {
        List<String> uses = new ArrayList<>();
        try (Stream<Path> files = Files.list(APPLICATION_PACKAGE)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                List<String> lines = Files.readAllLines(file);
                for (int i = 0; i < lines.size(); i++) {
                    String line = lines.get(i).strip();
                    boolean comment = line.startsWith("*") || line.startsWith("/*") || line.startsWith("//");
                    if (!comment && line.contains("io.outbox.spi")) {
                        uses.add(file.getFileName() + ":" + (i + 1) + ": " + line);
                    }
                }
            }
        }
        assertThat(uses).as("code of io.outbox naming io.outbox.spi*").isEmpty();
    }
}
