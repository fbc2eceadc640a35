package dev.fencing.memberlist.codec;

import java.util.List;

/**
 * Full state exchange over a stream (type 6): a {@code pushPullHeader{Join, Nodes, UserStateLen}}, then one
 * {@link PushNodeState} per node, then {@code userState} raw bytes (empty array when none).
 */
public record PushPull(boolean join, List<PushNodeState> nodes, byte[] userState) implements Message {
  public PushPull {
    nodes = List.copyOf(nodes);
  }

  @Override
  public MessageType type() {
    return MessageType.PUSH_PULL;
  }
}
