package dev.fencing.agent.quorum;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class HeartbeatCodecTest {

  @Test
  void roundTripsEveryField() throws Exception {
    Heartbeat heartbeat = new Heartbeat("workers", "node-ä", -5, Long.MIN_VALUE, 42, Long.MAX_VALUE);
    assertThat(HeartbeatCodec.decode(HeartbeatCodec.encode(heartbeat))).contains(heartbeat);
  }

  @Test
  void aHeartbeatWithoutDigestThatWantsAnEchoKeepsTheVersionOneLayout() throws Exception {
    Heartbeat heartbeat = new Heartbeat("workers", "node-a", 7, 8, 9, 10);
    byte[] bytes = HeartbeatCodec.encode(heartbeat);
    assertThat(bytes[4]).isEqualTo((byte) 1);
    assertThat(bytes).hasSize(4 + 1 + 1 + 7 + 1 + 6 + 32);
    assertThat(HeartbeatCodec.decode(bytes).orElseThrow().wantsEcho()).as("version 1 always wants an echo").isTrue();
  }

  @Test
  void aDigestAndAnAnswerRoundTripInVersionTwo() throws Exception {
    byte[] packed = new byte[ReachDigest.packedLength(5)];
    ReachDigest.setLevel(packed, 0, 0);
    ReachDigest.setLevel(packed, 1, 14);
    ReachDigest.setLevel(packed, 4, ReachDigest.NONE);
    Heartbeat withDigest = new Heartbeat("g", "a", 1, 2, 3, 4,
        Optional.of(new ReachDigest(-77L, 429, packed, 5)), true);
    Heartbeat answer = new Heartbeat("g", "a", 1, 2, 3, 4, Optional.empty(), false);

    Heartbeat decoded = HeartbeatCodec.decode(HeartbeatCodec.encode(withDigest)).orElseThrow();
    assertThat(decoded).isEqualTo(withDigest);
    assertThat(decoded.digest().orElseThrow().level(1)).isEqualTo(14);
    assertThat(decoded.digest().orElseThrow().level(4)).isEqualTo(ReachDigest.NONE);
    assertThat(HeartbeatCodec.encode(withDigest)[4]).isEqualTo((byte) 2);
    assertThat(HeartbeatCodec.decode(HeartbeatCodec.encode(answer))).contains(answer);
  }

  @Test
  void versionTwoWithUnknownFlagsOrAZeroUnitIsRejected() {
    byte[] good = HeartbeatCodec.encode(new Heartbeat("g", "a", 1, 2, 3, 4, Optional.empty(), false));
    byte[] badFlags = good.clone();
    badFlags[badFlags.length - 1] = (byte) 0x80;
    assertThatThrownBy(() -> HeartbeatCodec.decode(badFlags)).hasMessageContaining("unknown bits");
    byte[] digest = HeartbeatCodec.encode(new Heartbeat("g", "a", 1, 2, 3, 4,
        Optional.of(new ReachDigest(1, 1, new byte[1], 2)), true));
    // Layout from the end: packed levels (1 byte), count (2), unit (2).
    digest[digest.length - 5] = 0;
    digest[digest.length - 4] = 0;
    assertThatThrownBy(() -> HeartbeatCodec.decode(digest)).hasMessageContaining("unit is 0");
  }

  @Test
  void otherUserMessagesAreNotHeartbeats() throws Exception {
    assertThat(HeartbeatCodec.decode("hello".getBytes(StandardCharsets.UTF_8))).isEmpty();
    assertThat(HeartbeatCodec.decode(new byte[0])).isEmpty();
  }

  @Test
  void malformedHeartbeatsAreRejectedWithAReason() {
    byte[] good = HeartbeatCodec.encode(new Heartbeat("g", "a", 1, 2, 3, 4));
    byte[] badVersion = good.clone();
    badVersion[4] = 9;
    assertThatThrownBy(() -> HeartbeatCodec.decode(badVersion)).hasMessageContaining("version 9");
    assertThatThrownBy(() -> HeartbeatCodec.decode(Arrays.copyOf(good, good.length - 1)))
        .hasMessageContaining("truncated");
    assertThatThrownBy(() -> HeartbeatCodec.decode(Arrays.copyOf(good, good.length + 2)))
        .hasMessageContaining("trailing");
  }

  @Test
  void overlongNamesAreRefusedWhenEncoding() {
    assertThatThrownBy(() -> HeartbeatCodec.encode(new Heartbeat("g", "x".repeat(300), 1, 0, 0, 0)))
        .hasMessageContaining("limited to 253");
  }

  @Property(tries = 2000, seed = "99")
  void arbitraryBytesAfterTheMagicNeverEscapeAsAnythingButMalformed(@ForAll @Size(max = 80) byte[] tail) {
    byte[] message = new byte[4 + tail.length];
    System.arraycopy(HeartbeatCodec.MAGIC, 0, message, 0, 4);
    System.arraycopy(tail, 0, message, 4, tail.length);
    try {
      Optional<Heartbeat> decoded = HeartbeatCodec.decode(message);
      assertThat(decoded).isPresent();
    } catch (MalformedHeartbeatException expected) {
      assertThat(expected.getMessage()).isNotBlank();
    }
  }
}
