package dev.fencing.agent.quorum;

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
 * A heartbeat that wants an echo and has no digest is written as version 1, which every agent version reads; both
 * versions are read (version 1 always wants an echo).
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
    int extraBytes = (v2 ? 1 : 0) + (digest == null ? 0 : DIGEST_FIXED_BYTES + digest.packed().length);
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
      out.put(digest.packed());
    }
    return out.array();
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
      if (version != VERSION && version != VERSION_DIGEST) {
        throw new MalformedHeartbeatException("heartbeat version " + version + " is not supported (this agent"
            + " speaks versions " + VERSION + " and " + VERSION_DIGEST + ")");
      }
      String group = readName(in, "group");
      String sender = readName(in, "sender");
      long senderBootId = in.getLong();
      long sendNanos = in.getLong();
      long echoBootId = in.getLong();
      long echoNanos = in.getLong();
      Optional<ReachDigest> digest = Optional.empty();
      boolean wantsEcho = true;
      if (version == VERSION_DIGEST) {
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
          wantsEcho));
    } catch (BufferUnderflowException e) {
      throw new MalformedHeartbeatException("heartbeat truncated at " + message.length + " bytes");
    }
  }

  private static ReachDigest readDigest(ByteBuffer in) throws MalformedHeartbeatException {
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
    byte[] packed = new byte[ReachDigest.packedLength(count)];
    in.get(packed);
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
