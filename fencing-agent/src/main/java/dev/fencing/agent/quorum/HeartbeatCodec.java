package dev.fencing.agent.quorum;

import java.io.ByteArrayOutputStream;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Binary form of a {@link Heartbeat} inside a memberlist user message.
 *
 * <pre>
 * magic  "FQHB" (4 bytes)   so other user messages of the group are never mistaken for heartbeats
 * version u8 = 1
 * group   u8 length + UTF-8
 * sender  u8 length + UTF-8
 * senderBootId, sendNanos, echoBootId, echoNanos: 4 × i64 big-endian
 * </pre>
 *
 * Version 2 (relayed groups, {@link Overlay}) has the same fields followed by flags and an optional
 * {@link ReachDigest}:
 *
 * <pre>
 * flags u8: bit 0 = a digest follows, bit 1 = wants an echo; other bits must be 0
 * digest: fingerprint i64, unitMillis u16, count u16, levels: ceil(count / 2) bytes, two 4-bit levels per byte
 * </pre>
 *
 * Version 3 (compact) carries the same information in fewer bytes:
 *
 * <pre>
 * magic "FQHB", version u8 = 3
 * flags u8: bit 0 = a digest follows, bit 1 = wants an echo, bit 2 = an echo follows, bit 3 = wants a digest in
 *          the answer; other bits must be 0
 * group, sender: u8 length + UTF-8 each
 * senderBootId: 3 bytes, its low 24 bits (every version 3 boot id has the version 2 and 3 tags above them)
 * sendMillis: zigzag LEB128 varint (as protobuf's sint64), the send time in whole milliseconds
 * echo (flag bit 2): echoBootId 3 bytes as above, echoMillis zigzag varint
 * digest (flag bit 0): fingerprint i64, unitMillis varint (1..65535), count varint (0..4096), encoding u8, body
 *   encoding 0: the ceil(count / 2) level bytes of version 2
 *   encoding 1: 8 bytes of code lengths (level 2k in the high nibble of byte k, level 2k + 1 in the low one;
 *               0 = the level does not occur), then the count levels as canonical Huffman codes (assigned in
 *               order of length, then level, as DEFLATE does), most significant bit first, the last byte
 *               padded with 0 bits
 * </pre>
 *
 * Varints must be minimal (no trailing zero groups); unitMillis and count are plain (unsigned) LEB128. In a healthy
 * group many levels are {@link ReachDigest#NONE} (entries the addressee already knows as fresh are left out, see
 * {@link QuorumEvaluator}) and the rest share a few values, so Huffman codes over single levels come close to their
 * entropy (about two bits a member); an 8-byte code table costs less than half of a DEFLATE block header. The
 * encoder picks whichever encoding is shorter. A heartbeat uses version 3 only when {@link Heartbeat#compact()} says
 * so (the evaluator decides per addressee: only agents whose boot id reads it get it; the record rounds its times
 * down to whole milliseconds); it decodes to exactly the heartbeat that was encoded. A message that is truncated,
 * has an oversubscribed code table, a code that no level has, nonzero padding, a varint out of range or not
 * minimal, or bytes after its end is rejected whole ({@link MalformedHeartbeatException}). Otherwise a heartbeat
 * that wants an echo and has no digest is written as version 1, which every agent version reads, and one with a
 * digest or answering as version 2; all three versions are read (version 1 always wants an echo).
 *
 * Authentication comes from memberlist: with a gossip keyring every packet is AES-GCM sealed, so only key holders
 * can produce a heartbeat that decodes.
 */
public final class HeartbeatCodec {

  /** Identifies a heartbeat among the group's user messages. */
  static final byte[] MAGIC = {'F', 'Q', 'H', 'B'};

  /** The format without a digest; every agent version reads it. */
  static final int VERSION = 1;
  /** The format with a reach digest. */
  static final int VERSION_DIGEST = 2;
  /** The compact format. */
  static final int VERSION_COMPACT = 3;

  static final int ENCODING_RAW = 0;
  static final int ENCODING_HUFFMAN = 1;

  private static final int DIGEST_FIXED_BYTES = Long.BYTES + 2 + 2;
  private static final int FLAG_DIGEST = 1;
  private static final int FLAG_WANTS_ECHO = 2;
  private static final int FLAG_ECHO = 4;
  private static final int FLAG_WANTS_DIGEST = 8;

  private static final int FIXED_BYTES = MAGIC.length + 1 + 1 + 1 + 4 * Long.BYTES;

  /** Levels 0..15: the Huffman alphabet of a compact digest. */
  private static final int SYMBOLS = ReachDigest.NONE + 1;
  /** Longest code: a 16-symbol Huffman tree is at most 15 deep, and a length must fit a nibble. */
  private static final int MAX_CODE_BITS = 15;
  private static final int CODE_TABLE_BYTES = SYMBOLS / 2;
  private static final long BOOT_ID_LOW_MASK = 0xFF_FFFFL;
  private static final long NANOS_PER_MILLI = 1_000_000L;
  private static final long MAX_MILLIS = Long.MAX_VALUE / NANOS_PER_MILLI;

  private HeartbeatCodec() {}

  /** Encodes {@code heartbeat}; names longer than {@link Heartbeat#MAX_NAME_BYTES} are rejected. */
  public static byte[] encode(Heartbeat heartbeat) {
    byte[] group = utf8(heartbeat.group(), "group");
    byte[] sender = utf8(heartbeat.sender(), "sender");
    if (heartbeat.compact()) {
      return encodeCompact(heartbeat, group, sender);
    }
    ReachDigest digest = heartbeat.digest().orElse(null);
    boolean v2 = digest != null || !heartbeat.wantsEcho();
    byte[] body = digest == null ? null : digest.packed();
    int extraBytes = (v2 ? 1 : 0) + (digest == null ? 0 : DIGEST_FIXED_BYTES + body.length);
    ByteBuffer out = ByteBuffer.allocate(FIXED_BYTES + group.length + sender.length + extraBytes);
    out.put(MAGIC);
    out.put((byte) (v2 ? VERSION_DIGEST : VERSION));
    out.put((byte) group.length).put(group);
    out.put((byte) sender.length).put(sender);
    out.putLong(heartbeat.senderBootId());
    out.putLong(heartbeat.sendNanos());
    out.putLong(heartbeat.echoBootId());
    out.putLong(heartbeat.echoNanos());
    if (v2) {
      out.put((byte) ((digest != null ? FLAG_DIGEST : 0) | (heartbeat.wantsEcho() ? FLAG_WANTS_ECHO : 0)));
    }
    if (digest != null) {
      out.putLong(digest.fingerprint());
      out.putShort((short) digest.unitMillis());
      out.putShort((short) digest.count());
      out.put(body);
    }
    return out.array();
  }

  private static byte[] encodeCompact(Heartbeat heartbeat, byte[] group, byte[] sender) {
    ReachDigest digest = heartbeat.digest().orElse(null);
    ByteArrayOutputStream out = new ByteArrayOutputStream(64 + (digest == null ? 0 : digest.packed().length));
    out.writeBytes(MAGIC);
    out.write(VERSION_COMPACT);
    out.write((digest != null ? FLAG_DIGEST : 0) | (heartbeat.wantsEcho() ? FLAG_WANTS_ECHO : 0)
        | (heartbeat.hasEcho() ? FLAG_ECHO : 0) | (heartbeat.wantsDigest() ? FLAG_WANTS_DIGEST : 0));
    out.write(group.length);
    out.writeBytes(group);
    out.write(sender.length);
    out.writeBytes(sender);
    writeBootId(out, heartbeat.senderBootId());
    writeVarint(out, zigzag(heartbeat.sendNanos() / NANOS_PER_MILLI));
    if (heartbeat.hasEcho()) {
      writeBootId(out, heartbeat.echoBootId());
      writeVarint(out, zigzag(heartbeat.echoNanos() / NANOS_PER_MILLI));
    }
    if (digest != null) {
      for (int shift = 56; shift >= 0; shift -= 8) {
        out.write((int) (digest.fingerprint() >>> shift));
      }
      writeVarint(out, digest.unitMillis());
      writeVarint(out, digest.count());
      byte[] huffman = huffman(digest);
      if (huffman != null && huffman.length < digest.packed().length) {
        out.write(ENCODING_HUFFMAN);
        out.writeBytes(huffman);
      } else {
        out.write(ENCODING_RAW);
        out.writeBytes(digest.packed());
      }
    }
    return out.toByteArray();
  }

  private static void writeBootId(ByteArrayOutputStream out, long bootId) {
    out.write((int) (bootId >>> 16));
    out.write((int) (bootId >>> 8));
    out.write((int) bootId);
  }

  private static long zigzag(long value) {
    return (value << 1) ^ (value >> 63);
  }

  private static void writeVarint(ByteArrayOutputStream out, long value) {
    while ((value & ~0x7FL) != 0) {
      out.write((int) ((value & 0x7F) | 0x80));
      value >>>= 7;
    }
    out.write((int) value);
  }

  /**
   * The code table and Huffman-coded levels of {@code digest}, or null for an empty digest. Code lengths come from
   * a Huffman tree over the level counts, merging the two lightest subtrees (ties: the one holding the lower
   * level first), so equal digests always encode to equal bytes.
   */
  private static byte[] huffman(ReachDigest digest) {
    int count = digest.count();
    if (count == 0) {
      return null;
    }
    long[] weight = new long[SYMBOLS];
    for (int i = 0; i < count; i++) {
      weight[digest.level(i)]++;
    }
    int[] lengths = new int[SYMBOLS];
    // Each subtree: its weight, the lowest level in it (tie-break) and the levels in it as a bit set.
    long[] treeWeight = new long[SYMBOLS];
    int[] treeLowest = new int[SYMBOLS];
    int[] treeLevels = new int[SYMBOLS];
    int trees = 0;
    for (int level = 0; level < SYMBOLS; level++) {
      if (weight[level] > 0) {
        treeWeight[trees] = weight[level];
        treeLowest[trees] = level;
        treeLevels[trees] = 1 << level;
        trees++;
      }
    }
    if (trees == 1) {
      lengths[treeLowest[0]] = 1;
    }
    while (trees > 1) {
      int a = lightest(treeWeight, treeLowest, trees, -1);
      int b = lightest(treeWeight, treeLowest, trees, a);
      for (int level = 0; level < SYMBOLS; level++) {
        if (((treeLevels[a] | treeLevels[b]) & (1 << level)) != 0) {
          lengths[level]++;
        }
      }
      treeWeight[a] += treeWeight[b];
      treeLowest[a] = Math.min(treeLowest[a], treeLowest[b]);
      treeLevels[a] |= treeLevels[b];
      trees--;
      treeWeight[b] = treeWeight[trees];
      treeLowest[b] = treeLowest[trees];
      treeLevels[b] = treeLevels[trees];
    }
    int[] codes = canonicalCodes(lengths);
    long bits = 0;
    for (int level = 0; level < SYMBOLS; level++) {
      bits += weight[level] * lengths[level];
    }
    byte[] out = new byte[CODE_TABLE_BYTES + (int) ((bits + 7) / 8)];
    for (int level = 0; level < SYMBOLS; level += 2) {
      out[level / 2] = (byte) (lengths[level] << 4 | lengths[level + 1]);
    }
    long bitPosition = (long) CODE_TABLE_BYTES * 8;
    for (int i = 0; i < count; i++) {
      int level = digest.level(i);
      for (int bit = lengths[level] - 1; bit >= 0; bit--, bitPosition++) {
        if (((codes[level] >>> bit) & 1) != 0) {
          out[(int) (bitPosition >>> 3)] |= (byte) (0x80 >>> (bitPosition & 7));
        }
      }
    }
    return out;
  }

  private static int lightest(long[] weight, int[] lowest, int trees, int except) {
    int best = -1;
    for (int t = 0; t < trees; t++) {
      if (t != except && (best < 0 || weight[t] < weight[best]
          || weight[t] == weight[best] && lowest[t] < lowest[best])) {
        best = t;
      }
    }
    return best;
  }

  /** Canonical codes for the given lengths (0 = unused): shorter codes first, then lower levels. */
  private static int[] canonicalCodes(int[] lengths) {
    int[] perLength = new int[MAX_CODE_BITS + 1];
    for (int length : lengths) {
      if (length > 0) {
        perLength[length]++;
      }
    }
    int[] next = new int[MAX_CODE_BITS + 2];
    int code = 0;
    for (int bits = 1; bits <= MAX_CODE_BITS; bits++) {
      code = (code + perLength[bits - 1]) << 1;
      next[bits] = code;
    }
    int[] codes = new int[lengths.length];
    for (int level = 0; level < lengths.length; level++) {
      if (lengths[level] > 0) {
        codes[level] = next[lengths[level]]++;
      }
    }
    return codes;
  }

  /** True when {@code message} starts with the heartbeat magic (it may still be malformed). */
  public static boolean isHeartbeat(byte[] message) {
    if (message == null || message.length < MAGIC.length) {
      return false;
    }
    for (int i = 0; i < MAGIC.length; i++) {
      if (message[i] != MAGIC[i]) {
        return false;
      }
    }
    return true;
  }

  /**
   * Decodes a user message.
   *
   * @return empty when the message is not a heartbeat (no magic)
   * @throws MalformedHeartbeatException when it has the magic but a wrong version, length or content
   */
  public static Optional<Heartbeat> decode(byte[] message) throws MalformedHeartbeatException {
    if (!isHeartbeat(message)) {
      return Optional.empty();
    }
    try {
      ByteBuffer in = ByteBuffer.wrap(message);
      in.position(MAGIC.length);
      int version = Byte.toUnsignedInt(in.get());
      if (version != VERSION && version != VERSION_DIGEST && version != VERSION_COMPACT) {
        throw new MalformedHeartbeatException("heartbeat version " + version + " is not supported (this agent"
            + " speaks versions " + VERSION + " to " + VERSION_COMPACT + ")");
      }
      if (version == VERSION_COMPACT) {
        return Optional.of(decodeCompact(in));
      }
      String group = readName(in, "group");
      String sender = readName(in, "sender");
      long senderBootId = in.getLong();
      long sendNanos = in.getLong();
      long echoBootId = in.getLong();
      long echoNanos = in.getLong();
      Optional<ReachDigest> digest = Optional.empty();
      boolean wantsEcho = true;
      if (version != VERSION) {
        int flags = Byte.toUnsignedInt(in.get());
        if ((flags & ~(FLAG_DIGEST | FLAG_WANTS_ECHO)) != 0) {
          throw new MalformedHeartbeatException("heartbeat flags 0x" + Integer.toHexString(flags)
              + " have unknown bits set");
        }
        wantsEcho = (flags & FLAG_WANTS_ECHO) != 0;
        if ((flags & FLAG_DIGEST) != 0) {
          digest = Optional.of(readDigest(in));
        }
      }
      expectEnd(in);
      if (sender.isEmpty()) {
        throw new MalformedHeartbeatException("heartbeat sender name is empty");
      }
      if (senderBootId == Heartbeat.NO_ECHO) {
        throw new MalformedHeartbeatException("heartbeat sender boot id is 0");
      }
      return Optional.of(new Heartbeat(group, sender, senderBootId, sendNanos, echoBootId, echoNanos, digest,
          wantsEcho));
    } catch (BufferUnderflowException e) {
      throw new MalformedHeartbeatException("heartbeat truncated at " + message.length + " bytes");
    }
  }

  private static void expectEnd(ByteBuffer in) throws MalformedHeartbeatException {
    if (in.hasRemaining()) {
      throw new MalformedHeartbeatException(
          "heartbeat has " + in.remaining() + " trailing bytes after its last field");
    }
  }

  private static Heartbeat decodeCompact(ByteBuffer in) throws MalformedHeartbeatException {
    int flags = Byte.toUnsignedInt(in.get());
    if ((flags & ~(FLAG_DIGEST | FLAG_WANTS_ECHO | FLAG_ECHO | FLAG_WANTS_DIGEST)) != 0) {
      throw new MalformedHeartbeatException("heartbeat flags 0x" + Integer.toHexString(flags)
          + " have unknown bits set");
    }
    String group = readName(in, "group");
    String sender = readName(in, "sender");
    if (sender.isEmpty()) {
      throw new MalformedHeartbeatException("heartbeat sender name is empty");
    }
    long senderBootId = readBootId(in);
    long sendNanos = readMillis(in, "send time") * NANOS_PER_MILLI;
    long echoBootId = Heartbeat.NO_ECHO;
    long echoNanos = 0;
    if ((flags & FLAG_ECHO) != 0) {
      echoBootId = readBootId(in);
      echoNanos = readMillis(in, "echo time") * NANOS_PER_MILLI;
    }
    Optional<ReachDigest> digest = Optional.empty();
    if ((flags & FLAG_DIGEST) != 0) {
      long fingerprint = in.getLong();
      long unitMillis = readVarint(in, "digest unit");
      long count = readVarint(in, "digest count");
      digest = Optional.of(readLevels(in, fingerprint, unitMillis, count, Byte.toUnsignedInt(in.get())));
    }
    expectEnd(in);
    return new Heartbeat(group, sender, senderBootId, sendNanos, echoBootId, echoNanos, digest,
        (flags & FLAG_WANTS_ECHO) != 0, true, (flags & FLAG_WANTS_DIGEST) != 0);
  }

  /** A version 3 boot id: the low 24 bits from the wire under the tags every version 3 agent's boot id has. */
  private static long readBootId(ByteBuffer in) {
    long low = (Byte.toUnsignedLong(in.get()) << 16) | (Byte.toUnsignedLong(in.get()) << 8)
        | Byte.toUnsignedLong(in.get());
    return (Heartbeat.DIGEST_CAPABLE_TAG << 40) | (Heartbeat.COMPACT_CAPABLE_TAG << 24) | (low & BOOT_ID_LOW_MASK);
  }

  private static long readMillis(ByteBuffer in, String field) throws MalformedHeartbeatException {
    long zigzag = readVarint(in, field);
    long millis = (zigzag >>> 1) ^ -(zigzag & 1);
    if (Math.abs(millis) > MAX_MILLIS) {
      throw new MalformedHeartbeatException("heartbeat " + field + " " + millis + " ms is beyond ±" + MAX_MILLIS
          + " ms");
    }
    return millis;
  }

  /** An unsigned LEB128 varint of at most 63 bits, minimally encoded. */
  private static long readVarint(ByteBuffer in, String field) throws MalformedHeartbeatException {
    long value = 0;
    for (int shift = 0; shift < 63; shift += 7) {
      int b = Byte.toUnsignedInt(in.get());
      if (shift == 56 && b > 0x7F) {
        throw new MalformedHeartbeatException("heartbeat " + field + " varint is longer than 63 bits");
      }
      value |= (long) (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        if (b == 0 && shift > 0) {
          throw new MalformedHeartbeatException("heartbeat " + field + " varint is not minimal");
        }
        return value;
      }
    }
    throw new MalformedHeartbeatException("heartbeat " + field + " varint is longer than 63 bits");
  }

  private static ReachDigest readLevels(ByteBuffer in, long fingerprint, long unitMillis, long count,
      int encoding) throws MalformedHeartbeatException {
    checkDigestHeader(unitMillis, count);
    int members = (int) count;
    byte[] packed = new byte[ReachDigest.packedLength(members)];
    if (encoding == ENCODING_RAW) {
      in.get(packed);
    } else if (encoding == ENCODING_HUFFMAN) {
      readHuffman(in, packed, members);
    } else {
      throw new MalformedHeartbeatException("heartbeat digest encoding " + encoding + " is unknown (0 = raw, 1 ="
          + " Huffman)");
    }
    return new ReachDigest(fingerprint, (int) unitMillis, packed, members);
  }

  private static void checkDigestHeader(long unitMillis, long count) throws MalformedHeartbeatException {
    if (unitMillis == 0 || unitMillis > 0xFFFF) {
      throw new MalformedHeartbeatException("heartbeat digest unit is " + unitMillis + " ms, not 1..65535");
    }
    if (count > ReachDigest.MAX_MEMBERS) {
      throw new MalformedHeartbeatException("heartbeat digest describes " + count + " members, more than "
          + ReachDigest.MAX_MEMBERS);
    }
  }

  /** Reads the code table and {@code count} canonical Huffman codes into {@code packed}, then the padding. */
  private static void readHuffman(ByteBuffer in, byte[] packed, int count) throws MalformedHeartbeatException {
    int[] lengths = new int[SYMBOLS];
    for (int level = 0; level < SYMBOLS; level += 2) {
      int b = Byte.toUnsignedInt(in.get());
      lengths[level] = b >>> 4;
      lengths[level + 1] = b & 0xF;
    }
    // Kraft: the codes must fit a binary tree (an incomplete one is allowed; its unused codes are rejected below).
    int[] perLength = new int[MAX_CODE_BITS + 1];
    long kraft = 0;
    for (int length : lengths) {
      if (length > 0) {
        perLength[length]++;
        kraft += 1L << (MAX_CODE_BITS - length);
      }
    }
    if (kraft == 0 || kraft > 1L << MAX_CODE_BITS) {
      throw new MalformedHeartbeatException("heartbeat digest code table is " + (kraft == 0 ? "empty"
          : "oversubscribed"));
    }
    // Levels in canonical order: by code length, then level.
    int[] ordered = new int[SYMBOLS];
    int used = 0;
    for (int bits = 1; bits <= MAX_CODE_BITS; bits++) {
      for (int level = 0; level < SYMBOLS; level++) {
        if (lengths[level] == bits) {
          ordered[used++] = level;
        }
      }
    }
    int current = 0;
    int bitsLeft = 0;
    for (int i = 0; i < count; i++) {
      int code = 0;
      int first = 0;
      int index = 0;
      int level = -1;
      for (int bits = 1; bits <= MAX_CODE_BITS; bits++) {
        if (bitsLeft == 0) {
          current = Byte.toUnsignedInt(in.get());
          bitsLeft = 8;
        }
        code |= (current >>> --bitsLeft) & 1;
        if (code - first < perLength[bits]) {
          level = ordered[index + code - first];
          break;
        }
        index += perLength[bits];
        first = (first + perLength[bits]) << 1;
        code <<= 1;
      }
      if (level < 0) {
        throw new MalformedHeartbeatException("heartbeat digest has a code no level has, at member " + i);
      }
      ReachDigest.setLevel(packed, i, level);
    }
    if ((current & ((1 << bitsLeft) - 1)) != 0) {
      throw new MalformedHeartbeatException("heartbeat digest padding bits are not 0");
    }
  }

  private static ReachDigest readDigest(ByteBuffer in) throws MalformedHeartbeatException {
    long fingerprint = in.getLong();
    int unitMillis = Short.toUnsignedInt(in.getShort());
    int count = Short.toUnsignedInt(in.getShort());
    return readLevels(in, fingerprint, unitMillis, count, ENCODING_RAW);
  }

  private static String readName(ByteBuffer in, String field) throws MalformedHeartbeatException {
    int length = Byte.toUnsignedInt(in.get());
    if (length > Heartbeat.MAX_NAME_BYTES) {
      throw new MalformedHeartbeatException("heartbeat " + field + " is " + length + " bytes, longer than "
          + Heartbeat.MAX_NAME_BYTES);
    }
    byte[] bytes = new byte[length];
    in.get(bytes);
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw new MalformedHeartbeatException("heartbeat " + field + " is not valid UTF-8");
    }
  }

  private static byte[] utf8(String value, String field) {
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    if (bytes.length > Heartbeat.MAX_NAME_BYTES) {
      throw new IllegalArgumentException("heartbeat " + field + " '" + value + "' is " + bytes.length
          + " bytes; names are limited to " + Heartbeat.MAX_NAME_BYTES);
    }
    return bytes;
  }
}
