package dev.fencing.memberlist.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class PacketCodecTest {
  private static final byte[] LOOPBACK = {127, 0, 0, 1};
  private static final byte[] VSN = {1, 5, 2, 0, 0, 0};
  private static final byte[] PING = MessageCodec.encode(new Ping(1, "n2", null, 0, null));
  private static final byte[] ACK = MessageCodec.encode(new AckResp(1, null));
  private static final Alive ALIVE = new Alive(1, "n1", LOOPBACK, 7946, null, VSN);

  private final PacketCodec plain = new PacketCodec(PacketOptions.plain());

  @Test
  void framesCompoundCrcAndCompressionLikeGo() {
    assertThat(Hex.of(plain.encode(List.of(PING, ACK), false, false)))
        .isEqualTo("0702001100120082a44e6f6465a26e32a55365714e6f010282a75061796c6f6164c0a55365714e6f01");
    assertThat(Hex.of(plain.encode(List.of(PING), true, false)))
        .isEqualTo("0cfba0d8c10082a44e6f6465a26e32a55365714e6f01");
    assertThat(Hex.of(PacketCodec.compressed(MessageCodec.encode(ALIVE))))
        .isEqualTo(
            "0982a4416c676f00a3427566da00430009182215840c1939a4fe0000106055123763c2c87113864e9a376e02906a52864e"
                + "1860a49cbc215346949b18a4a0bc9143a7d90705a3accc71632a4001010b010404");
  }

  @Test
  void compressesOnlyWhenThatMakesThePacketSmaller() {
    assertThat(plain.encode(List.of(PING), false, true)).isEqualTo(PING);
    List<byte[]> many = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      many.add(MessageCodec.encode(new Suspect(i, "node-" + i, "node-0")));
    }
    byte[] packet = plain.encode(many, true, true);
    assertThat(packet[0]).isEqualTo((byte) 12);
    assertThat(packet[5]).isEqualTo((byte) 9);
    assertThat(packet.length).isLessThan(PacketCodec.compoundSize(many));
  }

  @Test
  void decodesNestedLayersInOrder() throws Exception {
    List<byte[]> inner = List.of(PING, ACK);
    byte[] compressedCompound = PacketCodec.compressed(PacketCodec.compound(inner));
    byte[] outer = PacketCodec.compound(List.of(compressedCompound, MessageCodec.encode(ALIVE)));
    byte[] packet = plain.encode(List.of(outer), true, true);
    List<Message> msgs = plain.decode(packet);
    assertThat(msgs).hasSize(3);
    assertThat(msgs.get(0)).isInstanceOf(Ping.class);
    assertThat(msgs.get(1)).isInstanceOf(AckResp.class);
    assertThat(MessageCodec.encode(msgs.get(2))).isEqualTo(MessageCodec.encode(ALIVE));
  }

  @Test
  void dropsTruncatedCompoundTailAndKeepsTheRest() throws Exception {
    byte[] packet = PacketCodec.compound(List.of(PING, ACK, PING));
    byte[] cut = Arrays.copyOf(packet, packet.length - 3);
    List<Message> msgs = plain.decode(cut);
    assertThat(msgs).hasSize(2);
    assertThat(plain.truncatedCompoundParts()).isEqualTo(1);
  }

  @Test
  void dropsABrokenCompoundPartAndKeepsTheOthers() throws Exception {
    byte[] packet = PacketCodec.compound(List.of(PING, Hex.bytes("2a00"), ACK));
    assertThat(plain.decode(packet)).hasSize(2);
    assertThat(plain.droppedCompoundParts()).isEqualTo(1);
  }

  @Test
  void rejectsCrcMismatch() {
    byte[] packet = plain.encode(List.of(PING), true, false);
    packet[packet.length - 1] ^= 1;
    assertThatThrownBy(() -> plain.decode(packet))
        .isInstanceOf(MalformedMessageException.class)
        .hasMessageContaining("CRC mismatch");
  }

  @Test
  void encryptedPacketsRoundTripAndNeedTheKey() throws Exception {
    byte[] key = new byte[16];
    key[0] = 1;
    PacketCodec enc = new PacketCodec(new PacketOptions(new Keyring(key), "", true, true));
    byte[] packet = enc.encode(List.of(PING, ACK), true, true);
    assertThat(packet[0]).isEqualTo((byte) 1);
    assertThat(enc.decode(packet)).hasSize(2);
    assertThat(enc.overhead()).isEqualTo(29);
    byte[] other = new byte[32];
    PacketCodec wrongKey = new PacketCodec(new PacketOptions(new Keyring(other), "", true, true));
    assertThatThrownBy(() -> wrongKey.decode(packet)).isInstanceOf(MalformedMessageException.class);
    // without verification, an undecryptable packet is read as plaintext (migration from an unencrypted cluster)
    PacketCodec lenient = new PacketCodec(new PacketOptions(new Keyring(other), "", false, true));
    assertThat(lenient.decode(PING)).hasSize(1);
    assertThatThrownBy(() -> wrongKey.decode(PING)).isInstanceOf(MalformedMessageException.class);
    PacketCodec v0 = new PacketCodec(new PacketOptions(new Keyring(key), "", true, true, 0));
    byte[] legacy = v0.encode(List.of(PING), false, false);
    assertThat(legacy[0]).isEqualTo((byte) 0);
    assertThat(legacy.length).isEqualTo(PING.length + Keyring.overhead(0, PING.length));
    assertThat(enc.decode(legacy)).hasSize(1);
  }

  @Test
  void labelIsOutermostAndCheckedBothWays() throws Exception {
    byte[] key = new byte[24];
    PacketCodec labelled = new PacketCodec(new PacketOptions(new Keyring(key), "blue", true, true));
    byte[] packet = labelled.encode(List.of(PING), false, false);
    assertThat(Hex.of(Arrays.copyOf(packet, 6))).isEqualTo("f404" + Hex.of("blue".getBytes()));
    assertThat(labelled.decode(packet)).hasSize(1);
    assertThat(labelled.overhead()).isEqualTo(6 + 29);

    PacketCodec red = new PacketCodec(new PacketOptions(new Keyring(key), "red", true, true));
    assertThatThrownBy(() -> red.decode(packet)).hasMessageContaining("label does not match");
    PacketCodec none = new PacketCodec(new PacketOptions(new Keyring(key), "", true, true));
    assertThatThrownBy(() -> none.decode(packet)).hasMessageContaining("none configured");
    assertThatThrownBy(() -> labelled.decode(none.encode(List.of(PING), false, false)))
        .hasMessageContaining("no label header");
    // the label is authenticated: moving the ciphertext under another label fails decryption
    byte[] relabelled = new byte[packet.length - 1];
    relabelled[0] = (byte) 244;
    relabelled[1] = 3;
    System.arraycopy("red".getBytes(), 0, relabelled, 2, 3);
    System.arraycopy(packet, 6, relabelled, 5, packet.length - 6);
    assertThatThrownBy(() -> red.decode(relabelled)).hasMessageContaining("decryption failed");
    assertThatThrownBy(() -> plain.decode(Hex.bytes("f400"))).hasMessageContaining("empty label");
  }

  @Test
  void skippedInboundLabelCheckTakesUnlabelledPacketsAsLabelledAndRefusesLabelledOnes() throws Exception {
    byte[] key = new byte[16];
    PacketCodec labelled = new PacketCodec(new PacketOptions(new Keyring(key), "blue", true, true));
    PacketCodec skipping =
        new PacketCodec(new PacketOptions(new Keyring(key), "blue", true, true, Keyring.VERSION_1, true));
    byte[] sent = labelled.encode(List.of(PING), false, false);
    // what arrives after a proxy stripped the header: the ciphertext sealed with "blue" as associated data
    byte[] stripped = Arrays.copyOfRange(sent, 6, sent.length);
    assertThat(skipping.decode(stripped)).hasSize(1);
    assertThatThrownBy(() -> skipping.decode(sent)).hasMessageContaining("double label");
    // the assumed label is still the associated data: a packet sealed without a label does not open
    byte[] sealedUnlabelled = new PacketCodec(new PacketOptions(new Keyring(key), "", true, true))
        .encode(List.of(PING), false, false);
    assertThatThrownBy(() -> skipping.decode(sealedUnlabelled)).hasMessageContaining("decryption failed");
    // output is labelled as usual
    assertThat(Hex.of(Arrays.copyOf(skipping.encode(List.of(PING), false, false), 6)))
        .isEqualTo("f404" + Hex.of("blue".getBytes()));
  }

  @Test
  void splitsIntoPacketsWithinTheByteAndPartLimits() {
    List<byte[]> msgs = new ArrayList<>();
    for (int i = 0; i < 600; i++) {
      msgs.add(new byte[] {8, (byte) i});
    }
    List<List<byte[]>> groups = PacketCodec.splitCompound(msgs, 100_000);
    // 127, not 255: memberlist 0.2.2 misreads compounds of 128 parts or more (uint8 offset overflow)
    assertThat(groups).extracting(List::size).containsExactly(127, 127, 127, 127, 92);

    List<byte[]> sized = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      sized.add(new byte[100]);
    }
    sized.add(2, new byte[3000]);
    List<List<byte[]>> packets = PacketCodec.splitCompound(sized, 1400);
    int total = 0;
    for (List<byte[]> g : packets) {
      total += g.size();
      int size = g.size() == 1 ? g.get(0).length : PacketCodec.compoundSize(g);
      if (g.stream().noneMatch(b -> b.length == 3000)) {
        assertThat(size).isLessThanOrEqualTo(1400);
      } else {
        assertThat(g).hasSize(1);
      }
    }
    assertThat(total).isEqualTo(51);
    assertThatThrownBy(() -> plain.encode(msgs, false, false)).isInstanceOf(IllegalArgumentException.class);
  }
}
