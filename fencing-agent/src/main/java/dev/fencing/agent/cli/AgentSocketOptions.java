package dev.fencing.agent.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** Options shared by the client subcommands. */
public final class AgentSocketOptions {

  /** Where the agent serves the local API unless told otherwise (the API contract's path; a symlink on hosts). */
  public static final String DEFAULT_SOCKET = "/var/run/fencing-agent.sock";
  /** Where the agent's socket really is in its pod (the directory the DaemonSet mounts). */
  public static final String FALLBACK_SOCKET = "/var/run/fencing-agent/fencing-agent.sock";

  /**
   * The default socket and the one used instead when the default does not exist.
   *
   * @param primary tried first
   * @param fallback used when {@code primary} does not exist (or is a dangling symlink)
   */
  record SocketDefaults(Path primary, Path fallback) {
    static final SocketDefaults HOST = new SocketDefaults(Path.of(DEFAULT_SOCKET), Path.of(FALLBACK_SOCKET));

    /** {@code explicit} when given, else the primary path if it exists, else the fallback. */
    Path resolve(Path explicit) {
      if (explicit != null) {
        return explicit;
      }
      return Files.exists(primary) ? primary : fallback;
    }
  }

  @Option(names = "--socket", paramLabel = "PATH",
      description = "the agent's local API socket (default: " + DEFAULT_SOCKET + ", or " + FALLBACK_SOCKET
          + " when that does not exist, e.g. inside the agent's pod)")
  Path socket;

  @Option(names = "--json", description = "print JSON (proto3 mapping) instead of a table")
  boolean json;

  /** The defaults; tests point them into a temp dir. */
  SocketDefaults defaults = SocketDefaults.HOST;

  /** The socket to use: {@code --socket} when given, else the default or its fallback. */
  Path socket() {
    return defaults.resolve(socket);
  }
}
