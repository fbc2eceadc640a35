package dev.fencing.agent.quorum;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

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
 * Version 3 (compact digest) has the fields of version 2, and its digest is
 *
 * <pre>
 * fingerprint i64, unitMillis u16, count u16, encoding u8, body: the rest of the message
 *   encoding 0: body = the ceil(count / 2) level bytes of version 2
 *   encoding 1: body = one raw DEFLATE stream (RFC 1951) of count bytes, one level (0..15) per byte
 * </pre>
 *
 * In a healthy group many levels are {@link ReachDigest#NONE} (entries the addressee already knows as fresh are
 * left out, see {@link QuorumEvaluator}) and the rest share a few values, so Huffman codes over single levels come
 * close to their entropy (about two bits a member); the encoder compresses with Huffman codes only (no string
 * matching: levels in member order do not repeat) and picks whichever encoding is shorter. A heartbeat uses
 * version 3 only when {@link Heartbeat#compactDigest()} says so (the evaluator decides per addressee: only agents
 * whose boot id reads it get it); it decodes to exactly the digest that was encoded, and a stream that is
 * truncated, inflates to more or fewer than {@code count} bytes, has a level above 15 or bytes after its end is
 * rejected whole ({@link MalformedHeartbeatException}); inflating never writes more than {@code count + 1} bytes. A heartbeat that wants an echo and has no digest is written as version 1, which
 * every agent version reads; all three versions are read (version 1 always wants an echo).
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
  /** The format with a compact (possibly compressed) reach digest. */
  static final int VERSION_COMPACT = 3;

  private static final int ENCODING_RAW = 0;
  private static final int ENCODING_DEFLATE = 1;

  private static final int DIGEST_FIXED_BYTES = Long.BYTES + 2 + 2;
  private static final int FLAG_DIGEST = 1;
  private static final int FLAG_WANTS_ECHO = 2;

  private static final int FIXED_BYTES = MAGIC.length + 1 + 1 + 1 + 4 * Long.BYTES;

  private HeartbeatCodec() {}

  /** Encodes {@code heartbeat}; names longer than {@link Heartbeat#MAX_NAME_BYTES} are rejected. */
  public static byte[] encode(Heartbeat heartbeat) {
    byte[] group = utf8(heartbeat.group(), "group");
    byte[] sender = utf8(heartbeat.sender(), "sender");
    ReachDigest digest = heartbeat.digest().orElse(null);
    boolean v2 = digest != null || !heartbeat.wantsEcho();
    boolean compact = heartbeat.compactDigest();
    byte[] body = digest == null ? null : digest.packed();
    int encoding = ENCODING_RAW;
    if (compact) {
      byte[] deflated = deflate(unpack(digest));
      if (deflated.length < body.length) {
        body = deflated;
        encoding = ENCODING_DEFLATE;
      }
    }
    int extraBytes = (v2 ? 1 : 0) + (digest == null ? 0 : DIGEST_FIXED_BYTES + (compact ? 1 : 0) + body.length);
    ByteBuffer out = ByteBuffer.allocate(FIXED_BYTES + group.length + sender.length + extraBytes);
    out.put(MAGIC);
    out.put((byte) (compact ? VERSION_COMPACT : v2 ? VERSION_DIGEST : VERSION));
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
      if (compact) {
        out.put((byte) encoding);
      }
      out.put(body);
    }
    return out.array();
  }

  private static byte[] unpack(ReachDigest digest) {
    byte[] levels = new byte[digest.count()];
    for (int i = 0; i < levels.length; i++) {
      levels[i] = (byte) digest.level(i);
    }
    return levels;
  }

  private static byte[] deflate(byte[] raw) {
    Deflater deflater = new Deflater(Deflater.BEST_COMPRESSION, true);
    deflater.setStrategy(Deflater.HUFFMAN_ONLY);
    try {
      deflater.setInput(raw);
      deflater.finish();
      // Incompressible input grows by a few bytes per 16 KB block; the raw encoding is used then.
      byte[] out = new byte[raw.length + 64];
      int length = 0;
      while (!deflater.finished() && length < out.length) {
        length += deflater.deflate(out, length, out.length - length);
      }
      return deflater.finished() ? Arrays.copyOf(out, length) : raw;
    } finally {
      deflater.end();
    }
  }

  private static byte[] inflate(ByteBuffer in, int rawLength) throws MalformedHeartbeatException {
    byte[] input = new byte[in.remaining()];
    in.get(input);
    Inflater inflater = new Inflater(true);
    try {
      inflater.setInput(input);
      // One byte more than expected: a stream that inflates to more than the digest is caught, never overruns.
      byte[] out = new byte[rawLength + 1];
      int length = 0;
      while (!inflater.finished() && length < out.length) {
        int n = inflater.inflate(out, length, out.length - length);
        if (n == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
          throw new MalformedHeartbeatException("heartbeat digest DEFLATE stream is truncated");
        }
        length += n;
      }
      if (!inflater.finished() || length > rawLength) {
        throw new MalformedHeartbeatException("heartbeat digest inflates to more than " + rawLength + " bytes");
      }
      if (length != rawLength) {
        throw new MalformedHeartbeatException("heartbeat digest inflates to " + length + " bytes, expected "
            + rawLength);
      }
      if (inflater.getRemaining() != 0) {
        throw new MalformedHeartbeatException(
            "heartbeat has " + inflater.getRemaining() + " trailing bytes after its DEFLATE stream");
      }
      return Arrays.copyOf(out, rawLength);
    } catch (DataFormatException e) {
      throw new MalformedHeartbeatException("heartbeat digest is not a valid DEFLATE stream: " + e.getMessage());
    } finally {
      inflater.end();
    }
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
          digest = Optional.of(readDigest(in, version == VERSION_COMPACT));
        }
      }
      if (in.hasRemaining()) {
        throw new MalformedHeartbeatException(
            "heartbeat has " + in.remaining() + " trailing bytes after its last field");
      }
      if (sender.isEmpty()) {
        throw new MalformedHeartbeatException("heartbeat sender name is empty");
      }
      if (senderBootId == Heartbeat.NO_ECHO) {
        throw new MalformedHeartbeatException("heartbeat sender boot id is 0");
      }
      return Optional.of(new Heartbeat(group, sender, senderBootId, sendNanos, echoBootId, echoNanos, digest,
          wantsEcho, version == VERSION_COMPACT));
    } catch (BufferUnderflowException e) {
      throw new MalformedHeartbeatException("heartbeat truncated at " + message.length + " bytes");
    }
  }

  private static ReachDigest readDigest(ByteBuffer in, boolean compact) throws MalformedHeartbeatException {
    long fingerprint = in.getLong();
    int unitMillis = Short.toUnsignedInt(in.getShort());
    int count = Short.toUnsignedInt(in.getShort());
    if (unitMillis == 0) {
      throw new MalformedHeartbeatException("heartbeat digest unit is 0 ms");
    }
    if (count > ReachDigest.MAX_MEMBERS) {
      throw new MalformedHeartbeatException("heartbeat digest describes " + count + " members, more than "
          + ReachDigest.MAX_MEMBERS);
    }
    int encoding = compact ? Byte.toUnsignedInt(in.get()) : ENCODING_RAW;
    byte[] packed;
    if (encoding == ENCODING_DEFLATE) {
      byte[] levels = inflate(in, count);
      packed = new byte[ReachDigest.packedLength(count)];
      for (int i = 0; i < count; i++) {
        if ((levels[i] & 0xFF) > ReachDigest.NONE) {
          throw new MalformedHeartbeatException("heartbeat digest level " + (levels[i] & 0xFF) + " of member " + i
              + " is not 0.." + ReachDigest.NONE);
        }
        ReachDigest.setLevel(packed, i, levels[i]);
      }
    } else if (encoding == ENCODING_RAW) {
      packed = new byte[ReachDigest.packedLength(count)];
      in.get(packed);
    } else {
      throw new MalformedHeartbeatException("heartbeat digest encoding " + encoding + " is unknown (0 = raw, 1 ="
          + " DEFLATE)");
    }
    return new ReachDigest(fingerprint, unitMillis, packed, count);
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
