package dev.fencing.memberlist.codec;

import static dev.fencing.memberlist.codec.StreamCodecTest.refusedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.memberlist.limits.Limit;
import dev.fencing.memberlist.limits.Refusals;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every cap of {@link WireLimits}: legitimate input just inside it decodes, input just outside is refused. */
class WireLimitsTest {
  private static final byte[] KEY = new byte[16];
  private static final byte[] LO = {127, 0, 0, 1};
  private static final byte[] VSN = {1, 5, 2, 0, 0, 0};
  private static final PacketOptions KEYED = new PacketOptions(new Keyring(KEY), "g", true, true);

  private final Refusals refusals = new Refusals("test", System::nanoTime);

  private static WireLimits limits(
      int streamBytes, int nodes, int pushPullBytes, int userBytes, int decompressed, int parts, int depth) {
    return new WireLimits(streamBytes, nodes, pushPullBytes, userBytes, decompressed, parts, depth);
  }

  private static PushPull pushPull(int nodes, int metaBytes, int userBytes) {
    List<PushNodeState> states = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      states.add(new PushNodeState("node-" + i, LO, 7946, new byte[metaBytes], i, 0, VSN));
    }
    return new PushPull(false, states, new byte[userBytes]);
  }

  private static InputStream in(byte[] b) {
    return new ByteArrayInputStream(b);
  }

  @Test
  void defaultsSitFarBelowA64MiBHeap() {
    WireLimits d = WireLimits.defaults();
    assertThat(d.maxStreamMessageBytes()).isEqualTo(1 << 20);
    assertThat(d.maxDecompressedBytes()).isEqualTo(1 << 20);
    assertThat(d.maxPushPullStateBytes()).isEqualTo(1 << 20);
    assertThat(d.maxUserStateBytes()).isEqualTo(256 << 10);
    assertThat(d.maxPushPullNodes()).isEqualTo(4096);
    assertThat(d.maxCompoundParts()).isEqualTo(512);
    assertThat(d.maxNestingDepth()).isEqualTo(4);
    assertThatThrownBy(() -> limits(0, 1, 1, 1, 1, 1, 1)).hasMessageContaining("maxStreamMessageBytes");
  }

  @Test
  void encryptedFrameAnnouncing20MiBIsRefusedFromItsHeader() {
    StreamCodec codec = new StreamCodec(KEYED, WireLimits.defaults(), refusals);
    // [10][len u32 BE] of 20 MiB and 2 GiB and nothing more: refused from the header, not waiting for the body
    for (String header : new String[] {"0a01400000", "0a80000000"}) {
      byte[] frame = Hex.bytes(header);
      assertThatThrownBy(() -> codec.read(in(frame))).satisfies(refusedBy(Limit.STREAM_MESSAGE_BYTES));
    }
    assertThat(refusals.count(Limit.STREAM_MESSAGE_BYTES)).isEqualTo(2);
  }

  @Test
  void streamMessageOverTheCapStopsBeingRead() throws Exception {
    WireLimits small = limits(2000, 4096, 1 << 20, 1 << 18, 1 << 20, 512, 4);
    StreamCodec codec = new StreamCodec(PacketOptions.plain(), small, refusals);
    StreamCodec writer = new StreamCodec(PacketOptions.plain());
    Ping fits = new Ping(1, "n".repeat(1900), null, 0, null);
    assertThat(codec.read(in(writer.encode(fits, false)))).isEqualTo(fits);
    byte[] tooLong = writer.encode(new Ping(1, "n".repeat(2100), null, 0, null), false);
    assertThatThrownBy(() -> codec.read(in(tooLong))).satisfies(refusedBy(Limit.STREAM_MESSAGE_BYTES));
    // the same cap applies to an encrypted frame built by a well-behaved peer
    StreamCodec keyed = new StreamCodec(KEYED, small, refusals);
    byte[] sealed = new StreamCodec(KEYED).encode(new UserMsg(new byte[2100]), false);
    assertThatThrownBy(() -> keyed.read(in(sealed))).satisfies(refusedBy(Limit.STREAM_MESSAGE_BYTES));
    assertThat(refusals.count(Limit.STREAM_MESSAGE_BYTES)).isEqualTo(2);
  }

  @Test
  void pushPullNodeCountIsCapped() throws Exception {
    WireLimits five = limits(1 << 20, 5, 1 << 20, 1 << 18, 1 << 20, 512, 4);
    StreamCodec codec = new StreamCodec(PacketOptions.plain(), five, refusals);
    StreamCodec writer = new StreamCodec(PacketOptions.plain());
    assertThat(((PushPull) codec.read(in(writer.encode(pushPull(5, 4, 0), false)))).nodes()).hasSize(5);
    assertThatThrownBy(() -> codec.read(in(writer.encode(pushPull(6, 4, 0), false))))
        .satisfies(refusedBy(Limit.PUSH_PULL_NODES));
    // the default: 4096 node states, where memberlist allows 2^20
    StreamCodec defaults = new StreamCodec(PacketOptions.plain());
    // pushPullHeader{Join:false, Nodes: 4097, UserStateLen: 0}
    byte[] header = Hex.bytes("0683a44a6f696ec2a54e6f646573cd1001ac5573657253746174654c656e00");
    assertThatThrownBy(() -> defaults.read(in(header))).satisfies(refusedBy(Limit.PUSH_PULL_NODES));
  }

  @Test
  void pushPullStateBytesAreCappedPlainCompressedAndEncrypted() throws Exception {
    WireLimits small = limits(1 << 20, 4096, 5000, 1 << 18, 1 << 20, 512, 4);
    PushPull fits = pushPull(10, 300, 0);
    PushPull tooBig = pushPull(20, 300, 0);
    for (PacketOptions options : List.of(PacketOptions.plain(), KEYED)) {
      for (boolean compress : new boolean[] {false, true}) {
        StreamCodec codec = new StreamCodec(options, small, refusals);
        StreamCodec writer = new StreamCodec(options);
        assertThat(((PushPull) codec.read(in(writer.encode(fits, compress)))).nodes()).hasSize(10);
        assertThatThrownBy(() -> codec.read(in(writer.encode(tooBig, compress))))
            .satisfies(refusedBy(Limit.PUSH_PULL_STATE_BYTES));
      }
    }
    assertThat(refusals.count(Limit.PUSH_PULL_STATE_BYTES)).isEqualTo(4);
  }

  @Test
  void userStateAndReliableUserMessagesAreCapped() throws Exception {
    StreamCodec codec = new StreamCodec(PacketOptions.plain(), WireLimits.defaults(), refusals);
    StreamCodec writer = new StreamCodec(PacketOptions.plain());
    int cap = WireLimits.DEFAULT_MAX_USER_STATE_BYTES;
    assertThat(((PushPull) codec.read(in(writer.encode(pushPull(1, 0, cap), false)))).userState()).hasSize(cap);
    assertThatThrownBy(() -> codec.read(in(writer.encode(pushPull(1, 0, cap + 1), false))))
        .satisfies(refusedBy(Limit.USER_STATE_BYTES));
    assertThat(((UserMsg) codec.read(in(writer.encode(new UserMsg(new byte[cap]), false)))).payload()).hasSize(cap);
    assertThatThrownBy(() -> codec.read(in(writer.encode(new UserMsg(new byte[cap + 1]), false))))
        .satisfies(refusedBy(Limit.USER_STATE_BYTES));
  }

  @Test
  void decompressionBudgetIsSharedByEveryLayerOfOnePacket() throws Exception {
    // each part inflates to 600 KiB, under the 1 MiB budget alone; two of them in one packet are over it
    byte[] bomb = PacketCodec.compressed(MessageCodec.encode(new UserMsg(new byte[600 << 10])));
    PacketCodec codec = new PacketCodec(PacketOptions.plain(), WireLimits.defaults(), refusals);
    assertThat(codec.decode(bomb)).hasSize(1);
    byte[] pair = PacketCodec.compound(List.of(bomb, bomb));
    assertThatThrownBy(() -> codec.decode(pair)).satisfies(refusedBy(Limit.DECOMPRESSED_BYTES));
    // nested: a compressed compound of compressed parts counts the outer and inner output together
    byte[] inner = PacketCodec.compressed(MessageCodec.encode(new UserMsg(new byte[300 << 10])));
    byte[] nested = PacketCodec.compressed(PacketCodec.compound(List.of(inner, inner, inner, inner)));
    assertThatThrownBy(() -> codec.decode(nested)).satisfies(refusedBy(Limit.DECOMPRESSED_BYTES));
    // a compressed stream message draws from the same kind of budget
    StreamCodec stream = new StreamCodec(PacketOptions.plain(), WireLimits.defaults(), refusals);
    byte[] streamBomb = new StreamCodec(PacketOptions.plain()).encode(new UserMsg(new byte[2 << 20]), true);
    assertThat(streamBomb.length).isLessThan(64 << 10);
    assertThatThrownBy(() -> stream.read(in(streamBomb))).satisfies(refusedBy(Limit.DECOMPRESSED_BYTES));
    assertThat(refusals.count(Limit.DECOMPRESSED_BYTES)).isEqualTo(3);
  }

  @Test
  void compoundPartsAreCountedAcrossLayers() throws Exception {
    byte[] nack = MessageCodec.encode(new NackResp(7));
    byte[] full = PacketCodec.compound(Collections.nCopies(255, nack));
    PacketCodec codec = new PacketCodec(PacketOptions.plain(), WireLimits.defaults(), refusals);
    assertThat(codec.decode(full)).hasSize(255);
    // three compounds of 200 parts inside one compound: 603 parts in one packet
    byte[] two = PacketCodec.compound(Collections.nCopies(200, nack));
    byte[] many = PacketCodec.compound(List.of(two, two, two));
    assertThatThrownBy(() -> codec.decode(many)).satisfies(refusedBy(Limit.COMPOUND_PARTS));
    assertThat(refusals.count(Limit.COMPOUND_PARTS)).isEqualTo(1);
  }

  @Test
  void nestingDepthIsCapped() throws Exception {
    byte[] nack = MessageCodec.encode(new NackResp(7));
    PacketCodec codec = new PacketCodec(PacketOptions.plain(), WireLimits.defaults(), refusals);
    // what Go sends: a compressed compound, two layers
    assertThat(codec.decode(PacketCodec.compressed(PacketCodec.compound(List.of(nack, nack))))).hasSize(2);
    byte[] deep = nack;
    for (int i = 0; i < 4; i++) {
      deep = PacketCodec.compound(List.of(deep));
    }
    assertThat(codec.decode(deep)).hasSize(1);
    byte[] tooDeep = PacketCodec.compound(List.of(deep));
    assertThatThrownBy(() -> codec.decode(tooDeep)).satisfies(refusedBy(Limit.NESTING_DEPTH));
  }
}
