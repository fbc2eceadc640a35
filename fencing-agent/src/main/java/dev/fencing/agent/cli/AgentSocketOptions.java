package dev.fencing.agent.cli;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** Options shared by the client subcommands. */
public final class AgentSocketOptions {

  /** Where the agent serves the local API unless told otherwise. */
  public static final String DEFAULT_SOCKET = "/var/run/fencing-agent.sock";

  @Option(names = "--socket", paramLabel = "PATH", defaultValue = DEFAULT_SOCKET,
      description = "the agent's local API socket (default: ${DEFAULT-VALUE})")
  Path socket = Path.of(DEFAULT_SOCKET);

  @Option(names = "--json", description = "print JSON (proto3 mapping) instead of a table")
  boolean json;
}
