package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The documentation's copies of repository files cannot drift: every fenced block right after a
 * {@code <!-- file: PATH -->} line, in README.md, CONTRIBUTING.md or a page under docs/, equals that
 * file, and the versions and counts the pages and the BOM state are the build's own.
 */
class ReadmeFilesTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern FILE_BLOCK =
            Pattern.compile("<!-- file: (\\S+) -->\\n```[a-z]*\\n(.*?)```\\n", Pattern.DOTALL);
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final Pattern BOM_ENTRY = Pattern.compile("<artifactId>(outbox-[a-z-]+)</artifactId>");

    @Test
    void everyFileTheDocumentationQuotesIsQuotedExactly() throws IOException {
        List<String> quotedFiles = new ArrayList<>();
        for (String page : pages()) {
            Matcher m = FILE_BLOCK.matcher(read(page));
            while (m.find()) {
                String file = m.group(1);
                quotedFiles.add(file);
                assertThat(m.group(2)).as("%s's copy of %s", page, file).isEqualTo(read(file));
            }
        }
        assertThat(quotedFiles).contains("examples/first-service/pom.xml",
                "examples/first-service/src/main/java/com/example/FirstService.java",
                "examples/first-service/src/main/resources/simplelogger.properties",
                "examples/spring-boot-service/src/main/resources/application.properties",
                "examples/spring-boot-service/src/main/java/com/example/orders/OrderService.java");
    }

    /** README.md, CONTRIBUTING.md and every page under docs/, as paths from the repository's root. */
    static List<String> pages() throws IOException {
        List<String> pages = new ArrayList<>(List.of("README.md", "CONTRIBUTING.md"));
        try (var files = Files.walk(ROOT.resolve("docs"))) {
            files.filter(f -> f.toString().endsWith(".md")).sorted()
                    .forEach(f -> pages.add(ROOT.relativize(f).toString().replace('\\', '/')));
        }
        return pages;
    }

    @Test
    void theFirstServiceSectionFollowsTheTwoSetUpCommands() {
        String readme = read("README.md");
        int commands = readme.indexOf("```\n./demo ");
        int scriptCommand = readme.indexOf("bash scripts/test.sh", commands);
        int firstService = readme.indexOf("\n## Your first service\n");
        assertThat(commands).isPositive();
        assertThat(readme.substring(0, commands)).doesNotContain("\n## ");
        assertThat(scriptCommand).isBetween(commands, firstService);
        assertThat(readme.substring(0, firstService).split("\n## ", -1)).hasSize(1);
    }

    @Test
    void theBomListsEveryPublishedModuleAtTheBuildsVersion() {
        String parent = read("pom.xml");
        String bom = read("outbox-bom/pom.xml");
        String version = between(parent, "<artifactId>outbox-parent</artifactId>\n  <version>", "</version>");
        assertThat(between(bom, "<outbox.version>", "</outbox.version>")).isEqualTo(version);
        assertThat(between(bom, "<artifactId>outbox-bom</artifactId>\n  <version>", "</version>")).isEqualTo(version);
        List<String> published = new ArrayList<>();
        Matcher modules = MODULE.matcher(parent);
        while (modules.find()) {
            String module = modules.group(1);
            if (!module.equals("outbox-bom") && !read(module + "/pom.xml").contains("<maven.deploy.skip>true")) {
                published.add(module);
            }
        }
        List<String> listed = new ArrayList<>();
        Matcher entries = BOM_ENTRY.matcher(bom.substring(bom.indexOf("<dependencyManagement>")));
        while (entries.find()) {
            listed.add(entries.group(1));
        }
        assertThat(listed).containsExactlyInAnyOrderElementsOf(published);
        assertThat(read("docs/extending.md")).contains("-DarchetypeVersion=" + version);
        assertThat(read("docs/getting-started.md"))
                .contains("<artifactId>outbox-bom</artifactId>\n        <version>" + version + "</version>");
    }

    @Test
    void theKitCountTheExtendingPageStatesIsTheKitsOwn() throws IOException {
        // The kit's tests: those in outbox-tck's main sources, the inbox kit (Inbox*) aside.
        long tests;
        try (var files = Files.list(ROOT.resolve("outbox-tck/src/main/java/io/outbox/tck"))) {
            tests = files.filter(f -> f.toString().endsWith(".java") && !f.getFileName().toString().startsWith("Inbox"))
                    .flatMap(f -> read(ROOT.relativize(f).toString()).lines())
                    .filter(line -> line.strip().equals("@Test")).count();
        }
        assertThat(read("docs/extending.md")).contains("Tests run: " + tests + ", Failures: 0, Errors: 0, Skipped: ")
                .contains("(" + tests + " today)");
    }

    @Test
    void theEmulatorQuickStartsUseTheDemoOptionsTheScriptPrints() {
        String script = read("scripts/emulators.sh");
        Map<String, String> pageOfOptions = Map.of("--relays 1 --writers 1 --orders 200", "docs/store-mongodb.md",
                "--orders 500", "docs/store-dynamodb.md");
        pageOfOptions.forEach((options, page) -> {
            assertThat(script).contains(options + "\"");
            assertThat(read(page)).contains(options);
        });
    }

    private static String between(String text, String before, String after) {
        int start = text.indexOf(before);
        assertThat(start).as("'%s' in the text", before).isNotNegative();
        start += before.length();
        return text.substring(start, text.indexOf(after, start));
    }

    private static String read(String file) {
        try {
            return Files.readString(ROOT.resolve(file), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new AssertionError("cannot read " + ROOT.resolve(file), e);
        }
    }
}
