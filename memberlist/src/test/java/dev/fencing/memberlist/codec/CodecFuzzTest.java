package dev.fencing.memberlist.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * Robustness of every decoder against hostile input: random bytes and mutations of valid packets and streams
 * (bit flips, truncation, insertions, huge declared lengths, splices, wrong types, bad UTF-8, deep nesting). The only
 * thing allowed to escape is {@link MalformedMessageException} (plus {@link IOException} for streams), and each
 * decode must allocate a bounded amount of memory. Seeds are fixed; jqwik prints the seed and the shrunk input of a
 * failure.
 */
class CodecFuzzTest {
  private static final byte[] KEY = new byte[16];
  private static final PacketOptions KEYED = new PacketOptions(new Keyring(KEY), "", true, true);
  private static final PacketOptions LABELLED = new PacketOptions(new Keyring(KEY), "blue", true, true);
  private static final List<PacketCodec> PACKET_CODECS =
      List.of(new PacketCodec(PacketOptions.plain()), new PacketCodec(KEYED), new PacketCodec(LABELLED));
  private static final List<StreamCodec> STREAM_CODECS =
      List.of(new StreamCodec(PacketOptions.plain()), new StreamCodec(KEYED), new StreamCodec(LABELLED));
  /** Decompression may legitimately produce up to its cap; nothing else comes close. */
  private static final long ALLOCATION_BOUND = 2L * WireLimits.DEFAULT_MAX_DECOMPRESSED_BYTES + (8 << 20);

  private static final List<byte[]> PACKET_CORPUS = packetCorpus();
  private static final List<byte[]> STREAM_CORPUS = streamCorpus();

  private static List<byte[]> packetCorpus() {
    List<byte[]> singles = new ArrayList<>();
    for (Message m : GoGoldenTest.javaMessages().values()) {
      byte[] encoded = MessageCodec.encode(m);
      if (encoded.length < 2000) {
        singles.add(encoded);
      }
    }
    PacketCodec plain = new PacketCodec(PacketOptions.plain());
    List<byte[]> corpus = new ArrayList<>(singles);
    corpus.add(plain.encode(singles.subList(0, 6), false, false));
    corpus.add(plain.encode(singles.subList(5, 15), true, true));
    corpus.add(plain.encode(List.of(singles.get(15)), true, true));
    corpus.add(PacketCodec.compound(List.of(PacketCodec.compound(singles.subList(0, 3)), singles.get(4))));
    corpus.add(PacketCodec.compressed(PacketCodec.compound(singles.subList(2, 9))));
    return corpus;
  }

  private static List<byte[]> streamCorpus() {
    StreamCodec plain = new StreamCodec(PacketOptions.plain());
    List<byte[]> corpus = new ArrayList<>();
    for (Message m : GoGoldenTest.javaStreams().values()) {
      corpus.add(plain.encode(m, false));
      corpus.add(plain.encode(m, true));
    }
    return corpus;
  }

  // --- allocation accounting ---

  static {
    // first calls load classes and charset/locale data; keep that one-time cost out of the per-decode measurement
    for (byte[] seed : PACKET_CORPUS) {
      for (int cut = 0; cut < seed.length; cut += 7) {
        byte[] input = Arrays.copyOf(seed, cut);
        Decode[] all = {() -> MessageCodec.decode(input), () -> PACKET_CODECS.get(1).decode(input)};
        for (Decode d : all) {
          try {
            d.run();
          } catch (Exception expected) {
            // warm-up only
          }
        }
      }
    }
  }

  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  private interface Decode {
    void run() throws Exception;
  }

  /** As {@link #bounded(byte[], boolean, long, Decode)} with the bound for decoders that may decompress. */
  private static void bounded(byte[] input, boolean ioAllowed, Decode d) {
    bounded(input, ioAllowed, ALLOCATION_BOUND, d);
  }

  /** Runs {@code d}, allowing only the given exception types, and checks it allocated less than {@code limit}. */
  private static void bounded(byte[] input, boolean ioAllowed, long limit, Decode d) {
    long tid = Thread.currentThread().getId();
    long before = THREADS.getThreadAllocatedBytes(tid);
    String problem = "ok";
    try {
      d.run();
    } catch (MalformedMessageException expected) {
      problem = expected.getMessage();
    } catch (IOException e) {
      if (!ioAllowed) {
        throw new AssertionError("unexpected IOException for " + Hex.of(input), e);
      }
    } catch (Exception | Error e) {
      throw new AssertionError("decoder leaked " + e + " for input " + Hex.of(input), e);
    }
    long allocated = THREADS.getThreadAllocatedBytes(tid) - before;
    assertThat(problem).as("a malformed-input report says what was wrong").isNotBlank();
    assertThat(allocated).as("bytes allocated decoding %d input bytes", input.length).isLessThan(limit);
  }

  private static void decodeEverywhere(byte[] input) {
    // without decompression, decoding costs a small multiple of the input, whatever lengths it declares
    bounded(input, false, (256 << 10) + 16L * input.length, () -> MessageCodec.decode(input));
    for (PacketCodec codec : PACKET_CODECS) {
      bounded(input, false, () -> codec.decode(input));
    }
    for (StreamCodec codec : STREAM_CODECS) {
      bounded(input, true, () -> codec.read(new ByteArrayInputStream(input)));
      bounded(input, true, () -> codec.readInbound(new ByteArrayInputStream(input)));
    }
    bounded(input, false, 8L << 20, () -> Lzw.decompress(input, 1 << 20));
  }

  // --- mutations ---

  private record Mutation(int kind, int position, int value) {}

  @Provide
  Arbitrary<List<Mutation>> mutations() {
    Arbitrary<Mutation> one =
        Combinators.combine(
                Arbitraries.integers().between(0, 6),
                Arbitraries.integers().between(0, 100_000),
                Arbitraries.integers().between(0, 255))
            .as(Mutation::new);
    return one.list().ofMinSize(1).ofMaxSize(4);
  }

  static byte[] mutate(byte[] original, List<Mutation> mutations) {
    byte[] b = original.clone();
    for (Mutation m : mutations) {
      if (b.length == 0) {
        b = new byte[] {(byte) m.value()};
        continue;
      }
      int at = m.position() % b.length;
      switch (m.kind()) {
        case 0 -> b[at] ^= (byte) (1 << (m.value() & 7));
        case 1 -> b[at] = (byte) m.value();
        case 2 -> b = Arrays.copyOf(b, at);
        case 3 -> {
          byte[] n = new byte[b.length + 1];
          System.arraycopy(b, 0, n, 0, at);
          n[at] = (byte) m.value();
          System.arraycopy(b, at, n, at + 1, b.length - at);
          b = n;
        }
        case 4 -> {
          // a huge declared length: str32/map32/array32 markers followed by 0xffffffff
          int[] markers = {0xdb, 0xdf, 0xdd, 0xc6, 0xce};
          b[at] = (byte) markers[m.value() % markers.length];
          for (int i = 1; i <= 4 && at + i < b.length; i++) {
            b[at + i] = (byte) 0xff;
          }
        }
        case 5 -> {
          // invalid UTF-8 / wrong-type bytes in place of a value
          int[] junk = {0xc1, 0xc3, 0xff, 0xa2, 0x80, 0xc0, 0xd9, 0x9f};
          b[at] = (byte) junk[m.value() % junk.length];
        }
        default -> {
          // splice the tail onto itself (duplicated or shifted structure)
          byte[] n = Arrays.copyOf(b, b.length + (b.length - at));
          System.arraycopy(b, at, n, b.length, b.length - at);
          b = n;
        }
      }
    }
    return b;
  }

  @Property(tries = 5000, seed = "20261122")
  void mutatedPacketsOnlyFailCleanly(
      @ForAll @IntRange(min = 0, max = 1000) int pick, @ForAll("mutations") List<Mutation> mutations) {
    byte[] input = mutate(PACKET_CORPUS.get(pick % PACKET_CORPUS.size()), mutations);
    decodeEverywhere(input);
    // also behind valid outer layers, so the mutation reaches the inner decoders of keyed/labelled codecs
    byte[] sealed = new PacketCodec(LABELLED).encode(List.of(input.length == 0 ? new byte[] {0} : input), false, false);
    bounded(sealed, false, () -> PACKET_CODECS.get(2).decode(sealed));
  }

  @Property(tries = 3000, seed = "20261123")
  void mutatedStreamsOnlyFailCleanly(
      @ForAll @IntRange(min = 0, max = 1000) int pick, @ForAll("mutations") List<Mutation> mutations) {
    byte[] input = mutate(STREAM_CORPUS.get(pick % STREAM_CORPUS.size()), mutations);
    decodeEverywhere(input);
  }

  @Property(tries = 2000, seed = "20261124")
  void randomBytesOnlyFailCleanly(@ForAll @Size(max = 300) byte[] input) {
    decodeEverywhere(input);
    for (int type : new int[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 244}) {
      byte[] typed = new byte[input.length + 1];
      typed[0] = (byte) type;
      System.arraycopy(input, 0, typed, 1, input.length);
      decodeEverywhere(typed);
    }
  }

  @Property(tries = 60, seed = "20261125")
  void deepNestingIsRefusedNotOverflowed(@ForAll @IntRange(min = 1, max = 400) int depth, @ForAll boolean compress) {
    byte[] inner = MessageCodec.encode(new NackResp(7));
    for (int i = 0; i < depth; i++) {
      inner = compress && i % 3 == 0 && i < 30 ? PacketCodec.compressed(inner) : PacketCodec.compound(List.of(inner));
    }
    byte[] packet = inner;
    PacketCodec codec = new PacketCodec(PacketOptions.plain());
    bounded(packet, false, () -> {
      List<Message> out = codec.decode(packet);
      assertThat(out).allMatch(m -> m instanceof NackResp);
    });
    // nested msgpack containers inside an unknown field
    byte[] nested = new byte[depth + 16];
    nested[0] = 11;
    nested[1] = (byte) 0x81;
    nested[2] = (byte) 0xa1;
    nested[3] = 'X';
    Arrays.fill(nested, 4, nested.length, (byte) 0x91);
    bounded(nested, false, () -> MessageCodec.decode(nested));
  }

  /** One LZW bomb: a user message of 600 KiB of zeros in about 5 KiB; two of them exceed the packet budget. */
  private static final byte[] BOMB = PacketCodec.compressed(MessageCodec.encode(new UserMsg(new byte[600 << 10])));

  @Property(tries = 40, seed = "20261128")
  void nestedLzwBombsStayWithinOnePacketsBudget(
      @ForAll @IntRange(min = 2, max = 40) int width,
      @ForAll @IntRange(min = 1, max = 3) int depth,
      @ForAll boolean compressLayers) {
    // a tree of compounds (optionally compressed) whose leaves each inflate to 600 KiB: up to 40^3 leaves
    byte[] layer = BOMB;
    // LZW does not shrink LZW output, so every layer multiplies the size: keep the packet a datagram (64 KiB)
    int parts = width;
    while (parts > 2 && Math.pow(parts, depth) * (BOMB.length + 2) > 45_000) {
      parts--;
    }
    for (int i = 0; i < depth; i++) {
      byte[] compound = PacketCodec.compound(java.util.Collections.nCopies(parts, layer));
      layer = compressLayers ? PacketCodec.compressed(compound) : compound;
    }
    byte[] packet = layer;
    assertThat(packet.length).isLessThan(65_536);
    PacketCodec codec = PACKET_CODECS.get(0);
    // the whole packet may inflate to maxDecompressedBytes once, whatever its shape; then it is refused
    bounded(packet, false, () -> codec.decode(packet));
    assertThatThrownBy(() -> codec.decode(packet)).isInstanceOf(LimitExceededException.class);
  }

  @Property(tries = 300, seed = "20261126")
  void lzwRoundTripsArbitraryData(@ForAll @Size(max = 20_000) byte[] data, @ForAll @IntRange(min = 1, max = 8) int alphabet) {
    // small alphabets make long matches and dictionary resets; full bytes exercise literals
    byte[] shaped = data.clone();
    for (int i = 0; i < shaped.length; i++) {
      shaped[i] = (byte) Math.floorMod(shaped[i], alphabet == 8 ? 256 : alphabet);
    }
    try {
      assertThat(Lzw.decompress(Lzw.compress(shaped), shaped.length)).isEqualTo(shaped);
    } catch (MalformedMessageException e) {
      throw new AssertionError(e);
    }
  }

  @Property(tries = 400, seed = "20261127")
  void randomMessagesRoundTripByteForByte(@ForAll("messages") Message m) throws Exception {
    byte[] encoded = MessageCodec.encode(m);
    assertThat(MessageCodec.encode(MessageCodec.decode(encoded))).isEqualTo(encoded);
    PacketCodec codec = new PacketCodec(LABELLED);
    byte[] packet = codec.encode(List.of(encoded, encoded), true, true);
    List<Message> back = codec.decode(packet);
    assertThat(back).hasSize(2);
    assertThat(MessageCodec.encode(back.get(1))).isEqualTo(encoded);
  }

  @Provide
  Arbitrary<Message> messages() {
    Arbitrary<Long> u32 = Arbitraries.longs().between(0, 0xffffffffL);
    Arbitrary<Integer> u16 = Arbitraries.integers().between(0, 0xffff);
    Arbitrary<String> names = Arbitraries.strings().ofMaxLength(80);
    Arbitrary<byte[]> bytes = Arbitraries.bytes().array(byte[].class).ofMaxSize(600).injectNull(0.2);
    return Arbitraries.oneOf(
        Combinators.combine(u32, names, bytes, u16, names.injectNull(0.3)).as(Ping::new),
        Combinators.combine(u32, bytes, u16, names, Arbitraries.of(true, false), bytes, u16, names.injectNull(0.3))
            .as(IndirectPingReq::new),
        Combinators.combine(u32, bytes).as(AckResp::new),
        u32.map(NackResp::new),
        names.map(ErrResp::new),
        Combinators.combine(u32, names, names).as(Suspect::new),
        Combinators.combine(u32, names, names).as(Dead::new),
        Combinators.combine(u32, names, bytes, u16, bytes, bytes).as(Alive::new),
        Arbitraries.bytes().array(byte[].class).ofMaxSize(600).map(UserMsg::new));
  }

  /** Keeps the fuzz corpus honest: every seed input decodes cleanly before it is mutated. */
  @Property(tries = 1, seed = "1")
  void corpusIsValid() throws Exception {
    PacketCodec plain = PACKET_CODECS.get(0);
    for (byte[] p : PACKET_CORPUS) {
      assertThat(plain.decode(p)).isNotEmpty();
    }
    for (byte[] s : STREAM_CORPUS) {
      assertThat(STREAM_CODECS.get(0).read(new ByteArrayInputStream(s))).isNotNull();
    }
    assertThat(new Random(1).nextInt()).isNotZero();
  }
}
