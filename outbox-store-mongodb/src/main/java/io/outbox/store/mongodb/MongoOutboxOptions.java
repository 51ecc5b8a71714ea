package io.outbox.store.mongodb;

import com.mongodb.MongoNamespace;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Where a {@link MongoOutboxStore} keeps its data: the database, the prefix of its four collection
 * names and the clock all lease time comes from (S11), as set on
 * {@link MongoOutboxStore#builder(com.mongodb.client.MongoClient)} and read back with
 * {@link MongoOutboxStore#options()}. Immutable and thread-safe.
 *
 * <p>The four collections are {@code <prefix>messages}, {@code <prefix>sequences},
 * {@code <prefix>leases} and {@code <prefix>relays}. Writers (the enqueue helper) and relays
 * must use the same database and prefix.
 */
public final class MongoOutboxOptions {

    /** The collection prefix used unless another is set: {@value}. */
    public static final String DEFAULT_COLLECTION_PREFIX = "outbox_";

    /** The longest collection prefix accepted, in characters. */
    public static final int MAX_COLLECTION_PREFIX_LENGTH = 64;

    private static final Pattern LEGAL_PREFIX = Pattern.compile("[A-Za-z0-9_.-]*");

    private final String database;
    private final String collectionPrefix;
    private final Clock clock;

    /** Validates the settings, naming the bad one. */
    MongoOutboxOptions(String database, String collectionPrefix, Clock clock) {
        this.database = requireDatabaseName(database);
        this.collectionPrefix = requireCollectionPrefix(collectionPrefix);
        this.clock = Objects.requireNonNull(clock, "clock must not be null");
    }

    /**
     * The database holding the outbox collections.
     *
     * @return the database name; never null
     */
    public String database() {
        return database;
    }

    /**
     * The prefix of the four collection names.
     *
     * @return the prefix; never null, possibly empty
     */
    public String collectionPrefix() {
        return collectionPrefix;
    }

    /**
     * The clock all lease and heartbeat time comes from (S11).
     *
     * @return the clock; never null
     */
    public Clock clock() {
        return clock;
    }

    /**
     * The messages collection: one document per pending message.
     *
     * @return {@code <prefix>messages}
     */
    public String messagesCollection() {
        return collectionPrefix + "messages";
    }

    /**
     * The sequence counters collection: one document per bucket ever written (E5).
     *
     * @return {@code <prefix>sequences}
     */
    public String sequencesCollection() {
        return collectionPrefix + "sequences";
    }

    /**
     * The leases collection: one document per bucket.
     *
     * @return {@code <prefix>leases}
     */
    public String leasesCollection() {
        return collectionPrefix + "leases";
    }

    /**
     * The relay heartbeats collection: one document per relay id.
     *
     * @return {@code <prefix>relays}
     */
    public String relaysCollection() {
        return collectionPrefix + "relays";
    }

    /**
     * Checks a database name: not empty, shorter than 64 bytes in UTF-8, and none of
     * {@code / \ . " $}, space or NUL.
     *
     * @param database the name
     * @return {@code database}
     * @throws NullPointerException if it is null
     * @throws IllegalArgumentException naming the option and the value
     */
    public static String requireDatabaseName(String database) {
        Objects.requireNonNull(database, "database must not be null");
        try {
            MongoNamespace.checkDatabaseNameValidity(database);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("database '" + database + "' is not a legal MongoDB database name: "
                    + e.getMessage(), e);
        }
        if (database.indexOf('$') >= 0) {
            throw new IllegalArgumentException("database '" + database
                    + "' is not a legal MongoDB database name: it must not contain '$'");
        }
        if (database.getBytes(StandardCharsets.UTF_8).length > 63) {
            throw new IllegalArgumentException("database '" + database
                    + "' is not a legal MongoDB database name: it must be shorter than 64 bytes");
        }
        return database;
    }

    /**
     * Checks a collection prefix: at most {@value #MAX_COLLECTION_PREFIX_LENGTH} characters of
     * {@code [A-Za-z0-9_.-]}, not starting with {@code .} or {@code system.}. It may be empty.
     *
     * @param prefix the prefix
     * @return {@code prefix}
     * @throws NullPointerException if it is null
     * @throws IllegalArgumentException naming the option, the value and the rule it breaks
     */
    public static String requireCollectionPrefix(String prefix) {
        Objects.requireNonNull(prefix, "collectionPrefix must not be null");
        if (prefix.length() > MAX_COLLECTION_PREFIX_LENGTH) {
            throw new IllegalArgumentException("collectionPrefix must be at most " + MAX_COLLECTION_PREFIX_LENGTH
                    + " characters but has " + prefix.length());
        }
        if (!LEGAL_PREFIX.matcher(prefix).matches()) {
            throw new IllegalArgumentException("collectionPrefix '" + prefix
                    + "' may only hold ASCII letters, digits, '_', '.' and '-'");
        }
        if (prefix.startsWith(".") || prefix.startsWith("system.")) {
            throw new IllegalArgumentException("collectionPrefix '" + prefix
                    + "' must not start with '.' or 'system.'");
        }
        return prefix;
    }

    @Override
    public String toString() {
        return "MongoOutboxOptions[database=" + database + ", collectionPrefix=" + collectionPrefix + ", clock="
                + clock + "]";
    }
}
