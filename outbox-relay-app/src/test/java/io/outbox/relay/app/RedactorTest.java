package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The redaction utility and the redacting stream the standalone relay puts on stdout and stderr. */
class RedactorTest {

    private static final Redactor PATTERNS = Redactor.patternsOnly();

    @Test
    void hidesThePasswordOfAUrlsUserInfoKeepingTheUser() {
        assertThat(PATTERNS.redact("jdbc:postgresql://app:s3cr3t@db:5432/orders"))
                .isEqualTo("jdbc:postgresql://app:[hidden]@db:5432/orders");
        assertThat(PATTERNS.redact("connecting to mongodb://user:p%40ss@h1:27017,h2:27017/shop?replicaSet=rs0"))
                .isEqualTo("connecting to mongodb://user:[hidden]@h1:27017,h2:27017/shop?replicaSet=rs0");
        assertThat(PATTERNS.redact("mongodb+srv://u:pw@cluster0.example.net/db"))
                .isEqualTo("mongodb+srv://u:[hidden]@cluster0.example.net/db");
        assertThat(PATTERNS.redact("redis://:only-a-password@cache:6379"))
                .isEqualTo("redis://:[hidden]@cache:6379");
    }

    @Test
    void hidesAPasswordThatContainsAnAtSignUpToTheHost() {
        assertThat(PATTERNS.redact("mongodb://user:p@ss@host/db")).isEqualTo("mongodb://user:[hidden]@host/db");
    }

    @Test
    void hidesPasswordAndSecretAssignmentsInUrlsPropertiesAndJaas() {
        assertThat(PATTERNS.redact("jdbc:postgresql://db/app?user=app&password=s3cr3t&ssl=true"))
                .isEqualTo("jdbc:postgresql://db/app?user=app&password=[hidden]&ssl=true");
        assertThat(PATTERNS.redact("jdbc:h2:./outbox;USER=sa;PASSWORD=s3cr3t;MODE=PostgreSQL"))
                .isEqualTo("jdbc:h2:./outbox;USER=sa;PASSWORD=[hidden];MODE=PostgreSQL");
        assertThat(PATTERNS.redact("PlainLoginModule required username=\"alice\" password=\"a b;c\";"))
                .isEqualTo("PlainLoginModule required username=\"alice\" password=[hidden];");
        assertThat(PATTERNS.redact("ssl.keystore.password = changeit, ssl.keystore.type = JKS"))
                .isEqualTo("ssl.keystore.password = [hidden], ssl.keystore.type = JKS");
        assertThat(PATTERNS.redact("secret.access.key=wJalrXUtnFEMI")).isEqualTo("secret.access.key=[hidden]");
    }

    @Test
    void leavesOrdinaryTextAloneAndIsIdempotent() {
        String text = "relay started relayId=r1 bucketCount=8 url=jdbc:postgresql://db:5432/app user=app "
                + "http://host/path?a=b mongodb://user@host/db";
        assertThat(PATTERNS.redact(text)).isEqualTo(text);
        String once = PATTERNS.redact("jdbc:postgresql://app:s3cr3t@db/x?password=y");
        assertThat(PATTERNS.redact(once)).isEqualTo(once);
        assertThat(PATTERNS.redact(null)).isNull();
        assertThat(PATTERNS.redact("")).isEmpty();
        String unset = "#store.password=\nstore.pool.size=4\npassword= \n";
        assertThat(PATTERNS.redact(unset)).isEqualTo(unset);
    }

    @Test
    void hidesKnownSecretsWhereverTheyOccurLongestFirst() {
        Redactor redactor = Redactor.of(List.of("abc", "abcdef", ""));
        assertThat(redactor.knownSecrets()).isEqualTo(2);
        assertThat(redactor.redact("x=abcdef y=abc zabcz")).isEqualTo("x=[hidden] y=[hidden] z[hidden]z");
        assertThat(redactor.toString()).doesNotContain("abc");
    }

    @Test
    void findsTheSecretsEmbeddedInASettingsValueAlsoPercentDecoded() {
        assertThat(Redactor.embeddedSecrets("mongodb://user:p%40ss%2Bw@host/db"))
                .containsExactly("p%40ss%2Bw", "p@ss+w");
        assertThat(Redactor.embeddedSecrets("jdbc:mariadb://db/app?user=a&password=pw1"))
                .containsExactly("pw1");
        assertThat(Redactor.embeddedSecrets("PlainLoginModule required username=\"u\" password=\"pw 2\";"))
                .containsExactly("pw 2");
        assertThat(Redactor.embeddedSecrets("jdbc:postgresql://db/app")).isEmpty();
        assertThat(Redactor.embeddedSecrets(null)).isEmpty();
    }

    @Test
    void tellsSecretKeysByName() {
        assertThat(List.of("password", "ssl.key.password", "sasl.jaas.config", "secret.access.key",
                "sasl.oauthbearer.client.credentials.client.secret", "my.passphrase"))
                .allMatch(Redactor::isSecretKey);
        assertThat(List.of("url", "user", "bootstrap.servers", "access.key.id", "table.prefix"))
                .noneMatch(Redactor::isSecretKey);
    }

    @Test
    void theStreamRedactsWholeLinesWhateverTheWriteBoundaries() throws IOException {
        ByteArrayOutputStream target = new ByteArrayOutputStream();
        RedactingOutputStream stream = new RedactingOutputStream(target, StandardCharsets.UTF_8);
        stream.redactor(Redactor.of(List.of("topsecret", "pässwörd")));
        byte[] text = "a topsecret b\nurl=jdbc:x://u:pw@h/db\nc pässwörd d\npartial top"
                .getBytes(StandardCharsets.UTF_8);
        for (byte b : text) {
            stream.write(new byte[] {b}, 0, 1); // one byte at a time: secrets and UTF-8 sequences split
        }
        assertThat(target.toString(StandardCharsets.UTF_8))
                .isEqualTo("a [hidden] b\nurl=jdbc:x://u:[hidden]@h/db\nc [hidden] d\n");
        stream.write("secret\n".getBytes(StandardCharsets.UTF_8));
        assertThat(target.toString(StandardCharsets.UTF_8)).endsWith("c [hidden] d\npartial [hidden]\n");
        stream.write('x');
        stream.flush();
        assertThat(target.toString(StandardCharsets.UTF_8)).endsWith("partial [hidden]\nx");
    }

    @Test
    void theStreamMatchesSecretsInTheCharsetTheWriterUsed() {
        ByteArrayOutputStream target = new ByteArrayOutputStream();
        RedactingOutputStream stream = new RedactingOutputStream(target, StandardCharsets.ISO_8859_1);
        stream.redactor(Redactor.of(List.of("pässwörd")));
        try (PrintStream latin1 = new PrintStream(stream, true, StandardCharsets.ISO_8859_1);
             PrintStream utf8 = new PrintStream(stream, true, StandardCharsets.UTF_8)) {
            latin1.println("1 pässwörd");
            utf8.println("2 pässwörd");
        }
        assertThat(target.toString(StandardCharsets.ISO_8859_1)).isEqualTo("1 [hidden]\n2 [hidden]\n");
    }

    @Test
    void theStreamPassesAVeryLongLineOnInPieces() throws IOException {
        ByteArrayOutputStream target = new ByteArrayOutputStream();
        RedactingOutputStream stream = new RedactingOutputStream(target, StandardCharsets.UTF_8);
        byte[] line = "y".repeat(RedactingOutputStream.MAX_LINE * 2 + 10).getBytes(StandardCharsets.UTF_8);
        stream.write(line);
        assertThat(target.size()).isEqualTo(RedactingOutputStream.MAX_LINE * 2);
        stream.close();
        assertThat(target.size()).isEqualTo(line.length);
    }
}
