package dev.fencing.memberlist.codec;

/** Sent by an indirect-probe relay that got no ack from the target in time (type 11). */
public record NackResp(long seqNo) implements Message {
  @Override
  public MessageType type() {
    return MessageType.NACK_RESP;
  }
}
