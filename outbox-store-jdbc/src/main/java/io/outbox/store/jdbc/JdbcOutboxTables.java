package io.outbox.store.jdbc;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The names of the store's three tables, and the schema that holds them: validated SQL
 * identifiers, always quoted in the SQL the store sends, so configuration can never inject SQL.
 *
 * <ul>
 *   <li>{@code messages}: pending outbox messages, one row each, with an auto-increment id,
 *       ordered by an index on {@code (bucket, id)}: the primary key on PostgreSQL and
 *       MySQL/MariaDB, an index named {@link #messagesIndex()} on H2.</li>
 *   <li>{@code leases}: one row per bucket: the owning relay and the lease expiry.</li>
 *   <li>{@code relays}: one row per relay: its last heartbeat.</li>
 * </ul>
 *
 * <p>A name is 1 to {@value #MAX_NAME_LENGTH} characters of ASCII letters, digits and
 * {@code _}, not starting with a digit; the messages table's name leaves room for the index name
 * ({@link #messagesIndex()}, at most {@value #MAX_NAME_LENGTH} characters too, PostgreSQL's
 * limit). Anything else, such as a quote, a dot, a space or a semicolon, is refused with an
 * {@link IllegalArgumentException} naming the value. Because names are quoted they are
 * case-sensitive; lower case is recommended, so that the tables can be named unquoted in
 * PostgreSQL and MySQL.
 *
 * @param schema the schema (MySQL/MariaDB: the database) holding the tables, or null for the
 *     connection's current schema; it must exist, the store never creates it
 * @param messages the messages table's name
 * @param leases the leases table's name
 * @param relays the relay heartbeat table's name
 */
public record JdbcOutboxTables(String schema, String messages, String leases, String relays) {

    /** The default table prefix. */
    public static final String DEFAULT_PREFIX = "outbox_";

    /** Longest accepted identifier, in characters: PostgreSQL's limit (MySQL allows 64). */
    public static final int MAX_NAME_LENGTH = 63;

    private static final String INDEX_SUFFIX = "_bucket_id";
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Pattern PREFIX = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*)?");

    /**
     * Validates the names.
     *
     * @param schema the schema, or null for the current one
     * @param messages the messages table
     * @param leases the leases table
     * @param relays the relay heartbeat table
     * @throws NullPointerException if a table name is null
     * @throws IllegalArgumentException if a name is not a valid identifier, is too long, or two
     *     table names are equal
     */
    public JdbcOutboxTables {
        if (schema != null) {
            requireIdentifier("schema", schema);
        }
        requireIdentifier("messages table", messages);
        requireIdentifier("leases table", leases);
        requireIdentifier("relays table", relays);
        if (messages.length() + INDEX_SUFFIX.length() > MAX_NAME_LENGTH) {
            throw new IllegalArgumentException("messages table name '" + messages + "' is too long: the index name '"
                    + messages + INDEX_SUFFIX + "' must be at most " + MAX_NAME_LENGTH + " characters");
        }
        if (messages.equals(leases) || messages.equals(relays) || leases.equals(relays)) {
            throw new IllegalArgumentException("the three table names must differ but were messages='" + messages
                    + "', leases='" + leases + "', relays='" + relays + "'");
        }
    }

    /**
     * The default tables: {@code outbox_messages}, {@code outbox_leases} and
     * {@code outbox_relays} in the connection's current schema.
     *
     * @return the default names
     */
    public static JdbcOutboxTables defaults() {
        return withPrefix(DEFAULT_PREFIX);
    }

    /**
     * Tables named {@code <prefix>messages}, {@code <prefix>leases} and {@code <prefix>relays}
     * in the connection's current schema.
     *
     * @param prefix the prefix; not null; empty or an identifier ({@code [A-Za-z_][A-Za-z0-9_]*})
     * @return the names
     * @throws NullPointerException if {@code prefix} is null
     * @throws IllegalArgumentException if the prefix is not empty and not an identifier, or makes
     *     a name too long
     */
    public static JdbcOutboxTables withPrefix(String prefix) {
        Objects.requireNonNull(prefix, "table prefix must not be null");
        if (!PREFIX.matcher(prefix).matches()) {
            throw new IllegalArgumentException("table prefix " + describe(prefix)
                    + " is not allowed: use ASCII letters, digits and '_', not starting with a digit");
        }
        return new JdbcOutboxTables(null, prefix + "messages", prefix + "leases", prefix + "relays");
    }

    /**
     * The same tables in another schema.
     *
     * @param schemaName the schema (MySQL/MariaDB: the database), or null for the connection's
     *     current schema
     * @return new names
     * @throws IllegalArgumentException if the schema is not a valid identifier
     */
    public JdbcOutboxTables inSchema(String schemaName) {
        return new JdbcOutboxTables(schemaName, messages, leases, relays);
    }

    /**
     * The name of the index on the messages table's {@code (bucket, id)}: on PostgreSQL the
     * primary key constraint, on H2 an index beside the {@code id} primary key. MySQL/MariaDB's
     * primary key is {@code (bucket, id)} too, named {@code PRIMARY} as always there.
     *
     * @return {@code <messages>_bucket_id}
     */
    public String messagesIndex() {
        return messages + INDEX_SUFFIX;
    }

    /**
     * MySQL/MariaDB only: the name of the index on the messages table's {@code id}, which
     * {@code AUTO_INCREMENT} needs there since the primary key is {@code (bucket, id)}.
     *
     * @return {@code <messages>_id}
     */
    public String messagesIdIndex() {
        return messages + "_id";
    }

    /**
     * The name of the messages table's {@code CHECK (bucket >= 0)} constraint (rule S8: no row
     * may lie below bucket 0).
     *
     * @return {@code <messages>_bucket_ck}, as long as {@link #messagesIndex()}
     */
    public String messagesBucketCheck() {
        return messages + "_bucket_ck";
    }

    private static void requireIdentifier(String what, String name) {
        Objects.requireNonNull(name, what + " name must not be null");
        if (name.length() > MAX_NAME_LENGTH) {
            throw new IllegalArgumentException(what + " name " + describe(name) + " is longer than "
                    + MAX_NAME_LENGTH + " characters");
        }
        if (!IDENTIFIER.matcher(name).matches()) {
            throw new IllegalArgumentException(what + " name " + describe(name)
                    + " is not a valid identifier: use 1 to " + MAX_NAME_LENGTH
                    + " ASCII letters, digits and '_', not starting with a digit");
        }
    }

    /** Quotes a refused value for an error message, showing control characters as escapes. */
    private static String describe(String value) {
        StringBuilder sb = new StringBuilder("'");
        String shown = value.length() > 80 ? value.substring(0, 80) + "..." : value;
        shown.codePoints().forEach(cp -> {
            if (cp >= 0x20 && cp < 0x7f) {
                sb.appendCodePoint(cp);
            } else {
                sb.append(String.format("\\u%04x", cp));
            }
        });
        return sb.append('\'').toString();
    }
}
