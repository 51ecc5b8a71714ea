package io.outbox.store.mongodb;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.OutboxPayloadTooLargeException;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.Pending;
import io.outbox.spi.support.OutboxHeaderCodec;
import io.outbox.spi.support.StoredMessages;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonType;
import org.bson.Document;
import org.bson.UuidRepresentation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the kit does not pin down for this store: the exact payload boundary (a worst-case
 * document of exactly 16 MiB), S8 on counters alone, the stored document shapes and times, the
 * index, concurrent sequence reservations from separate clients (E5), client ownership and
 * corrupt documents. Runs without sessions, so on any server.
 */
abstract class AbstractMongoOutboxStoreTest {

    private static final Instant NOW = Instant.parse("2044-05-06T07:08:09.010Z");

    private final List<MongoClient> clients = new ArrayList<>();
    private MongoClient client;
    private MongoDatabase database;
    private MongoOutboxStore store;

    /** Where the server is. */
    protected abstract String connectionString();

    @BeforeEach
    void createStore() {
        client = newClient();
        database = client.getDatabase("store_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16));
        store = builder(client).build();
        store.createSchema();
    }

    @AfterEach
    void dropDatabase() {
        try {
            database.drop();
        } finally {
            clients.forEach(MongoClient::close);
        }
    }

    private MongoClient newClient() {
        MongoClient c = MongoClients.create(connectionString());
        clients.add(c);
        return c;
    }

    private MongoOutboxStore.Builder builder(MongoClient on) {
        return MongoOutboxStore.builder(on).database(database.getName()).clock(Clock.fixed(NOW, ZoneOffset.UTC));
    }

    private MongoCollection<BsonDocument> raw(String collection) {
        return database.getCollection(collection, BsonDocument.class);
    }

    private static OutboxMessage message(int bucket) {
        return StoredMessages.rebuild(UUID.randomUUID(), bucket, "topic", null, new byte[] {1, 2}, List.of(), null,
                NOW);
    }

    /** The largest payload in the document's worst case: longest topic, key, headers, partition. */
    static OutboxMessage worstCase(long payloadBytes) {
        List<OutboxHeader> headers = List.of(OutboxHeader.ofUtf8("h", "v"));
        byte[] key = "k".getBytes(StandardCharsets.UTF_8);
        long headerBytes = OutboxHeaderCodec.encodedSize(headers);
        byte[] value = new byte[(int) (payloadBytes - key.length - headerBytes)];
        new Random(payloadBytes).nextBytes(value);
        return StoredMessages.rebuild(UUID.randomUUID(), 0, "t".repeat(OutboxMessage.MAX_TOPIC_LENGTH), key, value,
                headers, Integer.MAX_VALUE, NOW);
    }

    @Test
    void S10_aWorstCaseMessageOfTheLargestPayloadFillsExactly16MiBAndIsStored() {
        OutboxMessage largest = worstCase(MongoOutboxStore.MAX_PAYLOAD_BYTES);
        assertThat(StoredMessages.payloadSize(largest)).isEqualTo(MongoOutboxStore.MAX_PAYLOAD_BYTES);
        assertThat(MessageDocumentsTest.encodedSize(MessageDocuments.toDocument(largest, Long.MAX_VALUE)))
                .as("encoded document").isEqualTo(MongoOutboxStore.MAX_DOCUMENT_BYTES);
        store.writer().enqueue(largest);
        List<Pending> read = store.nextBatch(0, 1);
        assertThat(read).hasSize(1);
        assertThat(read.get(0).message()).isEqualTo(largest);
    }

    @Test
    void S10_oneByteMoreIsRefusedBeforeASequenceNumberIsReserved() {
        OutboxMessage tooLarge = worstCase(MongoOutboxStore.MAX_PAYLOAD_BYTES + 1);
        assertThatThrownBy(() -> store.writer().enqueue(message(0), tooLarge))
                .isInstanceOf(OutboxPayloadTooLargeException.class)
                .hasMessageContaining(String.valueOf(MongoOutboxStore.MAX_PAYLOAD_BYTES));
        assertThat(raw(store.options().messagesCollection()).countDocuments()).isZero();
        assertThat(raw(store.options().sequencesCollection()).countDocuments()).isZero();
    }

    @Test
    void S10_aDocumentOneByteOver16MiBIsRefused() {
        BsonDocument document = MessageDocuments.toDocument(worstCase(MongoOutboxStore.MAX_PAYLOAD_BYTES), 1);
        byte[] value = document.getBinary(MessageDocuments.VALUE).getData();
        document.put(MessageDocuments.VALUE, new BsonBinary(new byte[value.length + 1]));
        assertThatThrownBy(() -> raw(store.options().messagesCollection()).insertOne(document))
                .as("so the declared limit is the real one, not a guess with slack")
                .isInstanceOf(RuntimeException.class);
        assertThat(raw(store.options().messagesCollection()).countDocuments()).isZero();
    }

    @Test
    void S8_aCounterOutsideTheRangeIsFatalEvenAfterItsMessagesWerePublished() {
        store.writer().enqueue(message(9));
        store.markPublished(9, store.nextBatch(9, 10));
        assertThat(store.bucketsWithPending(List.of(9))).isEmpty();
        assertThatThrownBy(() -> store.acquireBucketLeases(LeaseRequest.of("relay", 8, Duration.ofSeconds(30))))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("bucket(s) [9]")
                .hasMessageContaining(store.options().sequencesCollection())
                .hasMessageContaining("_id >= 8");
        assertThat(store.acquireBucketLeases(LeaseRequest.of("relay", 10, Duration.ofSeconds(30))))
                .as("with the writer's bucket count").hasSize(10);
    }

    @Test
    void S8_aMessageOutsideTheRangeIsNamed() {
        store.writer().enqueue(message(12));
        raw(store.options().sequencesCollection()).deleteMany(new BsonDocument());
        assertThatThrownBy(() -> store.acquireBucketLeases(LeaseRequest.of("relay", 8, Duration.ofSeconds(30))))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("bucket(s) [12]")
                .hasMessageContaining(store.options().messagesCollection());
    }

    @Test
    void S11_documentsHaveTheDocumentedShapeAndEpochMillisecondTimes() {
        OutboxMessage m = StoredMessages.rebuild(UUID.randomUUID(), 3, "topic", null, new byte[0],
                List.of(OutboxHeader.of("h", null)), 7, Instant.parse("1999-12-31T23:59:59.999Z"));
        store.writer().enqueue(m);
        BsonDocument stored = raw(store.options().messagesCollection()).find().first();
        assertThat(stored.keySet()).containsExactly("_id", "bucket", "seq", "topic", "key", "value", "headers",
                "partition", "createdAt");
        assertThat(stored.getBinary("_id").getType()).isEqualTo(BsonBinarySubType.UUID_STANDARD.getValue());
        assertThat(stored.getBinary("_id").asUuid()).isEqualTo(m.messageId());
        assertThat(stored.get("bucket").getBsonType()).isEqualTo(BsonType.INT32);
        assertThat(stored.get("seq").getBsonType()).isEqualTo(BsonType.INT64);
        assertThat(stored.isNull("key")).isTrue();
        assertThat(stored.getBinary("value").getData()).isEmpty();
        assertThat(stored.getInt32("partition").getValue()).isEqualTo(7);
        assertThat(stored.getDateTime("createdAt").getValue()).isEqualTo(m.createdAt().toEpochMilli());

        store.acquireBucketLeases(LeaseRequest.of("relay-1", 4, Duration.ofSeconds(30)));
        BsonDocument lease = raw(store.options().leasesCollection()).find(eq("_id", 0)).first();
        assertThat(lease.getString("owner").getValue()).isEqualTo("relay-1");
        assertThat(lease.get("expiresAt").getBsonType()).isEqualTo(BsonType.INT64);
        assertThat(lease.getInt64("expiresAt").getValue()).isEqualTo(NOW.toEpochMilli() + 30_000);
        BsonDocument heartbeat = raw(store.options().relaysCollection()).find(eq("_id", "relay-1")).first();
        assertThat(heartbeat.getInt64("lastSeen").getValue()).isEqualTo(NOW.toEpochMilli());
        assertThat(raw(store.options().leasesCollection()).countDocuments()).as("one lease document per bucket")
                .isEqualTo(4);
    }

    @Test
    void createSchemaIsIdempotentAndTheIndexRefusesAReusedSequenceNumber() {
        store.createSchema();
        store.createSchema();
        store.verifySchema();
        Document index = database.getCollection(store.options().messagesCollection()).listIndexes()
                .into(new ArrayList<>()).stream()
                .filter(i -> MongoOutboxStore.MESSAGES_INDEX.equals(i.getString("name"))).findFirst().orElseThrow();
        assertThat(index.getBoolean("unique")).isTrue();
        assertThat(index.get("key", Document.class).keySet()).containsExactly("bucket", "seq");

        store.writer().enqueue(message(1));
        BsonDocument copy = MessageDocuments.toDocument(message(1), 1);
        assertThatThrownBy(() -> raw(store.options().messagesCollection()).insertOne(copy))
                .isInstanceOf(MongoException.class);
    }

    @Test
    void E5_concurrentWritersOnSeparateClientsGetDistinctSequencesInTheirOwnOrder() throws Exception {
        int writers = 4;
        int perWriter = 25;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        Map<Integer, List<UUID>> written = new HashMap<>();
        try {
            List<Future<List<UUID>>> futures = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                MongoOutboxStore own = builder(newClient()).build();
                int seed = w;
                futures.add(pool.submit(() -> {
                    Random random = new Random(seed);
                    List<UUID> mine = new ArrayList<>();
                    for (int i = 0; i < perWriter; i++) {
                        List<OutboxMessage> batch = new ArrayList<>();
                        for (int j = 0; j <= random.nextInt(3); j++) {
                            batch.add(message(0));
                        }
                        own.writer().enqueue(batch);
                        batch.forEach(m -> mine.add(m.messageId()));
                    }
                    return mine;
                }));
            }
            for (int w = 0; w < writers; w++) {
                written.put(w, futures.get(w).get(2, TimeUnit.MINUTES));
            }
        } finally {
            pool.shutdownNow();
        }
        List<Pending> all = store.nextBatch(0, 10_000);
        List<Long> seqs = all.stream().map(p -> ((MessageDocuments.Handle) p.handle()).seq()).toList();
        Set<Long> distinct = new HashSet<>(seqs);
        assertThat(distinct).as("distinct sequence numbers").hasSameSizeAs(seqs);
        assertThat(seqs).isSorted();
        assertThat(all).hasSize(written.values().stream().mapToInt(List::size).sum());
        for (List<UUID> mine : written.values()) {
            List<UUID> seen = all.stream().map(p -> p.message().messageId()).filter(new HashSet<>(mine)::contains)
                    .toList();
            assertThat(seen).as("each writer's messages in its own order").containsExactlyElementsOf(mine);
        }
    }

    @Test
    void theStoreDoesNotDependOnTheClientsUuidRepresentation() {
        MongoClient legacy = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(connectionString()))
                .uuidRepresentation(UuidRepresentation.JAVA_LEGACY).build());
        clients.add(legacy);
        MongoOutboxStore onLegacy = builder(legacy).build();
        OutboxMessage m = message(2);
        onLegacy.writer().enqueue(m);
        assertThat(store.nextBatch(2, 1)).singleElement().satisfies(read -> assertThat(read.message()).isEqualTo(m));
        assertThat(onLegacy.nextBatch(2, 1)).singleElement()
                .satisfies(read -> assertThat(read.message().messageId()).isEqualTo(m.messageId()));
        onLegacy.markPublished(2, onLegacy.nextBatch(2, 1));
        assertThat(store.bucketsWithPending(List.of(2))).isEmpty();
    }

    @Test
    void closingAStoreLeavesTheCallersClientOpen() {
        store.close();
        store.close();
        assertThat(client.getDatabase("admin").runCommand(new Document("ping", 1)).get("ok")).isNotNull();
    }

    @Test
    void aCorruptDocumentIsReportedWithItsId() {
        BsonDocument corrupt = MessageDocuments.toDocument(message(4), 1);
        corrupt.remove(MessageDocuments.TOPIC);
        raw(store.options().messagesCollection()).insertOne(corrupt);
        assertThatThrownBy(() -> store.nextBatch(4, 10))
                .isInstanceOf(io.outbox.spi.CorruptMessageException.class)
                .hasMessageContaining(corrupt.getBinary("_id").asUuid().toString())
                .hasMessageContaining("topic")
                .hasMessageContaining(store.options().messagesCollection());
    }

    @Test
    void S2_markPublishedRefusesAMessageOfAnotherBucketAndDeletesNothing() {
        store.writer().enqueue(message(1), message(2));
        List<Pending> fromTwo = store.nextBatch(2, 10);
        assertThatThrownBy(() -> store.markPublished(1, fromTwo)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bucket 2");
        assertThat(store.bucketsWithPending(List.of(1, 2))).containsExactly(1, 2);
    }

    @Test
    void S3_bucketsWithPendingRefusesNegativeBuckets() {
        assertThatThrownBy(() -> store.bucketsWithPending(List.of(1, -1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.bucketsWithPending(Collections.singletonList(null)))
                .isInstanceOf(NullPointerException.class);
    }

    @Test
    void C2_pendingMetricsRefuseANonPositiveTimeout() {
        assertThatThrownBy(() -> store.pendingMetrics(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void E4_enqueueOfNothingWritesNothing() {
        store.writer().enqueue(List.of());
        assertThat(raw(store.options().sequencesCollection()).countDocuments()).isZero();
        assertThat(raw(store.options().messagesCollection()).countDocuments()).isZero();
    }

    @Test
    void S4_leaseDocumentsOfALargerFormerBucketCountAreIgnored() {
        raw(store.options().leasesCollection()).insertOne(new BsonDocument("_id", new BsonInt32(20))
                .append("owner", new BsonString("someone")).append("expiresAt", new BsonInt64(0)));
        assertThat(store.acquireBucketLeases(LeaseRequest.of("relay", 4, Duration.ofSeconds(30))))
                .containsExactly(0, 1, 2, 3);
    }
}
