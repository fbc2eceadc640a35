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

  /** The type for a wire byte, or {@code null} if memberlist defines none. */
  public static MessageType fromCode(int code) {
    for (MessageType t : values()) {
      if (t.code == code) {
        return t;
      }
    }
    return null;
  }
}
