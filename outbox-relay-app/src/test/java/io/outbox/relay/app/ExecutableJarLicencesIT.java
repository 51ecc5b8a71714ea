package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/** The executable jar carries the project's LICENSE, a NOTICE naming its non-Apache components, and their licence texts. */
class ExecutableJarLicencesIT {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void theJarHoldsLicenseNoticeAndTheTextsOfTheNonApacheLicencesOfWhatItBundles() throws IOException {
        try (JarFile jar = new JarFile(RelayProcess.jar().toFile())) {
            assertThat(entry(jar, "LICENSE")).isEqualTo(Files.readString(ROOT.resolve("LICENSE")))
                    .contains("Apache License").contains("Version 2.0, January 2004");
            String notice = entry(jar, "NOTICE");
            assertThat(notice).isEqualTo(Files.readString(ROOT.resolve("NOTICE")));
            assertThat(notice).contains("mariadb-java-client", "LGPL-2.1", "h2", "MPL-2.0", "postgresql", "BSD-2-Clause",
                    "zstd-jni", "slf4j-api", "checker-qual", "reactive-streams", "MIT-0", "lettuce-core", "redis-authx-core",
                    "The NOTICE of Apache Kafka");
            for (String text : new String[] {"LGPL-2.1.txt", "MPL-2.0.txt", "postgresql-BSD-2-Clause.txt",
                "slf4j-MIT.txt", "checker-qual-MIT.txt", "lettuce-MIT.txt"}) {
                assertThat(entry(jar, "META-INF/licenses/" + text)).as(text)
                        .isEqualTo(Files.readString(ROOT.resolve("licenses").resolve(text)));
            }
            assertThat(jar.getManifest().getMainAttributes().getValue("Automatic-Module-Name"))
                    .isEqualTo("io.outbox.relay.app");
        }
    }

    private static String entry(JarFile jar, String name) throws IOException {
        assertThat(jar.getJarEntry(name)).as(name).isNotNull();
        try (InputStream in = jar.getInputStream(jar.getJarEntry(name))) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
