package dev.fencing.memberlist.codec;

/** Probe acknowledgement (type 2); {@code payload} may be null (msgpack nil) and carries the ping delegate's data. */
public record AckResp(long seqNo, byte[] payload) implements Message {
  @Override
  public MessageType type() {
    return MessageType.ACK_RESP;
  }
}
