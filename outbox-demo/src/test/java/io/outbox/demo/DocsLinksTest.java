package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every relative link in README.md, CONTRIBUTING.md and the pages under docs/ resolves: the file or
 * folder exists, and an anchor names a heading of the target page (GitHub's rules: lower case,
 * punctuation dropped, spaces as hyphens, repeats numbered) or an explicit {@code id}/{@code name}.
 */
class DocsLinksTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern LINK =
            Pattern.compile("!?\\[(?:[^\\]\\[]|\\[[^\\]]*])*]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern HEADING = Pattern.compile("^ {0,3}(#{1,6})\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");
    private static final Pattern INLINE_CODE = Pattern.compile("`+[^`]*`+");

    @Test
    void everyRelativeLinkAndAnchorOfTheDocumentationResolves() throws IOException {
        List<String> pages = ReadmeFilesTest.pages();
        assertThat(pages).contains("README.md", "CONTRIBUTING.md", "docs/getting-started.md", "docs/concepts.md");
        List<String> broken = new ArrayList<>();
        int links = 0;
        for (String page : pages) {
            List<String> targets = links(read(ROOT.resolve(page)));
            links += targets.size();
            broken.addAll(problems(ROOT.resolve(page), targets, path -> anchors(read(path))));
        }
        assertThat(links).as("relative links found").isGreaterThan(100);
        assertThat(broken).as("broken links").isEmpty();
    }

    @Test
    void aMissingFileOrAnchorIsReported() {
        Path page = ROOT.resolve("docs/example.md");
        String text = """
                # Title

                ## Running the `relay`: step 2!
                ## Running the `relay`: step 2!
                <a id="kept"></a>

                [ok](#running-the-relay-step-2) [ok](#running-the-relay-step-2-1) [ok](#kept) [ok](../README.md)
                [ok](https://example.com/x.md#nothing) `[not a link](nowhere.md)`
                [bad](#running-the-relay-step-2-2) [bad](missing.md) [bad](../README.md#no-such-heading)
                ```
                [in a fence](absent.md)
                ```
                """;
        List<String> targets = links(text);
        assertThat(targets).doesNotContain("nowhere.md", "absent.md").contains("https://example.com/x.md#nothing");
        Function<Path, Set<String>> anchorsOf = path -> path.equals(page) ? anchors(text) : anchors(read(path));
        assertThat(problems(page, targets, anchorsOf)).containsExactly(
                "docs/example.md: #running-the-relay-step-2-2 (no such anchor in docs/example.md)",
                "docs/example.md: missing.md (no such file)",
                "docs/example.md: ../README.md#no-such-heading (no such anchor in README.md)");
    }

    /** The link targets of a Markdown text, outside fenced blocks and inline code. */
    static List<String> links(String markdown) {
        List<String> targets = new ArrayList<>();
        boolean fenced = false;
        for (String line : markdown.split("\n", -1)) {
            if (line.strip().startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            if (!fenced) {
                Matcher m = LINK.matcher(INLINE_CODE.matcher(line).replaceAll(""));
                while (m.find()) {
                    targets.add(m.group(1));
                }
            }
        }
        return targets;
    }

    /** Each relative target of {@code page} that does not resolve, with the reason. */
    static List<String> problems(Path page, List<String> targets, Function<Path, Set<String>> anchorsOf) {
        List<String> problems = new ArrayList<>();
        String from = ROOT.relativize(page).toString().replace('\\', '/');
        for (String target : targets) {
            if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
                continue; // https:, mailto: and the like
            }
            int hash = target.indexOf('#');
            String file = hash < 0 ? target : target.substring(0, hash);
            Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
            if (!file.isEmpty() && !Files.exists(resolved)) {
                problems.add(from + ": " + target + " (no such file)");
            } else if (hash >= 0 && !anchorsOf.apply(resolved).contains(target.substring(hash + 1))) {
                problems.add(from + ": " + target + " (no such anchor in "
                        + ROOT.relativize(resolved).toString().replace('\\', '/') + ")");
            }
        }
        return problems;
    }

    /** The anchors GitHub gives a Markdown page: one per heading, repeats numbered, and explicit ids. */
    static Set<String> anchors(String markdown) {
        Set<String> anchors = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean fenced = false;
        for (String line : markdown.split("\n", -1)) {
            if (line.strip().startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            if (fenced) {
                continue;
            }
            Matcher heading = HEADING.matcher(line);
            if (heading.matches()) {
                String slug = slug(heading.group(2));
                int n = seen.merge(slug, 1, Integer::sum) - 1;
                anchors.add(n == 0 ? slug : slug + "-" + n);
            }
            Matcher html = HTML_ANCHOR.matcher(line);
            while (html.find()) {
                anchors.add(html.group(1));
            }
        }
        return anchors;
    }

    /** GitHub's anchor for a heading: link text kept, lower case, punctuation dropped, spaces as hyphens. */
    static String slug(String heading) {
        String text = heading.replaceAll("!?\\[([^\\]]*)]\\([^)]*\\)", "$1").replaceAll("<[^>]+>", "");
        return text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{M}\\p{N}\\p{Pc}\\- ]", "").replace(' ', '-');
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
