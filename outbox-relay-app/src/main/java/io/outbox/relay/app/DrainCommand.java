package io.outbox.relay.app;

import io.outbox.relay.internal.Redactor;
import io.outbox.spi.OutboxMisconfigurationException;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code outbox-relay drain} and {@code outbox-relay resume} (rule H3): tell a running relay, over its
 * HTTP endpoint, to give its leases back and take none until resumed, or to take its share again.
 * A drain lives in the relay's memory, so these commands reach the relay itself: at
 * {@code --url}, by default the endpoint the configuration describes on this machine
 * ({@code http://127.0.0.1:<http.port>}, or {@code http.bind.address} when it names one address),
 * with the configuration's {@code http.admin.token}, which is sent as a bearer token and never
 * printed.
 *
 * <p>Exit codes: 0 the relay accepted it; 1 the relay could not be reached or refused it (its
 * answer is printed); 2 invalid command line; 3 invalid configuration ({@code http.port} or
 * {@code http.admin.token} unset).
 */
abstract class DrainCommand implements Callable<Integer> {

    /** How long the command waits for the relay's answer. */
    static final Duration TIMEOUT = Duration.ofSeconds(10);

    @ParentCommand
    RelayCommand parent;

    @Option(names = {"-c", "--config"}, paramLabel = "FILE", converter = RelayCommand.ConfigFileConverter.class,
            description = "The relay's properties file (UTF-8); OUTBOX_* environment variables win over it, as for "
                    + "the relay. Its http.port and http.admin.token are used.")
    Path config;

    @Option(names = "--url", paramLabel = "URL",
            description = "The relay's HTTP endpoint, such as http://relay-0.relay:8080; default: this machine, at "
                    + "the configuration's http.port.")
    String url;

    /** @return {@code true} to drain, {@code false} to resume */
    abstract boolean drain();

    @Override
    public final Integer call() {
        PrintStream out = parent.out();
        PrintStream err = parent.err();
        Redactor redactor = Redactor.patternsOnly();
        String name = drain() ? "drain" : "resume";
        try {
            RelayConfiguration configuration = RelayConfiguration.read(config != null ? config : parent.configFile(),
                    parent.environment());
            redactor = configuration.redactor();
            parent.secretsFound(redactor);
            HttpSettings http = configuration.httpSettings();
            if (http.adminToken() == null) {
                return fail(err, redactor, StandaloneRelay.EXIT_MISCONFIGURATION, HttpSettings.ADMIN_TOKEN
                        + " is not set: the relay accepts no " + name + " without it");
            }
            String base = url != null ? url : defaultUrl(http);
            if (base == null) {
                return fail(err, redactor, StandaloneRelay.EXIT_MISCONFIGURATION, HttpSettings.PORT
                        + " is not set: give the relay's endpoint with --url");
            }
            URI target;
            try {
                target = URI.create(base.replaceAll("/+$", "") + (drain() ? HttpRoute.DRAIN : HttpRoute.RESUME).path());
                if (!"http".equals(target.getScheme()) && !"https".equals(target.getScheme())) {
                    throw new IllegalArgumentException("not an http or https URL");
                }
            } catch (IllegalArgumentException e) {
                return fail(err, redactor, StandaloneRelay.EXIT_USAGE, "--url " + base + " is not a URL: "
                        + e.getMessage());
            }
            HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
            HttpResponse<String> answer = client.send(HttpRequest.newBuilder(target).timeout(TIMEOUT)
                    .header("Authorization", "Bearer " + http.adminToken().value())
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            if (answer.statusCode() / 100 != 2) {
                return fail(err, redactor, StandaloneRelay.EXIT_ERROR, "the relay at " + target + " refused the "
                        + name + " with HTTP " + answer.statusCode() + ": " + answer.body().strip());
            }
            out.println(drain() ? "draining: the relay gives its leases back once its publishes in flight end and "
                    + "takes none until resumed (" + target + ")"
                    : "resumed: the relay takes its share at its next lease round (" + target + ")");
            return StandaloneRelay.EXIT_OK;
        } catch (OutboxMisconfigurationException e) {
            return fail(err, redactor, StandaloneRelay.EXIT_MISCONFIGURATION, "invalid configuration: "
                    + e.getMessage());
        } catch (IOException e) {
            return fail(err, redactor, StandaloneRelay.EXIT_ERROR, "could not reach the relay: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return fail(err, redactor, StandaloneRelay.EXIT_ERROR, "interrupted");
        } finally {
            out.flush();
            err.flush();
        }
    }

    /** The endpoint on this machine, or null without {@code http.port}. */
    static String defaultUrl(HttpSettings http) {
        if (http.port() == null || http.port() == 0) {
            return null;
        }
        String host = http.bindAddress();
        if (host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]")) {
            host = "127.0.0.1";
        } else if (host.contains(":") && !host.startsWith("[")) {
            host = "[" + host + "]";
        }
        return "http://" + host + ":" + http.port();
    }

    private static int fail(PrintStream err, Redactor redactor, int code, String message) {
        err.println("outbox-relay: " + redactor.oneLine(message));
        err.println("outbox-relay: exiting with code " + code);
        return code;
    }

    /** {@code outbox-relay drain}. */
    @Command(name = "drain", mixinStandardHelpOptions = true, versionProvider = RelayCommand.Version.class,
            description = "Tell a running relay, over its HTTP endpoint, to give its leases back (once its publishes "
                    + "in flight end) and take none until resumed; peers take its buckets at their next lease round. "
                    + "Needs http.admin.token. Exit codes: 0 accepted, 1 unreachable or refused, 3 invalid "
                    + "configuration.")
    static final class Drain extends DrainCommand {

        /** Created by picocli. */
        Drain() {
        }

        @Override
        boolean drain() {
            return true;
        }
    }

    /** {@code outbox-relay resume}. */
    @Command(name = "resume", mixinStandardHelpOptions = true, versionProvider = RelayCommand.Version.class,
            description = "Tell a drained relay, over its HTTP endpoint, to take its share of the buckets again at its "
                    + "next lease round. Needs http.admin.token. Exit codes: 0 accepted, 1 unreachable or refused, "
                    + "3 invalid configuration.")
    static final class Resume extends DrainCommand {

        /** Created by picocli. */
        Resume() {
        }

        @Override
        boolean drain() {
            return false;
        }
    }
}
