package dev.fencing.memberlist;

/** A member's state as this node sees it; the ordinal is memberlist's wire number (0 alive … 3 left). */
public enum NodeState {
  ALIVE,
  SUSPECT,
  DEAD,
  LEFT;

  /** memberlist's NodeStateType number used in push/pull. */
  public int wireValue() {
    return ordinal();
  }

  /** The state for a push/pull number; unknown values are treated as {@link #DEAD} (the safe reading). */
  public static NodeState fromWire(int value) {
    return value >= 0 && value < values().length ? values()[value] : DEAD;
  }

  /** Dead or left: not a member any more. */
  public boolean deadOrLeft() {
    return this == DEAD || this == LEFT;
  }
}
