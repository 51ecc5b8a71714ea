package io.outbox.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.OutboxHeader;
import io.outbox.spi.CorruptHeadersException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Rule S10 for headers: the versioned header codec. */
class OutboxHeaderCodecTest {

    private static final List<OutboxHeader> SAMPLE = List.of(
            OutboxHeader.ofUtf8("trace-id", "abc"),
            OutboxHeader.of("dup", new byte[] {1}),
            OutboxHeader.of("dup", null),
            OutboxHeader.of("dup", new byte[0]),
            OutboxHeader.of("", new byte[] {0, -1}),
            OutboxHeader.of("größe-名前-\uD83D\uDE00", new byte[] {5}));

    @Test
    void s10_roundTripKeepsOrderRepeatsNullsAndNonAsciiNames() {
        byte[] blob = OutboxHeaderCodec.encode(SAMPLE);
        List<OutboxHeader> decoded = OutboxHeaderCodec.decode(blob);
        assertThat(decoded).containsExactlyElementsOf(SAMPLE);
        assertThat(decoded.get(2).value()).isNull();
        assertThat(decoded.get(3).value()).isEmpty();
        assertThat(OutboxHeaderCodec.encode(decoded)).isEqualTo(blob);
        assertThat(blob).hasSize(OutboxHeaderCodec.encodedSize(SAMPLE));
    }

    @Test
    void emptyListEncodesToVersionAndZeroCount() {
        assertThat(OutboxHeaderCodec.encode(List.of())).containsExactly(1, 0, 0, 0, 0);
        assertThat(OutboxHeaderCodec.decode(new byte[] {1, 0, 0, 0, 0})).isEmpty();
    }

    @Test
    void everyTruncationIsRefusedNeverDecodedInPart() {
        byte[] blob = OutboxHeaderCodec.encode(SAMPLE);
        for (int length = 0; length < blob.length; length++) {
            byte[] prefix = Arrays.copyOf(blob, length);
            assertThatThrownBy(() -> OutboxHeaderCodec.decode(prefix))
                    .as("prefix of %d bytes", length)
                    .isInstanceOf(CorruptHeadersException.class);
        }
    }

    @Test
    void emptyBlobIsNamed() {
        assertThatThrownBy(() -> OutboxHeaderCodec.decode(new byte[0]))
                .isInstanceOf(CorruptHeadersException.class).hasMessageContaining("empty");
    }

    @Test
    void unknownVersionIsNamed() {
        byte[] blob = OutboxHeaderCodec.encode(SAMPLE);
        blob[0] = 7;
        assertThatThrownBy(() -> OutboxHeaderCodec.decode(blob))
                .isInstanceOf(CorruptHeadersException.class).hasMessageContaining("unknown version 7");
    }

    @Test
    void trailingBytesAreNamed() {
        byte[] blob = OutboxHeaderCodec.encode(SAMPLE);
        byte[] longer = Arrays.copyOf(blob, blob.length + 3);
        assertThatThrownBy(() -> OutboxHeaderCodec.decode(longer))
                .isInstanceOf(CorruptHeadersException.class).hasMessageContaining("3 trailing bytes");
    }

    @Test
    void negativeLengthsAndAbsurdCountsAreNamed() {
        byte[] negativeCount = ByteBuffer.allocate(5).put((byte) 1).putInt(-1).array();
        assertThatThrownBy(() -> OutboxHeaderCodec.decode(negativeCount))
                .isInstanceOf(CorruptHeadersException.class).hasMessageContaining("header count is negative");
        byte[] hugeCount = ByteBuffer.allocate(5).put((byte) 1).putInt(Integer.MAX_VALUE).array();
        assertThatThrownBy(() -> OutboxHeaderCodec.decode(hugeCount))
                .isInstanceOf(CorruptHeadersException.class).hasMessageContaining("declares 2147483647 headers");
        byte[] badValueLength = ByteBuffer.allocate(14).put((byte) 1).putInt(1).putInt(1).put((byte) 'a')
                .putInt(-2).array();
        assertThatThrownBy(() -> OutboxHeaderCodec.decode(badValueLength))
                .isInstanceOf(CorruptHeadersException.class).hasMessageContaining("value length of header #0 is -2");
    }

    @Test
    void invalidUtf8NameIsNamed() {
        byte[] blob = ByteBuffer.allocate(15).put((byte) 1).putInt(1).putInt(2).put((byte) 0xC3).put((byte) 0x28)
                .putInt(-1).array();
        assertThatThrownBy(() -> OutboxHeaderCodec.decode(blob))
                .isInstanceOf(CorruptHeadersException.class)
                .hasMessageContaining("name of header #0 at offset 9 is not valid UTF-8");
    }

    @Test
    void anEmptyListWithTrailingBytesAndTruncatedFieldsOfALaterHeaderAreNamed() {
        assertThatThrownBy(() -> OutboxHeaderCodec.decode(new byte[] {1, 0, 0, 0, 0, 9}))
                .isInstanceOf(CorruptHeadersException.class).hasMessageContaining("1 trailing bytes after the last of 0");
        byte[] blob = OutboxHeaderCodec.encode(List.of(OutboxHeader.ofUtf8("a", "123456789"), OutboxHeader.ofUtf8("b", "22")));
        assertThatThrownBy(() -> OutboxHeaderCodec.decode(Arrays.copyOf(blob, blob.length - 1)))
                .isInstanceOf(CorruptHeadersException.class)
                .hasMessageContaining("truncated: value of header #1 needs 2 bytes");
        assertThatThrownBy(() -> OutboxHeaderCodec.decode(Arrays.copyOf(blob, 5 + 4 + 1 + 4 + 9 + 2)))
                .isInstanceOf(CorruptHeadersException.class)
                .hasMessageContaining("truncated: name length of header #1 needs 4 bytes");
    }

    @ParameterizedTest
    @ValueSource(strings = {"plain", "", "\u00fcml\u00e4ut", "\uD83D\uDE00 pair", "x\uDC00", "\uD800", "a\uD800b",
            "\uDE00\uD83D", "\uD83D\uDE00\uD83D"})
    void aNameIsAHeaderKeyExactlyWhenItEncodesToUtf8(String name) {
        boolean encodes;
        try {
            OutboxHeaderCodec.utf8Name(name);
            encodes = true;
        } catch (IllegalArgumentException e) {
            assertThat(e).hasMessageContaining("lone surrogate");
            encodes = false;
        }
        if (encodes) {
            assertThat(OutboxHeader.of(name, null).key()).isSameAs(name);
        } else {
            assertThatThrownBy(() -> OutboxHeader.of(name, null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lone surrogate");
        }
        assertThat(encodes).isEqualTo(!name.startsWith("x") && !name.contains("\uD800")
                && !name.startsWith("\uDE00") && !name.endsWith("\uD83D"));
    }

    @Test
    void loneSurrogateNamesOfForeignHeadersAreRefusedAtEncode() {
        assertThatThrownBy(() -> OutboxHeaderCodec.encode(List.of(new RecordHeader("x\uDC00", null))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lone surrogate")
                .hasMessageContaining("x\\udc00");
    }

    @Property(tries = 500)
    void s10_anyHeaderListRoundTripsByteForByte(@ForAll("headerLists") List<OutboxHeader> headers) {
        byte[] blob = OutboxHeaderCodec.encode(headers);
        assertThat(blob).hasSize(OutboxHeaderCodec.encodedSize(headers));
        List<OutboxHeader> decoded = OutboxHeaderCodec.decode(blob);
        assertThat(decoded).containsExactlyElementsOf(headers);
        assertThat(OutboxHeaderCodec.encode(decoded)).isEqualTo(blob);
    }

    @Provide
    Arbitrary<List<OutboxHeader>> headerLists() {
        Arbitrary<String> names = Arbitraries.oneOf(
                Arbitraries.of("a", "dup", ""),
                Arbitraries.strings().ofMaxLength(12),
                Arbitraries.strings().withCharRange('\u0100', '\uD7FF').ofMaxLength(6));
        Arbitrary<byte[]> values = Arbitraries.bytes().array(byte[].class).ofMaxSize(40).injectNull(0.2);
        Arbitrary<OutboxHeader> header = names.flatMap(n -> values.map(v -> OutboxHeader.of(n, v)));
        return header.list().ofMaxSize(12);
    }
}
