package io.outbox.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Options are checked before anything starts: a bad value exits with status 2 and a message naming it. */
class CommandLineTest {

    /** What a run printed and returned. */
    private record Outcome(int status, String out, String err) {
    }

    private static Outcome run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = new OutboxExamples().execute(new PrintWriter(out), new PrintWriter(err), args);
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
        "--partitions 0                                | --partitions must be at least 1 but was 0",
        "--rate -5                                     | --rate must be between 0 and 1000000 but was -5",
        "--timeout 0s                                  | --timeout must be positive",
        "--timeout soon                                | 'soon' is not a duration",
        "--orders many                                 | '--orders'",
        "--store redis                                 | 'redis' is not a store; use one of jdbc, mongodb, dynamodb",
        "--store mongodb                               | --store mongodb needs --mongodb-uri",
        "--store dynamodb --jdbc-url jdbc:h2:mem:x     | --jdbc-url is only used with --store jdbc, not with --store dynamodb",
        "--jdbc-url jdbc:h2:mem:x --mongodb-uri mongodb://h | options of several stores given (--jdbc-url, --mongodb-uri)",
        "--jdbc-url jdbc:oracle:thin:@db:1521:x        | --jdbc-url 'jdbc:oracle:thin:@db:1521:x' is not usable",
        "--mongodb-uri http://not-mongo                | --mongodb-uri is not a MongoDB connection string",
        "--dynamodb-endpoint localhost                 | --dynamodb-endpoint 'localhost' is not a URL",
        "--topic bad/topic                             | --topic: topic 'bad/topic' is not a legal Kafka topic name",
        "--bootstrap-servers=                          | --bootstrap-servers must not be empty",
        "bench --messages 0                            | --messages must be between 1 and 10000000 but was 0",
        "bench --runs 0                                | --runs must be between 1 and 100 but was 0",
        "bench --warmup-messages -1                    | --warmup-messages must be between 0 and 10000000 but was -1",
        "bench --store-concurrency 0                   | --store-concurrency must be between 1 and 256 but was 0",
        "bench --store-concurrency x                   | Invalid value for option '--store-concurrency'",
        "--no-such-option                              | Unknown option: '--no-such-option'",
    })
    void aBadOptionExitsWithStatus2NamingIt(String args, String message) {
        Outcome outcome = run(split(args));

        assertThat(outcome.status()).isEqualTo(OutboxExamples.EXIT_USAGE);
        assertThat(outcome.err()).contains(message).contains("--help' for the options");
        assertThat(outcome.out()).isEmpty();
    }

    private static String[] split(String args) {
        return args.trim().split("\\s+");
    }

    @Test
    void helpListsTheCommandsAndEachCommandHasItsOwn() {
        Outcome top = run("--help");
        assertThat(top.status()).isZero();
        assertThat(top.out()).contains("Commands:", "run, demo", "bench");

        Outcome demo = run("run", "--help");
        assertThat(demo.status()).isZero();
        assertThat(demo.out()).contains("--store", "--jdbc-url", "--mongodb-uri", "--dynamodb-endpoint",
                "--bootstrap-servers", "--relays", "--orders", "--customers", "--writers", "--buckets", "--batch-size",
                "--topic", "--partitions", "--rate", "--timeout", "--seed", "--keep", "--no-progress", "Exit status");

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
        assertThat(outcome.status()).isEqualTo(OutboxExamples.EXIT_USAGE);
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
    }
}
