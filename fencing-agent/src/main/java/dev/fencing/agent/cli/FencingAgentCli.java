package dev.fencing.agent.cli;

import dev.fencing.agent.emulator.SoftdogEmulator;
import dev.fencing.agent.runtime.RunCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code fencing-agent}: the jar's main. {@code run} starts the agent; {@code members}, {@code events} and
 * {@code status} are clients of a running agent's socket; {@code socket-link} keeps the socket's contract path as a
 * symlink (init container); {@code softdog-emulator} emulates a watchdog on a FIFO.
 */
@Command(
    name = "fencing-agent",
    mixinStandardHelpOptions = true,
    versionProvider = FencingAgentCli.Version.class,
    description = "Quorum fencing agent for Kubernetes NodeGroups, and clients of its local API.",
    subcommands = {
      RunCommand.class,
      MembersCommand.class,
      EventsCommand.class,
      StatusCommand.class,
      DrbdFencePeerCommand.class,
      SocketLinkCommand.class,
      SoftdogEmulator.class,
      CommandLine.HelpCommand.class
    },
    exitCodeListHeading = "Exit codes of members, events and status (see each command's --help for the others):%n",
    exitCodeList = {
      "0:success",
      "1:the agent answered with an error",
      "2:invalid command line",
      "3:no agent at the socket",
      "4:events: the stream was dropped because this client fell behind"
    })
public final class FencingAgentCli {

  /** Runs the command line and exits with its code. */
  public static void main(String[] args) {
    // Logging before `run` configures it, and in the client commands: logback.xml of fencing-logging (warnings on
    // stderr, grpc-netty's per-connection SO_KEEPALIVE warning left out), so stdout stays the command's output.
    System.exit(commandLine().execute(args));
  }

  /** The configured command line, for embedding and tests. */
  public static CommandLine commandLine() {
    return new CommandLine(new FencingAgentCli());
  }

  /** The version from the jar manifest (unknown when run from classes). */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = FencingAgentCli.class.getPackage().getImplementationVersion();
      return new String[] {"fencing-agent " + (v == null ? "(development build)" : v)};
    }
  }
}
