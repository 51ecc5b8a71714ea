package com.example.orders;

import io.outbox.spring.Outbox;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class OrderService {
    private final JdbcTemplate jdbc;
    private final Outbox outbox;

    public OrderService(JdbcTemplate jdbc, Outbox outbox) {
        this.jdbc = jdbc;
        this.outbox = outbox;
        jdbc.execute("CREATE TABLE IF NOT EXISTS orders (id VARCHAR(20) PRIMARY KEY, total INT)");
    }

    @Transactional
    public void placeOrder(String id, int total) {
        jdbc.update("INSERT INTO orders VALUES (?, ?)", id, total);             // the business row
        outbox.enqueue("orders", id, "{\"total\":" + total + "}");            // both, or neither
    }
}
