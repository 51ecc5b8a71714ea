package io.outbox.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The custom-store archetype's skeleton is this module's reference store, fixture and provider
 * under other names: their code (everything but the package line, the auto-service registration
 * and the leading Javadoc) must stay identical, so a generated project always starts from the
 * current template and passes the current kit.
 */
class ArchetypeSkeletonTest {

    private static final Path TCK = Path.of("src");
    private static final Path SKELETON =
            Path.of("..", "outbox-store-archetype", "src", "main", "resources", "archetype-resources", "src");

    @Test
    void theArchetypeStoreIsTheInMemoryStoreRenamed() throws IOException {
        assertThat(code(SKELETON.resolve("main/java/MyOutboxStore.java"), "public class"))
                .isEqualTo(renamed(code(TCK.resolve("main/java/io/outbox/tck/InMemoryOutboxStore.java"), "public class")));
    }

    @Test
    void theArchetypeDeadLettersAreTheInMemoryDeadLettersRenamed() throws IOException {
        assertThat(code(SKELETON.resolve("main/java/MyDeadLetters.java"), "final class"))
                .isEqualTo(renamed(code(TCK.resolve("main/java/io/outbox/tck/InMemoryDeadLetters.java"), "final class")));
    }

    @Test
    void theArchetypeProviderIsTheInMemoryProviderRenamed() throws IOException {
        assertThat(code(SKELETON.resolve("main/java/MyOutboxStoreProvider.java"), "public final class"))
                .isEqualTo(renamed(code(TCK.resolve("main/java/io/outbox/tck/InMemoryOutboxStoreProvider.java"),
                        "public final class")).replace("\"memory\"", "\"my-store\""));
    }

    @Test
    void theArchetypeKitTestIsTheReferenceStoresFixtureRenamed() throws IOException {
        assertThat(code(SKELETON.resolve("test/java/MyOutboxStoreTckTest.java"), "class "))
                .isEqualTo(renamed(code(TCK.resolve("main/java/io/outbox/tck/InMemoryOutboxStoreTck.java"),
                        "public abstract class")).replace("public abstract class MyOutboxStoreTck extends",
                        "class MyOutboxStoreTck extends").replaceAll("\\bMyOutboxStoreTck\\b", "MyOutboxStoreTckTest"));
    }

    /** Every class of the reference store's template has its copy in the skeleton. */
    @Test
    void everyClassOfTheTemplateIsInTheSkeleton() throws IOException {
        for (String template : new String[] {"InMemoryOutboxStore", "InMemoryOutboxStoreProvider", "InMemoryDeadLetters"}) {
            assertThat(TCK.resolve("main/java/io/outbox/tck/" + template + ".java")).exists();
            assertThat(SKELETON.resolve("main/java/" + renamed(template) + ".java")).exists();
        }
        String store = Files.readString(TCK.resolve("main/java/io/outbox/tck/InMemoryOutboxStore.java"));
        try (var files = Files.list(TCK.resolve("main/java/io/outbox/tck"))) {
            files.map(f -> f.getFileName().toString().replace(".java", ""))
                    .filter(name -> store.contains(name + "<") || store.contains(name + "."))
                    .forEach(name -> assertThat(name).as("a tck class the template uses")
                            .isIn("InMemoryOutboxStore", "InMemoryOutboxStoreProvider", "InMemoryDeadLetters"));
        }
    }

    /** From the first line starting with {@code start} to the end. */
    private static String code(Path file, String start) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        int at = text.startsWith(start) ? 0 : text.indexOf("\n" + start) + 1;
        assertThat(at).as("'%s' in %s", start, file).isPositive();
        return text.substring(at);
    }

    private static String renamed(String code) {
        return code.replace("InMemoryOutboxStore", "MyOutboxStore").replace("InMemoryDeadLetters", "MyDeadLetters");
    }
}
