package dev.fencing.agent.membership;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a node announces in its gossip metadata: its addresses per network and the {@code isolated} flag of the
 * Exclude policy. Compact binary (memberlist allows 512 bytes):
 *
 * <pre>
 * 'F' 0x01  flags(u8: bit0 isolated)  count(u8)  count × (u8 key length, key UTF-8, u8 value length, value UTF-8)
 * </pre>
 *
 * @param addresses network name → address
 * @param isolated the node lost quorum under Exclude: every agent that hears it reports it LEFT
 */
public record NodeMeta(Map<String, String> addresses, boolean isolated) {

  /** memberlist's metadata limit. */
  public static final int MAX_BYTES = 512;

  /** A node that announced nothing (e.g. a plain memberlist peer). */
  public static final NodeMeta EMPTY = new NodeMeta(Map.of(), false);

  private static final int MAGIC = 'F';
  private static final int VERSION = 1;

  public NodeMeta {
    addresses = Collections.unmodifiableMap(new TreeMap<>(addresses));
  }

  /** A copy with the isolated flag set or cleared. */
  public NodeMeta withIsolated(boolean value) {
    return new NodeMeta(addresses, value);
  }

  /** Encodes; entries longer than 255 bytes or more than 255 entries are refused. */
  public byte[] encode() {
    if (addresses.size() > 255) {
      throw new IllegalArgumentException("at most 255 addresses fit in node metadata, got " + addresses.size());
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(MAGIC);
    out.write(VERSION);
    out.write(isolated ? 1 : 0);
    out.write(addresses.size());
    for (Map.Entry<String, String> e : addresses.entrySet()) {
      writeString(out, e.getKey());
      writeString(out, e.getValue());
    }
    return out.toByteArray();
  }

  /**
   * Decodes metadata received from gossip.
   *
   * @return {@link #EMPTY} for empty metadata
   * @throws IllegalArgumentException when it is not this format (the caller logs it and treats the node as EMPTY)
   */
  public static NodeMeta decode(byte[] meta) {
    if (meta == null || meta.length == 0) {
      return EMPTY;
    }
    if (meta.length < 4 || meta[0] != MAGIC || meta[1] != VERSION) {
      throw new IllegalArgumentException("node metadata is not fencing-agent metadata version " + VERSION);
    }
    boolean isolated = (meta[2] & 1) != 0;
    int count = Byte.toUnsignedInt(meta[3]);
    Map<String, String> addresses = new TreeMap<>();
    int[] pos = {4};
    for (int i = 0; i < count; i++) {
      String key = readString(meta, pos);
      String value = readString(meta, pos);
      addresses.put(key, value);
    }
    if (pos[0] != meta.length) {
      throw new IllegalArgumentException("node metadata has " + (meta.length - pos[0]) + " trailing bytes");
    }
    return new NodeMeta(addresses, isolated);
  }

  private static void writeString(ByteArrayOutputStream out, String value) {
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    if (bytes.length > 255) {
      throw new IllegalArgumentException("'" + value + "' is longer than 255 bytes");
    }
    out.write(bytes.length);
    out.write(bytes, 0, bytes.length);
  }

  private static String readString(byte[] meta, int[] pos) {
    if (pos[0] >= meta.length) {
      throw new IllegalArgumentException("node metadata truncated");
    }
    int length = Byte.toUnsignedInt(meta[pos[0]++]);
    if (pos[0] + length > meta.length) {
      throw new IllegalArgumentException("node metadata truncated");
    }
    String value = new String(meta, pos[0], length, StandardCharsets.UTF_8);
    pos[0] += length;
    return value;
  }
}
