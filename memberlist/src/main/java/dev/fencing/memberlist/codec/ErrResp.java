package dev.fencing.memberlist.codec;

/** Error reply on a stream (type 13). */
public record ErrResp(String error) implements Message {
  @Override
  public MessageType type() {
    return MessageType.ERR;
  }
}
