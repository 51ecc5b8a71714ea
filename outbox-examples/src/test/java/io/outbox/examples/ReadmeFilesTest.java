package io.outbox.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's copies of repository files cannot drift: every fenced block right after a
 * {@code <!-- file: PATH -->} line equals that file, and the versions and counts the README and the
 * BOM state are the build's own.
 */
class ReadmeFilesTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern FILE_BLOCK =
            Pattern.compile("<!-- file: (\\S+) -->\\n```[a-z]*\\n(.*?)```\\n", Pattern.DOTALL);
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final Pattern BOM_ENTRY = Pattern.compile("<artifactId>(outbox-[a-z-]+)</artifactId>");

    @Test
    void everyFileTheReadmeQuotesIsQuotedExactly() throws IOException {
        Map<String, String> blocks = new LinkedHashMap<>();
        Matcher m = FILE_BLOCK.matcher(read("README.md"));
        while (m.find()) {
            blocks.put(m.group(1), m.group(2));
        }
        assertThat(blocks).containsKeys("examples/first-service/pom.xml",
                "examples/first-service/src/main/java/com/example/FirstService.java",
                "examples/first-service/src/main/resources/simplelogger.properties");
        blocks.forEach((file, quoted) -> assertThat(quoted).as("README's copy of %s", file).isEqualTo(read(file)));
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
        assertThat(read("README.md")).contains("-DarchetypeVersion=" + version)
                .contains("<artifactId>outbox-bom</artifactId>\n        <version>" + version + "</version>");
    }

    @Test
    void theKitCountTheReadmeStatesIsTheKitsOwn() throws IOException {
        // The kit's tests: those in outbox-tck's main sources, the inbox kit (Inbox*) aside.
        long tests;
        try (var files = Files.list(ROOT.resolve("outbox-tck/src/main/java/io/outbox/tck"))) {
            tests = files.filter(f -> f.toString().endsWith(".java") && !f.getFileName().toString().startsWith("Inbox"))
                    .flatMap(f -> read(ROOT.relativize(f).toString()).lines())
                    .filter(line -> line.strip().equals("@Test")).count();
        }
        assertThat(read("README.md")).contains("Tests run: " + tests + ", Failures: 0, Errors: 0, Skipped: ")
                .contains("(" + tests + " today)");
    }

    @Test
    void theEmulatorQuickStartsUseTheDemoOptionsTheScriptPrints() {
        String script = read("scripts/emulators.sh");
        String readme = read("README.md");
        for (String options : List.of("--relays 1 --writers 1 --orders 200", "--orders 500")) {
            assertThat(script).contains(options + "\"");
            assertThat(readme).contains(options);
        }
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
