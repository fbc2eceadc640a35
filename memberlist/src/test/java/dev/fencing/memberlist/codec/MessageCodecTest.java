package dev.fencing.memberlist.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class MessageCodecTest {
  private static final byte[] LOOPBACK = {127, 0, 0, 1};
  private static final byte[] VSN = {1, 5, 2, 0, 0, 0};

  // Vectors as emitted by Go memberlist 0.2.2 / go-msgpack 0.5.5 (the build's Go golden test re-derives them).
  @Test
  void encodesEveryMessageTypeLikeGo() {
    assertThat(Hex.of(MessageCodec.encode(new Ping(1, "n2", null, 0, null))))
        .isEqualTo("0082a44e6f6465a26e32a55365714e6f01");
    assertThat(Hex.of(MessageCodec.encode(new Ping(300, "n2", LOOPBACK, 7946, "n1"))))
        .isEqualTo(
            "0085a44e6f6465a26e32a55365714e6fcd012caa536f7572636541646472a47f000001aa536f757263654e6f6465a26e31"
                + "aa536f75726365506f7274cd1f0a");
    assertThat(Hex.of(MessageCodec.encode(new IndirectPingReq(70000, LOOPBACK, 7947, "n2", true, LOOPBACK, 7946, "n1"))))
        .isEqualTo(
            "0188a44e61636bc3a44e6f6465a26e32a4506f7274cd1f0ba55365714e6fce00011170aa536f7572636541646472a47f000001"
                + "aa536f757263654e6f6465a26e31aa536f75726365506f7274cd1f0aa6546172676574a47f000001");
    assertThat(Hex.of(MessageCodec.encode(new AckResp(1, null)))).isEqualTo("0282a75061796c6f6164c0a55365714e6f01");
    assertThat(Hex.of(MessageCodec.encode(new NackResp(5)))).isEqualTo("0b81a55365714e6f05");
    assertThat(Hex.of(MessageCodec.encode(new Suspect(2, "n2", "n1"))))
        .isEqualTo("0383a446726f6da26e31ab496e6361726e6174696f6e02a44e6f6465a26e32");
    assertThat(Hex.of(MessageCodec.encode(new Alive(1, "n1", LOOPBACK, 7946, null, VSN))))
        .isEqualTo(
            "0486a441646472a47f000001ab496e6361726e6174696f6e01a44d657461c0a44e6f6465a26e31a4506f7274cd1f0a"
                + "a356736ea6010502000000");
    assertThat(Hex.of(MessageCodec.encode(new Dead(3, "n1", "n1"))))
        .isEqualTo("0583a446726f6da26e31ab496e6361726e6174696f6e03a44e6f6465a26e31");
    assertThat(Hex.of(MessageCodec.encode(new UserMsg("hi".getBytes(StandardCharsets.UTF_8))))).isEqualTo("086869");
  }

  @Test
  void decodingGoBytesAndReencodingIsTheIdentity() throws Exception {
    for (String hex :
        List.of(
            "0082a44e6f6465a26e32a55365714e6f01",
            "0188a44e61636bc3a44e6f6465a26e32a4506f7274cd1f0ba55365714e6fce00011170aa536f7572636541646472a47f000001"
                + "aa536f757263654e6f6465a26e31aa536f75726365506f7274cd1f0aa6546172676574a47f000001",
            "0282a75061796c6f6164c0a55365714e6f01",
            "0b81a55365714e6f05",
            "0383a446726f6da26e31ab496e6361726e6174696f6e02a44e6f6465a26e32",
            "0486a441646472a47f000001ab496e6361726e6174696f6e01a44d657461c0a44e6f6465a26e31a4506f7274cd1f0a"
                + "a356736ea6010502000000",
            "0583a446726f6da26e31ab496e6361726e6174696f6e03a44e6f6465a26e31",
            "0d81a54572726f72a3626164")) {
      assertThat(Hex.of(MessageCodec.encode(MessageCodec.decode(Hex.bytes(hex))))).isEqualTo(hex);
    }
  }

  @Test
  void usesWiderRawStringFormsForLongValuesButNeverStr8OrBin() {
    byte[] payload = new byte[40];
    String hex = Hex.of(MessageCodec.encode(new AckResp(1, payload)));
    assertThat(hex).startsWith("0282a75061796c6f6164da0028");
    byte[] big = new byte[70000];
    assertThat(Hex.of(MessageCodec.encode(new AckResp(1, big)))).startsWith("0282a75061796c6f6164db00011170");
    assertThat(Hex.of(MessageCodec.encode(new Alive(0xffffffffL, "n", LOOPBACK, 200, new byte[0], VSN))))
        .contains("ab496e6361726e6174696f6ece" + "ffffffff")
        .contains("a44d657461a0")
        .contains("a4506f7274ccc8");
  }

  @Test
  void decodesJavaStyleAlternativesLeniently() throws Exception {
    // keys out of order, bin8 for Addr, str8 for Node, int64 for Incarnation, an array for Vsn, an unknown key
    // holding a nested map, and a lower-case "node" key that must be ignored (keys are case-sensitive)
    String hex =
        "0488"
            + "a356736e" + "96" + "010502000000"
            + "a4506f7274" + "d1" + "1f0a"
            + "a4416464" + "72" + "c404" + "7f000001"
            + "a44e6f6465" + "d902" + "6e31"
            + "ab496e6361726e6174696f6e" + "d3" + "0000000000000007"
            + "a7556e6b6e6f776e" + "81a161" + "92c0a3787878"
            + "a46e6f6465" + "a27878"
            + "a44d657461" + "c0";
    Alive a = (Alive) MessageCodec.decode(Hex.bytes(hex));
    assertThat(a.node()).isEqualTo("n1");
    assertThat(a.incarnation()).isEqualTo(7);
    assertThat(a.addr()).containsExactly(LOOPBACK);
    assertThat(a.port()).isEqualTo(7946);
    assertThat(a.vsn()).containsExactly(VSN);
    assertThat(a.meta()).isNull();
  }

  @Test
  void absentOmitemptyFieldsDecodeAsEmpty() throws Exception {
    Ping p = (Ping) MessageCodec.decode(Hex.bytes("0082a44e6f6465a26e32a55365714e6f01"));
    assertThat(p.seqNo()).isEqualTo(1);
    assertThat(p.node()).isEqualTo("n2");
    assertThat(p.sourceAddr()).isNull();
    assertThat(p.sourcePort()).isZero();
    assertThat(p.sourceNode()).isNull();
  }

  @Test
  void rejectsBadInputWithAClearMessage() {
    assertThatThrownBy(() -> MessageCodec.decode(new byte[0]))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessageContaining("empty");
    assertThatThrownBy(() -> MessageCodec.decode(Hex.bytes("2a")))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessageContaining("42 not supported");
    assertThatThrownBy(() -> MessageCodec.decode(Hex.bytes("0682")))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessageContaining("stream");
    // SeqNo above uint32
    assertThatThrownBy(() -> MessageCodec.decode(Hex.bytes("0b81a55365714e6fcf0000000100000000")))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessageContaining("SeqNo");
    // Node given as bin: Go refuses bin for string fields
    assertThatThrownBy(() -> MessageCodec.decode(Hex.bytes("0081a44e6f6465c4026e32")))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessageContaining("Node");
    // declared str32 length far beyond the buffer
    assertThatThrownBy(() -> MessageCodec.decode(Hex.bytes("0281a75061796c6f6164dbffffffff")))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessageContaining("exceeds");
    // invalid UTF-8 in a string
    assertThatThrownBy(() -> MessageCodec.decode(Hex.bytes("0081a44e6f6465a2c328")))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessageContaining("UTF-8");
    // negative port
    assertThatThrownBy(() -> MessageCodec.decode(Hex.bytes("0081aa536f75726365506f7274ff")))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessageContaining("negative");
  }

  @Test
  void refusesToEncodePushPullAsAPacketMessage() {
    assertThatThrownBy(() -> MessageCodec.encode(new PushPull(false, List.of(), new byte[0])))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
