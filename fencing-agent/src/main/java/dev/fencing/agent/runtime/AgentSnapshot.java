package dev.fencing.agent.runtime;

import com.google.protobuf.Duration;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ExpectedMember;
import dev.fencing.agent.membership.GossipState;
import dev.fencing.agent.membership.NetworkPlan;
import dev.fencing.agent.quorum.NetworkEvidence;
import dev.fencing.agent.quorum.PeerQuorumView;
import dev.fencing.agent.quorum.QuorumVerdict;
import dev.fencing.agent.status.HostStatus;
import dev.fencing.agent.watchdog.WatchdogStatus;
import dev.fencing.policy.MemberSetDigest;
import dev.fencing.policy.PolicyProtos;
import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.fencing.v1.NetworkReachability;
import dev.fencing.proto.fencing.v1.PeerMemberState;
import dev.fencing.proto.fencing.v1.PeerStatus;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.PeerReport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The agent's state as of one tick, immutable, published by the quorum loop for readers on other threads (local API
 * GetStatus, controller reports, metrics, tests).
 *
 * @param node this node
 * @param agentVersion build version
 * @param takenAtNanos monotonic time of the tick
 * @param config the config in effect, if any
 * @param verdict the latest quorum verdict, if evaluated
 * @param watchdog the supervisor's status
 * @param peers gossip's view of every expected peer
 * @param localLagNanos the measured local lag at this tick
 * @param isolated this node announces itself isolated
 * @param diskCondition the shared disk: "none", "ok", "ok, but msgwait … is shorter …", "allocating a slot",
 *     "unreadable: …" or "poison pill: reset from …"
 */
public record AgentSnapshot(
    String node,
    String agentVersion,
    long takenAtNanos,
    Optional<AgentConfig> config,
    Optional<QuorumVerdict> verdict,
    WatchdogStatus watchdog,
    List<PeerView> peers,
    long localLagNanos,
    boolean isolated,
    String diskCondition) {

  /**
   * Gossip's view of one expected peer.
   *
   * @param name member name
   * @param state its gossip state, empty when gossip never saw it
   * @param isolated it announces itself isolated
   * @param addresses its addresses (announced, else configured)
   */
  public record PeerView(String name, Optional<GossipState> state, boolean isolated, Map<String, String> addresses) {}

  public AgentSnapshot {
    peers = List.copyOf(peers);
    java.util.Objects.requireNonNull(diskCondition, "diskCondition");
  }

  /** A snapshot of an agent without a shared disk. */
  public AgentSnapshot(String node, String agentVersion, long takenAtNanos, Optional<AgentConfig> config,
      Optional<QuorumVerdict> verdict, WatchdogStatus watchdog, List<PeerView> peers, long localLagNanos,
      boolean isolated) {
    this(node, agentVersion, takenAtNanos, config, verdict, watchdog, peers, localLagNanos, isolated, "none");
  }

  /** Before the first tick; taken "now" so a loop that never ticks turns unhealthy after the stuck bound. */
  static AgentSnapshot initial(String node, String version, long createdNanos, WatchdogStatus watchdog) {
    return new AgentSnapshot(node, version, createdNanos, Optional.empty(), Optional.empty(), watchdog, List.of(), 0,
        false);
  }

  AgentSnapshot withWatchdog(WatchdogStatus status) {
    return new AgentSnapshot(node, agentVersion, takenAtNanos, config, verdict, status, peers, localLagNanos,
        isolated, diskCondition);
  }

  /** Quorum held at the latest evaluation. */
  public boolean quorumHeld() {
    return verdict.map(QuorumVerdict::held).orElse(false);
  }

  /** The fencing.v1 status served by GetStatus. */
  public AgentStatus toStatus(long nowNanos) {
    AgentStatus.Builder out = AgentStatus.newBuilder()
        .setNode(node)
        .setAgentVersion(agentVersion)
        .setArmed(watchdog.armed())
        .setFencingInProgress(watchdog.fencingInProgress())
        .setIsolated(isolated)
        .addAllDisarmReasons(watchdog.disarmReasons())
        .setFeedsTotal(watchdog.feedsTotal())
        .setLocalLag(nanos(localLagNanos))
        .setDiskCondition(diskCondition);
    watchdog.lastFeedNanos().ifPresent(t -> out.setSinceLastFeed(nanos(nowNanos - t)));
    config.ifPresent(c -> {
      out.setGroup(c.group())
          .setMode(PolicyProtos.toProto(c.policy().mode()))
          .setQuorumLossAction(PolicyProtos.toProto(c.policy().quorumLossAction()))
          .setExpected(c.members().size())
          .setQuorumSize(c.policy().quorumSize())
          .setTimings(PolicyProtos.toProto(c.policy().timings()))
          .setConfigRevision(c.revision())
          .setConfigSource(c.source());
      c.policy().tieBreakers().forEach(k -> out.addTieBreakers(PolicyProtos.toProto(k)));
      out.addAllNetworks(c.policy().networks().texts());
    });
    if (config.isEmpty()) {
      out.setMode(FencingMode.FENCING_MODE_UNSPECIFIED);
    }
    out.setTieBreakerOutcome(verdict.map(QuorumVerdict::tieBreakerOutcome).orElse("none"));
    verdict.ifPresent(v -> {
      out.setQuorumHeld(v.held()).setHeard(v.heard());
      long age = nowNanos - v.evaluatedAtNanos();
      for (PeerQuorumView p : v.peers()) {
        PeerView gossip = peer(p.name());
        PeerStatus.Builder peer = PeerStatus.newBuilder()
            .setName(p.name())
            .setConfirmed(p.confirmed())
            .setMemberState(memberState(gossip))
            .setIsolated(gossip != null && gossip.isolated());
        if (gossip != null) {
          peer.putAllAddresses(gossip.addresses());
        }
        p.sinceLastConfirmedNanos().ifPresent(n -> peer.setSinceLastConfirmed(nanos(n + age)));
        p.sinceLastHeardNanos().ifPresent(n -> peer.setSinceLastHeard(nanos(n + age)));
        peer.addAllNetworks(networks(p, age));
        out.addPeers(peer);
      }
    });
    return out.build();
  }

  /** A peer's reachability per network (none for a group with one network), aged to the reading time. */
  private static List<NetworkReachability> networks(PeerQuorumView peer, long age) {
    List<NetworkReachability> out = new java.util.ArrayList<>();
    for (NetworkEvidence e : peer.networks()) {
      NetworkReachability.Builder n = NetworkReachability.newBuilder().setNetwork(e.network())
          .setConfirmed(e.confirmed());
      e.sinceLastConfirmedNanos().ifPresent(v -> n.setSinceLastConfirmed(nanos(v + age)));
      e.sinceLastHeardNanos().ifPresent(v -> n.setSinceLastHeard(nanos(v + age)));
      out.add(n.build());
    }
    return out;
  }

  /** This node's IP on each gossip network (CIDR → IP), what the controller tells peers; empty for one network. */
  static java.util.Map<String, String> networkAddresses(AgentConfig config) {
    NetworkPlan plan = NetworkPlan.of(config);
    java.util.Map<String, String> out = new java.util.TreeMap<>();
    if (plan.multiple()) {
      for (String network : plan.networks()) {
        plan.address(config.self(), network).ifPresent(a -> out.put(network, a.getAddress().getHostAddress()));
      }
    }
    return out;
  }

  /**
   * How long after its last contact with the majority this node may still be running, by the config in effect:
   * {@code tStop + watchdog timeout + fence margin}, with the timeout the armed device runs if that is longer (a
   * timeout change applied to the open device only at its next arming, or a driver that rounded it up).
   */
  java.time.Duration safeToAssumeFencedDelay(AgentConfig c) {
    var timings = c.policy().timings();
    java.time.Duration delay = timings.safeToAssumeFencedDelay();
    if (watchdog.armed()) {
      java.time.Duration device = watchdog.deviceTimeout().orElse(java.time.Duration.ZERO);
      if (device.compareTo(timings.watchdogTimeout()) > 0) {
        delay = delay.plus(device.minus(timings.watchdogTimeout()));
      }
    }
    return delay;
  }

  /** The AgentControl report sent to the controller. */
  public AgentReport toReport(long nowNanos) {
    AgentReport.Builder out = AgentReport.newBuilder()
        .setEpoch(config.map(AgentConfig::epoch).orElse(""))
        .setArmed(watchdog.armed())
        .setFencingInProgress(watchdog.fencingInProgress())
        .setQuorumHeld(quorumHeld())
        .setIsolated(isolated)
        .addAllDisarmReasons(watchdog.disarmReasons())
        .setWatchdogCondition(watchdog.condition())
        .setDiskCondition(diskCondition);
    watchdog.lastFeedNanos().ifPresent(t -> out.setSinceLastFeed(nanos(nowNanos - t)));
    if (watchdog.armed()) {
      watchdog.deviceTimeout().ifPresent(t -> out.setWatchdogTimeout(nanos(t.toNanos())));
    }
    // The keys of the config in effect are installed in the running memberlist (FencingAgent applies them first).
    config.ifPresent(c -> out.setAppliedRevision(c.revision()).setKeyringRevision(c.keyringRevision())
        .setMode(PolicyProtos.toProto(c.policy().mode()))
        .setExpected(c.members().size())
        .setQuorumSize(c.policy().quorumSize())
        .setQuorumLossAction(PolicyProtos.toProto(c.policy().quorumLossAction()))
        .setSafeToAssumeFencedDelay(nanos(safeToAssumeFencedDelay(c).toNanos()))
        .setExpectedDigest(MemberSetDigest.of(c.members().stream().map(ExpectedMember::name).toList()))
        .putAllNetworkAddresses(c.member(c.self()).isPresent() ? networkAddresses(c) : java.util.Map.of()));
    verdict.ifPresent(v -> {
      out.setConfirmed(v.heard());
      long age = nowNanos - v.evaluatedAtNanos();
      for (PeerQuorumView p : v.peers()) {
        PeerReport.Builder peer = PeerReport.newBuilder().setName(p.name()).setConfirmed(p.confirmed())
            .setMemberState(memberState(peer(p.name())));
        p.sinceLastConfirmedNanos().ifPresent(n -> peer.setSinceLastConfirmed(nanos(n + age)));
        p.sinceLastHeardNanos().ifPresent(n -> peer.setSinceLastHeard(nanos(n + age)));
        peer.addAllNetworks(networks(p, age));
        out.addPeers(peer);
      }
    });
    return out.build();
  }

  /**
   * The host status file's fields.
   *
   * @param pid this process
   * @param disableFileApplied {@link FencingAgent#disableFileApplied()}, read before this snapshot was taken
   */
  public HostStatus toHostStatus(long pid, boolean disableFileApplied) {
    // A loop, not a stream: this runs after every tick of the quorum loop.
    List<String> kinds = new ArrayList<>(watchdog.disarmReasons().size());
    for (var reason : watchdog.disarmReasons()) {
      String kind = WatchdogStatus.kindName(reason.getKind());
      if (!kinds.contains(kind)) {
        kinds.add(kind);
      }
    }
    return new HostStatus(node, config.map(AgentConfig::group).orElse(""), pid, watchdog.armed(), kinds,
        disableFileApplied,
        verdict.isEmpty() ? HostStatus.Quorum.UNKNOWN : quorumHeld() ? HostStatus.Quorum.HELD : HostStatus.Quorum.LOST,
        config.map(AgentConfig::revision).orElse(0L));
  }

  private PeerView peer(String name) {
    for (PeerView p : peers) {
      if (p.name().equals(name)) {
        return p;
      }
    }
    return null;
  }

  private static PeerMemberState memberState(PeerView peer) {
    if (peer == null || peer.state().isEmpty()) {
      return PeerMemberState.PEER_MEMBER_STATE_UNKNOWN;
    }
    return switch (peer.state().get()) {
      case ALIVE -> PeerMemberState.PEER_MEMBER_STATE_ALIVE;
      case SUSPECT -> PeerMemberState.PEER_MEMBER_STATE_SUSPECT;
      case DEAD -> PeerMemberState.PEER_MEMBER_STATE_DEAD;
      case LEFT -> PeerMemberState.PEER_MEMBER_STATE_LEFT;
    };
  }

  private static Duration nanos(long nanos) {
    long n = Math.max(0, nanos);
    return Duration.newBuilder().setSeconds(n / 1_000_000_000L).setNanos((int) (n % 1_000_000_000L)).build();
  }
}
