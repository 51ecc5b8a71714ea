package io.outbox.tck;

import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * The index of the compatibility kit: one constant per test of {@link OutboxStoreTck} (those it
 * inherits from {@link DeadLetterRules} included), with the
 * contract rule it guards (the ids of the README's "Contract rules", as in
 * {@link io.outbox.spi.OutboxStore}), how binding it is, what it checks, and where to look when
 * it fails. A failing kit test's message starts with the rule id and the test name and ends with
 * {@link #ifThisFailsCheck()}, so a report names the broken rule and the likely mistakes.
 *
 * <p>Test names follow {@code <binding>_<rule>_<what>}: {@code required_} must pass;
 * {@code stochastic_} must pass too, but is a race that a broken store fails often, not always;
 * {@code optional_} runs only when the store implements the capability and is otherwise skipped
 * with the reason.
 */
public enum TckRule {

    /** {@link OutboxStoreTck#required_S1_nextBatchReturnsAtMostMaxCountOldestFirst}. */
    S1_NEXT_BATCH_RETURNS_AT_MOST_MAX_COUNT_OLDEST_FIRST(Binding.REQUIRED, "S1", "required_S1_nextBatchReturnsAtMostMaxCountOldestFirst",
            "S1: nextBatch returns at most maxCount pending messages of the bucket, in enqueue order, "
                + "and only that bucket's.",
            "the batch query sorts by the enqueue sequence (auto-increment id, per-bucket counter), "
                + "not by message id, time or insertion into an unordered map; the limit is applied after "
                + "sorting; the query filters on the bucket."),

    /** {@link OutboxStoreTck#required_S1_orderHoldsAcrossManyEnqueuesAndBatchSizes}. */
    S1_ORDER_HOLDS_ACROSS_MANY_ENQUEUES_AND_BATCH_SIZES(Binding.REQUIRED, "S1", "required_S1_orderHoldsAcrossManyEnqueuesAndBatchSizes",
            "S1 with S2: draining buckets with varying batch sizes and partial acknowledgements "
                + "yields every message exactly once, in enqueue order, whatever the transaction sizes "
                + "were.",
            "messages enqueued in one transaction keep their order; sequence numbers are reserved in "
                + "enqueue order; deleting a prefix does not disturb the order of the rest."),

    /** {@link OutboxStoreTck#required_S1_nextBatchRefusesANegativeBucket}. */
    S1_NEXT_BATCH_REFUSES_A_NEGATIVE_BUCKET(Binding.REQUIRED, "S1", "required_S1_nextBatchRefusesANegativeBucket",
            "S1: nextBatch refuses a negative bucket with IllegalArgumentException, as "
                + "StoreArguments.requireBucket does.",
            "nextBatch starts with StoreArguments.requireBucket(bucket) instead of running a query "
                + "for a bucket no message can have."),

    /** {@link OutboxStoreTck#required_S1_nextBatchRefusesMaxCountBelowOne}. */
    S1_NEXT_BATCH_REFUSES_MAX_COUNT_BELOW_ONE(Binding.REQUIRED, "S1", "required_S1_nextBatchRefusesMaxCountBelowOne",
            "S1: nextBatch refuses a maxCount below 1 with IllegalArgumentException, as "
                + "StoreArguments.requireMaxCount does.",
            "nextBatch calls StoreArguments.requireMaxCount(maxCount) instead of passing 0 or a "
                + "negative limit to the database (where it may mean \"no limit\")."),

    /** {@link OutboxStoreTck#required_S1_batchNeverExceedsMaxCountWithMultiMessageTransactions}. */
    S1_BATCH_NEVER_EXCEEDS_MAX_COUNT_WITH_MULTI_MESSAGE_TRANSACTIONS(Binding.REQUIRED, "S1", "required_S1_batchNeverExceedsMaxCountWithMultiMessageTransactions",
            "S1: a batch never holds more than maxCount messages even when transactions enqueued many "
                + "messages at once, and it cuts across transaction boundaries.",
            "the limit counts messages, not transactions or pages; the query's limit is maxCount "
                + "exactly."),

    /** {@link OutboxStoreTck#required_S1_nextBatchNeverReturnsAnotherBucketsRows}. */
    S1_NEXT_BATCH_NEVER_RETURNS_ANOTHER_BUCKETS_ROWS(Binding.REQUIRED, "S1", "required_S1_nextBatchNeverReturnsAnotherBucketsRows",
            "S1: nextBatch returns only the asked bucket's rows, even for buckets whose numbers share "
                + "low bits or a remainder.",
            "the query compares the bucket for equality, not modulo, prefix or range."),

    /** {@link OutboxStoreTck#required_S1_orderIsEnqueueOrderNotCreationTime}. */
    S1_ORDER_IS_ENQUEUE_ORDER_NOT_CREATION_TIME(Binding.REQUIRED, "S1", "required_S1_orderIsEnqueueOrderNotCreationTime",
            "S1: order is enqueue order, not creation time: messages created with clocks that "
                + "disagree (several writer hosts) come back in the order they were enqueued.",
            "the batch is sorted by the enqueue sequence (id, counter), not by createdAt or message "
                + "id."),

    /** {@link OutboxStoreTck#required_S2_markPublishedDeletesExactlyThePrefix}. */
    S2_MARK_PUBLISHED_DELETES_EXACTLY_THE_PREFIX(Binding.REQUIRED, "S2", "required_S2_markPublishedDeletesExactlyThePrefix",
            "S2: markPublished deletes exactly the acknowledged prefix; the rest of the batch, later "
                + "messages and other buckets stay.",
            "deletion is by the messages' native ids (or message ids), not by a range such as \"id <= "
                + "last\"; it is scoped to the bucket; it does not delete the whole batch that was read."),

    /** {@link OutboxStoreTck#required_S2_markPublishedIsIdempotent}. */
    S2_MARK_PUBLISHED_IS_IDEMPOTENT(Binding.REQUIRED, "S2", "required_S2_markPublishedIsIdempotent",
            "S2: marking the same messages again, or a longer prefix that includes deleted ones, is "
                + "safe and deletes nothing else; an empty list is a no-op.",
            "a second delete of an already deleted row is not an error; no \"expected N rows "
                + "deleted\" assertion inside the store."),

    /** {@link OutboxStoreTck#required_S2_markPublishedRefusesAForeignMessage}. */
    S2_MARK_PUBLISHED_REFUSES_A_FOREIGN_MESSAGE(Binding.REQUIRED, "S2", "required_S2_markPublishedRefusesAForeignMessage",
            "S2: markPublished refuses a message the store did not read (one the application created, "
                + "with the right bucket and a real message id) with IllegalArgumentException and deletes "
                + "nothing, not even the messages of the same call that it did read.",
            "markPublished calls StoreArguments.requirePublished with the store's own message "
                + "subclass (the one carrying its native id) before deleting anything; deletion is never by "
                + "message id alone."),

    /** {@link OutboxStoreTck#required_S2_markPublishedRefusesAnotherBucketsMessage}. */
    S2_MARK_PUBLISHED_REFUSES_ANOTHER_BUCKETS_MESSAGE(Binding.REQUIRED, "S2", "required_S2_markPublishedRefusesAnotherBucketsMessage",
            "S2: markPublished refuses a message read from another bucket than the one named, and a "
                + "negative bucket, with IllegalArgumentException, and deletes nothing.",
            "markPublished calls StoreArguments.requirePublished(bucket, ...), which compares each "
                + "message's bucket with the argument; the delete is scoped to the named bucket."),

    /** {@link OutboxStoreTck#required_S2_markPublishedSparesAMessageCommittedLate}. */
    S2_MARK_PUBLISHED_SPARES_A_MESSAGE_COMMITTED_LATE(Binding.REQUIRED, "S2", "required_S2_markPublishedSparesAMessageCommittedLate",
            "S2: a message whose transaction reserved its place first but committed last survives the "
                + "deletion of a later message that was published before it became visible. (Needs the "
                + "optional fixture method beginEnqueue.)",
            "deletion names the published rows (native ids or message ids); it must never delete a "
                + "range such as seq <= last published, which also removes a lower sequence committed late."),

    /** {@link OutboxStoreTck#required_S3_bucketsWithPendingIsExact}. */
    S3_BUCKETS_WITH_PENDING_IS_EXACT(Binding.REQUIRED, "S3", "required_S3_bucketsWithPendingIsExact",
            "S3: bucketsWithPending returns exactly the asked buckets that hold rows, ascending, "
                + "distinct; an emptied bucket disappears at once.",
            "the probe filters on the given buckets only; results are sorted; it reads committed data "
                + "(no stale cache); an empty input returns an empty list."),

    /** {@link OutboxStoreTck#required_S3_bucketsWithPendingRefusesANegativeBucket}. */
    S3_BUCKETS_WITH_PENDING_REFUSES_A_NEGATIVE_BUCKET(Binding.REQUIRED, "S3", "required_S3_bucketsWithPendingRefusesANegativeBucket",
            "S3: bucketsWithPending refuses a negative bucket, a null list and a null element, as "
                + "StoreArguments.requireBuckets does, rather than ignoring them.",
            "bucketsWithPending starts with StoreArguments.requireBuckets(buckets) (which also sorts "
                + "and deduplicates)."),

    /** {@link OutboxStoreTck#required_S4_aLoneRelayAcquiresEveryBucket}. */
    S4_A_LONE_RELAY_ACQUIRES_EVERY_BUCKET(Binding.REQUIRED, "S4", "required_S4_aLoneRelayAcquiresEveryBucket",
            "S4: a relay alone acquires every bucket, and the answer is read back from the store: a "
                + "second store instance sees the same owner.",
            "lease rows are created (seeded) when missing; the returned list comes from the store, "
                + "ascending; leases are visible across clients (no per-instance cache)."),

    /** {@link OutboxStoreTck#required_S4_excessIsReleasedToAJoiningRelay}. */
    S4_EXCESS_IS_RELEASED_TO_A_JOINING_RELAY(Binding.REQUIRED, "S4", "required_S4_excessIsReleasedToAJoiningRelay",
            "S4: when a second relay joins, the first releases its excess and the second claims it; "
                + "the two end with fair, disjoint shares covering every bucket.",
            "heartbeats are recorded on every acquire and read by the others; the excess is released "
                + "(owner cleared), not kept; claims take free or expired leases only; LeasePlan is used as "
                + "documented."),

    /** {@link OutboxStoreTck#required_S4_onlyBucketsInRangeAreReturned}. */
    S4_ONLY_BUCKETS_IN_RANGE_ARE_RETURNED(Binding.REQUIRED, "S4", "required_S4_onlyBucketsInRangeAreReturned",
            "S4: lease rows outside [0, bucketCount) (left by relays configured with more buckets) "
                + "are neither an error nor returned: a relay only ever gets buckets in its range.",
            "the read-back filters on bucket < bucketCount; S8 is about pending message rows (and "
                + "sequence counters), not lease rows."),

    /** {@link OutboxStoreTck#required_S4b_heldBucketsAreKeptRoundAfterRound}. */
    S4B_HELD_BUCKETS_ARE_KEPT_ROUND_AFTER_ROUND(Binding.REQUIRED, "S4b", "required_S4b_heldBucketsAreKeptRoundAfterRound",
            "S4b: relays that pass back the buckets they held keep exactly those buckets round after "
                + "round; nothing moves in a stable fleet.",
            "keep writes extend the caller's own leases (owner = me, the expiry last seen) instead of "
                + "re-claiming; heldBuckets is passed to LeasePlan; renewals do not reset ownership."),

    /** {@link OutboxStoreTck#stochastic_S5_noBucketIsEverHeldByTwoRelaysUnderContention}. */
    S5_NO_BUCKET_IS_EVER_HELD_BY_TWO_RELAYS_UNDER_CONTENTION(Binding.STOCHASTIC, "S5", "stochastic_S5_noBucketIsEverHeldByTwoRelaysUnderContention",
            "S5: under real contention no bucket is ever held by two relays with unexpired leases. "
                + "Each of several relays has its own store instance and thread; they acquire (and renew, "
                + "with C1) for hundreds of rounds while the shared clock runs and relays pause long enough "
                + "to lose their leases. A ledger records when each relay believed it held each bucket "
                + "(from the return of a call until the lease duration after its start, cut short by its "
                + "next call) and fails on any overlap between two relays.",
            "every lease transition is one atomic conditional write whose condition the database "
                + "evaluates (claim: owner and expiry as observed; keep and release: owner = me and "
                + "expiry = the value read); the read-back only returns leases with owner = me and expiry > "
                + "now; nothing is decided on data read earlier in the call without a condition on the "
                + "write."),

    /** {@link OutboxStoreTck#required_S5_keepingALeaseNeverShortensIt}. */
    S5_KEEPING_A_LEASE_NEVER_SHORTENS_IT(Binding.REQUIRED, "S5", "required_S5_keepingALeaseNeverShortensIt",
            "S5, S13: a relay that keeps its leases while its clock was set back never shortens them "
                + "and still changes them: it keeps its share, a peer gets none of it, and the holder, its "
                + "clock back to normal, still holds it.",
            "the keep write sets expiry to LeasePlan.renewedExpiry(observed) (max(stored + 1, now + "
                + "duration)), not to now + duration nor to max(stored, now + duration)."),

    /** {@link OutboxStoreTck#required_S5_keepingALeaseExtendsIt}. */
    S5_KEEPING_A_LEASE_EXTENDS_IT(Binding.REQUIRED, "S5", "required_S5_keepingALeaseExtendsIt",
            "S5: keeping a lease changes and extends it, so a peer that watches it takes it only a "
                + "lease duration after the last keep it saw, not when the original lease would have run out.",
            "every acquire writes the keep for each lease the relay keeps (no \"still fresh, skip the "
                + "write\" shortcut), with LeasePlan.renewedExpiry."),

    /** {@link OutboxStoreTck#stochastic_S5_simultaneousClaimsAfterMassExpiryNeverGrantABucketTwice}. */
    S5_SIMULTANEOUS_CLAIMS_AFTER_MASS_EXPIRY_NEVER_GRANT_A_BUCKET_TWICE(Binding.STOCHASTIC, "S5", "stochastic_S5_simultaneousClaimsAfterMassExpiryNeverGrantABucketTwice",
            "S5: when every lease and heartbeat has expired and all relays acquire at the same "
                + "instant, no bucket is returned to two of them. Relays see different memberships (each "
                + "sees only the heartbeats written before its read), plan overlapping claims, and only the "
                + "database's conditional writes keep them apart. Like the contention test this is a race: "
                + "a store without conditional claims fails it often, not always.",
            "the claim is a conditional write (owner and expiry as observed) evaluated by the "
                + "database; the read-back comes from the store, not from the writes the relay planned."),

    /** {@link OutboxStoreTck#required_S6_aStoppedRelaysBucketsAreTakenOverAfterTheLeaseDuration}. */
    S6_A_STOPPED_RELAYS_BUCKETS_ARE_TAKEN_OVER_AFTER_THE_LEASE_DURATION(Binding.REQUIRED, "S6", "required_S6_aStoppedRelaysBucketsAreTakenOverAfterTheLeaseDuration",
            "S6, S13: the buckets of a relay that stops calling pass to the live relays one lease "
                + "duration (of their own clock) after they first saw its last writes, and not one "
                + "millisecond earlier.",
            "acquire goes through LeaseAcquisition with one instance per store (it remembers what each "
                + "relay observed); a silent relay's heartbeat stops counting once unchanged for one lease "
                + "duration; the claim of a lease judged expired is conditional on the owner and expiry "
                + "observed, not on expiresAt <= now."),

    /** {@link OutboxStoreTck#required_S6_aLeaseStopsCountingAtItsExpiryInstant}. */
    S6_A_LEASE_STOPS_COUNTING_AT_ITS_EXPIRY_INSTANT(Binding.REQUIRED, "S6", "required_S6_aLeaseStopsCountingAtItsExpiryInstant",
            "S6: a lease stops counting at its expiry instant: a relay acquiring exactly then (its own "
                + "leases unchanged for a lease duration since it wrote them), with a peer alive, gets its "
                + "fair share afresh and not its expired leases back.",
            "the read-back keeps only leases with expiresAt > now (strictly), by the caller's own clock."),

    /** {@link OutboxStoreTck#required_S13_relaysWithClocksFarApartKeepFairSharesAndNeverShareABucket}. */
    S13_RELAYS_WITH_CLOCKS_FAR_APART_KEEP_FAIR_SHARES_AND_NEVER_SHARE_A_BUCKET(Binding.REQUIRED, "S13",
            "required_S13_relaysWithClocksFarApartKeepFairSharesAndNeverShareABucket",
            "S13: two relays whose clocks are 60 s apart (each way round) acquire for hundreds of rounds: "
                + "they converge to fair shares, keep them, and never hold one bucket at once.",
            "acquire goes through LeaseAcquisition (one instance per store, liveness by observed "
                + "change); no claim, share or read-back compares this relay's clock with a timestamp "
                + "another relay wrote; the claim is conditional on the owner and expiry observed."),

    /** {@link OutboxStoreTck#required_S13_aClockJumpNeitherStealsNorLosesLeases}. */
    S13_A_CLOCK_JUMP_NEITHER_STEALS_NOR_LOSES_LEASES(Binding.REQUIRED, "S13",
            "required_S13_aClockJumpNeitherStealsNorLosesLeases",
            "S13: a relay whose clock jumps forward, then back, by 60 s mid-run (calls alternating with "
                + "its peer's) neither takes its peer's buckets nor loses its own.",
            "expiry is judged by observed change, elapsed time counted on the caller's clock between "
                + "its own calls (a step back counting as none); keeps and heartbeats always change the "
                + "stored value (max(stored + 1, ...)); the caller's own read-back and keeps do not depend "
                + "on other relays' timestamps."),

    /** {@link OutboxStoreTck#required_S13_aDeadRelaysBucketsAreTakenOverWithinALeaseDurationOfObservation}. */
    S13_A_DEAD_RELAYS_BUCKETS_ARE_TAKEN_OVER_WITHIN_A_LEASE_DURATION_OF_OBSERVATION(Binding.REQUIRED, "S13",
            "required_S13_aDeadRelaysBucketsAreTakenOverWithinALeaseDurationOfObservation",
            "S13, S6: a relay whose clock is far ahead of or behind a dead relay's takes over the dead "
                + "relay's buckets exactly one lease duration of its own clock after it first saw their "
                + "last value, whatever timestamps the dead relay wrote.",
            "a lease and heartbeat count as expired once unchanged for one lease duration since the "
                + "caller first observed them, regardless of the expiry stored; claims of a held but "
                + "stale lease are conditional on the observed owner and expiry, not on expiresAt <= now."),

    /** {@link OutboxStoreTck#required_S7_fairSharesConvergeAsRelaysJoinAndLeave}. */
    S7_FAIR_SHARES_CONVERGE_AS_RELAYS_JOIN_AND_LEAVE(Binding.REQUIRED, "S7", "required_S7_fairSharesConvergeAsRelaysJoinAndLeave",
            "S7: as relays join one at a time (up to one more than there are buckets) and then leave "
                + "one at a time, the live relays converge within a few rounds to shares that differ by at "
                + "most one and cover every bucket, and a converged fleet keeps its assignment.",
            "every relay uses LeasePlan (shares from live heartbeats, preferred ranges, planned "
                + "claims); stale heartbeats stop counting after one lease duration; released and expired "
                + "buckets are claimable; an idle round writes nothing that moves a bucket."),

    /** {@link OutboxStoreTck#required_S8_rowsOutsideTheBucketRangeAreFatal}. */
    S8_ROWS_OUTSIDE_THE_BUCKET_RANGE_ARE_FATAL(Binding.REQUIRED, "S8", "required_S8_rowsOutsideTheBucketRangeAreFatal",
            "S8: pending rows in a bucket at or above bucketCount, which the relay can never claim (a "
                + "writer configured with a larger bucket count), make acquireBucketLeases throw "
                + "OutboxMisconfigurationException naming the bucket, instead of leaving them unpublished "
                + "forever.",
            "acquire goes through LeaseAcquisition.acquire and the store's strayRows probes for rows "
                + "(or counters) with bucket >= bucketCount; the exception type is "
                + "OutboxMisconfigurationException, not a generic one the relay would retry."),

    /** {@link OutboxStoreTck#required_S8_rowsBelowBucketZeroAreFatal}. */
    S8_ROWS_BELOW_BUCKET_ZERO_ARE_FATAL(Binding.REQUIRED, "S8", "required_S8_rowsBelowBucketZeroAreFatal",
            "S8, the other side: a pending row in a negative bucket (a foreign writer with a signed "
                + "hash, a hand-written fix) makes acquireBucketLeases throw "
                + "OutboxMisconfigurationException naming the bucket. Needs the fixture's insertRawRow.",
            "the store's strayRows looks below 0 as well as at and above bucketCount (an index seek "
                + "on each side); the lease read-back and the plan never treat a negative bucket as bucket "
                + "0."),

    /** {@link OutboxStoreTck#required_R11_busyBucketsAreKeptAboveTheShareUntilTheyAreIdle}. */
    R11_BUSY_BUCKETS_ARE_KEPT_ABOVE_THE_SHARE(Binding.REQUIRED, "R11",
            "required_R11_busyBucketsAreKeptAboveTheShareUntilTheyAreIdle",
            "An acquisition keeps the caller's busy buckets (LeaseRequest.busyBuckets) even above its "
                + "fair share, so a rebalance never takes a bucket from a relay while it publishes it; once "
                + "they are idle the next call gives the excess up and a peer claims it.",
            "the store plans from the request it was given (so busyBuckets reaches LeasePlan); every "
                + "lease in the plan's keep list is extended; nothing the plan keeps is released."),

    /** {@link OutboxStoreTck#required_S9_pendingRowsNeverExpire}. */
    S9_PENDING_ROWS_NEVER_EXPIRE(Binding.REQUIRED, "S9", "required_S9_pendingRowsNeverExpire",
            "S9: pending rows never expire: after a long time, with leases long gone, they are still "
                + "there in order.",
            "no TTL attribute or index on pending messages, no cleanup job, no filter on createdAt in "
                + "nextBatch."),

    /** {@link OutboxStoreTck#required_S10_everyFieldRoundTripsExactly}. */
    S10_EVERY_FIELD_ROUND_TRIPS_EXACTLY(Binding.REQUIRED, "S10", "required_S10_everyFieldRoundTripsExactly",
            "S10: topic, key, value (null and empty are different), headers (order, repeats, null and "
                + "empty values, non-ASCII names), partition, message id and creation time (milliseconds) "
                + "come back exactly as enqueued.",
            "nullable binary columns/attributes for key and value (an empty binary must not become "
                + "null, e.g. DynamoDB refuses empty binary sets but not empty binary values); headers "
                + "stored with OutboxHeaderCodec or in an order-preserving structure; createdAt stored with "
                + "millisecond precision in UTC; partition stored as nullable."),

    /** {@link OutboxStoreTck#required_S10_theLargestDeclaredPayloadRoundTripsInEveryField}. */
    S10_THE_LARGEST_DECLARED_PAYLOAD_ROUND_TRIPS_IN_EVERY_FIELD(Binding.REQUIRED, "S10", "required_S10_theLargestDeclaredPayloadRoundTripsInEveryField",
            "S10: a message whose payload is exactly the largest the store declares is accepted and "
                + "round-trips, wherever the bytes are: all in the value, all in the key, or all in one "
                + "header; each with the longest topic and an explicit partition, so the store's own fields "
                + "take their largest size too.",
            "the declared limit matches the real one (column types, document or item size minus the "
                + "store's own fields at their largest); no field has a smaller limit of its own (a key "
                + "column of 64 KiB, say); the limit compares payloadSize() with >, not >=."),

    /** {@link OutboxStoreTck#required_S10_createdAtIgnoresTheDefaultTimeZone}. */
    S10_CREATED_AT_IGNORES_THE_DEFAULT_TIME_ZONE(Binding.REQUIRED, "S10", "required_S10_createdAtIgnoresTheDefaultTimeZone",
            "S10: createdAt is an instant, not a local time: it round-trips while the writer and the "
                + "reader run with different default time zones.",
            "createdAt is stored as epoch milliseconds or a zone-aware type, never converted through "
                + "the JVM's or the session's default time zone."),

    /** {@link OutboxStoreTck#required_S10_oneByteOverTheLimitFailsAndWritesNothing}. */
    S10_ONE_BYTE_OVER_THE_LIMIT_FAILS_AND_WRITES_NOTHING(Binding.REQUIRED, "S10", "required_S10_oneByteOverTheLimitFailsAndWritesNothing",
            "S10: one byte more than the declared limit fails at enqueue with a clear error, and "
                + "nothing of that transaction is written, not even its other, small messages.",
            "the enqueue helper calls message.requirePayloadAtMost(limit) for every message before it "
                + "writes anything; the error propagates (as OutboxPayloadTooLargeException or its cause) "
                + "so the caller's transaction rolls back."),

    /** {@link OutboxStoreTck#required_S11_leaseTimeComesFromTheInjectedClock}. */
    S11_LEASE_TIME_COMES_FROM_THE_INJECTED_CLOCK(Binding.REQUIRED, "S11", "required_S11_leaseTimeComesFromTheInjectedClock",
            "S11: lease time comes from the injected clock only. Leases behave by the kit's clock set "
                + "decades away from the machine's time, in both directions.",
            "no System.currentTimeMillis(), Instant.now(), database now() or server-side time in "
                + "lease logic; expiry and heartbeats are stored as epoch milliseconds computed from the "
                + "clock given to the store."),

    /** {@link OutboxStoreTck#stochastic_S12_oneStoreInstanceServesConcurrentCallers}. */
    S12_ONE_STORE_INSTANCE_SERVES_CONCURRENT_CALLERS(Binding.STOCHASTIC, "S12", "stochastic_S12_oneStoreInstanceServesConcurrentCallers",
            "S12: one store instance serves concurrent callers: several threads drain their own "
                + "buckets while others acquire and renew leases, all through the same instance.",
            "no shared mutable state without synchronization (a shared JDBC connection, a "
                + "non-thread-safe cache, reused statement objects); each call borrows its own connection "
                + "or session."),

    /** {@link OutboxStoreTck#required_E4_aRolledBackEnqueueLeavesNothing}. */
    E4_A_ROLLED_BACK_ENQUEUE_LEAVES_NOTHING(Binding.REQUIRED, "E4", "required_E4_aRolledBackEnqueueLeavesNothing",
            "E4: an enqueue whose transaction rolls back leaves nothing behind; a later committed "
                + "enqueue shows only its own messages.",
            "the enqueue helper writes through the caller's transaction (connection, session, "
                + "transact-write request) and never commits on its own or uses a separate connection."),

    /** {@link OutboxStoreTck#stochastic_E5_concurrentWritersLoseNothingAndKeepTheirOrder}. */
    E5_CONCURRENT_WRITERS_LOSE_NOTHING_AND_KEEP_THEIR_ORDER(Binding.STOCHASTIC, "E5", "stochastic_E5_concurrentWritersLoseNothingAndKeepTheirOrder",
            "E5: writers enqueueing concurrently, each with its own store instance, into one bucket "
                + "lose nothing, and each writer's messages keep their order.",
            "the per-bucket sequence is reserved with one atomic increment (an auto-increment column, "
                + "$inc, ADD), never computed as \"max + 1\" or cached; no unique-key collision is "
                + "swallowed."),

    /** {@link OutboxStoreTck#required_discovery_providerIsFoundByName}. */
    DISCOVERY_PROVIDER_IS_FOUND_BY_NAME(Binding.REQUIRED, "discovery", "required_discovery_providerIsFoundByName",
            "Discovery: the store's provider is found by name through java.util.ServiceLoader, and "
                + "the store it opens works on this test's storage. * It also refuses an unknown setting.",
            "the provider is registered in META-INF/services/io.outbox.spi.OutboxStoreProvider (with "
                + "@AutoService(OutboxStoreProvider.class)); name() returns the documented name; create "
                + "accepts the documented settings."),

    /** {@link OutboxStoreTck#optional_C1_renewalExtendsLeasesAndRefreshesTheHeartbeat}. */
    C1_RENEWAL_EXTENDS_LEASES_AND_REFRESHES_THE_HEARTBEAT(Binding.OPTIONAL, "C1", "optional_C1_renewalExtendsLeasesAndRefreshesTheHeartbeat",
            "C1: renewal extends the caller's unexpired leases and refreshes its heartbeat: a peer "
                + "can take neither the buckets nor a share while the caller keeps renewing.",
            "renewal updates the heartbeat; the renewal write is conditional on owner = me and expiry "
                + "> now and sets expiry to max(expiry, now + duration)."),

    /** {@link OutboxStoreTck#optional_C1_renewalReportsLostLeases}. */
    C1_RENEWAL_REPORTS_LOST_LEASES(Binding.OPTIONAL, "C1", "optional_C1_renewalReportsLostLeases",
            "C1: renewal reports a lease as lost once it expired or another relay took it, and does "
                + "not take it back.",
            "renewal only touches leases with owner = me and expiry > now; it returns only the "
                + "buckets its conditional writes succeeded on."),

    /** {@link OutboxStoreTck#optional_C1_renewalNeverShortensALease}. */
    C1_RENEWAL_NEVER_SHORTENS_A_LEASE(Binding.OPTIONAL, "C1", "optional_C1_renewalNeverShortensALease",
            "C1: a renewal with the clock set back never shortens a lease.",
            "the renewal sets expiry to max(stored expiry, now + duration)."),

    /** {@link OutboxStoreTck#optional_C1_renewalKeepsTheRelayCountedAsLive}. */
    C1_RENEWAL_KEEPS_THE_RELAY_COUNTED_AS_LIVE(Binding.OPTIONAL, "C1", "optional_C1_renewalKeepsTheRelayCountedAsLive",
            "C1: a relay that only renews (during a long publish) still counts as live: its heartbeat "
                + "is refreshed, so a joining relay's arrival shrinks the others' shares as it should.",
            "renewal writes the relay's heartbeat too."),

    /** {@link OutboxStoreTck#optional_C2_pendingMetricsCountEveryBucketAndFindTheOldest}. */
    C2_PENDING_METRICS_COUNT_EVERY_BUCKET_AND_FIND_THE_OLDEST(Binding.OPTIONAL, "C2", "optional_C2_pendingMetricsCountEveryBucketAndFindTheOldest",
            "C2: the pending metrics count every pending message in every bucket and name the oldest "
                + "creation time; an empty store reports zero and no time.",
            "the count is over all buckets, not just leased ones; the minimum is over createdAt in "
                + "milliseconds; deleted rows are not counted."),

    /** {@link OutboxStoreTck#optional_C3_releaseHandsBucketsOverAtOnce}. */
    C3_RELEASE_HANDS_BUCKETS_OVER_AT_ONCE(Binding.OPTIONAL, "C3", "optional_C3_releaseHandsBucketsOverAtOnce",
            "C3: a relay that releases its leases on a graceful stop hands its buckets over at once, "
                + "and its heartbeat no longer counts.",
            "release clears the owner of every lease the relay holds and deletes its heartbeat row."),

    /** {@link OutboxStoreTck#optional_C3_releaseIsFencedByOwner}. */
    C3_RELEASE_IS_FENCED_BY_OWNER(Binding.OPTIONAL, "C3", "optional_C3_releaseIsFencedByOwner",
            "C3: release is fenced by owner: leases another relay took over are left alone.",
            "the release write's condition includes owner = the releasing relay."),

    /** {@link OutboxStoreTck#optional_C5_readAheadLeavesOutTheBatchInFlight}. */
    C5_READ_AHEAD_LEAVES_OUT_THE_BATCH_IN_FLIGHT(Binding.OPTIONAL, "C5", "optional_C5_readAheadLeavesOutTheBatchInFlight",
            "C5: the read ahead returns what nextBatch would return with the batch in flight deleted, while "
                + "that batch is still pending, and markPublished deletes the older batch and the one read ahead "
                + "each alone.",
            "the query leaves out the row ids of inFlight (id NOT IN (...)) in the order and limit of "
                + "nextBatch; ids no longer pending change nothing; an empty inFlight is nextBatch; markPublished "
                + "accepts a batch that is not the latest one read; arguments are checked with StoreArguments."),

    /** {@link DeadLetterRules#optional_C4_aMoveKeepsBytesIdAndFailureAndFreesTheBucketsHead}. */
    C4_A_MOVE_KEEPS_BYTES_ID_AND_FAILURE_AND_FREES_THE_BUCKETS_HEAD(Binding.OPTIONAL, "C4", "optional_C4_aMoveKeepsBytesIdAndFailureAndFreesTheBucketsHead",
            "C4: a move takes the message out of its bucket and keeps its bytes, id and every failure "
                + "field; the messages behind it become the bucket's head.",
            "the move copies every column of the message row (the header blob as stored); it deletes "
                + "the pending row in the same transaction; failure times and the move time are epoch "
                + "milliseconds; the reason column holds {@value DeadLetterFailure#MAX_REASON_LENGTH} "
                + "characters, including ones outside the Basic Multilingual Plane (MySQL: utf8mb4)."),

    /** {@link DeadLetterRules#optional_C4_deadLettersAreNeverLeasedReadOrCounted}. */
    C4_DEAD_LETTERS_ARE_NEVER_LEASED_READ_OR_COUNTED(Binding.OPTIONAL, "C4", "optional_C4_deadLettersAreNeverLeasedReadOrCounted",
            "C4: dead letters are never returned by nextBatch, never counted by bucketsWithPending or "
                + "the pending metrics, and a bucket holding only dead letters is idle.",
            "dead letters live outside the pending rows (their own table, collection or items), or "
                + "every pending query excludes them."),

    /** {@link DeadLetterRules#optional_C4_aMoveThatFailsHalfWayLeavesTheMessagePendingAndNothingDoubled}. */
    C4_A_MOVE_THAT_FAILS_HALF_WAY_LEAVES_THE_MESSAGE_PENDING_AND_NOTHING_DOUBLED(Binding.OPTIONAL, "C4", "optional_C4_aMoveThatFailsHalfWayLeavesTheMessagePendingAndNothingDoubled",
            "C4: a move that cannot complete changes nothing: moving a message whose id already has a "
                + "dead letter with a different record fails with DeadLetterConflictException, the message "
                + "stays pending with its bytes, and the existing dead letter is unchanged. (A store that "
                + "refuses a second pending message with a dead letter's id at enqueue passes too.)",
            "the insert into the dead letters and the delete of the pending row are one transaction "
                + "(or one TransactWriteItems, or one document update), rolled back as a whole when either "
                + "fails; the dead letters are keyed by message id; a different record is refused with "
                + "DeadLetterConflictException (DeadLetter.sameRecord), not overwritten."),

    /** {@link DeadLetterRules#optional_C4_aRepeatOfADeadLetterMovesIntoIt}. */
    C4_A_REPEAT_OF_A_DEAD_LETTER_MOVES_INTO_IT(Binding.OPTIONAL, "C4", "optional_C4_aRepeatOfADeadLetterMovesIntoIt",
            "C4: moving a repeat of a dead letter (same id, same topic, key, value, header blob and "
                + "partition) succeeds: the pending message is removed and the one dead letter keeps the "
                + "bytes with the newer failure.",
            "the move compares the existing dead letter's record (DeadLetter.sameRecord) and, when "
                + "equal, updates its failure and deletes the pending row in one transaction instead of "
                + "failing on the dead letters' key."),

    /** {@link DeadLetterRules#optional_C4_aHeadFailureIsDurableAndReadByAnotherInstance}. */
    C4_A_HEAD_FAILURE_IS_DURABLE_AND_READ_BY_ANOTHER_INSTANCE(Binding.OPTIONAL, "C4", "optional_C4_aHeadFailureIsDurableAndReadByAnotherInstance",
            "C4: a failing head's record (recordHeadFailure) is read by another store instance with "
                + "every field, replaced by the bucket's next record, absent for other buckets, and "
                + "refused for a message that is not pending in the bucket.",
            "the record is stored, not cached; a second record of the bucket replaces the first; the "
                + "reason column holds the full width (MySQL: utf8mb4); times are epoch milliseconds; the "
                + "write checks that the message is pending in that bucket."),

    /** {@link DeadLetterRules#optional_C4_aHeadFailureEndsWhenItsMessageIsPublishedOrMoved}. */
    C4_A_HEAD_FAILURE_ENDS_WHEN_ITS_MESSAGE_IS_PUBLISHED_OR_MOVED(Binding.OPTIONAL, "C4", "optional_C4_aHeadFailureEndsWhenItsMessageIsPublishedOrMoved",
            "C4: a head's failure record is no longer reported once its message is published or "
                + "moved; the bucket's new head has none until one is recorded for it.",
            "headFailures reports a record only while its message is the bucket's oldest pending "
                + "message (or the record lives in the message's row and goes with it); the move removes "
                + "the record or leaves it where the head check hides it."),

    /** {@link DeadLetterRules#optional_C4_concurrentMovesOfOneMessageMoveItOnce}. */
    C4_CONCURRENT_MOVES_OF_ONE_MESSAGE_MOVE_IT_ONCE(Binding.OPTIONAL, "C4", "optional_C4_concurrentMovesOfOneMessageMoveItOnce",
            "C4: concurrent moves of one message from two store instances move it once: exactly one "
                + "returns true, one dead letter exists, nothing is pending.",
            "the delete of the pending row is conditional on the row still being there and the "
                + "transaction fails or reports false when it deleted nothing."),

    /** {@link DeadLetterRules#optional_C4_aMessageNoLongerPendingIsNotMoved}. */
    C4_A_MESSAGE_NO_LONGER_PENDING_IS_NOT_MOVED(Binding.OPTIONAL, "C4", "optional_C4_aMessageNoLongerPendingIsNotMoved",
            "C4: a message published (deleted) before the move is not moved: the move reports false "
                + "and writes no dead letter.",
            "the move reads the pending row inside its transaction and writes nothing when it is "
                + "gone."),

    /** {@link DeadLetterRules#optional_C4_replayKeepsIdAndBytesAndGoesAfterWhatIsPendingNow}. */
    C4_REPLAY_KEEPS_ID_AND_BYTES_AND_GOES_AFTER_WHAT_IS_PENDING_NOW(Binding.OPTIONAL, "C4", "optional_C4_replayKeepsIdAndBytesAndGoesAfterWhatIsPendingNow",
            "C4: replay puts the message back into its bucket after every message pending now, with "
                + "the same id and bytes, and removes the dead letter; a second replay finds nothing.",
            "replay takes a new enqueue position (a new auto-increment id, a newly reserved sequence "
                + "number), not the old one; it copies every column back; insert and delete are one "
                + "transaction."),

    /** {@link DeadLetterRules#optional_C4_purgeRemovesOnlyWhatItNames}. */
    C4_PURGE_REMOVES_ONLY_WHAT_IT_NAMES(Binding.OPTIONAL, "C4", "optional_C4_purgeRemovesOnlyWhatItNames",
            "C4: purge removes exactly the dead letter it names: other dead letters and pending "
                + "messages stay; purging an unknown id reports false.",
            "the purge deletes by message id in the dead letters only."),

    /** {@link DeadLetterRules#optional_C4_listPagesInIdOrderWithoutRepeats}. */
    C4_LIST_PAGES_IN_ID_ORDER_WITHOUT_REPEATS(Binding.OPTIONAL, "C4", "optional_C4_listPagesInIdOrderWithoutRepeats",
            "C4: the dead letters list in pages ordered by the id's text form, every one exactly "
                + "once.",
            "the page query orders by message id as text (or its 16 bytes unsigned) and filters "
                + "strictly after the cursor."),

    /** {@link DeadLetterRules#required_R12_aCorruptRowIsReportedWithItsBucketAndMessageId}. */
    R12_A_CORRUPT_ROW_IS_REPORTED_WITH_ITS_BUCKET_AND_MESSAGE_ID(Binding.REQUIRED, "R12", "required_R12_aCorruptRowIsReportedWithItsBucketAndMessageId",
            "R12: a row whose header blob cannot be decoded is reported with a "
                + "CorruptMessageException naming its bucket and message id, with the decoded rows ahead of "
                + "it; with C4 it can be moved by id with its bytes as stored, and the rows behind it are "
                + "read again.",
            "nextBatch catches the decoding error per row and throws CorruptMessageException(bucket, "
                + "messageId, rowsBefore, ...); the move copies the stored blob without decoding it.");

    /** How binding a kit test is. */
    public enum Binding {
        /** Must pass; deterministic. */
        REQUIRED,
        /** Must pass; a race, so a broken store fails it often rather than always. */
        STOCHASTIC,
        /** Runs only when the store implements the optional capability; skipped otherwise. */
        OPTIONAL
    }

    private final Binding binding;
    private final String ruleId;
    private final String testName;
    private final String summary;
    private final String ifThisFailsCheck;

    TckRule(Binding binding, String ruleId, String testName, String summary, String ifThisFailsCheck) {
        this.binding = binding;
        this.ruleId = ruleId;
        this.testName = testName;
        this.summary = summary;
        this.ifThisFailsCheck = ifThisFailsCheck;
    }

    /**
     * How binding the test is.
     *
     * @return the binding, from the test name's prefix
     */
    public Binding binding() {
        return binding;
    }

    /**
     * The contract rule the test guards.
     *
     * @return a rule id such as {@code "S2"}, {@code "C1"}, {@code "E5"} or {@code "discovery"}
     */
    public String ruleId() {
        return ruleId;
    }

    /**
     * The test method of {@link OutboxStoreTck}.
     *
     * @return its name, for example {@code "required_S2_markPublishedDeletesExactlyThePrefix"}
     */
    public String testName() {
        return testName;
    }

    /**
     * What the test checks.
     *
     * @return one or two sentences
     */
    public String summary() {
        return summary;
    }

    /**
     * The likely mistakes in a store that fails the test.
     *
     * @return the "if this test fails, check" list, as prose
     */
    public String ifThisFailsCheck() {
        return ifThisFailsCheck;
    }

    /**
     * The constant for a test method.
     *
     * @param testName a method name of {@link OutboxStoreTck}; not null
     * @return the constant, or empty when the method is not a kit test
     */
    public static Optional<TckRule> forTest(String testName) {
        Objects.requireNonNull(testName, "testName must not be null");
        return Arrays.stream(values()).filter(r -> r.testName.equals(testName)).findFirst();
    }

    /**
     * An assertion message for this rule: the rule id and test name, the detail, and the hint.
     *
     * @param detail what failed; not null
     * @return {@code "<ruleId> (<testName>): <detail>. If this fails, check: <hint>"}
     */
    public String describe(String detail) {
        return ruleId + " (" + testName + "): " + detail + "\nIf this fails, check: " + ifThisFailsCheck;
    }
}
