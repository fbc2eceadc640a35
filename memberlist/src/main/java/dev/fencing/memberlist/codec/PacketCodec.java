package dev.fencing.memberlist.codec;

import dev.fencing.memberlist.limits.Refusals;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The UDP packet pipeline of memberlist. Sending: one message as is or several as a compound
 * {@code [7][count][u16 lengths…][messages…]}, then LZW compression {@code [9]{Algo,Buf}} if it makes the packet
 * smaller, then {@code [12][crc32 BE]} when the peer understands it, then AES-GCM encryption
 * {@code [vsn][nonce][ct+tag]} (AAD = label), then the label header {@code [244][len][label]} outermost. Receiving
 * reverses it; compound and compressed parts nest recursively.
 *
 * <p>Label semantics are memberlist ≥ 0.3's: with a label configured, unlabelled or differently labelled packets
 * are rejected; without one, labelled packets are rejected. With {@link PacketOptions#skipInboundLabelCheck()} every
 * inbound packet must come without a label header and is decrypted with the configured label as associated data.
 *
 * <p>Decoding is bounded by {@link WireLimits}: the LZW output and the compound parts of one packet are drawn from
 * one allowance for the whole packet, and layers nest at most {@link WireLimits#maxNestingDepth()} deep; a packet
 * that exceeds any of them is dropped whole and counted in {@link Refusals}. Thread-safe.
 */
public final class PacketCodec {
  /** A compound message's part count is one byte. */
  public static final int MAX_COMPOUND_PARTS = 255;

  /**
   * Parts this node puts in one compound it sends: 127, not 255. memberlist before 0.2.4 (Debian's 0.2.2) computes
   * the offset of the first part as {@code numParts*2} in a uint8, so a compound of 128..255 parts is misread there
   * (its parts are taken from inside the length table, "Failed to decode ping request"). The Vsn of 0.2.2 and of
   * current releases is the same, so the cap applies to every peer; later versions read the smaller compounds as well.
   */
  public static final int MAX_SENT_COMPOUND_PARTS = 127;
  /** memberlist's {@code UDPBufferSize}: the usual packet budget. */
  public static final int UDP_BUFFER_SIZE = 1400;
  /** Bytes a compound message adds: type byte and count byte. */
  public static final int COMPOUND_HEADER_OVERHEAD = 2;
  /** Bytes a compound message adds per part: its u16 length. */
  public static final int COMPOUND_PART_OVERHEAD = 2;

  private static final Logger LOG = LoggerFactory.getLogger(PacketCodec.class);
  private static final int LABEL_HEADER = 2;

  private final PacketOptions options;
  private final WireLimits limits;
  private final Refusals refusals;
  private final byte[] label;
  private final AtomicLong truncatedParts = new AtomicLong();
  private final AtomicLong droppedParts = new AtomicLong();

  /** A codec with the default {@link WireLimits} and its own refusal counters. */
  public PacketCodec(PacketOptions options) {
    this(options, WireLimits.defaults(), new Refusals("", System::nanoTime));
  }

  /**
   * @param options keyring, label and verification settings
   * @param limits caps on what one packet may make this node allocate
   * @param refusals where packets refused by a cap are counted and logged (shared with the node's other codecs)
   */
  public PacketCodec(PacketOptions options, WireLimits limits, Refusals refusals) {
    this.options = options;
    this.limits = limits;
    this.refusals = refusals;
    this.label = options.labelBytes();
  }

  /** The options this codec was built with. */
  public PacketOptions options() {
    return options;
  }

  /**
   * Builds one packet from already encoded messages ({@link MessageCodec#encode}).
   *
   * @param encodedMessages 1..255 messages; one is sent as is, more as a compound
   * @param crc prefix a CRC32 (only for peers whose protocol max ≥ 5)
   * @param compress LZW-compress, kept only if smaller
   * @throws IllegalArgumentException for 0 or more than 255 messages, or a message over 65535 bytes in a compound
   */
  public byte[] encode(List<byte[]> encodedMessages, boolean crc, boolean compress) {
    if (encodedMessages.isEmpty()) {
      throw new IllegalArgumentException("a packet needs at least one message");
    }
    byte[] payload = encodedMessages.size() == 1 ? encodedMessages.get(0) : compound(encodedMessages);
    if (compress) {
      byte[] c = compressed(payload);
      if (c.length < payload.length) {
        payload = c;
      }
    }
    if (crc) {
      byte[] withCrc = new byte[payload.length + 5];
      withCrc[0] = (byte) MessageType.HAS_CRC.code();
      putU32(withCrc, 1, crc32(payload, 0, payload.length));
      System.arraycopy(payload, 0, withCrc, 5, payload.length);
      payload = withCrc;
    }
    if (options.encrypting()) {
      payload = options.keyring().encrypt(options.encryptionVersion(), payload, label);
    }
    if (label.length > 0) {
      byte[] labelled = new byte[LABEL_HEADER + label.length + payload.length];
      labelled[0] = (byte) MessageType.HAS_LABEL.code();
      labelled[1] = (byte) label.length;
      System.arraycopy(label, 0, labelled, LABEL_HEADER, label.length);
      System.arraycopy(payload, 0, labelled, LABEL_HEADER + label.length, payload.length);
      payload = labelled;
    }
    return payload;
  }

  /** Convenience for a single message. */
  public byte[] encode(Message m, boolean crc, boolean compress) {
    return encode(List.of(MessageCodec.encode(m)), crc, compress);
  }

  /**
   * Bytes the label and encryption layers add to every packet, to subtract from {@link #UDP_BUFFER_SIZE} when
   * filling a packet with broadcasts.
   */
  public int overhead() {
    int n = label.length > 0 ? LABEL_HEADER + label.length : 0;
    if (options.encrypting()) {
      n += options.encryptionVersion() == Keyring.VERSION_0 ? 45 : 29;
    }
    return n;
  }

  /**
   * Frames messages as one compound message {@code [7][count][u16 length…][message…]}.
   *
   * @throws IllegalArgumentException for more than 255 parts or a part longer than 65535 bytes
   */
  public static byte[] compound(List<byte[]> parts) {
    if (parts.size() > MAX_COMPOUND_PARTS) {
      throw new IllegalArgumentException(
          "a compound message holds at most 255 parts, got " + parts.size() + "; use splitCompound");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(compoundSize(parts));
    out.write(MessageType.COMPOUND.code());
    out.write(parts.size());
    for (byte[] p : parts) {
      if (p.length > 0xffff) {
        throw new IllegalArgumentException("compound part of " + p.length + " bytes exceeds 65535");
      }
      out.write(p.length >>> 8);
      out.write(p.length & 0xff);
    }
    for (byte[] p : parts) {
      out.write(p, 0, p.length);
    }
    return out.toByteArray();
  }

  /** Size of {@link #compound(List)} of these parts. */
  public static int compoundSize(List<byte[]> parts) {
    int n = COMPOUND_HEADER_OVERHEAD;
    for (byte[] p : parts) {
      n += COMPOUND_PART_OVERHEAD + p.length;
    }
    return n;
  }

  /**
   * Groups encoded messages, in order, into packets: each group has at most {@link #MAX_SENT_COMPOUND_PARTS}
   * messages and, sent as a compound
   * (or alone when it is a single message), takes at most {@code maxBytes}. A message too large for any packet
   * gets a group of its own. Pass each group to {@link #encode(List, boolean, boolean)}.
   */
  public static List<List<byte[]>> splitCompound(List<byte[]> messages, int maxBytes) {
    List<List<byte[]>> groups = new ArrayList<>();
    List<byte[]> current = new ArrayList<>();
    int size = COMPOUND_HEADER_OVERHEAD;
    for (byte[] m : messages) {
      int add = COMPOUND_PART_OVERHEAD + m.length;
      boolean fits =
          current.isEmpty()
              || (current.size() < MAX_SENT_COMPOUND_PARTS && size + add <= maxBytes && m.length <= 0xffff);
      if (!fits) {
        groups.add(current);
        current = new ArrayList<>();
        size = COMPOUND_HEADER_OVERHEAD;
      }
      current.add(m);
      size += add;
    }
    if (!current.isEmpty()) {
      groups.add(current);
    }
    return groups;
  }

  /**
   * Decodes a received packet into its messages (a compound yields several). A broken part inside a compound is
   * dropped and counted, as memberlist does, and the other parts are still returned; parts behind a truncated
   * length are dropped and counted in {@link #truncatedCompoundParts()}.
   *
   * @throws MalformedMessageException if the packet as a whole is unusable (label, decryption, CRC, framing)
   */
  public List<Message> decode(byte[] packet) throws MalformedMessageException {
    if (packet == null || packet.length == 0) {
      throw new MalformedMessageException("empty packet");
    }
    int from = 0;
    if ((packet[0] & 0xff) == MessageType.HAS_LABEL.code()) {
      if (packet.length < LABEL_HEADER) {
        throw new MalformedMessageException("label header truncated");
      }
      int len = packet[1] & 0xff;
      if (len == 0) {
        throw new MalformedMessageException("label header with an empty label");
      }
      if (packet.length < LABEL_HEADER + len) {
        throw new MalformedMessageException("label header declares " + len + " bytes, packet too short");
      }
      if (options.skipInboundLabelCheck()) {
        throw new MalformedMessageException(
            "packet carries a label header but inbound label checks are skipped (double label)");
      }
      byte[] got = Arrays.copyOfRange(packet, LABEL_HEADER, LABEL_HEADER + len);
      if (!Arrays.equals(got, label)) {
        throw new MalformedMessageException(
            label.length == 0
                ? "packet carries a label but this node has none configured"
                : "packet label does not match this node's label");
      }
      from = LABEL_HEADER + len;
    } else if (label.length > 0 && !options.skipInboundLabelCheck()) {
      throw new MalformedMessageException("packet has no label header but this node requires its label");
    }
    byte[] buf = Arrays.copyOfRange(packet, from, packet.length);
    if (options.keyring() != null) {
      try {
        buf = options.keyring().decrypt(buf, label);
      } catch (MalformedMessageException e) {
        if (options.verifyIncoming()) {
          throw new MalformedMessageException("packet decryption failed: " + e.getMessage(), e);
        }
      }
    }
    int start = 0;
    if (buf.length >= 5 && (buf[0] & 0xff) == MessageType.HAS_CRC.code()) {
      long expected = getU32(buf, 1);
      long actual = crc32(buf, 5, buf.length);
      if (expected != actual) {
        throw new MalformedMessageException(
            "CRC mismatch: header 0x" + Long.toHexString(expected) + ", computed 0x" + Long.toHexString(actual));
      }
      start = 5;
    }
    List<Message> out = new ArrayList<>();
    try {
      handle(buf, start, buf.length, out, 0, new DecodeBudget(limits));
    } catch (LimitExceededException e) {
      refusals.refused(e.limit(), e.getMessage());
      throw e;
    }
    return out;
  }

  private void handle(byte[] buf, int from, int to, List<Message> out, int depth, DecodeBudget budget)
      throws MalformedMessageException {
    budget.checkDepth(depth);
    if (from >= to) {
      throw new MalformedMessageException("missing message type byte");
    }
    int type = buf[from] & 0xff;
    if (type == MessageType.COMPOUND.code()) {
      handleCompound(buf, from + 1, to, out, depth, budget);
    } else if (type == MessageType.COMPRESS.code()) {
      byte[] plain = decompress(buf, from + 1, to, budget);
      handle(plain, 0, plain.length, out, depth + 1, budget);
    } else {
      out.add(MessageCodec.decode(from == 0 && to == buf.length ? buf : Arrays.copyOfRange(buf, from, to)));
    }
  }

  private void handleCompound(byte[] buf, int from, int to, List<Message> out, int depth, DecodeBudget budget)
      throws MalformedMessageException {
    if (from >= to) {
      throw new MalformedMessageException("compound message missing its part count");
    }
    int parts = buf[from] & 0xff;
    budget.takeParts(parts);
    int pos = from + 1;
    if (to - pos < parts * 2) {
      throw new MalformedMessageException("compound message truncated in its length table (" + parts + " parts)");
    }
    int[] lengths = new int[parts];
    for (int i = 0; i < parts; i++) {
      lengths[i] = ((buf[pos] & 0xff) << 8) | (buf[pos + 1] & 0xff);
      pos += 2;
    }
    for (int i = 0; i < parts; i++) {
      if (to - pos < lengths[i]) {
        int truncated = parts - i;
        truncatedParts.addAndGet(truncated);
        LOG.debug("event=compound_truncated parts={} truncated={}", parts, truncated);
        return;
      }
      try {
        handle(buf, pos, pos + lengths[i], out, depth + 1, budget);
      } catch (LimitExceededException e) {
        // the packet's allowance is spent: the remaining parts would only be refused one by one
        throw e;
      } catch (MalformedMessageException e) {
        droppedParts.incrementAndGet();
        LOG.debug("event=compound_part_dropped part={} reason=\"{}\"", i, e.getMessage());
      }
      pos += lengths[i];
    }
  }

  /** Compound parts dropped because the packet ended before them. */
  public long truncatedCompoundParts() {
    return truncatedParts.get();
  }

  /** Compound parts dropped because they did not decode. */
  public long droppedCompoundParts() {
    return droppedParts.get();
  }

  /** {@code [9]} followed by the msgpack {@code compress{Algo: 0, Buf: lzw(payload)}}. */
  static byte[] compressed(byte[] payload) {
    byte[] lzw = Lzw.compress(payload);
    ByteArrayOutputStream out = new ByteArrayOutputStream(lzw.length + 16);
    out.write(MessageType.COMPRESS.code());
    new MsgpackWriter(out).mapHeader(2).key("Algo").uint(0).key("Buf").bytes(lzw);
    return out.toByteArray();
  }

  /** Decodes the msgpack {@code compress} body in {@code buf[from..to)} and inflates it (never empty). */
  static byte[] decompress(byte[] buf, int from, int to, DecodeBudget budget) throws MalformedMessageException {
    try {
      return inflate(MsgpackReader.of(buf, from, to), budget);
    } catch (IOException e) {
      throw new MalformedMessageException("unexpected read failure: " + e.getMessage(), e);
    }
  }

  /** Reads a {@code compress} body from {@code r} and inflates it within {@code budget} (never empty). */
  static byte[] inflate(MsgpackReader r, DecodeBudget budget) throws MalformedMessageException, IOException {
    int n = r.readMapHeader("compress message");
    long algo = 0;
    byte[] data = null;
    for (int i = 0; i < n; i++) {
      switch (r.readKey("compress message")) {
        case "Algo" -> algo = r.readUint(0xff, "Algo");
        case "Buf" -> data = r.readBytes("Buf");
        default -> r.skipValue();
      }
    }
    if (algo != 0) {
      throw new MalformedMessageException("unknown compression algorithm " + algo + " (only 0 = LZW exists)");
    }
    byte[] plain = budget.decompress(data == null ? new byte[0] : data);
    if (plain.length == 0) {
      throw new MalformedMessageException("compressed message decompresses to nothing");
    }
    return plain;
  }

  static long crc32(byte[] buf, int from, int to) {
    CRC32 crc = new CRC32();
    crc.update(buf, from, to - from);
    return crc.getValue();
  }

  static void putU32(byte[] buf, int at, long v) {
    buf[at] = (byte) (v >>> 24);
    buf[at + 1] = (byte) (v >>> 16);
    buf[at + 2] = (byte) (v >>> 8);
    buf[at + 3] = (byte) v;
  }

  static long getU32(byte[] buf, int at) {
    return ((buf[at] & 0xffL) << 24) | ((buf[at + 1] & 0xffL) << 16) | ((buf[at + 2] & 0xffL) << 8) | (buf[at + 3] & 0xffL);
  }
}
