package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code ./demo} and {@code bin/outbox-relay} pass {@code MAVEN_ARGS} to the build they run, once:
 * themselves for a Maven that ignores it (3.8), not for one that reads it itself (3.9 and later).
 * Each script runs from a copy of the checkout's scripts with a recording {@code mvn} on the path.
 */
class MavenArgsScriptTest {

    private static final Path CHECKOUT = Path.of(System.getProperty("user.dir")).getParent();

    @ParameterizedTest(name = "{0} with Maven {1}")
    @CsvSource({
        "demo, 3.8.7, true",
        "demo, 3.9.9, false",
        "bin/outbox-relay, 3.8.7, true",
        "bin/outbox-relay, 4.0.0, false"
    })
    void theBuildGetsMavenArgsOnce(String script, String mavenVersion, boolean scriptPassesThem, @TempDir Path root)
            throws IOException, InterruptedException {
        Files.createDirectories(root.resolve("bin"));
        Files.createDirectories(root.resolve("scripts/lib"));
        for (String file : List.of("demo", "bin/outbox-relay", "scripts/lib/maven-args.sh")) {
            Files.copy(CHECKOUT.resolve(file), root.resolve(file));
        }
        Path fakeBin = Files.createDirectories(root.resolve("fake-bin"));
        Path recorded = root.resolve("mvn-args.txt");
        Path mvn = fakeBin.resolve("mvn");
        Files.writeString(mvn, "#!/usr/bin/env bash\n"
                + "if [[ \"${1:-}\" == -v ]]; then echo \"Apache Maven " + mavenVersion + " (fake)\"; exit 0; fi\n"
                + "printf '%s\\n' \"$@\" > '" + recorded + "'\n"
                + "exit 1\n", StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(mvn, PosixFilePermissions.fromString("rwxr-xr-x"));

        ProcessBuilder builder = new ProcessBuilder("bash", root.resolve(script).toString(), "--help")
                .directory(root.toFile()).redirectErrorStream(true)
                .redirectOutput(root.resolve("script-output.txt").toFile());
        Map<String, String> env = builder.environment();
        env.put("PATH", fakeBin + ":" + env.get("PATH"));
        env.put("MAVEN_ARGS", "-s mirror-settings.xml  -o");
        Process process = builder.start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("%s finished", script).isTrue();

        String output = Files.readString(root.resolve("script-output.txt"));
        assertThat(process.exitValue()).as("exit code of %s after the failed build; output: %s", script, output)
                .isNotZero();
        assertThat(recorded).as("%s ran mvn to build; output: %s", script, output).exists();
        List<String> args = Files.readAllLines(recorded);
        if (scriptPassesThem) {
            assertThat(args).as("mvn's arguments").containsSubsequence("-s", "mirror-settings.xml", "-o", "package");
        } else {
            assertThat(args).as("mvn's arguments: Maven %s reads MAVEN_ARGS itself", mavenVersion)
                    .doesNotContain("-s", "mirror-settings.xml", "-o").contains("package");
        }
    }
}
