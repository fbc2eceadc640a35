package dev.fencing.memberlist.codec;

/**
 * {@code node} is alive at {@code incarnation}, reachable at {@code addr:port} (type 4). {@code addr} is 4 or 16
 * bytes; {@code meta} ≤ 512 bytes or null; {@code vsn} is the 6-byte protocol/delegate version vector.
 */
public record Alive(long incarnation, String node, byte[] addr, int port, byte[] meta, byte[] vsn)
    implements Message {
  @Override
  public MessageType type() {
    return MessageType.ALIVE;
  }
}
