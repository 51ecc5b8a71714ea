package io.outbox.spring.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A sample order service on the outbox starter: {@link OrderService#placeOrder} saves an order and
 * enqueues its event in one {@code @Transactional} method; the starter's relay publishes the event
 * to Kafka after the commit.
 */
@SpringBootApplication
public class OrderServiceApplication {

    public static void main(String[] args) {
        SpringApplication.run(OrderServiceApplication.class, args);
    }
}
