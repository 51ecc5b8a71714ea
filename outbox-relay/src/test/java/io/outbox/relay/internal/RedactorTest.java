package io.outbox.relay.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.config.ConfigDef;
import org.junit.jupiter.api.Test;

/** The redactor every printer, log line and endpoint goes through. */
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
                .allMatch(Redactor::isSecretKey)
                .allMatch(name -> Redactor.isSecretSetting(name, ConfigDef.Type.STRING));
        assertThat(List.of("url", "user", "bootstrap.servers", "table.prefix", "batch.size", "client.id"))
                .noneMatch(Redactor::isSecretKey);
    }

    @Test
    void theWiderRuleHidesUndeclaredCredentialSettingsByName() {
        // Passed through to a serializer or a login module: no definition says what they hold.
        assertThat(List.of("basic.auth.user.info", "bearer.auth.token", "api.key", "api.secret", "access.key.id",
                "aws_session_token", "schema.registry.user.info", "Authorization", "private.key.pem", "sr.apiKey",
                "cookie", "request.signature", "db.pwd"))
                .allMatch(Redactor::isSecretKey)
                .allMatch(name -> Redactor.isSecretSetting(name, null));
        // Declared by Kafka with a type that is no password: the definition says what they hold.
        assertThat(List.of("key.serializer", "partitioner.ignore.keys", "ssl.keystore.location",
                "sasl.oauthbearer.token.endpoint.url", "ssl.keymanager.algorithm"))
                .allMatch(Redactor::isSecretKey)
                .noneMatch(name -> Redactor.isSecretSetting(name, ConfigDef.Type.STRING));
        assertThat(Redactor.isSecretSetting("ssl.keystore.key", ConfigDef.Type.PASSWORD)).isTrue();
        assertThat(Redactor.isSecretSetting("sasl.oauthbearer.client.credentials.client.id", ConfigDef.Type.STRING))
                .as("a declared setting named with an always-secret word").isTrue();
    }

    @Test
    void hidesKeyValueFormsWithEqualsOrColonQuotedOrNot() {
        assertThat(PATTERNS.redact("secret: s3cr3t and token:abc")).isEqualTo("secret: [hidden] and token:[hidden]");
        assertThat(PATTERNS.redact("{\"password\": \"s3 cr3t\", \"user\": \"app\"}"))
                .isEqualTo("{\"password\": [hidden], \"user\": \"app\"}");
        assertThat(PATTERNS.redact("'api_key': 'k1'")).isEqualTo("'api_key': [hidden]");
        assertThat(PATTERNS.redact("GET /x?access_token=abc.def&page=2"))
                .isEqualTo("GET /x?access_token=[hidden]&page=2");
        assertThat(PATTERNS.redact("Authorization: Bearer eyJhbGciOi.x.y; next"))
                .isEqualTo("Authorization: [hidden]; next");
        assertThat(PATTERNS.redact("Authorization: Basic dXNlcjpwdw==")).isEqualTo("Authorization: [hidden]");
        assertThat(PATTERNS.redact("basic.auth.user.info=sr:pw bearer.auth.token=t1 x-api-key: k2 credentials=c3"))
                .isEqualTo("basic.auth.user.info=[hidden] bearer.auth.token=[hidden] x-api-key: [hidden] "
                        + "credentials=[hidden]");
        assertThat(PATTERNS.redact("password=\"never closed")).as("an unterminated quote hides to the end")
                .isEqualTo("password=[hidden]");
        assertThat(PATTERNS.redact("url=jdbc:h2:mem:x;PASSWORD=pw;MODE=x"))
                .isEqualTo("url=jdbc:h2:mem:x;PASSWORD=[hidden];MODE=x");
        // Key words that also name harmless things in text are left alone there.
        String harmless = "record key=order-1 auth=SCRAM-SHA-512 topic: orders "
                + "sasl.oauthbearer.token.endpoint.url=https://idp.example/token";
        assertThat(PATTERNS.redact(harmless)).isEqualTo(harmless);
    }

    @Test
    void redactionIsIdempotentForEveryForm() {
        for (String text : List.of("https://token:abc@host/x", "secret: s3cr3t", "{\"password\": \"x\"}",
                "Authorization: Bearer abc", "jdbc:postgresql://app:s3cr3t@db/x?password=y")) {
            String once = PATTERNS.redact(text);
            assertThat(once).as(text).contains(Redactor.HIDDEN).doesNotContain("abc", "s3cr3t");
            assertThat(PATTERNS.redact(once)).as(text).isEqualTo(once);
        }
    }

    @Test
    void overlappingKnownSecretsAreHiddenAsOneStretch() {
        Redactor redactor = Redactor.of(List.of("abc", "cde", "xy"));
        assertThat(redactor.redact("1abcde2 xyxy 3")).isEqualTo("1[hidden]2 [hidden][hidden] 3");
    }

    @Test
    void manyKnownSecretsAreFoundInOnePass() {
        List<String> secrets = new ArrayList<>();
        for (int i = 0; i < 50_000; i++) {
            secrets.add("value-" + i + "-x");
        }
        Redactor redactor = Redactor.of(secrets);
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 50_000; i++) {
            text.append("k").append(i).append('=').append("value-").append(i).append("-x ");
        }
        String redacted = redactor.redact(text.toString());
        assertThat(redacted).doesNotContain("value-").startsWith("k0=[hidden] k1=[hidden] ")
                .endsWith("k49999=[hidden] ");
    }

    @Test
    void adversarialTextsTakeLinearTime() {
        // Each would make a backtracking pattern quadratic; run without a timing assertion.
        int n = 1 << 18; // quadratic work would take minutes here
        for (String text : List.of("a.".repeat(n / 2), "password".repeat(n / 8), "a://b:".repeat(n / 6),
                "k=".repeat(n / 2), "x".repeat(n), "password=\"".repeat(n / 10), "a://" + "@".repeat(n))) {
            assertThat(PATTERNS.redact(text)).isNotNull();
            assertThat(Redactor.embeddedSecrets(text)).isNotNull();
        }
    }

    @Test
    void displayRedactsThenEscapesWhatATerminalObeys() {
        Redactor redactor = Redactor.of(List.of("pw1"));
        assertThat(redactor.display("orders\n\u001b[31mpw1\u0007\u202e")).isEqualTo(
                "orders\\u000a\\u001b[31m[hidden]\\u0007\\u202e");
        assertThat(redactor.oneLine("a\n  password=x\u001b")).isEqualTo("a password=[hidden]");
        assertThat(redactor.oneLine("a\n  b\u001b")).isEqualTo("a b\\u001b");
        assertThat(redactor.display(null)).isEqualTo("null");
    }

    @Test
    void theStandaloneRelayPageNamesTheWordsOfBothNameRules() throws IOException {
        Path dir = Path.of("").toAbsolutePath();
        while (!Files.exists(dir.resolve("README.md"))) {
            dir = dir.getParent();
        }
        String readme = Files.readString(dir.resolve("docs/standalone-relay.md")).replaceAll("\\s+", " ");
        assertThat(readme).contains("of settings whose name contains " + listed(Redactor.SECRET_WORDS) + ", of",
                "declares and whose name contains " + listed(Redactor.UNDECLARED_SECRET_WORDS) + " (");
    }

    /** {@code `a`, `b` or `c`}. */
    private static String listed(List<String> words) {
        List<String> quoted = words.stream().map(w -> "`" + w + "`").toList();
        return String.join(", ", quoted.subList(0, quoted.size() - 1)) + " or " + quoted.get(quoted.size() - 1);
    }
}
