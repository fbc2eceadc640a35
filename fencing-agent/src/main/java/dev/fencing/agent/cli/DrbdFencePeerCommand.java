package dev.fencing.agent.cli;

import com.google.protobuf.Empty;
import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.FencingGrpc;
import io.grpc.StatusRuntimeException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code fencing-agent drbd-fence-peer}: DRBD's fence-peer handler ({@code handlers { fence-peer "fencing-agent
 * drbd-fence-peer"; }} with {@code net { fencing resource-and-stonith; }}). It asks the local agent (GetStatus) about
 * the peer DRBD names and exits 7 ("peer fenced") only once the agents' majority view makes the peer safe to assume
 * powered off; otherwise 1 (the handler failed: DRBD keeps I/O frozen). A peer that is gone but not yet for the
 * safe-to-assume-fenced delay is waited for, up to {@code --timeout}. See {@link DrbdFencePeer} for the contract.
 */
@Command(name = "drbd-fence-peer", mixinStandardHelpOptions = true,
    description = {"DRBD fence-peer handler: exit 7 (peer fenced) once the local agent has seen the peer gone (LEFT"
        + " or DEAD) for the safe-to-assume-fenced delay while holding quorum in a Watchdog + Fence group; otherwise"
        + " exit 1 (not fenced: DRBD keeps I/O frozen with fencing resource-and-stonith). Reads DRBD_PEER_NODE_ID"
        + " and DRBD_NODE_ID_<id>, DRBD_PEERS, DRBD_PEER and DRBD_PEER_ADDRESS from the environment drbdadm sets."},
    exitCodeOnInvalidInput = DrbdFencePeer.NOT_FENCED,
    exitCodeOnExecutionException = DrbdFencePeer.NOT_FENCED,
    exitCodeListHeading = "Exit codes (DRBD's fence-peer contract):%n",
    exitCodeList = {"7:peer fenced (powered off by its watchdog, as the agents' majority view shows)",
        "1:not fenced, or not known to be (every other outcome, bad input included)"})
public final class DrbdFencePeerCommand implements Callable<Integer> {

  @Option(names = "--socket", paramLabel = "PATH",
      description = "the agent's local API socket (default: " + AgentSocketOptions.DEFAULT_SOCKET + ", or "
          + AgentSocketOptions.FALLBACK_SOCKET + " when that does not exist)")
  Path socket;

  @Option(names = "--timeout", defaultValue = "120s", paramLabel = "DURATION",
      description = "how long to wait for a gone peer's safe-to-assume-fenced delay to pass (default ${DEFAULT-VALUE};"
          + " DRBD waits for the handler); a delay that cannot pass within it is given up at once, so set it above"
          + " the group's safe-to-assume-fenced delay (fencing-agent status shows it)")
  String timeout;

  @Option(names = "--poll-interval", defaultValue = "1s", paramLabel = "DURATION",
      description = "how often to ask the agent again while waiting (default ${DEFAULT-VALUE})")
  String pollInterval;

  @Spec CommandSpec spec;

  /** The environment the handler reads; tests replace it. */
  Map<String, String> environment = System.getenv();
  /** Where the default socket is looked for; tests point it into a temp dir. */
  AgentSocketOptions.SocketDefaults defaults = AgentSocketOptions.SocketDefaults.HOST;

  @Override
  public Integer call() throws InterruptedException {
    PrintWriter err = spec.commandLine().getErr();
    Duration wait = parse("--timeout", timeout);
    Duration poll = parse("--poll-interval", pollInterval);
    String resource = environment.getOrDefault("DRBD_RESOURCE", "?");
    DrbdFencePeer.Target target = DrbdFencePeer.Target.fromEnvironment(environment);
    String prefix = "drbd-fence-peer: resource=" + resource + " peer=" + (target.isEmpty() ? "?" : target) + ": ";
    Path path = defaults.resolve(socket);
    // Bounded: at most timeout / poll-interval + 1 questions to the agent.
    long deadline = System.nanoTime() + wait.toNanos();
    try (AgentConnection agent = AgentConnection.open(path, err)) {
      if (agent == null) {
        err.println(prefix + "not fenced: no agent answers, so nothing is known about the peer");
        return DrbdFencePeer.NOT_FENCED;
      }
      while (true) {
        AgentStatus status;
        try {
          status = FencingGrpc.newBlockingStub(agent.channel()).withDeadlineAfter(5, TimeUnit.SECONDS)
              .getStatus(Empty.getDefaultInstance());
        } catch (StatusRuntimeException e) {
          agent.fail(e, err);
          err.println(prefix + "not fenced: the agent did not answer");
          return DrbdFencePeer.NOT_FENCED;
        }
        DrbdFencePeer.Verdict verdict = DrbdFencePeer.decide(target, status);
        if (verdict.settled()) {
          err.println(prefix + verdict.message());
          return verdict.code();
        }
        long now = System.nanoTime();
        if (now + verdict.toGo().toNanos() > deadline) {
          // Waiting cannot help: the delay runs out after --timeout. Say so now rather than keep DRBD waiting.
          err.println(prefix + verdict.message() + "; gave up: that is beyond --timeout " + timeout
              + " (raise --timeout above the group's safe-to-assume-fenced delay)");
          return verdict.code();
        }
        if (now + poll.toNanos() > deadline) { // e.g. a peer still Suspect: nothing to count down
          err.println(prefix + verdict.message() + "; gave up after --timeout " + timeout);
          return verdict.code();
        }
        TimeUnit.NANOSECONDS.sleep(poll.toNanos());
      }
    } finally {
      err.flush();
    }
  }

  private Duration parse(String option, String value) {
    try {
      Duration d = dev.fencing.policy.DurationFormat.parse(value);
      if (d.isNegative() || d.isZero() && "--poll-interval".equals(option)) {
        throw new IllegalArgumentException("must be positive");
      }
      return d;
    } catch (IllegalArgumentException e) {
      throw new picocli.CommandLine.ParameterException(spec.commandLine(), option + " " + value + ": "
          + e.getMessage());
    }
  }
}
