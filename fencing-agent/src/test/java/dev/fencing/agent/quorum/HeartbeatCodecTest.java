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

  private static ReachDigest healthyDigest(int count, long seed) {
    // Like a healthy group's: many entries left out, the rest within a few levels of each other.
    java.util.Random random = new java.util.Random(seed);
    byte[] packed = new byte[ReachDigest.packedLength(count)];
    for (int i = 0; i < count; i++) {
      ReachDigest.setLevel(packed, i, random.nextInt(10) < 4 ? ReachDigest.NONE : 3 + random.nextInt(5));
    }
    return new ReachDigest(0x1234L, 429, packed, count);
  }

  private static Heartbeat compact(ReachDigest digest) {
    return new Heartbeat("workers", "node-0001", 11, 22, 33, 44, Optional.of(digest), true, true);
  }

  @Property(tries = 300, seed = "7")
  void aCompactDigestDecodesToExactlyEveryLevelThatWasEncoded(@ForAll @Size(max = 1200) byte[] levels,
      @ForAll boolean skewed) throws Exception {
    byte[] packed = new byte[ReachDigest.packedLength(levels.length)];
    for (int i = 0; i < levels.length; i++) {
      int level = skewed ? (levels[i] & 0xFF) < 200 ? ReachDigest.NONE : 6 : levels[i] & 0xF;
      ReachDigest.setLevel(packed, i, level);
    }
    Heartbeat heartbeat = compact(new ReachDigest(-3L, 429, packed, levels.length));
    byte[] wire = HeartbeatCodec.encode(heartbeat);
    assertThat(wire[4]).isEqualTo((byte) 3);
    Heartbeat decoded = HeartbeatCodec.decode(wire).orElseThrow();
    // Any lost, changed or younger level would break equality of the packed levels.
    assertThat(decoded).isEqualTo(heartbeat);
    assertThat(decoded.compactDigest()).isTrue();
  }

  @Test
  void aHealthyGroupsDigestIsMuchSmallerInVersionThree() throws Exception {
    ReachDigest digest = healthyDigest(1000, 3);
    byte[] v3 = HeartbeatCodec.encode(compact(digest));
    byte[] v2 = HeartbeatCodec.encode(new Heartbeat("workers", "node-0001", 11, 22, 33, 44, Optional.of(digest),
        true));
    assertThat(v2[4]).isEqualTo((byte) 2);
    assertThat(v3.length).as("v3 %d bytes vs v2 %d", v3.length, v2.length).isLessThan(v2.length * 3 / 4);
    assertThat(HeartbeatCodec.decode(v2).orElseThrow().digest()).isEqualTo(HeartbeatCodec.decode(v3)
        .orElseThrow().digest());
  }

  @Test
  void versionThreeIsOnlyUsedForADigest() throws Exception {
    Heartbeat noDigest = new Heartbeat("g", "a", 1, 2, 3, 4, Optional.empty(), true, true);
    assertThat(noDigest.compactDigest()).isFalse();
    assertThat(HeartbeatCodec.encode(noDigest)[4]).isEqualTo((byte) 1);
  }

  @Test
  void everyTruncationOfACompactHeartbeatIsRejectedAsMalformed() {
    byte[] wire = HeartbeatCodec.encode(compact(healthyDigest(300, 4)));
    for (int length = 4; length < wire.length; length++) {
      byte[] cut = Arrays.copyOf(wire, length);
      assertThatThrownBy(() -> HeartbeatCodec.decode(cut)).as("cut at %d", length)
          .isInstanceOf(MalformedHeartbeatException.class);
    }
  }

  @Test
  void aCompactDigestWithAWrongCountUnknownEncodingOrTrailingBytesIsRejected() {
    byte[] wire = HeartbeatCodec.encode(compact(healthyDigest(300, 5)));
    int encodingAt = 4 + 1 + 1 + 7 + 1 + 9 + 32 + 1 + 8 + 2 + 2;
    assertThat(wire[encodingAt]).as("DEFLATE").isEqualTo((byte) 1);
    byte[] unknown = wire.clone();
    unknown[encodingAt] = 7;
    assertThatThrownBy(() -> HeartbeatCodec.decode(unknown)).hasMessageContaining("encoding 7 is unknown");
    byte[] fewer = wire.clone();
    fewer[encodingAt - 2] = 0;
    fewer[encodingAt - 1] = (byte) 200;
    assertThatThrownBy(() -> HeartbeatCodec.decode(fewer)).hasMessageContaining("inflates to more than 200 bytes");
    byte[] more = wire.clone();
    more[encodingAt - 2] = 1;
    more[encodingAt - 1] = (byte) 0x90;
    assertThatThrownBy(() -> HeartbeatCodec.decode(more)).hasMessageContaining("inflates to 300 bytes, expected 400");
    byte[] trailing = Arrays.copyOf(wire, wire.length + 3);
    assertThatThrownBy(() -> HeartbeatCodec.decode(trailing)).hasMessageContaining("trailing");
  }

  @Test
  void aCompactDigestWithALevelAbove15IsRejected() {
    byte[] wire = HeartbeatCodec.encode(compact(healthyDigest(300, 5)));
    int bodyAt = 4 + 1 + 1 + 7 + 1 + 9 + 32 + 1 + 8 + 2 + 2 + 1;
    byte[] levels = new byte[300];
    levels[17] = 16;
    java.util.zip.Deflater deflater = new java.util.zip.Deflater(9, true);
    deflater.setInput(levels);
    deflater.finish();
    byte[] stream = new byte[400];
    int length = deflater.deflate(stream);
    deflater.end();
    byte[] hostile = Arrays.copyOf(wire, bodyAt + length);
    System.arraycopy(stream, 0, hostile, bodyAt, length);
    assertThatThrownBy(() -> HeartbeatCodec.decode(hostile)).isInstanceOf(MalformedHeartbeatException.class)
        .hasMessageContaining("level 16 of member 17");
  }

  @Property(tries = 2000, seed = "13")
  void arbitraryBytesInACompactDigestNeverEscapeAsAnythingButMalformed(@ForAll @Size(max = 120) byte[] body) {
    byte[] head = HeartbeatCodec.encode(compact(healthyDigest(300, 6)));
    int bodyAt = 4 + 1 + 1 + 7 + 1 + 9 + 32 + 1 + 8 + 2 + 2 + 1;
    byte[] message = Arrays.copyOf(head, bodyAt + body.length);
    System.arraycopy(body, 0, message, bodyAt, body.length);
    try {
      assertThat(HeartbeatCodec.decode(message)).isPresent();
    } catch (MalformedHeartbeatException expected) {
      assertThat(expected.getMessage()).isNotBlank();
    }
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
