package io.outbox.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The hint text both transports send (N2, N5). */
class HintPayloadTest {

    @Test
    void n2_bucketsRoundTripSortedWithoutRepeatsAndRunsAsRanges() {
        String text = HintPayload.encode("origin1", new int[] {9, 1, 2, 3, 3, 40, 1}, 8_000);
        assertThat(text).isEqualTo("origin1|1-3,9,14");
        HintPayload.Decoded decoded = HintPayload.decode(text);
        assertThat(decoded.origin()).isEqualTo("origin1");
        assertThat(decoded.buckets()).containsExactly(1, 2, 3, 9, 40);
    }

    @Test
    void n2_theUnknownBucketMakesTheOthersRedundant() {
        assertThat(HintPayload.encode("o", new int[] {5, -1, 7}, 100)).isEqualTo("o|?");
        assertThat(HintPayload.decode("o|?").buckets()).containsExactly(-1);
    }

    @Test
    void n5_aListLongerThanTheLimitIsSentAsTheUnknownBucket() {
        int[] every = IntStream.range(0, 65_536).filter(i -> i % 2 == 0).toArray();
        String text = HintPayload.encode("o", every, 7_999);
        assertThat(text).isEqualTo("o|?");
        int[] all = IntStream.range(0, 65_536).toArray();
        assertThat(HintPayload.encode("o", all, 7_999)).isEqualTo("o|0-1ekf").hasSizeLessThan(7_999);
    }

    @Test
    void n2_textThatIsNoHintDecodesToNull() {
        assertThat(HintPayload.decode(null)).isNull();
        assertThat(HintPayload.decode("hello")).isNull();
        assertThat(HintPayload.decode("o|")).isNull();
        assertThat(HintPayload.decode("o|zz,%")).isNull();
        assertThat(HintPayload.decode("o|5-2")).isNull();
    }

    @Test
    void badInputIsRefusedNamingIt() {
        assertThatThrownBy(() -> HintPayload.encode("o|x", new int[] {1}, 100)).hasMessageContaining("'o|x'");
        assertThatThrownBy(() -> HintPayload.encode("o", new int[] {-2}, 100)).hasMessageContaining("-2");
        assertThatThrownBy(() -> HintPayload.encode("o", new int[0], 100)).hasMessageContaining("empty");
    }
}
