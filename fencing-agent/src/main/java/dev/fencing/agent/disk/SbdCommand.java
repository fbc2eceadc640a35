package dev.fencing.agent.disk;

import java.util.Optional;

/** A message in a node's SBD mailbox, with the code and the name the {@code sbd} tool uses. */
public enum SbdCommand {
  CLEAR(0, "clear"),
  TEST(1, "test"),
  RESET(2, "reset"),
  OFF(3, "off"),
  EXIT(4, "exit"),
  CRASHDUMP(5, "crashdump");

  private final int code;
  private final String sbdName;

  SbdCommand(int code, String sbdName) {
    this.code = code;
    this.sbdName = sbdName;
  }

  /** The byte stored in the mailbox sector. */
  public int code() {
    return code;
  }

  /** The word {@code sbd message NODE <word>} and {@code sbd list} use. */
  public String sbdName() {
    return sbdName;
  }

  /** A poison pill: the recipient must stop feeding (sbd reboots, powers off or crash-dumps on these). */
  public boolean isPoisonPill() {
    return this == RESET || this == OFF || this == CRASHDUMP;
  }

  /** The command stored as {@code code}, if it is one sbd defines. */
  public static Optional<SbdCommand> fromCode(int code) {
    for (SbdCommand c : values()) {
      if (c.code == code) {
        return Optional.of(c);
      }
    }
    return Optional.empty();
  }
}
