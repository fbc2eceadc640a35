package dev.fencing.agent.cli;

import com.google.protobuf.Duration;
import com.google.protobuf.Empty;
import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.DisarmReason;
import dev.fencing.proto.fencing.v1.FencingGrpc;
import dev.fencing.proto.fencing.v1.PeerStatus;
import dev.fencing.proto.fencing.v1.Timings;
import io.grpc.StatusRuntimeException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code fencing-agent status}: the agent's quorum, arming and timing state (GetStatus); with {@code --check} one line
 * and an exit code a probe or a script can act on.
 */
@Command(name = "status", mixinStandardHelpOptions = true,
    description = "Show the agent's mode, arming, quorum, peers and resolved timings.",
    exitCodeOnInvalidInput = ExitCodes.STATUS_USAGE,
    exitCodeListHeading = "Exit codes (with --check see --check):%n",
    exitCodeList = {"0:shown", "1:the agent answered with an error", "3:no agent at the socket",
        "64:invalid command line"})
public final class StatusCommand implements Callable<Integer> {

  /** Exit code of {@code --check}: quorum held and armed, or disarmed only on purpose. */
  public static final int CHECK_OK = 0;
  /** Exit code of {@code --check}: quorum held, not armed for another reason. */
  public static final int CHECK_NOT_ARMED = 1;
  /** Exit code of {@code --check}: quorum not held. */
  public static final int CHECK_NO_QUORUM = 2;

  /** Disarm reasons an operator or the controller chose: a node disarmed only by these is fine. */
  static final Set<DisarmReason.Kind> ON_PURPOSE = EnumSet.of(DisarmReason.Kind.KIND_DISABLE_FILE,
      DisarmReason.Kind.KIND_MAINTENANCE, DisarmReason.Kind.KIND_BEING_REMOVED, DisarmReason.Kind.KIND_NOTIFY_MODE);

  @Mixin AgentSocketOptions options = new AgentSocketOptions();
  @Spec CommandSpec spec;

  @Option(names = "--check", description = {"one-shot check for scripts: print one line and exit 0 (quorum held and armed, or"
      + " disarmed only on purpose: disable file, maintenance, being removed, mode Notify), 1 (quorum held but not"
      + " armed for another reason: arming delay, no config, watchdog unavailable, no gossip key, ...), 2 (quorum"
      + " not held), 3 (no agent answers at the socket), 64 (invalid command line). Starts a JVM: not for"
      + " periodic probes (use /readyz or the status file)"})
  boolean check;

  /**
   * What {@code --check} says.
   *
   * @param code the exit code
   * @param line the one line printed
   */
  record CheckResult(int code, String line) {}

  @Override
  public Integer call() {
    if (check) {
      return check();
    }
    return AgentConnection.printUnary(options, spec, stub -> stub.getStatus(Empty.getDefaultInstance()),
        StatusCommand::text);
  }

  private int check() {
    PrintWriter out = spec.commandLine().getOut();
    if (options.json) {
      spec.commandLine().getErr().println("status: --check prints one line of text; drop --json (or --check)");
      return ExitCodes.STATUS_USAGE;
    }
    // Every outcome, "no agent" included, is one line on stdout: a probe logs stdout.
    try (AgentConnection agent = AgentConnection.open(options.socket(), out)) {
      if (agent == null) {
        return ExitCodes.NO_AGENT;
      }
      AgentStatus status;
      try {
        status = FencingGrpc.newBlockingStub(agent.channel()).withDeadlineAfter(5, TimeUnit.SECONDS)
            .getStatus(Empty.getDefaultInstance());
      } catch (StatusRuntimeException e) {
        int code = agent.fail(e, out);
        return code == ExitCodes.NO_AGENT ? ExitCodes.NO_AGENT : CHECK_NOT_ARMED;
      }
      CheckResult result = check(status);
      out.println(result.line());
      return result.code();
    } finally {
      out.flush();
    }
  }

  /** The {@code --check} verdict on one status: no config, then quorum, then arming. */
  static CheckResult check(AgentStatus s) {
    String quorum = "heard " + s.getHeard() + " of " + s.getExpected() + " expected, quorum " + s.getQuorumSize();
    List<DisarmReason> reasons = s.getDisarmReasonsList();
    boolean noConfig = reasons.stream().anyMatch(r -> r.getKind() == DisarmReason.Kind.KIND_NO_CONFIG);
    if (noConfig) {
      return new CheckResult(CHECK_NOT_ARMED, "not armed: " + reasons(reasons));
    }
    if (!s.getQuorumHeld()) {
      String watchdog = s.getFencingInProgress() ? "fencing in progress" : s.getArmed() ? "armed"
          : "not armed (" + reasons(reasons) + ")";
      return new CheckResult(CHECK_NO_QUORUM, "quorum not held: " + quorum + "; " + watchdog);
    }
    if (s.getArmed()) {
      return new CheckResult(CHECK_OK, "ok: armed, quorum held (" + quorum + ")");
    }
    if (!reasons.isEmpty() && reasons.stream().allMatch(r -> ON_PURPOSE.contains(r.getKind()))) {
      return new CheckResult(CHECK_OK, "ok: disarmed on purpose (" + reasons(reasons) + "), quorum held (" + quorum
          + ")");
    }
    return new CheckResult(CHECK_NOT_ARMED, "not armed: " + (reasons.isEmpty() ? "no reason given"
        : reasons(reasons)) + "; quorum held (" + quorum + ")");
  }

  private static String reasons(List<DisarmReason> reasons) {
    return reasons.stream().map(StatusCommand::reason).collect(Collectors.joining("; "));
  }

  static String text(AgentStatus s) {
    TextTable summary = new TextTable("", "");
    summary.row("node:", s.getNode() + " (group " + s.getGroup() + ", agent " + s.getAgentVersion() + ")");
    summary.row("mode:", HumanFormat.enumName(s.getMode()) + ", quorum loss action "
        + HumanFormat.enumName(s.getQuorumLossAction()) + ", tie-breakers " + tieBreakers(s));
    String armed = HumanFormat.yesNo(s.getArmed());
    if (s.getFencingInProgress()) {
      armed += " (FENCING IN PROGRESS: feeding stopped, the watchdog will reset this node)";
    }
    summary.row("armed:", armed);
    if (!s.getDisarmReasonsList().isEmpty()) {
      summary.row("disarmed because:", s.getDisarmReasonsList().stream().map(StatusCommand::reason)
          .collect(Collectors.joining("; ")));
    }
    summary.row("watchdog feeds:", s.getFeedsTotal() == 0 && !s.hasSinceLastFeed() ? "never fed"
        : s.getFeedsTotal() + (s.hasSinceLastFeed() ? ", last " + HumanFormat.duration(s.getSinceLastFeed()) + " ago"
            : ""));
    summary.row("quorum:", (s.getQuorumHeld() ? "held" : "NOT held") + " (heard " + s.getHeard() + " of "
        + s.getExpected() + " expected, quorum " + s.getQuorumSize() + ", tie-breaker " + s.getTieBreakerOutcome()
        + ")");
    summary.row("isolated:", HumanFormat.yesNo(s.getIsolated()));
    if (!s.getDiskCondition().isEmpty() && !s.getDiskCondition().equals("none")) {
      summary.row("shared disk:", s.getDiskCondition());
    }
    summary.row("local lag:", s.hasLocalLag() ? HumanFormat.duration(s.getLocalLag()) : "0s");
    summary.row("config:", "revision " + s.getConfigRevision() + " from " + orDash(s.getConfigSource()));
    if (s.hasTimings()) {
      summary.row("timings:", timings(s.getTimings()));
    }
    StringBuilder out = new StringBuilder();
    for (String line : summary.toString().split("\n")) {
      if (!line.isBlank()) {
        out.append(line).append('\n');
      }
    }
    out.append('\n');
    TextTable peers = new TextTable("PEER", "STATE", "CONFIRMED", "LAST-CONFIRMED", "LAST-HEARD", "ISOLATED",
        "ADDRESSES");
    for (PeerStatus p : s.getPeersList()) {
      peers.row(p.getName(), HumanFormat.enumName(p.getMemberState()), HumanFormat.yesNo(p.getConfirmed()),
          p.hasSinceLastConfirmed() ? HumanFormat.duration(p.getSinceLastConfirmed()) + " ago" : "never",
          p.hasSinceLastHeard() ? HumanFormat.duration(p.getSinceLastHeard()) + " ago" : "never",
          HumanFormat.yesNo(p.getIsolated()), HumanFormat.addresses(p.getAddressesMap()));
    }
    return out.append(peers).toString();
  }

  private static String tieBreakers(AgentStatus s) {
    if (s.getTieBreakersList().isEmpty()) {
      return "none";
    }
    return s.getTieBreakersList().stream().map(HumanFormat::enumName).collect(Collectors.joining(","));
  }

  private static String reason(DisarmReason r) {
    String kind = HumanFormat.enumName(r.getKind());
    return r.getDetail().isEmpty() ? kind : kind + " \"" + r.getDetail() + "\"";
  }

  private static String timings(Timings t) {
    List<String> parts = new ArrayList<>();
    parts.add("profile " + orDash(t.getProfile()));
    addDuration(parts, "T_stop ", t.hasTStop(), t.getTStop(), "");
    addDuration(parts, "safe-to-assume-fenced after ", t.hasSafeToAssumeFencedDelay(),
        t.getSafeToAssumeFencedDelay(), "");
    addDuration(parts, "watchdog timeout ", t.hasWatchdogTimeout(), t.getWatchdogTimeout(), "");
    addDuration(parts, "quorum window ", t.hasQuorumWindow(), t.getQuorumWindow(), " x" + t.getLocalHealthCap());
    addDuration(parts, "heartbeat ", t.hasHeartbeatInterval(), t.getHeartbeatInterval(), "");
    addDuration(parts, "feed ", t.hasFeedInterval(), t.getFeedInterval(), "");
    addDuration(parts, "probe ", t.hasProbeInterval(), t.getProbeInterval(), "");
    return String.join(", ", parts);
  }

  private static void addDuration(List<String> parts, String label, boolean present, Duration d, String suffix) {
    if (present) {
      parts.add(label + HumanFormat.duration(d) + suffix);
    }
  }

  private static String orDash(String s) {
    return s.isEmpty() ? "-" : s;
  }
}
