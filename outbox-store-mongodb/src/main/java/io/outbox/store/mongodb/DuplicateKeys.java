package io.outbox.store.mongodb;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.bulk.BulkWriteError;

/**
 * Recognizes a duplicate-key error (code 11000) in the shapes the driver reports it: a
 * {@link MongoWriteException} for a single write, a {@link MongoBulkWriteException} for a bulk
 * write, and a {@link MongoCommandException} where a server (or an emulator such as jongodb) fails
 * the whole command.
 */
final class DuplicateKeys {

    private DuplicateKeys() {
    }

    /** True when {@code e} reports duplicate keys and nothing else. */
    static boolean only(RuntimeException e) {
        if (e instanceof MongoWriteException write) {
            return write.getError().getCategory() == ErrorCategory.DUPLICATE_KEY;
        }
        if (e instanceof MongoBulkWriteException bulk) {
            return bulk.getWriteConcernError() == null && !bulk.getWriteErrors().isEmpty()
                    && bulk.getWriteErrors().stream().allMatch(DuplicateKeys::isDuplicateKey);
        }
        if (e instanceof MongoCommandException command) {
            return ErrorCategory.fromErrorCode(command.getErrorCode()) == ErrorCategory.DUPLICATE_KEY;
        }
        return false;
    }

    private static boolean isDuplicateKey(BulkWriteError error) {
        return ErrorCategory.fromErrorCode(error.getCode()) == ErrorCategory.DUPLICATE_KEY;
    }
}
