package dev.fencing.memberlist.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Golden tests against bytes produced during the build by our Go program linked with Debian's memberlist 0.2.2
 * and go-msgpack: Java encodings must equal Go's, Java must decode Go's output (including a real 3-node memberlist
 * cluster's traffic, plain and encrypted), and Go must decode Java's.
 */
class GoGoldenTest {
  private static final byte[] LO = {127, 0, 0, 1};
  private static final byte[] LO16 = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 127, 0, 0, 1};
  private static final byte[] VSN = {1, 5, 2, 0, 0, 0};
  private static final byte[] TRACE_KEY = Hex.bytes("000102030405060708090a0b0c0d0e0f");

  private static Map<String, String[]> vectors;

  @BeforeAll
  static void generate() {
    vectors = new LinkedHashMap<>();
    for (String line : GoPeer.run(null, "vectors")) {
      String[] f = line.split(" ");
      vectors.put(f[0] + " " + f[1], Arrays.copyOfRange(f, 2, f.length));
    }
  }

  private static byte[] field(String key, int i) {
    String[] f = vectors.get(key);
    assertThat(f).as("Go vector %s", key).isNotNull();
    return f[i].equals("-") ? new byte[0] : Hex.bytes(f[i]);
  }

  private static String repeat(char c, int n) {
    return String.valueOf(c).repeat(n);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static Map<String, Message> javaMessages() {
    Map<String, Message> m = new LinkedHashMap<>();
    m.put("ping-min", new Ping(1, "n2", null, 0, null));
    m.put("ping-empty", new Ping(0, "", null, 0, null));
    m.put("ping-full", new Ping(300, "n2", LO, 7946, "n1"));
    m.put("ping-max", new Ping(0xffffffffL, repeat('x', 40), LO16, 65535, "ñødé"));
    m.put("indirect", new IndirectPingReq(70000, LO, 7947, "n2", true, LO, 7946, "n1"));
    m.put("indirect-min", new IndirectPingReq(200, LO16, 128, "n3", false, null, 0, null));
    m.put("ack-nil", new AckResp(1, null));
    m.put("ack-empty", new AckResp(255, new byte[0]));
    m.put("ack-40", new AckResp(65535, utf8(repeat('x', 40))));
    m.put("ack-70k", new AckResp(65536, utf8(repeat('y', 70000))));
    m.put("nack", new NackResp(5));
    m.put("err", new ErrResp("boom"));
    m.put("err-empty", new ErrResp(""));
    m.put("suspect", new Suspect(2, "n2", "n1"));
    m.put("suspect-big", new Suspect(0xffffffffL, repeat('x', 40), repeat('z', 300)));
    m.put("alive-ip4", new Alive(1, "n1", LO, 7946, null, VSN));
    m.put("alive-ip16-meta", new Alive(1, "n1", LO16, 7946, utf8("m"), VSN));
    byte[] meta = new byte[512];
    Arrays.fill(meta, (byte) 7);
    m.put("alive-meta512", new Alive(1 << 20, "node-with-a-longer-name", LO, 80, meta, VSN));
    m.put("dead", new Dead(3, "n1", "n1"));
    m.put("dead-other", new Dead(127, "n2", "n1"));
    m.put("user", new UserMsg(utf8("hello")));
    return m;
  }

  static Map<String, Message> javaStreams() {
    Map<String, Message> m = new LinkedHashMap<>();
    PushPull pp =
        new PushPull(
            false,
            List.of(
                new PushNodeState("n1", LO, 7946, null, 1, 0, VSN),
                new PushNodeState("n2", LO, 7947, utf8("meta"), 4, 1, VSN)),
            utf8("usr"));
    m.put("pushpull", pp);
    m.put("pushpull-join", new PushPull(true, List.of(new PushNodeState("left", LO16, 1, null, 200, 3, VSN)), new byte[0]));
    m.put("user", new UserMsg(utf8("hello")));
    m.put("ping", new Ping(9, "n2", null, 0, null));
    m.put("ack", new AckResp(9, null));
    m.put("err", new ErrResp("Failed to receive remote state"));
    return m;
  }

  @Test
  void javaEncodesEveryMessageExactlyAsGo() throws Exception {
    Map<String, Message> java = javaMessages();
    assertThat(vectors.keySet().stream().filter(k -> k.startsWith("msg ")).map(k -> k.substring(4)))
        .containsExactlyInAnyOrderElementsOf(java.keySet());
    for (Map.Entry<String, Message> e : java.entrySet()) {
      byte[] go = field("msg " + e.getKey(), 0);
      assertThat(Hex.of(MessageCodec.encode(e.getValue()))).as(e.getKey()).isEqualTo(Hex.of(go));
      assertThat(Hex.of(MessageCodec.encode(MessageCodec.decode(go)))).as("decode " + e.getKey()).isEqualTo(Hex.of(go));
    }
  }

  @Test
  void javaStreamsMatchGoStreams() throws Exception {
    StreamCodec codec = new StreamCodec(PacketOptions.plain());
    for (Map.Entry<String, Message> e : javaStreams().entrySet()) {
      byte[] go = field("stream " + e.getKey(), 0);
      assertThat(Hex.of(codec.encode(e.getValue(), false))).as(e.getKey()).isEqualTo(Hex.of(go));
      Message back = codec.read(new ByteArrayInputStream(go));
      assertThat(Hex.of(codec.encode(back, false))).as("decode " + e.getKey()).isEqualTo(Hex.of(go));
    }
    byte[] goCompressed = field("stream pushpull-compressed", 0);
    assertThat(Hex.of(codec.encode(javaStreams().get("pushpull"), true))).isEqualTo(Hex.of(goCompressed));
    PushPull back = (PushPull) codec.read(new ByteArrayInputStream(goCompressed));
    assertThat(back.nodes()).extracting(PushNodeState::name).containsExactly("n1", "n2");
    assertThat(back.userState()).asString().isEqualTo("usr");
  }

  @Test
  void lzwIsBitIdenticalToGoIncludingDictionaryResets() throws Exception {
    int cases = 0;
    for (String key : vectors.keySet()) {
      if (key.startsWith("lzw ")) {
        byte[] input = field(key, 0);
        byte[] go = field(key, 1);
        assertThat(Hex.of(Lzw.compress(input))).as(key).isEqualTo(Hex.of(go));
        assertThat(Lzw.decompress(go, input.length)).as(key).isEqualTo(input);
        cases++;
      }
    }
    assertThat(cases).isEqualTo(8);
    byte[] alive = field("compress alive", 0);
    assertThat(Hex.of(PacketCodec.compressed(alive))).isEqualTo(Hex.of(field("compress alive", 1)));
  }

  @Test
  void crcFramingMatchesGo() throws Exception {
    PacketCodec codec = new PacketCodec(PacketOptions.plain());
    for (String name : List.of("crc ping", "crc alive")) {
      byte[] plain = field(name, 0);
      byte[] go = field(name, 1);
      assertThat(Hex.of(codec.encode(List.of(plain), true, false))).isEqualTo(Hex.of(go));
      assertThat(MessageCodec.encode(codec.decode(go).get(0))).isEqualTo(plain);
    }
  }

  @Test
  void javaDecryptsWhatGoEncrypted() throws Exception {
    int cases = 0;
    for (String key : vectors.keySet()) {
      if (key.startsWith("encrypt ")) {
        Keyring ring = new Keyring(field(key, 0));
        byte[] aad = field(key, 1);
        assertThat(ring.decrypt(field(key, 3), aad)).as(key).isEqualTo(field(key, 2));
        cases++;
      }
    }
    assertThat(cases).isEqualTo(7);
  }

  @Test
  void goDecodesWhatJavaEncoded() {
    StringBuilder in = new StringBuilder();
    Map<String, String> expected = new HashMap<>();
    for (Map.Entry<String, Message> e : javaMessages().entrySet()) {
      String hex = Hex.of(MessageCodec.encode(e.getValue()));
      in.append("msg m-").append(e.getKey()).append(' ').append(hex).append('\n');
      expected.put("m-" + e.getKey(), hex);
    }
    // go-msgpack decodes an empty raw string into a nil slice, so Go's re-encoding of an empty payload is nil
    expected.put("m-ack-empty", Hex.of(MessageCodec.encode(new AckResp(255, null))));
    StreamCodec streams = new StreamCodec(PacketOptions.plain());
    for (Map.Entry<String, Message> e : javaStreams().entrySet()) {
      String hex = Hex.of(streams.encode(e.getValue(), false));
      in.append("stream s-").append(e.getKey()).append(' ').append(hex).append('\n');
      in.append("stream z-").append(e.getKey()).append(' ').append(Hex.of(streams.encode(e.getValue(), true)));
      in.append('\n');
      expected.put("s-" + e.getKey(), hex);
      expected.put("z-" + e.getKey(), hex);
    }
    // a Java-style alternative encoding (bin8, str8, int64, array Vsn, unknown key): Go reads it as the canonical alive
    in.append("msg lenient ")
        .append(
            "0487a356736e96010502000000a4506f7274d11f0aa441646472c4047f000001a44e6f6465d9026e31"
                + "ab496e6361726e6174696f6ed30000000000000001a7556e6b6e6f776e81a16192c0a3787878a44d657461c0")
        .append('\n');
    expected.put("lenient", Hex.of(MessageCodec.encode(new Alive(1, "n1", LO, 7946, null, VSN))));
    Random random = new Random(7);
    for (int size : new int[] {0, 1, 300, 5000, 70_000}) {
      byte[] data = new byte[size];
      for (int i = 0; i < size; i++) {
        data[i] = (byte) (random.nextInt(4) == 0 ? random.nextInt(256) : 'a' + i % 5);
      }
      in.append("lzw l-").append(size).append(' ').append(Hex.of(Lzw.compress(data))).append('\n');
      expected.put("l-" + size, Hex.of(data));
    }
    byte[] aad = utf8("blue");
    for (int version : new int[] {0, 1}) {
      for (int keySize : new int[] {16, 24, 32}) {
        byte[] key = new byte[keySize];
        random.nextBytes(key);
        byte[] plain = new byte[17 * keySize];
        random.nextBytes(plain);
        byte[] sealed = new Keyring(key).encrypt(version, plain, aad);
        String name = "e-" + version + "-" + keySize;
        in.append("encrypt ").append(name).append(' ').append(Hex.of(key)).append(' ').append(Hex.of(aad));
        in.append(' ').append(Hex.of(sealed)).append('\n');
        expected.put(name, Hex.of(plain));
      }
    }
    Map<String, String> answers = new HashMap<>();
    for (String line : GoPeer.run(in.toString(), "decode")) {
      String[] f = line.split(" ", -1);
      answers.put(f[0], f.length > 1 ? f[1] + (f.length > 2 ? " " + f[2] : "") : "");
    }
    assertThat(answers).containsExactlyInAnyOrderEntriesOf(expected);
  }

  @Test
  void decodesAndReencodesARealGoClusterTrafficByteForByte() throws Exception {
    assertTrafficReencodesByteForByte(GoPeer.run(null, "trace"));
  }

  /** Every packet and stream of a plain Go cluster trace decodes and re-encodes to the same bytes. */
  static void assertTrafficReencodesByteForByte(List<String> trace) throws Exception {
    PacketCodec packets = new PacketCodec(PacketOptions.plain());
    StreamCodec streams = new StreamCodec(PacketOptions.plain());
    Set<MessageType> seen = EnumSet.noneOf(MessageType.class);
    int packetCount = 0;
    for (String line : trace) {
      String[] f = line.split(" ");
      if (f[0].equals("packet")) {
        byte[] raw = Hex.bytes(f[3]);
        List<Message> msgs = packets.decode(raw);
        noteLayers(raw, seen);
        boolean crc = raw[0] == 12;
        List<byte[]> encoded = new ArrayList<>();
        for (Message m : msgs) {
          seen.add(m.type());
          encoded.add(MessageCodec.encode(m));
        }
        assertThat(Hex.of(packets.encode(encoded, crc, true))).as(line).isEqualTo(f[3]);
        packetCount++;
      } else {
        byte[] request = Hex.bytes(f[3]);
        Message req = streams.readInbound(new ByteArrayInputStream(request));
        seen.add(req.type());
        assertThat(Hex.of(streams.encode(req, request[0] == 9))).as(line).isEqualTo(f[3]);
        if (!f[4].equals("-")) {
          byte[] reply = Hex.bytes(f[4]);
          Message rep = streams.read(new ByteArrayInputStream(reply));
          seen.add(rep.type());
          assertThat(Hex.of(streams.encode(rep, reply[0] == 9))).as(line).isEqualTo(f[4]);
        }
      }
    }
    assertThat(packets.droppedCompoundParts()).isZero();
    assertThat(packets.truncatedCompoundParts()).isZero();
    assertThat(packetCount).isGreaterThan(50);
    assertThat(seen)
        .contains(
            MessageType.PING,
            MessageType.INDIRECT_PING,
            MessageType.ACK_RESP,
            MessageType.NACK_RESP,
            MessageType.ALIVE,
            MessageType.DEAD,
            MessageType.USER,
            MessageType.PUSH_PULL,
            MessageType.COMPOUND,
            MessageType.COMPRESS,
            MessageType.HAS_CRC);
  }

  private static void noteLayers(byte[] raw, Set<MessageType> seen) throws MalformedMessageException {
    int at = 0;
    byte[] buf = raw;
    if (buf[at] == 12) {
      seen.add(MessageType.HAS_CRC);
      at = 5;
    }
    if (buf[at] == 9) {
      seen.add(MessageType.COMPRESS);
      buf = PacketCodec.decompress(buf, at + 1, buf.length, new DecodeBudget(WireLimits.defaults()));
      at = 0;
    }
    if (buf[at] == 7) {
      seen.add(MessageType.COMPOUND);
    }
  }

  @Test
  void decryptsARealEncryptedGoClusterTraffic() throws Exception {
    List<String> trace = GoPeer.run(null, "trace", Hex.of(TRACE_KEY));
    PacketOptions options = new PacketOptions(new Keyring(TRACE_KEY), "", true, true);
    PacketCodec packets = new PacketCodec(options);
    StreamCodec streams = new StreamCodec(options);
    PacketCodec plainPackets = new PacketCodec(PacketOptions.plain());
    Set<MessageType> seen = EnumSet.noneOf(MessageType.class);
    int encryptedStreams = 0;
    for (String line : trace) {
      String[] f = line.split(" ");
      if (f[0].equals("packet")) {
        byte[] raw = Hex.bytes(f[3]);
        assertThat(raw[0]).as("encryption version").isEqualTo((byte) 1);
        for (Message m : packets.decode(raw)) {
          seen.add(m.type());
        }
        // inside the envelope, the plaintext re-encodes byte for byte
        byte[] plain = options.keyring().decrypt(raw, new byte[0]);
        List<byte[]> encoded = new ArrayList<>();
        for (Message m : plainPackets.decode(plain)) {
          encoded.add(MessageCodec.encode(m));
        }
        assertThat(Hex.of(plainPackets.encode(encoded, plain[0] == 12, true))).as(line).isEqualTo(Hex.of(plain));
      } else {
        byte[] request = Hex.bytes(f[3]);
        assertThat(request[0]).isEqualTo((byte) 10);
        seen.add(streams.readInbound(new ByteArrayInputStream(request)).type());
        if (!f[4].equals("-")) {
          seen.add(streams.read(new ByteArrayInputStream(Hex.bytes(f[4]))).type());
        }
        encryptedStreams++;
      }
    }
    assertThat(encryptedStreams).isGreaterThan(2);
    assertThat(seen).contains(MessageType.PING, MessageType.ACK_RESP, MessageType.ALIVE, MessageType.PUSH_PULL);
  }
}
