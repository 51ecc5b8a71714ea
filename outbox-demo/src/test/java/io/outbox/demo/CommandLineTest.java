package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/** Options are checked before anything starts: a bad value exits with status 2 and a message naming it. */
class CommandLineTest {

    /** What a run printed and returned. */
    record Outcome(int status, String out, String err) {
    }

    /** Runs the command line as {@code ./demo} does, capturing its output. */
    static Outcome run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = new OutboxDemo().execute(new PrintWriter(out), new PrintWriter(err), args);
        return new Outcome(status, out.toString(), err.toString());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "--orders 0                                    | --orders must be between 1 and 10000000 but was 0",
        "--customers -3                                | --customers must be between 1 and 1000000 but was -3",
        "--writers 8 --customers 4                     | --writers 8 is more than --customers 4",
        "--relays 0                                    | --relays must be between 1 and 64 but was 0",
        "--buckets 0                                   | --buckets must be between 1 and 65536 but was 0",
        "--batch-size 100001                           | --batch-size must be between 1 and 100000 but was 100001",
        "--partitions 0                                | --partitions must be between 1 and 1000 but was 0",
        "--partitions 1001                             | --partitions must be between 1 and 1000 but was 1001",
        "--buckets 65537                               | --buckets must be between 1 and 65536 but was 65537",
        "--orders 10000001                             | --orders must be between 1 and 10000000 but was 10000001",
        "--orders 99999999999                          | Invalid value for option '--orders': '99999999999' is not an int",
        "--writers 257                                 | --writers must be between 1 and 256 but was 257",
        "--relays 65                                   | --relays must be between 1 and 64 but was 65",
        "--rate 1000001                                | --rate must be between 0 and 1000000 but was 1000001",
        "--batch-size 0                                | --batch-size must be between 1 and 100000 but was 0",
        "--timeout 3000000h                            | Invalid value for option '--timeout': '3000000h' is longer than the most allowed, 24h",
        "--timeout 25h                                 | '25h' is longer than the most allowed, 24h",
        "--timeout 99999999999999999999h               | '99999999999999999999h' is not a duration",
        "--timeout P1000000000D                        | 'P1000000000D' is longer than the most allowed, 24h",
        "--timeout PT-5S                               | Invalid value for option '--timeout': 'PT-5S' is not a positive duration",
        "bench --timeout 3000000h                      | Invalid value for option '--timeout': '3000000h' is longer",
        "bench --timeout 0                             | Invalid value for option '--timeout': '0' is not a positive duration",
        "bench --partitions 5000                       | --partitions must be between 1 and 1000 but was 5000",
        "bench --buckets 0                             | --buckets must be between 1 and 65536 but was 0",
        "bench --relays 0                              | --relays must be between 1 and 64 but was 0",
        "bench --value-bytes 900001                    | --value-bytes must be between 0 and 900000 but was 900001",
        "bench --customers 0                           | --customers must be between 1 and 1000000 but was 0",
        "--rate -5                                     | --rate must be between 0 and 1000000 but was -5",
        "--timeout 0s                                  | Invalid value for option '--timeout': '0s' is not a positive duration",
        "--timeout soon                                | 'soon' is not a duration",
        "--orders many                                 | '--orders'",
        "--store redis                                 | 'redis' is not a store; use one of jdbc, mongodb, dynamodb",
        "--store mongodb                               | --store mongodb needs --mongodb-uri",
        "--store dynamodb --jdbc-url jdbc:h2:mem:x     | --jdbc-url is only used with --store jdbc, not with --store dynamodb",
        "--jdbc-url jdbc:h2:mem:x --mongodb-uri mongodb://h | options of several stores given (--jdbc-url, --mongodb-uri)",
        "--jdbc-url jdbc:oracle:thin:@db:1521:x        | --jdbc-url 'jdbc:oracle:thin:@db:1521:x' is not supported: the demo runs on JDBC URLs starting with jdbc:h2:, jdbc:postgresql:, jdbc:mariadb: (for MySQL, use jdbc:mariadb:)",
        "--jdbc-url jdbc:mysql://db:3306/x?password=s3cr3t | --jdbc-url 'jdbc:mysql://db:3306/x?password=[hidden]' is not supported: the demo runs on JDBC URLs starting with jdbc:h2:, jdbc:postgresql:, jdbc:mariadb: (for MySQL, use jdbc:mariadb:)",
        "--mongodb-uri http://not-mongo                | --mongodb-uri is not a MongoDB connection string",
        "--dynamodb-endpoint localhost                 | --dynamodb-endpoint 'localhost' is not a URL",
        "--topic bad/topic                             | --topic: topic 'bad/topic' is not a legal Kafka topic name",
        "--bootstrap-servers=                          | --bootstrap-servers must not be empty",
        "bench --messages 0                            | --messages must be between 1 and 10000000 but was 0",
        "bench --runs 0                                | --runs must be between 1 and 100 but was 0",
        "bench --warmup-messages -1                    | --warmup-messages must be between 0 and 10000000 but was -1",
        "bench --store-concurrency 0                   | --store-concurrency must be between 1 and 256 but was 0",
        "bench --store-concurrency x                   | Invalid value for option '--store-concurrency'",
        "bench --broker-pid -3                         | --broker-pid -3: no such process on this machine",
        "bench --db-pid 99999999999                    | --db-pid 99999999999: no such process on this machine",
        "bench --broker-pid x                          | Invalid value for option '--broker-pid'",
        "--no-such-option                              | Unknown option: '--no-such-option'",
        "--notify pigeon                               | 'pigeon' is not a wake-up mode; use one of local, none, redis, postgres",
        "--notify postgres                             | --notify postgres needs the store on PostgreSQL (--jdbc-url jdbc:postgresql://...)",
        "--notify postgres --jdbc-url jdbc:mariadb://db/x | --notify postgres needs the store on PostgreSQL",
        "--redis-uri redis://cache:6379                | --redis-uri is for --notify redis, but --notify is local",
        "sustained --rate 0                            | --rate must be between 1 and 1000000 but was 0",
        "sustained --writers 1                         | --writers 1 is fewer than the 2 --transaction-sizes 1,10: each size needs a writer",
        "sustained --transaction-sizes 1,501           | --transaction-sizes must be between 1 and 500 but was 501",
        "sustained --duration 4m                       | --duration 240s is shorter than twice --drift-minutes 5 of --minute 60s",
        "sustained --minute 500ms                      | --minute must be at least 1s but was 500ms",
        "sustained --drift-minutes 0                   | --drift-minutes must be between 1 and 1000 but was 0",
        "sustained --search --max-rate 10              | --max-rate must be between 500 and 10000000 but was 10",
        "sustained --search --min-rate 0               | --min-rate must be between 1 and 500 but was 0",
        "sustained --max-slope -1                      | --max-slope must be between 0 and 1000000 but was -1",
        "sustained --transactions                      | --transactions is not supported by sustained",
        "sustained --db-pid 0                          | --db-pid 0: no such process on this machine",
        "sustained --steady 0s                         | Invalid value for option '--steady': '0s' is not a positive duration",
        "fleet-sim --relays 0                          | --relays must be at least 1 but was 0",
        "fleet-sim --buckets 65537                     | --buckets must be 1-65536 but was 65537",
        "fleet-sim --lease-duration 10s --renew-interval 10s | --renew-interval must be shorter than --lease-duration but was 10s >= 10s",
        "fleet-sim --store-latency-ms -1               | --store-latency-ms and --max-clock-offset-ms must not be negative",
        "fleet-sim --rounds 0                          | --rounds must be at least 1 but was 0",
        "fleet-sim --scaling 0                         | --scaling takes bucket counts 1-65536 or 'none' but got '0'",
        "fleet-sim --churn-runs -1                     | --churn-runs must not be negative but was -1",
        "fleet-sim --churn-buckets 0                   | --churn-buckets must be 1-65536 but was 0",
    })
    void aBadOptionExitsWithStatus2NamingIt(String args, String message) {
        Outcome outcome = run(split(args));

        assertThat(outcome.status()).isEqualTo(OutboxDemo.EXIT_USAGE);
        assertThat(outcome.err()).contains(message).contains("--help' for the options");
        assertThat(outcome.out()).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "--jdbc-url jdbc:sqlserver://db:1433;user=sa;password=s3cr3t",
        "--jdbc-url jdbc:oracle:thin:app/s3cr3t@db:1521:x --jdbc-password s3cr3t",
        "--jdbc-url jdbc:db2://app:s3cr3t@db:50000/x",
        "--jdbc-url jdbc:postgresql://db/x?password=s3cr3t --orders 0",
        "--jdbc-url jdbc:postgresql://app:s3cr3t@db/x --timeout 3000000h",
        "--jdbc-password s3cr3t --writers 0",
        "--store mongodb --mongodb-uri mongodb://app:s3cr3t@db/x --relays 0",
        "bench --jdbc-url jdbc:oracle:thin:app/s3cr3t@db:1521:x --jdbc-password s3cr3t",
    })
    void noErrorShowsAPassword(String args) {
        Outcome outcome = run(split(args));

        assertThat(outcome.status()).isEqualTo(OutboxDemo.EXIT_USAGE);
        assertThat(outcome.err()).startsWith("error: ").doesNotContain("s3cr3t");
    }

    @Test
    void anUnsupportedJdbcUrlIsShownWithoutItsPassword() {
        Outcome outcome = run("--jdbc-url", "jdbc:sqlserver://db;password=s3cr3t");
        assertThat(outcome.err()).contains("--jdbc-url 'jdbc:sqlserver://db;password=[hidden]' is not supported");
    }

    @Test
    void theRedactorOfACommandKnowsThePasswordAndTheSecretsInItsUrls() {
        CommandLine commandLine = new CommandLine(new RunCommand());
        commandLine.parseArgs("--jdbc-url", "jdbc:postgresql://db/x?password=in-url", "--jdbc-password", "pw-opt");
        assertThat(StoreOptions.redactor(commandLine.getCommandSpec())
                .redact("FATAL: no login with pw-opt to db (url had in-url)"))
                .isEqualTo("FATAL: no login with [hidden] to db (url had [hidden])");
    }

    private static String[] split(String args) {
        return args.trim().split("\\s+");
    }

    @Test
    void helpListsTheCommandsAndEachCommandHasItsOwn() {
        Outcome top = run("--help");
        assertThat(top.status()).isZero();
        assertThat(top.out()).contains("Commands:", "run, demo", "bench", "sustained");

        Outcome demo = run("run", "--help");
        assertThat(demo.status()).isZero();
        assertThat(demo.out()).contains("--store", "--jdbc-url", "--mongodb-uri", "--dynamodb-endpoint",
                "--bootstrap-servers", "--relays", "--orders", "--customers", "--writers", "--buckets", "--batch-size",
                "--topic", "--partitions", "--rate", "--timeout", "--seed", "--keep", "--no-progress", "Exit status:",
                "at most 1000", "at most 24h");
        for (String help : List.of(top.out(), demo.out())) {
            assertThat(help).containsPattern("\n  0 +every committed order delivered")
                    .containsPattern("\n  1 +messages lost").containsPattern("\n  2 +invalid options")
                    .containsPattern("\n  3 +the run failed").containsPattern("\n  4 +a customer's orders")
                    .containsPattern("\n  130 +interrupted \\(Ctrl-C\\)");
        }

        Outcome bench = run("bench", "-h");
        assertThat(bench.status()).isZero();
        assertThat(bench.out()).contains("--messages", "--value-bytes", "--runs", "--warmup-messages", "--relays",
                "--store-concurrency");
    }

    @Test
    void withoutACommandTheOptionsAreTheDemos() {
        Outcome outcome = run("--orders", "0");
        assertThat(outcome.err()).contains("See 'demo run --help'");
    }

    @Test
    void aMistypedCommandGetsASuggestion() {
        Outcome outcome = run("bnech");
        assertThat(outcome.status()).isEqualTo(OutboxDemo.EXIT_USAGE);
        assertThat(outcome.err()).contains("bench");
    }

    @Test
    void durationsReadSecondsMillisecondsMinutesHoursAndIso() {
        DurationConverter converter = new DurationConverter();
        assertThat(converter.convert("90s")).isEqualTo(Duration.ofSeconds(90));
        assertThat(converter.convert("30")).isEqualTo(Duration.ofSeconds(30));
        assertThat(converter.convert("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(converter.convert("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(converter.convert("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(converter.convert("PT45S")).isEqualTo(Duration.ofSeconds(45));
        assertThat(converter.convert("24h")).isEqualTo(DurationConverter.MAX);
    }
}
