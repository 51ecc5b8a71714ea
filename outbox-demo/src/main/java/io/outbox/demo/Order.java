package io.outbox.demo;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * One order of the demo's order service, and the JSON value of its outbox message. The value
 * carries everything the checking consumer needs: the run it belongs to (so records of other runs
 * on the same topic are told apart), the customer (the record key), the customer's order number
 * (placement order) and the placement time (for latency).
 *
 * @param runId the demo run that placed the order
 * @param customer the customer id, {@code >= 0}
 * @param seq the customer's order number: 1 for its first order, then 2, 3, ... in placement order
 * @param amountCents the order amount
 * @param placedAtMicros when the order was placed, epoch microseconds
 */
record Order(String runId, int customer, int seq, long amountCents, long placedAtMicros) {

    /** The business id of the order: {@code c<customer>-<seq>}. */
    String orderId() {
        return "c" + customer + "-" + seq;
    }

    /** The record key: the customer, so that all orders of one customer share a partition. */
    String key() {
        return key(customer);
    }

    static String key(int customer) {
        return "customer-" + customer;
    }

    /** The value of the outbox message, a flat JSON object. */
    byte[] toJson() {
        return ("{\"run\":\"" + runId + "\",\"order\":\"" + orderId() + "\",\"customer\":" + customer + ",\"seq\":"
                + seq + ",\"amountCents\":" + amountCents + ",\"placedAtMicros\":" + placedAtMicros + "}")
                .getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Reads a value written by {@link #toJson()}.
     *
     * @throws IllegalArgumentException if the value is not such an object
     */
    static Order parse(byte[] json) {
        if (json == null) {
            throw new IllegalArgumentException("no value");
        }
        String text = new String(json, StandardCharsets.UTF_8).trim();
        if (!text.startsWith("{") || !text.endsWith("}")) {
            throw new IllegalArgumentException("not a JSON object: " + abbreviate(text));
        }
        Map<String, String> fields = new HashMap<>();
        for (String field : text.substring(1, text.length() - 1).split(",")) {
            int colon = field.indexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException("not a field: " + abbreviate(field));
            }
            fields.put(unquote(field.substring(0, colon)), unquote(field.substring(colon + 1)));
        }
        try {
            return new Order(required(fields, "run"), Integer.parseInt(required(fields, "customer")),
                    Integer.parseInt(required(fields, "seq")), Long.parseLong(required(fields, "amountCents")),
                    Long.parseLong(required(fields, "placedAtMicros")));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not an order: " + abbreviate(text), e);
        }
    }

    /** Now, in epoch microseconds (the resolution of the system clock on Linux). */
    static long nowMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    private static String required(Map<String, String> fields, String name) {
        String value = fields.get(name);
        if (value == null) {
            throw new IllegalArgumentException("order field '" + name + "' is missing");
        }
        return value;
    }

    private static String unquote(String token) {
        String t = token.trim();
        return t.length() >= 2 && t.startsWith("\"") && t.endsWith("\"") ? t.substring(1, t.length() - 1) : t;
    }

    private static String abbreviate(String text) {
        return text.length() <= 80 ? text : text.substring(0, 77) + "...";
    }
}
