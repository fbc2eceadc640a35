package dev.fencing.agent.quorum;

/** What the evaluator did with one received heartbeat (counted in metrics and logged at debug level). */
public enum HeartbeatOutcome {
  /** It echoed one of our send times: a round trip completed. */
  CONFIRMED,
  /**
   * As {@link #CONFIRMED}, from a heartbeat that was not newer than the send time recorded for the sender's boot:
   * only a heartbeat the sender did not send can have put a later one there (a member holding the group key forging
   * the sender's heartbeats). The round trip proves this heartbeat came from the sender, so its send time replaces
   * the recorded one: otherwise every real heartbeat would count as stale, and the sender could confirm no echo of
   * ours (we would echo the forged time), until its clock passed the forged one.
   */
  CORRECTED,
  /** Accepted, but it did not (yet) echo a usable send time of ours: one-way reachability only. */
  HEARD,
  /** Addressed to another group. */
  WRONG_GROUP,
  /** The sender is not an expected member. */
  UNKNOWN_SENDER,
  /** The sender claims to be this node. */
  FROM_SELF,
  /**
   * Not newer than the latest heartbeat received from the sender's boot, or of a boot the sender has left: an old
   * packet sent again (a replay by someone who captured it) or overtaken on the way. It says nothing about the sender
   * now, so it neither counts as heard nor asks for an echo.
   */
  STALE
}
