package io.outbox.store.mongodb;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import io.outbox.spi.OutboxMisconfigurationException;
import java.util.List;
import org.bson.Document;

/**
 * An index a store's or inbox's queries need: what {@code createSchema()} creates and
 * {@code verifySchema()} looks for. The check reads {@code listIndexes}, never names: a unique need
 * is met by a unique index on exactly these keys, ascending; an ordered need by any index whose
 * leading keys are these, in either direction. Partial indexes count for neither. Immutable.
 *
 * @param name the name {@code createSchema()} gives it
 * @param keys its keys, in order, each ascending
 * @param unique whether a unique index on exactly these keys is needed
 * @param purpose which queries need it, for the error message
 */
record MongoIndex(String name, List<String> keys, boolean unique, String purpose) {

    MongoIndex {
        keys = List.copyOf(keys);
    }

    /** Creates the index unless it exists; idempotent. */
    void create(MongoCollection<?> collection) {
        collection.createIndex(Indexes.ascending(keys), new IndexOptions().unique(unique).name(name));
    }

    /**
     * Throws unless the collection has an index that serves the need.
     *
     * @param collection the collection
     * @param what the collection's role and full name, for the message, such as
     *     {@code the outbox messages collection shop.outbox_messages}
     * @param howElse what else creates it, ending the message
     * @throws OutboxMisconfigurationException naming the collection, the keys, the mongosh command
     *     that creates the index, and {@code howElse}
     */
    void verify(MongoCollection<?> collection, String what, String howElse) {
        for (Document index : collection.listIndexes()) {
            if (serves(index)) {
                return;
            }
        }
        throw new OutboxMisconfigurationException(what + " has no " + (unique ? "unique index on exactly "
                : "index whose leading keys are ") + spec() + ", whatever its name: " + purpose + "; create it with "
                + "db.getCollection(\"" + collection.getNamespace().getCollectionName() + "\").createIndex(" + spec()
                + ", {" + (unique ? "unique: true, " : "") + "name: \"" + name + "\"}), or " + howElse);
    }

    private boolean serves(Document index) {
        Document key = index.get("key", Document.class);
        if (key == null || index.get("partialFilterExpression") != null) {
            return false;
        }
        List<String> names = List.copyOf(key.keySet());
        if (unique) {
            return Boolean.TRUE.equals(index.get("unique")) && names.equals(keys)
                    && key.values().stream().allMatch(v -> v instanceof Number n && n.intValue() == 1);
        }
        return names.size() >= keys.size() && names.subList(0, keys.size()).equals(keys)
                && key.values().stream().limit(keys.size()).allMatch(v -> v instanceof Number n
                && Math.abs(n.intValue()) == 1);
    }

    /** The keys as mongosh writes them: {@code {bucket: 1, seq: 1}}. */
    private String spec() {
        return "{" + String.join(", ", keys.stream().map(k -> k + ": 1").toList()) + "}";
    }
}
