package dev.fencing.memberlist.codec;

/** Request to probe {@code target:port} (node name {@code node}) on the sender's behalf (type 1). */
public record IndirectPingReq(
    long seqNo,
    byte[] target,
    int port,
    String node,
    boolean nack,
    byte[] sourceAddr,
    int sourcePort,
    String sourceNode)
    implements Message {
  @Override
  public MessageType type() {
    return MessageType.INDIRECT_PING;
  }
}
