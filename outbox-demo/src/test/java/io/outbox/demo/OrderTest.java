package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The order's JSON value, which the checking consumer reads back. */
class OrderTest {

    @Test
    void theValueRoundTrips() {
        Order order = new Order("1a2b3c4d", 17, 3, 12_345, 1_764_500_000_123_456L);
        String json = new String(order.toJson(), StandardCharsets.UTF_8);

        assertThat(json).isEqualTo("{\"run\":\"1a2b3c4d\",\"order\":\"c17-3\",\"customer\":17,\"seq\":3,"
                + "\"amountCents\":12345,\"placedAtMicros\":1764500000123456}");
        assertThat(Order.parse(order.toJson())).isEqualTo(order);
        assertThat(order.key()).isEqualTo("customer-17");
    }

    @Test
    void otherValuesAreRefusedWithAReason() {
        assertThatThrownBy(() -> Order.parse(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Order.parse("[1,2]".getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("not a JSON object");
        assertThatThrownBy(() -> Order.parse("{\"run\":\"x\",\"customer\":1}".getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("'seq' is missing");
        assertThatThrownBy(() -> Order.parse(("{\"run\":\"x\",\"customer\":\"one\",\"seq\":1,\"amountCents\":1,"
                + "\"placedAtMicros\":1}").getBytes(StandardCharsets.UTF_8))).hasMessageContaining("not an order");
    }
}
