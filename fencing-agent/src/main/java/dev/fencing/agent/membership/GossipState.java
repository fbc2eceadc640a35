package dev.fencing.agent.membership;

/** A member's state in the gossip layer (memberlist's NodeState, kept separate so quorum code never imports it). */
public enum GossipState {
  ALIVE,
  SUSPECT,
  DEAD,
  LEFT
}
