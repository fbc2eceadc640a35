package dev.fencing.memberlist.codec;

/** {@code from} suspects {@code node} at {@code incarnation} (type 3). */
public record Suspect(long incarnation, String node, String from) implements Message {
  @Override
  public MessageType type() {
    return MessageType.SUSPECT;
  }
}
