package io.outbox.relay.app;

import io.outbox.relay.internal.Redactor;
import io.outbox.spi.CorruptHeadersException;
import io.outbox.spi.DeadLetter;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.OutboxStore;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code outbox-relay dead-letters list|show|replay|purge}: the store's dead letters (capability
 * C4, rule R12), with the relay's configuration file.
 */
@Command(name = "dead-letters", mixinStandardHelpOptions = true, versionProvider = RelayCommand.Version.class,
        description = "List, show, replay or purge the store's dead letters (messages the relay gave up on with "
                + "relay.poison.policy=dead-letter). Exit codes: 0 done, 1 store error, 2 invalid command line, "
                + "3 invalid configuration, 5 unknown message id, 6 the store has no dead letters (capability C4), "
                + "7 purge not confirmed.",
        subcommands = {DeadLettersCommand.ListCommand.class, DeadLettersCommand.ShowCommand.class,
            DeadLettersCommand.ReplayCommand.class, DeadLettersCommand.PurgeCommand.class})
final class DeadLettersCommand implements Runnable {

    @ParentCommand
    RelayCommand parent;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /** Without a subcommand: the usage, exit 2. */
    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                "name a subcommand: list, show, replay or purge");
    }

    /** Shared by the subcommands: the top command. */
    abstract static class Sub extends OperatorCommand {
        @ParentCommand
        DeadLettersCommand group;

        @Override
        RelayCommand root() {
            return group.parent;
        }

        /** Runs the action on every id and reports each; exit 5 when an id has no dead letter. */
        int each(List<UUID> ids, Predicate<UUID> action, String done) {
            int missing = 0;
            List<String> results = new ArrayList<>();
            for (UUID id : ids) {
                boolean found = action.test(id);
                if (!found) {
                    missing++;
                }
                if (json) {
                    results.add(object(Map.of("messageId", quote(id.toString()), "result",
                            quote(found ? done : "not found"))));
                } else if (found) {
                    out().println(done + " " + id);
                } else {
                    err().println("outbox-relay: no dead letter with message id " + id);
                }
            }
            if (json) {
                out().println("[" + String.join(",\n ", results) + "]");
            }
            return missing == 0 ? EXIT_OK : fail(EXIT_NOT_FOUND, missing + " of " + ids.size()
                    + " message id(s) have no dead letter");
        }
    }

    /** {@code dead-letters list}. */
    @Command(name = "list", mixinStandardHelpOptions = true, versionProvider = RelayCommand.Version.class,
            description = "List dead letters in message id order, one line each (or a JSON array).")
    static final class ListCommand extends Sub {
        @Option(names = "--after", paramLabel = "ID", description = "Start after this message id (paging).")
        UUID after;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "100",
                description = "The most dead letters listed, 1 to 1000 (default ${DEFAULT-VALUE}).")
        int limit;

        @Override
        int run(OutboxStore store, RelayConfiguration configuration) {
            DeadLetters dead = deadLetters(store, configuration);
            if (dead == null) {
                return EXIT_UNSUPPORTED;
            }
            if (limit < 1 || limit > 1000) {
                return fail(StandaloneRelay.EXIT_USAGE, "--limit must be in [1, 1000] but was " + limit);
            }
            List<DeadLetter> page = dead.deadLetters(after, limit);
            if (json) {
                out().println(listJson(page, redactor()));
            } else if (page.isEmpty()) {
                out().println("no dead letters" + (after == null ? "" : " after " + after));
            } else {
                out().printf("%-36s %6s %8s %-28s %-24s %s%n", "MESSAGE ID", "BUCKET", "ATTEMPTS", "CAUSE",
                        "DEAD-LETTERED AT", "REASON");
                for (DeadLetter d : page) {
                    out().printf("%-36s %6d %8d %-28s %-24s %s%n", d.messageId(), d.bucket(), d.failure().attempts(),
                            shown(simpleName(d.failure().causeClass())), d.deadLetteredAt(),
                            DeadLetterFailure.cut(shown(d.failure().reason()), 100));
                }
                if (page.size() == limit) {
                    out().println("more: --after " + page.get(page.size() - 1).messageId());
                }
            }
            return EXIT_OK;
        }
    }

    /** {@code dead-letters show ID}. */
    @Command(name = "show", mixinStandardHelpOptions = true, versionProvider = RelayCommand.Version.class,
            description = "Show one dead letter: the message's fields (sizes; with --json its bytes in base64) and "
                    + "why the relay gave up on it.")
    static final class ShowCommand extends Sub {
        @Parameters(paramLabel = "ID", description = "The message id.")
        UUID id;

        @Override
        int run(OutboxStore store, RelayConfiguration configuration) {
            DeadLetters dead = deadLetters(store, configuration);
            if (dead == null) {
                return EXIT_UNSUPPORTED;
            }
            DeadLetter d = dead.deadLetter(id).orElse(null);
            if (d == null) {
                return fail(EXIT_NOT_FOUND, "no dead letter with message id " + id);
            }
            if (json) {
                out().println(showJson(d, redactor()));
                return EXIT_OK;
            }
            String headers = headerNames(d);
            out().println("message id:       " + d.messageId());
            out().println("bucket:           " + d.bucket());
            out().println("topic:            " + shown(d.topic()));
            out().println("partition:        " + (d.partition() == null ? "by key" : d.partition()));
            out().println("created at:       " + d.createdAt());
            out().println("key:              " + size(d.key()));
            out().println("value:            " + size(d.value()));
            out().println("header names:     " + shown(headers));
            out().println("attempts:         " + d.failure().attempts());
            out().println("first failure at: " + d.failure().firstFailureAt());
            out().println("last failure at:  " + d.failure().lastFailureAt());
            out().println("cause:            " + shown(d.failure().causeClass()));
            out().println("reason:           " + shown(d.failure().reason()));
            out().println("relay:            " + shown(d.failure().relayId()));
            out().println("dead-lettered at: " + d.deadLetteredAt());
            return EXIT_OK;
        }
    }

    /** {@code dead-letters replay ID...}. */
    @Command(name = "replay", mixinStandardHelpOptions = true, versionProvider = RelayCommand.Version.class,
            description = "Put dead letters back into their buckets, after the messages pending there now, with the "
                    + "same message id and bytes; the relay then publishes them like any other message.")
    static final class ReplayCommand extends Sub {
        @Parameters(paramLabel = "ID", arity = "1..*", description = "The message ids.")
        List<UUID> ids;

        @Override
        int run(OutboxStore store, RelayConfiguration configuration) {
            DeadLetters dead = deadLetters(store, configuration);
            return dead == null ? EXIT_UNSUPPORTED : each(ids, dead::replayDeadLetter, "replayed");
        }
    }

    /** {@code dead-letters purge ID... [--yes]}. */
    @Command(name = "purge", mixinStandardHelpOptions = true, versionProvider = RelayCommand.Version.class,
            description = "Delete dead letters for good. Asks for confirmation on standard input unless --yes.")
    static final class PurgeCommand extends Sub {
        @Parameters(paramLabel = "ID", arity = "1..*", description = "The message ids.")
        List<UUID> ids;

        @Option(names = {"-y", "--yes"}, description = "Purge without asking.")
        boolean yes;

        @Override
        int run(OutboxStore store, RelayConfiguration configuration) {
            DeadLetters dead = deadLetters(store, configuration);
            if (dead == null) {
                return EXIT_UNSUPPORTED;
            }
            if (!yes) {
                err().print("Purge " + ids.size() + " dead letter(s) for good? Type yes to confirm: ");
                err().flush();
                String answer = null;
                try {
                    answer = new BufferedReader(new InputStreamReader(input.get(), StandardCharsets.UTF_8)).readLine();
                } catch (IOException e) {
                    // no answer
                }
                err().println();
                if (answer == null || !answer.strip().equalsIgnoreCase("yes")) {
                    return fail(EXIT_NOT_CONFIRMED, "purge not confirmed; nothing purged (answer yes, or pass --yes)");
                }
            }
            return each(ids, dead::purgeDeadLetter, "purged");
        }
    }


    /**
     * A page of dead letters as {@code list --json} and the HTTP endpoint show it.
     *
     * @param page the dead letters; not null
     * @param redactor hides the configuration's secrets in stored text; not null
     * @return a JSON array
     */
    static String listJson(List<DeadLetter> page, Redactor redactor) {
        List<String> items = new ArrayList<>();
        page.forEach(d -> items.add(OperatorCommand.object(summary(redactor, d))));
        return "[" + String.join(",\n ", items) + "]";
    }

    /**
     * One dead letter as {@code show --json} and the HTTP endpoint show it: its fields, bytes in
     * base64.
     *
     * @param d the dead letter; not null
     * @param redactor hides the configuration's secrets in stored text; not null
     * @return a JSON object
     */
    static String showJson(DeadLetter d, Redactor redactor) {
        Map<String, String> fields = summary(redactor, d);
        fields.put("topic", OperatorCommand.jsonText(redactor, d.topic()));
        fields.put("partition", String.valueOf(d.partition()));
        fields.put("createdAt", OperatorCommand.quote(d.createdAt().toString()));
        fields.put("firstFailureAt", OperatorCommand.quote(d.failure().firstFailureAt().toString()));
        fields.put("lastFailureAt", OperatorCommand.quote(d.failure().lastFailureAt().toString()));
        fields.put("relayId", OperatorCommand.jsonText(redactor, d.failure().relayId()));
        fields.put("headerNames", OperatorCommand.jsonText(redactor, headerNames(d)));
        fields.put("key", d.key() == null ? "null"
                : OperatorCommand.quote(Base64.getEncoder().encodeToString(d.key())));
        fields.put("value", d.value() == null ? "null"
                : OperatorCommand.quote(Base64.getEncoder().encodeToString(d.value())));
        fields.put("headers", OperatorCommand.quote(Base64.getEncoder().encodeToString(d.headers())));
        return OperatorCommand.object(fields);
    }

    private static String headerNames(DeadLetter d) {
        try {
            return String.join(", ", d.decodedHeaders().stream().map(h -> h.key()).toList());
        } catch (CorruptHeadersException e) {
            return "undecodable: " + e.getMessage();
        }
    }

    /** The JSON fields {@code list} and {@code show} share, stored text redacted. */
    private static Map<String, String> summary(Redactor redactor, DeadLetter d) {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("messageId", OperatorCommand.quote(d.messageId().toString()));
        fields.put("bucket", Integer.toString(d.bucket()));
        fields.put("attempts", Integer.toString(d.failure().attempts()));
        fields.put("causeClass", OperatorCommand.jsonText(redactor, d.failure().causeClass()));
        fields.put("reason", OperatorCommand.jsonText(redactor, d.failure().reason()));
        fields.put("deadLetteredAt", OperatorCommand.quote(d.deadLetteredAt().toString()));
        return fields;
    }

    private static String simpleName(String className) {
        return className.substring(className.lastIndexOf('.') + 1);
    }

    private static String size(byte[] bytes) {
        return bytes == null ? "null" : bytes.length + " bytes";
    }
}
