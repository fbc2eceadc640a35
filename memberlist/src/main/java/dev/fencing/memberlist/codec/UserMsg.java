package dev.fencing.memberlist.codec;

/**
 * Application payload (type 8). On a packet it is the type byte followed by the raw bytes; on a stream it is the
 * type byte, a msgpack {@code userMsgHeader{UserMsgLen}}, then the bytes.
 */
public record UserMsg(byte[] payload) implements Message {
  @Override
  public MessageType type() {
    return MessageType.USER;
  }
}
