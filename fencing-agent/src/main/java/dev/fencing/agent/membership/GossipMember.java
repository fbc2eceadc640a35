package dev.fencing.agent.membership;

import java.util.Objects;

/**
 * One member as the gossip layer reports it.
 *
 * @param name member name
 * @param hostPort its gossip address
 * @param meta its decoded metadata ({@link NodeMeta#EMPTY} when absent or not ours)
 * @param state alive, suspect, dead or left
 */
public record GossipMember(String name, String hostPort, NodeMeta meta, GossipState state) {

  public GossipMember {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(meta, "meta");
    Objects.requireNonNull(state, "state");
  }
}
