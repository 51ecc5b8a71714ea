package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.junit.jupiter.api.Test;

/**
 * Rule R10: the README's relay option table states what {@link RelayOptions#configDef()} defines
 * (every key once, its default and its range), so the two cannot drift apart.
 */
class ReadmeOptionTableTest {

    private static final String TABLE_HEADER = "| option (`fromProperties` key) | default | valid values | meaning |";

    @Test
    void r10_theReadmesOptionTableMatchesTheConfigDef() throws IOException {
        Map<String, List<String>> rows = readmeRows();
        Map<String, ConfigDef.ConfigKey> keys = RelayOptions.configDef().configKeys();

        assertThat(rows.keySet()).as("README option keys").containsExactlyInAnyOrderElementsOf(keys.keySet());
        keys.forEach((key, definition) -> {
            List<String> cells = rows.get(key);
            String expectedDefault = switch (key) {
                case RelayOptions.RELAY_ID_CONFIG -> "host-pid-random";
                default -> definition.defaultValue == null ? "none" : String.valueOf(definition.defaultValue);
            };
            assertThat(cells.get(1)).as("README default of %s", key).isEqualTo(expectedDefault);
            assertThat(cells.get(2)).as("README range of %s", key).startsWith(definition.validator.toString());
        });
    }

    /** The table's rows by key: the cells of each row, the key's backticks removed. */
    private static Map<String, List<String>> readmeRows() throws IOException {
        List<String> lines = Files.readAllLines(readme());
        int header = lines.indexOf(TABLE_HEADER);
        assertThat(header).as("README line %s", TABLE_HEADER).isNotNegative();
        Map<String, List<String>> rows = new LinkedHashMap<>();
        for (int i = header + 2; i < lines.size() && lines.get(i).startsWith("|"); i++) {
            String line = lines.get(i);
            List<String> cells = List.of(line.substring(1, line.length() - 1).split(" \\| ", -1)).stream()
                    .map(String::trim).toList();
            String key = cells.get(0).replace("`", "");
            assertThat(rows.put(key, cells)).as("README lists %s twice", key).isNull();
        }
        return rows;
    }

    private static Path readme() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.exists(dir.resolve("README.md"))) {
            dir = dir.getParent();
        }
        assertThat(dir).as("README.md above %s", Path.of("").toAbsolutePath()).isNotNull();
        return dir.resolve("README.md");
    }
}
