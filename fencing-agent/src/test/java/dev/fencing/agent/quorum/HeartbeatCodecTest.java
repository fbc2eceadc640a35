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
