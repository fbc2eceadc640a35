package dev.fencing.agent.disable;

import java.util.Objects;

/**
 * Whether the disable file exists, and the reason written in it.
 *
 * @param present the file exists: the agent must disarm and stay disarmed
 * @param reason the first line of the file, trimmed and shortened, for display only (never parsed as a command);
 *     empty when the file is absent, empty or unreadable
 */
public record DisableState(boolean present, String reason) {

  /** The state when no disable file exists. */
  public static final DisableState ABSENT = new DisableState(false, "");

  public DisableState {
    Objects.requireNonNull(reason, "reason");
  }
}
