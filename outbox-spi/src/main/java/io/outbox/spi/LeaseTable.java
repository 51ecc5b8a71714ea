package io.outbox.spi;

import io.outbox.spi.support.BucketLease;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The fleet's leases as one read of the store found them (capability C6, {@link LeaseView}).
 *
 * @param readAtMillis the store's clock when it read them, epoch milliseconds (S11)
 * @param heartbeats relay id to the relay's last heartbeat, epoch milliseconds, sorted by relay id;
 *     unmodifiable, not null
 * @param leases one lease per bucket of {@code [0, bucketCount)}, ascending by bucket (a bucket
 *     never leased is {@link BucketLease#free free}); unmodifiable, not null
 */
public record LeaseTable(long readAtMillis, Map<String, Long> heartbeats, List<BucketLease> leases) {

    /**
     * Checks the fields and copies them.
     *
     * @param readAtMillis the read's time
     * @param heartbeats the heartbeats
     * @param leases the leases, bucket {@code i} at index {@code i}
     * @throws NullPointerException if a field or an element is null
     * @throws IllegalArgumentException if the lease at index {@code i} is not bucket {@code i}'s
     */
    public LeaseTable {
        heartbeats = Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(heartbeats,
                "heartbeats must not be null")));
        leases = List.copyOf(Objects.requireNonNull(leases, "leases must not be null"));
        for (int i = 0; i < leases.size(); i++) {
            if (leases.get(i).bucket() != i) {
                throw new IllegalArgumentException("leases must hold bucket " + i + " at index " + i + " but held "
                        + leases.get(i));
            }
        }
    }

    /**
     * A table from rows as a store read them: rows outside {@code [0, bucketCount)} are dropped,
     * buckets without a row are free.
     *
     * @param readAtMillis the store's clock at the read, epoch milliseconds
     * @param heartbeats relay id to last heartbeat; not null
     * @param rows the lease rows read, any order, at most one per bucket; not null
     * @param bucketCount the fleet's bucket count, {@code >= 1}
     * @return the table
     * @throws IllegalArgumentException if {@code bucketCount < 1}, naming it
     * @throws NullPointerException if an argument or a row is null
     */
    public static LeaseTable of(long readAtMillis, Map<String, Long> heartbeats, Collection<BucketLease> rows,
                                int bucketCount) {
        requireBucketCount(bucketCount);
        BucketLease[] byBucket = new BucketLease[bucketCount];
        for (BucketLease row : Objects.requireNonNull(rows, "rows must not be null")) {
            Objects.requireNonNull(row, "rows must not hold null");
            if (row.bucket() < bucketCount) {
                byBucket[row.bucket()] = row;
            }
        }
        List<BucketLease> leases = new ArrayList<>(bucketCount);
        for (int b = 0; b < bucketCount; b++) {
            leases.add(byBucket[b] == null ? BucketLease.free(b) : byBucket[b]);
        }
        return new LeaseTable(readAtMillis, heartbeats, leases);
    }

    /**
     * Checks a bucket count passed to {@link LeaseView#leaseTable}.
     *
     * @param bucketCount the bucket count
     * @return the bucket count
     * @throws IllegalArgumentException if {@code bucketCount < 1}, naming it
     */
    public static int requireBucketCount(int bucketCount) {
        if (bucketCount < 1) {
            throw new IllegalArgumentException("bucketCount must be >= 1 but was " + bucketCount);
        }
        return bucketCount;
    }
}
