// Outbox MongoDB store: the indexes MongoOutboxStore.createSchema() and MongoInbox.createSchema()
// create, with the same names, for mongosh (the other collections need only their _id index):
//
//   mongosh "mongodb://db1,db2,db3/shop?replicaSet=rs0" outbox-indexes.js
//   mongosh "mongodb://db1,db2,db3/shop?replicaSet=rs0" --eval 'var outboxPrefix = "billing_"; load("outbox-indexes.js")'
//
// outboxPrefix: the collection prefix (the provider's collection.prefix, the builders'
// collectionPrefix), outbox_ unless set. createIndex leaves an existing identical index alone.
// A test creates these indexes from this file's key and option documents and compares them with
// the ones createSchema() creates; MongoOutboxStore.verifySchema() and MongoInbox.verifySchema()
// check the same keys whatever the names.
var prefix = typeof outboxPrefix === "undefined" ? "outbox_" : outboxPrefix;

db.getCollection(prefix + "messages").createIndex({"bucket": 1, "seq": 1}, {"unique": true, "name": "bucket_seq_unique"});

// The inbox's (MongoInbox); harmless where no consumer uses it:
db.getCollection(prefix + "inbox").createIndex({"consumer": 1, "messageId": 1}, {"unique": true, "name": "consumer_messageId_unique"});
db.getCollection(prefix + "inbox").createIndex({"seenAt": 1}, {"name": "seenAt"});
