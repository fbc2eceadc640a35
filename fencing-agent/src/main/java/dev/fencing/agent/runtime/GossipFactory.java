package dev.fencing.agent.runtime;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.membership.GossipMembership;
import dev.fencing.agent.membership.NodeMeta;
import java.io.IOException;

/** Creates the gossip membership for a config (a real memberlist in production, a filtered one in tests). */
@FunctionalInterface
public interface GossipFactory {

  /** Creates, but does not start, the gossip cluster member for {@code config}'s own node. */
  GossipMembership create(AgentConfig config, NodeMeta initialMeta) throws IOException;
}
