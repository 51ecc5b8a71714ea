package io.outbox.spring.sample;

import io.outbox.spring.Outbox;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Saves orders and publishes an {@code OrderPlaced} event per order through the outbox. */
@Service
public class OrderService {

    /** The topic order events go to, keyed by customer so each customer's events stay in order. */
    public static final String TOPIC = "orders";

    private final JdbcTemplate jdbc;
    private final Outbox outbox;
    private final String table;
    private final long creditLimitCents;

    public OrderService(JdbcTemplate jdbc, Outbox outbox,
                        @Value("${sample.orders-table:orders}") String table,
                        @Value("${sample.credit-limit-cents:100000}") long creditLimitCents) {
        this.jdbc = jdbc;
        this.outbox = outbox;
        this.table = table;
        this.creditLimitCents = creditLimitCents;
    }

    /** Creates the orders table if absent. */
    public void createTable() {
        jdbc.execute("CREATE TABLE IF NOT EXISTS " + table
                + " (id VARCHAR(64) PRIMARY KEY, customer VARCHAR(64) NOT NULL, amount_cents BIGINT NOT NULL)");
    }

    /**
     * Saves the order and enqueues its event, in one transaction. The credit check runs after both
     * writes and, when it fails, rolls back the order and the event together.
     *
     * @throws CreditLimitExceededException if the customer's orders exceed the credit limit
     */
    @Transactional
    public void placeOrder(String orderId, String customer, long amountCents) {
        jdbc.update("INSERT INTO " + table + " (id, customer, amount_cents) VALUES (?, ?, ?)",
                orderId, customer, amountCents);
        outbox.enqueue(TOPIC, customer, "{\"type\":\"OrderPlaced\",\"orderId\":\"" + orderId
                + "\",\"customer\":\"" + customer + "\",\"amountCents\":" + amountCents + "}");
        Long total = jdbc.queryForObject("SELECT SUM(amount_cents) FROM " + table + " WHERE customer = ?",
                Long.class, customer);
        if (total != null && total > creditLimitCents) {
            throw new CreditLimitExceededException(customer, total, creditLimitCents);
        }
    }

    /** The number of orders saved. */
    public int orderCount() {
        Integer n = jdbc.queryForObject("SELECT COUNT(*) FROM " + table, Integer.class);
        return n == null ? 0 : n;
    }

    /** The customer's orders would exceed the credit limit; the order and its event are rolled back. */
    public static final class CreditLimitExceededException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        CreditLimitExceededException(String customer, long total, long limit) {
            super("customer " + customer + " would owe " + total + " cents, over the limit of " + limit);
        }
    }
}
