package dev.fencing.agent.quorum;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
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

  private static final long BOOT_A = Heartbeat.newBootId(new java.util.Random(1));
  private static final long BOOT_B = Heartbeat.newBootId(new java.util.Random(2));
  private static final long MS = 1_000_000L;

  private static Heartbeat compact(ReachDigest digest) {
    return new Heartbeat("workers", "node-0001", BOOT_A, 22 * MS, BOOT_B, 44 * MS, Optional.of(digest), true, true);
  }

  /**
   * Where the digest's encoding byte of {@link #compact} is: magic 4, version 1, flags 1, group 1 + 7, sender
   * 1 + 9, boot id 3, send time 1, echo boot id 3, echo time 1, fingerprint 8, unit (429) 2, count (300..1000) 2.
   */
  private static final int ENCODING_AT = 4 + 1 + 1 + 8 + 10 + 3 + 1 + 3 + 1 + 8 + 2 + 2;
  private static final int UNIT_AT = ENCODING_AT - 4;
  private static final int CODE_TABLE_AT = ENCODING_AT + 1;

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
    assertThat(decoded.compact()).isTrue();
    // Never longer than the raw levels, the other encoding.
    assertThat(wire.length - CODE_TABLE_AT).isLessThanOrEqualTo(packed.length + (levels.length > 1000 ? 1 : 0));
  }

  @Test
  void aHealthyGroupsDigestIsMuchSmallerInVersionThree() throws Exception {
    ReachDigest digest = healthyDigest(1000, 3);
    byte[] v3 = HeartbeatCodec.encode(compact(digest));
    byte[] v2 = HeartbeatCodec.encode(new Heartbeat("workers", "node-0001", BOOT_A, 22 * MS, BOOT_B, 44 * MS,
        Optional.of(digest), true));
    assertThat(v2[4]).isEqualTo((byte) 2);
    assertThat(v3[ENCODING_AT]).as("Huffman").isEqualTo((byte) HeartbeatCodec.ENCODING_HUFFMAN);
    // 40 % level 15 and 60 % spread over five levels: 2.36 bits a member of entropy, Huffman needs 2.4 (1000
    // members: 300 bytes); with the 8-byte code table and 45 bytes of the rest, 353 bytes.
    assertThat(v3.length).as("v3 %d bytes vs v2 %d", v3.length, v2.length).isLessThanOrEqualTo(360);
    assertThat(HeartbeatCodec.decode(v2).orElseThrow().digest()).isEqualTo(HeartbeatCodec.decode(v3)
        .orElseThrow().digest());
  }

  @Test
  void aCompactHeartbeatWithoutDigestIsVersionThreeAndSmallerThanVersionOne() throws Exception {
    Heartbeat asked = new Heartbeat("g", "a", BOOT_A, 1_234_567 * MS, BOOT_B, 1_234_000 * MS, Optional.empty(),
        true, true);
    Heartbeat answer = new Heartbeat("g", "a", BOOT_A, 5 * MS, BOOT_B, 6 * MS, Optional.empty(), false, true);
    Heartbeat first = new Heartbeat("g", "a", BOOT_A, 5 * MS, Heartbeat.NO_ECHO, 0, Optional.empty(), true, true);
    Heartbeat request = new Heartbeat("g", "a", BOOT_A, 5 * MS, BOOT_B, 6 * MS, Optional.empty(), true, true, true);
    assertThat(request.wantsDigest()).isTrue();
    for (Heartbeat heartbeat : java.util.List.of(asked, answer, first, request)) {
      byte[] wire = HeartbeatCodec.encode(heartbeat);
      assertThat(wire[4]).isEqualTo((byte) 3);
      assertThat(HeartbeatCodec.decode(wire)).contains(heartbeat);
    }
    // 4 + 1 + 1 + 2 + 2, boot id 3, send time 4 (1 234 567 ms, zigzag 22 bits), echo boot id 3, echo time 4:
    // 24 bytes, not 41.
    assertThat(HeartbeatCodec.encode(asked)).hasSize(24);
    assertThat(HeartbeatCodec.encode(new Heartbeat("g", "a", BOOT_A, 1_234_567 * MS, BOOT_B, 1_234_000 * MS)))
        .hasSize(41);
  }

  @Test
  void aCompactHeartbeatCarriesItsTimesInWholeMillisecondsRoundedDown() throws Exception {
    Heartbeat heartbeat = new Heartbeat("g", "a", BOOT_A, 7 * MS + 999_999, BOOT_B, 9 * MS + 1, Optional.empty(),
        true, true);
    assertThat(heartbeat.sendNanos()).isEqualTo(7 * MS);
    assertThat(heartbeat.echoNanos()).as("an echo may only get older").isEqualTo(9 * MS);
    assertThat(HeartbeatCodec.decode(HeartbeatCodec.encode(heartbeat)).orElseThrow().echoNanos()).isEqualTo(9 * MS);
    Heartbeat noEcho = new Heartbeat("g", "a", BOOT_A, 7 * MS, Heartbeat.NO_ECHO, 12_345, Optional.empty(), true,
        true);
    assertThat(noEcho.echoNanos()).isZero();
    // A monotonic clock may read negative: rounded down all the same, and carried exactly.
    Heartbeat negative = new Heartbeat("g", "a", BOOT_A, -1, BOOT_B, Long.MIN_VALUE + 2 * MS, Optional.empty(),
        true, true);
    assertThat(negative.sendNanos()).isEqualTo(-MS);
    assertThat(negative.echoNanos()).isLessThanOrEqualTo(Long.MIN_VALUE + 2 * MS);
    assertThat(HeartbeatCodec.decode(HeartbeatCodec.encode(negative))).contains(negative);
    Heartbeat latest = new Heartbeat("g", "a", BOOT_A, Long.MAX_VALUE, BOOT_B, 0, Optional.empty(), true, true);
    assertThat(HeartbeatCodec.decode(HeartbeatCodec.encode(latest))).contains(latest);
  }

  @Test
  void versionThreeIsOnlyUsedBetweenBootIdsThatReadIt() {
    long untagged = 0x1234_5678_9ABCL | 1;
    long version2 = (Heartbeat.DIGEST_CAPABLE_TAG << 40) | 0x77L;
    assertThat(new Heartbeat("g", "a", untagged, 0, BOOT_B, 0, Optional.empty(), true, true).compact()).isFalse();
    assertThat(new Heartbeat("g", "a", BOOT_A, 0, version2, 0, Optional.empty(), true, true).compact()).isFalse();
    assertThat(new Heartbeat("g", "a", BOOT_A, Long.MIN_VALUE, BOOT_B, 0, Optional.empty(), true, true).compact())
        .as("a time that would not fit once rounded down").isFalse();
    Heartbeat fallback = new Heartbeat("g", "a", BOOT_A, 3, version2, 4, Optional.empty(), true, true);
    assertThat(fallback.sendNanos()).as("not rounded when not compact").isEqualTo(3);
    assertThat(HeartbeatCodec.encode(fallback)[4]).isEqualTo((byte) 1);
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
    assertThat(wire[ENCODING_AT]).as("Huffman").isEqualTo((byte) HeartbeatCodec.ENCODING_HUFFMAN);
    byte[] unknown = wire.clone();
    unknown[ENCODING_AT] = 7;
    assertThatThrownBy(() -> HeartbeatCodec.decode(unknown)).hasMessageContaining("encoding 7 is unknown");
    // count 300 is the varint 0xAC 0x02; 0xAC 0x03 is 428 members, more codes than the body holds.
    byte[] more = wire.clone();
    more[ENCODING_AT - 1] = 3;
    assertThatThrownBy(() -> HeartbeatCodec.decode(more)).hasMessageContaining("truncated");
    // 0x2C 0x02 reads as count 44 followed by a 2-byte-short rest: the codes are misaligned, caught somewhere.
    byte[] fewer = wire.clone();
    fewer[ENCODING_AT - 2] = 0x2C;
    assertThatThrownBy(() -> HeartbeatCodec.decode(fewer)).isInstanceOf(MalformedHeartbeatException.class);
    byte[] trailing = Arrays.copyOf(wire, wire.length + 3);
    assertThatThrownBy(() -> HeartbeatCodec.decode(trailing)).hasMessageContaining("trailing");
    byte[] tooMany = wire.clone();
    tooMany[ENCODING_AT - 2] = (byte) 0x81;
    tooMany[ENCODING_AT - 1] = 0x21;
    assertThatThrownBy(() -> HeartbeatCodec.decode(tooMany)).hasMessageContaining("4225 members, more than 4096");
  }

  @Test
  void aCompactDigestWithABadCodeTableOrPaddingIsRejected() {
    byte[] wire = HeartbeatCodec.encode(compact(healthyDigest(300, 5)));
    byte[] oversubscribed = wire.clone();
    Arrays.fill(oversubscribed, CODE_TABLE_AT, CODE_TABLE_AT + 8, (byte) 0x11);
    assertThatThrownBy(() -> HeartbeatCodec.decode(oversubscribed)).hasMessageContaining("oversubscribed");
    byte[] empty = wire.clone();
    Arrays.fill(empty, CODE_TABLE_AT, CODE_TABLE_AT + 8, (byte) 0);
    assertThatThrownBy(() -> HeartbeatCodec.decode(empty)).hasMessageContaining("code table is empty");
    // Only level 0 has a code ("0", one bit): the first 1 bit in the body is a code no level has.
    byte[] incomplete = wire.clone();
    Arrays.fill(incomplete, CODE_TABLE_AT, CODE_TABLE_AT + 8, (byte) 0);
    incomplete[CODE_TABLE_AT] = 0x10;
    Arrays.fill(incomplete, CODE_TABLE_AT + 8, incomplete.length, (byte) 0);
    incomplete[CODE_TABLE_AT + 8 + 3] = 0x08;
    assertThatThrownBy(() -> HeartbeatCodec.decode(incomplete)).hasMessageContaining("no level has, at member 28");
    // The same table with all-zero codes reads 300 levels 0 from 38 bytes: the 38th byte's last 4 bits are padding.
    byte[] zeros = Arrays.copyOf(incomplete, CODE_TABLE_AT + 8 + 38);
    zeros[CODE_TABLE_AT + 8 + 3] = 0;
    assertThatCode(() -> HeartbeatCodec.decode(zeros)).doesNotThrowAnyException();
    byte[] padding = zeros.clone();
    padding[padding.length - 1] = 0x01;
    assertThatThrownBy(() -> HeartbeatCodec.decode(padding)).hasMessageContaining("padding bits are not 0");
  }

  @Test
  void aCompactHeartbeatWithABadVarintOrUnitIsRejected() {
    byte[] wire = HeartbeatCodec.encode(compact(healthyDigest(300, 5)));
    byte[] zeroUnit = concat(Arrays.copyOf(wire, UNIT_AT), new byte[] {0}, Arrays.copyOfRange(wire, UNIT_AT + 2,
        wire.length));
    assertThatThrownBy(() -> HeartbeatCodec.decode(zeroUnit)).hasMessageContaining("unit is 0 ms");
    byte[] notMinimal = wire.clone();
    notMinimal[UNIT_AT] = (byte) 0x85;
    notMinimal[UNIT_AT + 1] = 0;
    assertThatThrownBy(() -> HeartbeatCodec.decode(notMinimal)).hasMessageContaining("varint is not minimal");
    byte[] hugeUnit = Arrays.copyOf(wire, UNIT_AT);
    hugeUnit = concat(hugeUnit, new byte[] {(byte) 0x80, (byte) 0x80, 0x04}, Arrays.copyOfRange(wire, UNIT_AT + 2,
        wire.length));
    byte[] finalHugeUnit = hugeUnit;
    assertThatThrownBy(() -> HeartbeatCodec.decode(finalHugeUnit)).hasMessageContaining("unit is 65536 ms");
    // The send time (22 ms, one byte at offset 27) as a 10-byte varint.
    int sendAt = 4 + 1 + 1 + 8 + 10 + 3;
    byte[] longVarint = concat(Arrays.copyOf(wire, sendAt), new byte[] {(byte) 0x96, (byte) 0x80, (byte) 0x80,
        (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x01},
        Arrays.copyOfRange(wire, sendAt + 1, wire.length));
    assertThatThrownBy(() -> HeartbeatCodec.decode(longVarint)).hasMessageContaining("longer than 63 bits");
    byte[] beyond = concat(Arrays.copyOf(wire, sendAt), new byte[] {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF,
        (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x7F},
        Arrays.copyOfRange(wire, sendAt + 1, wire.length));
    assertThatThrownBy(() -> HeartbeatCodec.decode(beyond)).hasMessageContaining("send time");
    byte[] flags = wire.clone();
    flags[5] = (byte) 0x10;
    assertThatThrownBy(() -> HeartbeatCodec.decode(flags)).hasMessageContaining("unknown bits");
  }

  private static byte[] concat(byte[]... parts) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    for (byte[] part : parts) {
      out.writeBytes(part);
    }
    return out.toByteArray();
  }

  @Property(tries = 2000, seed = "13")
  void arbitraryBytesInACompactDigestNeverEscapeAsAnythingButMalformed(@ForAll @Size(max = 120) byte[] body) {
    byte[] head = HeartbeatCodec.encode(compact(healthyDigest(300, 6)));
    byte[] message = Arrays.copyOf(head, CODE_TABLE_AT + body.length);
    System.arraycopy(body, 0, message, CODE_TABLE_AT, body.length);
    try {
      assertThat(HeartbeatCodec.decode(message)).isPresent();
    } catch (MalformedHeartbeatException expected) {
      assertThat(expected.getMessage()).isNotBlank();
    }
  }

  @Property(tries = 2000, seed = "17")
  void arbitraryBytesAfterTheCompactVersionNeverEscapeAsAnythingButMalformed(
      @ForAll @Size(max = 120) byte[] tail) {
    byte[] message = new byte[5 + tail.length];
    System.arraycopy(HeartbeatCodec.MAGIC, 0, message, 0, 4);
    message[4] = 3;
    System.arraycopy(tail, 0, message, 5, tail.length);
    try {
      Optional<Heartbeat> decoded = HeartbeatCodec.decode(message);
      // Whatever decodes is a heartbeat this codec writes and reads back unchanged.
      assertThat(HeartbeatCodec.decode(HeartbeatCodec.encode(decoded.orElseThrow()))).isEqualTo(decoded);
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
