package dev.fencing.agent.cli;

/** Exit codes of the {@code fencing-agent} client subcommands ({@code members}, {@code events}, {@code status}). */
public final class ExitCodes {

  /** Success; for {@code events}: --count reached, --timeout elapsed or the agent ended the stream normally. */
  public static final int OK = 0;
  /** The agent answered with an error (the message says which). */
  public static final int AGENT_ERROR = 1;
  /** Invalid command line. */
  public static final int USAGE = 2;
  /**
   * {@code status}: invalid command line (sysexits' EX_USAGE), so that a typo in a script's {@code status --check}
   * never reads as its code 2, "quorum not held".
   */
  public static final int STATUS_USAGE = 64;
  /** No agent at the socket: the file is missing, nothing answers, or the agent went away. */
  public static final int NO_AGENT = 3;
  /** {@code events}: the agent dropped the stream because this client fell behind; run it again to resync. */
  public static final int STREAM_DROPPED = 4;

  private ExitCodes() {}
}
