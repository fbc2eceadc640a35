package dev.fencing.memberlist.codec;

/** {@code from} declares {@code node} dead at {@code incarnation} (type 5); from == node means a graceful leave. */
public record Dead(long incarnation, String node, String from) implements Message {
  @Override
  public MessageType type() {
    return MessageType.DEAD;
  }
}
