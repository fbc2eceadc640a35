package dev.fencing.agent.cli;

import com.google.protobuf.Duration;
import com.google.protobuf.Empty;
import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.DisarmReason;
import dev.fencing.proto.fencing.v1.PeerStatus;
import dev.fencing.proto.fencing.v1.Timings;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code fencing-agent status}: the agent's quorum, arming and timing state (GetStatus). */
@Command(name = "status", mixinStandardHelpOptions = true,
    description = "Show the agent's mode, arming, quorum, peers and resolved timings.",
    exitCodeListHeading = "Exit codes:%n",
    exitCodeList = {"0:shown", "1:the agent answered with an error", "3:no agent at the socket"})
public final class StatusCommand implements Callable<Integer> {

  @Mixin AgentSocketOptions options = new AgentSocketOptions();
  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    return AgentConnection.printUnary(options, spec, stub -> stub.getStatus(Empty.getDefaultInstance()),
        StatusCommand::text);
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
