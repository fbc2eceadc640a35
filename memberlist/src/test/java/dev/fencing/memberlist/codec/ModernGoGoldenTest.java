package dev.fencing.memberlist.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Golden tests against memberlist v0.5.4 (Deckhouse's pin) and the latest release, which encode with go-msgpack/v2
 * instead of 0.2.2's go-msgpack: Java's encodings equal v2's byte for byte, a real v0.5.4/v0.7.0 cluster's traffic
 * decodes and re-encodes byte for byte, and a labelled encrypted cluster's traffic (label header outermost, label as
 * GCM associated data) opens under the same label and key.
 */
class ModernGoGoldenTest {
  private static final byte[] KEY = Hex.bytes("000102030405060708090a0b0c0d0e0f");
  private static final String LABEL = "workers";

  private static Map<String, String> vectors(GoPeer.Build build) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String line : GoPeer.runBuild(build, null, "vectors")) {
      String[] f = line.split(" ");
      out.put(f[0] + " " + f[1], f.length > 2 ? f[2] : "");
    }
    return out;
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(value = GoPeer.Build.class, names = {"V054", "LATEST"})
  void javaEncodesEveryMessageAndStreamExactlyAsGoMsgpackV2(GoPeer.Build build) throws Exception {
    Map<String, String> go = vectors(build);
    for (Map.Entry<String, Message> e : GoGoldenTest.javaMessages().entrySet()) {
      assertThat(Hex.of(MessageCodec.encode(e.getValue()))).as(build + " msg " + e.getKey())
          .isEqualTo(go.get("msg " + e.getKey()));
    }
    StreamCodec codec = new StreamCodec(PacketOptions.plain());
    for (Map.Entry<String, Message> e : GoGoldenTest.javaStreams().entrySet()) {
      assertThat(Hex.of(codec.encode(e.getValue(), false))).as(build + " stream " + e.getKey())
          .isEqualTo(go.get("stream " + e.getKey()));
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(value = GoPeer.Build.class, names = {"V054", "LATEST"})
  void decodesAndReencodesARealModernGoClusterTrafficByteForByte(GoPeer.Build build) throws Exception {
    GoGoldenTest.assertTrafficReencodesByteForByte(GoPeer.runBuild(build, null, "trace"));
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(value = GoPeer.Build.class, names = {"V054", "LATEST"})
  void opensALabelledEncryptedGoClusterTrafficUnderTheSameLabel(GoPeer.Build build) throws Exception {
    List<String> trace = GoPeer.runBuild(build, null, "trace", Hex.of(KEY), LABEL);
    PacketOptions options = new PacketOptions(new Keyring(KEY), LABEL, true, true);
    PacketCodec packets = new PacketCodec(options);
    StreamCodec streams = new StreamCodec(options);
    PacketCodec otherLabel = new PacketCodec(new PacketOptions(new Keyring(KEY), "other", true, true));
    byte[] header = new byte[2 + LABEL.length()];
    header[0] = (byte) 244;
    header[1] = (byte) LABEL.length();
    System.arraycopy(LABEL.getBytes(StandardCharsets.UTF_8), 0, header, 2, LABEL.length());
    Set<MessageType> seen = EnumSet.noneOf(MessageType.class);
    int packetCount = 0;
    for (String line : trace) {
      String[] f = line.split(" ");
      byte[] raw = Hex.bytes(f[3]);
      // the label header is the outermost layer of every packet and of every dialer's stream
      assertThat(Arrays.copyOf(raw, header.length)).as(line).isEqualTo(header);
      if (f[0].equals("packet")) {
        assertThat(raw[header.length]).as("encryption version inside the label").isEqualTo((byte) 1);
        for (Message m : packets.decode(raw)) {
          seen.add(m.type());
        }
        // the label is the associated data: the same ciphertext under another label header does not open
        byte[] relabelled = new byte[raw.length - LABEL.length() + 5];
        relabelled[0] = (byte) 244;
        relabelled[1] = 5;
        System.arraycopy("other".getBytes(StandardCharsets.UTF_8), 0, relabelled, 2, 5);
        System.arraycopy(raw, header.length, relabelled, 7, raw.length - header.length);
        assertThatThrownBy(() -> otherLabel.decode(relabelled))
            .hasMessageContaining("decryption failed");
        packetCount++;
      } else {
        seen.add(streams.readInbound(new ByteArrayInputStream(raw)).type());
        if (!f[4].equals("-")) {
          byte[] reply = Hex.bytes(f[4]);
          assertThat(reply[0]).as("a reply carries no label header").isEqualTo((byte) 10);
          seen.add(streams.read(new ByteArrayInputStream(reply)).type());
        }
      }
    }
    assertThat(packetCount).isGreaterThan(50);
    assertThat(seen).contains(MessageType.PING, MessageType.ACK_RESP, MessageType.ALIVE, MessageType.PUSH_PULL,
        MessageType.USER);
  }
}
