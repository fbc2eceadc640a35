package dev.fencing.agent.quorum;

/** What the evaluator did with one received heartbeat (counted in metrics and logged at debug level). */
public enum HeartbeatOutcome {
  /** It echoed one of our send times: a round trip completed. */
  CONFIRMED,
  /** Accepted, but it did not (yet) echo a usable send time of ours: one-way reachability only. */
  HEARD,
  /** Addressed to another group. */
  WRONG_GROUP,
  /** The sender is not an expected member. */
  UNKNOWN_SENDER,
  /** The sender claims to be this node. */
  FROM_SELF
}
