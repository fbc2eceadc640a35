package dev.fencing.memberlist.codec;

/** memberlist's message-type byte. The numeric values are part of the wire protocol; memberlist only appends. */
public enum MessageType {
  PING(0),
  INDIRECT_PING(1),
  ACK_RESP(2),
  SUSPECT(3),
  ALIVE(4),
  DEAD(5),
  PUSH_PULL(6),
  COMPOUND(7),
  USER(8),
  COMPRESS(9),
  ENCRYPT(10),
  NACK_RESP(11),
  HAS_CRC(12),
  ERR(13),
  /** Label prefix (memberlist 0.3+); deliberately high so it cannot collide with other leading bytes. */
  HAS_LABEL(244);

  private final int code;

  MessageType(int code) {
    this.code = code;
  }

  /** The byte value on the wire (0..255). */
  public int code() {
    return code;
  }

  // Indexed by wire byte, built once: values() clones its array at every call, and this runs for every packet.
  private static final MessageType[] BY_CODE = new MessageType[256];

  static {
    for (MessageType t : values()) {
      BY_CODE[t.code] = t;
    }
  }

  /** The type for a wire byte, or {@code null} if memberlist defines none (or {@code code} is not a byte value). */
  public static MessageType fromCode(int code) {
    return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
  }
}
