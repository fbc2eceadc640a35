package dev.fencing.memberlist.codec;

/**
 * Direct probe (type 0). {@code node} is the intended target's name ("" = any); the source fields are omitted on the
 * wire when empty (null / 0 / null) and tell the receiver where to send the ack.
 */
public record Ping(long seqNo, String node, byte[] sourceAddr, int sourcePort, String sourceNode)
    implements Message {
  @Override
  public MessageType type() {
    return MessageType.PING;
  }
}
