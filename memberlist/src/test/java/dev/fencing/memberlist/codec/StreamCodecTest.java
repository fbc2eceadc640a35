package dev.fencing.memberlist.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.memberlist.limits.Limit;
import dev.fencing.memberlist.transport.InboundStreamLimits;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.assertj.core.api.ThrowingConsumer;
import org.junit.jupiter.api.Test;

class StreamCodecTest {
  private static final byte[] LO = {127, 0, 0, 1};
  private static final byte[] VSN = {1, 5, 2, 0, 0, 0};
  private static final byte[] KEY = new byte[32];
  private static final PushPull STATE =
      new PushPull(
          true,
          List.of(new PushNodeState("a", LO, 7946, new byte[] {1}, 3, 0, VSN), new PushNodeState("b", LO, 7947, null, 9, 2, VSN)),
          new byte[] {9, 9, 9});

  private static ByteArrayInputStream in(byte[] b) {
    return new ByteArrayInputStream(b);
  }

  @Test
  void encryptedLabelledCompressedRequestRoundTrips() throws Exception {
    StreamCodec codec = new StreamCodec(new PacketOptions(new Keyring(KEY), "blue", true, true));
    ByteArrayOutputStream wire = new ByteArrayOutputStream();
    codec.writeLabelHeader(wire);
    codec.write(wire, STATE, true);
    byte[] bytes = wire.toByteArray();
    assertThat(Arrays.copyOf(bytes, 7)).containsExactly(244, 4, 'b', 'l', 'u', 'e', 10);
    long len = PacketCodec.getU32(bytes, 7);
    assertThat(len).isEqualTo(bytes.length - 11);
    PushPull back = (PushPull) codec.readInbound(in(bytes));
    assertThat(StreamCodec.plainBytes(back)).isEqualTo(StreamCodec.plainBytes(STATE));
    // the reply carries no label header
    byte[] reply = codec.encode(new AckResp(4, null), false);
    assertThat(((AckResp) codec.read(in(reply))).seqNo()).isEqualTo(4);
  }

  @Test
  void labelAndKeyAreAuthenticated() throws Exception {
    StreamCodec blue = new StreamCodec(new PacketOptions(new Keyring(KEY), "blue", true, true));
    StreamCodec red = new StreamCodec(new PacketOptions(new Keyring(KEY), "red", true, true));
    StreamCodec noLabel = new StreamCodec(new PacketOptions(new Keyring(KEY), "", true, true));
    ByteArrayOutputStream wire = new ByteArrayOutputStream();
    blue.writeLabelHeader(wire);
    blue.write(wire, new Ping(1, "x", null, 0, null), false);
    assertThatThrownBy(() -> red.readInbound(in(wire.toByteArray()))).hasMessageContaining("label does not match");
    assertThatThrownBy(() -> noLabel.readInbound(in(wire.toByteArray()))).hasMessageContaining("none configured");
    byte[] unlabelled = blue.encode(new Ping(1, "x", null, 0, null), false);
    assertThatThrownBy(() -> blue.readInbound(in(unlabelled))).hasMessageContaining("no label header");
    // the label is part of the additional data: a reply sealed under "blue" does not open under "red"
    assertThatThrownBy(() -> red.read(in(unlabelled))).hasMessageContaining("no installed key");
  }

  @Test
  void skippedInboundLabelCheckTakesUnlabelledStreamsAsLabelledAndRefusesLabelledOnes() throws Exception {
    StreamCodec blue = new StreamCodec(new PacketOptions(new Keyring(KEY), "blue", true, true));
    StreamCodec skipping =
        new StreamCodec(new PacketOptions(new Keyring(KEY), "blue", true, true, Keyring.VERSION_1, true));
    byte[] withoutHeader = blue.encode(new Ping(1, "x", null, 0, null), false);
    assertThat(((Ping) skipping.readInbound(in(withoutHeader))).seqNo()).isEqualTo(1);
    ByteArrayOutputStream wire = new ByteArrayOutputStream();
    blue.writeLabelHeader(wire);
    blue.write(wire, new Ping(2, "x", null, 0, null), false);
    assertThatThrownBy(() -> skipping.readInbound(in(wire.toByteArray()))).hasMessageContaining("double label");
    // the dialer side still writes its label header
    ByteArrayOutputStream header = new ByteArrayOutputStream();
    skipping.writeLabelHeader(header);
    assertThat(header.toByteArray()).containsExactly(244, 4, 'b', 'l', 'u', 'e');
  }

  @Test
  void encryptionPolicyIsEnforced() throws Exception {
    StreamCodec plain = new StreamCodec(PacketOptions.plain());
    StreamCodec strict = new StreamCodec(new PacketOptions(new Keyring(KEY), "", true, true));
    StreamCodec lenient = new StreamCodec(new PacketOptions(new Keyring(KEY), "", false, true));
    byte[] clear = plain.encode(new UserMsg(new byte[] {1, 2}), false);
    assertThatThrownBy(() -> strict.read(in(clear))).hasMessageContaining("not encrypted");
    assertThat(((UserMsg) lenient.read(in(clear))).payload()).containsExactly(1, 2);
    byte[] sealed = strict.encode(new UserMsg(new byte[] {1, 2}), false);
    assertThatThrownBy(() -> plain.read(in(sealed))).hasMessageContaining("encryption is not configured");
    StreamCodec legacy = new StreamCodec(new PacketOptions(new Keyring(KEY), "", true, true, 0));
    assertThat(((UserMsg) strict.read(in(legacy.encode(new UserMsg(new byte[] {7}), true)))).payload())
        .containsExactly(7);
  }

  @Test
  void declaredSizesAreCheckedBeforeAllocating() {
    StreamCodec plain = new StreamCodec(PacketOptions.plain());
    StreamCodec keyed = new StreamCodec(new PacketOptions(new Keyring(KEY), "", true, true));
    assertThatThrownBy(() -> keyed.read(in(Hex.bytes("0affffffff00"))))
        .isInstanceOf(LimitExceededException.class)
        .hasMessageContaining("announces 4294967295 bytes");
    // pushPullHeader{Join:false, Nodes: 2^21, UserStateLen: 0}
    assertThatThrownBy(() -> plain.read(in(Hex.bytes("0683a44a6f696ec2a54e6f646573ce00200000ac5573657253746174654c656e00"))))
        .satisfies(refusedBy(Limit.PUSH_PULL_NODES));
    // UserStateLen 2^31
    assertThatThrownBy(() -> plain.read(in(Hex.bytes("0683a44a6f696ec2a54e6f64657300ac5573657253746174654c656ece80000000"))))
        .satisfies(refusedBy(Limit.USER_STATE_BYTES));
    // userMsgHeader{UserMsgLen: 4 GiB - 1}
    assertThatThrownBy(() -> plain.read(in(Hex.bytes("0881aa557365724d73674c656eceffffffff"))))
        .satisfies(refusedBy(Limit.USER_STATE_BYTES));
    // a user message claiming 64 KiB that delivers 3 bytes ends in EOF, having allocated only what arrived
    assertThatThrownBy(() -> plain.read(in(Hex.bytes("0881aa557365724d73674c656ece00010000010203"))))
        .isInstanceOf(EOFException.class);
    assertThatThrownBy(() -> plain.read(in(new byte[0]))).isInstanceOf(EOFException.class);
    assertThatThrownBy(() -> plain.read(in(Hex.bytes("04")))).hasMessageContaining("invalid stream message type 4");
  }

  static ThrowingConsumer<Throwable> refusedBy(Limit limit) {
    return e -> assertThat(e).isInstanceOfSatisfying(LimitExceededException.class, l -> assertThat(l.limit()).isEqualTo(limit));
  }

  @Test
  void refusesToWriteMessagesThatDoNotTravelOnStreams() {
    StreamCodec plain = new StreamCodec(PacketOptions.plain());
    assertThatThrownBy(() -> plain.encode(new Suspect(1, "a", "b"), false)).isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * The largest legitimate frame: a push/pull of a 1000-member group (the most the project supports) with 63-byte
   * names, IPv6 addresses and full 512-byte metadata of random bytes, sent uncompressed and encrypted. It must fit
   * the stream cap, and the default inbound frame budget must hold several at once.
   */
  @Test
  void aThousandMemberPushPullFitsTheStreamCapAndTheInboundFrameBudget() {
    java.util.SplittableRandom random = new java.util.SplittableRandom(1000);
    List<PushNodeState> nodes = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      byte[] addr = new byte[16];
      byte[] meta = new byte[512];
      random.nextBytes(addr);
      random.nextBytes(meta);
      nodes.add(new PushNodeState(String.format("node-%057d", i), addr, 7946, meta, 1L << 40, 0,
          new byte[] {1, 5, 5, 2, 5, 5}));
    }
    StreamCodec codec = new StreamCodec(new PacketOptions(new Keyring(new byte[32]), "fencing-group", true, true));

    int frame = codec.encode(new PushPull(false, nodes, new byte[0]), false).length;

    System.out.println("1000-member push/pull, encrypted, uncompressed: " + frame + " bytes");
    assertThat(frame).isLessThan(WireLimits.DEFAULT_MAX_STREAM_MESSAGE_BYTES);
    assertThat(InboundStreamLimits.DEFAULT_MAX_INBOUND_FRAME_BYTES / frame).isGreaterThanOrEqualTo(4);
  }
}
