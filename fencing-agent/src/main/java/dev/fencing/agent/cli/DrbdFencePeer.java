package dev.fencing.agent.cli;

import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.FencingMode;
import dev.fencing.proto.fencing.v1.PeerMemberState;
import dev.fencing.proto.fencing.v1.PeerStatus;
import dev.fencing.proto.fencing.v1.QuorumLossAction;
import dev.fencing.proto.fencing.v1.TieBreaker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * DRBD's fence-peer handler contract, pure: which peer DRBD means (from the environment drbdadm and the kernel pass)
 * and whether the local agent's view makes it safe to tell DRBD the peer is fenced.
 *
 * <p>Environment: DRBD 9 passes {@code DRBD_PEER_NODE_ID} (kernel) and drbdadm adds {@code DRBD_NODE_ID_<id>=<host>}
 * for every host of the resource, {@code DRBD_RESOURCE}, {@code DRBD_MINOR}, {@code DRBD_CONF},
 * {@code DRBD_MY_NODE_ID}; the kernel also passes {@code DRBD_PEER_ADDRESS} and {@code DRBD_PEER_AF}. DRBD 8.4's
 * drbdadm passes {@code DRBD_PEER} (host), {@code DRBD_PEERS} (hosts, space separated), {@code DRBD_PEER_ADDRESS},
 * {@code DRBD_PEER_AF}. A DRBD host name is matched to the agent member of the same name, else the peer address to a
 * member's address.
 *
 * <p>Exit codes of the contract (as drbd-utils' {@code crm-fence-peer.9.sh} documents them): 3 peer already outdated
 * or inconsistent, 4 peer outdated by the handler, 5 peer unreachable and assumed dead, 6 peer is primary (outdate
 * yourself), 7 peer fenced (STONITH). Anything else is a failed handler: with {@code fencing resource-and-stonith}
 * DRBD keeps I/O frozen. This handler answers {@link #FENCED} only when every named peer is gone (member state LEFT or
 * DEAD) and was last heard at least safe-to-assume-fenced ago, by an agent that holds quorum in a group whose nodes
 * fence themselves (mode Watchdog, quorumLossAction Fence); otherwise {@link #NOT_FENCED}. It never answers 3 to 6:
 * the agent cannot know the peer's disk state.
 */
final class DrbdFencePeer {

  /** "Peer has been STONITHed, thus assumed to be properly fenced." */
  static final int FENCED = 7;
  /** Not fenced (or not known to be): the handler failed, DRBD keeps I/O frozen under resource-and-stonith. */
  static final int NOT_FENCED = 1;

  /**
   * The peer DRBD asks about, as the environment names it.
   *
   * @param hosts   DRBD host names of the peer(s), in order
   * @param address the peer's address (DRBD_PEER_ADDRESS), or empty
   */
  record Target(List<String> hosts, String address) {

    Target {
      hosts = List.copyOf(hosts);
    }

    /** Reads the environment; empty with the reason when it names no peer. */
    static Target fromEnvironment(Map<String, String> env) {
      Set<String> hosts = new LinkedHashSet<>();
      String peers = env.getOrDefault("DRBD_PEERS", "").trim();
      if (!peers.isEmpty()) {
        hosts.addAll(List.of(peers.split("\\s+")));
      }
      String peer = env.getOrDefault("DRBD_PEER", "").trim();
      if (!peer.isEmpty()) {
        hosts.add(peer);
      }
      String nodeId = env.getOrDefault("DRBD_PEER_NODE_ID", "").trim();
      if (!nodeId.isEmpty()) {
        String host = env.getOrDefault("DRBD_NODE_ID_" + nodeId, "").trim();
        if (!host.isEmpty()) {
          hosts.add(host);
        }
      }
      return new Target(new ArrayList<>(hosts), env.getOrDefault("DRBD_PEER_ADDRESS", "").trim());
    }

    boolean isEmpty() {
      return hosts.isEmpty() && address.isEmpty();
    }

    @Override
    public String toString() {
      return (hosts.isEmpty() ? "" : String.join(" ", hosts)) + (address.isEmpty() ? ""
          : (hosts.isEmpty() ? "" : " ") + "(" + address + ")");
    }
  }

  /**
   * The answer for one look at the agent's status.
   *
   * @param code    {@link #FENCED} or {@link #NOT_FENCED}
   * @param settled true when waiting cannot change it (fenced, alive, unknown peer, policy); false while a gone
   *                peer's safe-to-assume-fenced delay is still running
   * @param message one line for stderr (and syslog through DRBD's helper logging)
   * @param toGo    while not settled, how long until the last peer's delay has passed (it can only end sooner by
   *                settling: the peer heard again, quorum lost); zero when settled
   */
  record Verdict(int code, boolean settled, String message, Duration toGo) {

    Verdict(int code, boolean settled, String message) {
      this(code, settled, message, Duration.ZERO);
    }
  }

  private DrbdFencePeer() {}

  /**
   * Why this node's quorum does not exclude the peer's side holding one too, or empty when it does: a quorum size
   * of more than half the group (so two disjoint sides cannot both reach it), and either a strict majority heard or
   * exactly half held through a split-brain-safe tie-breaker (ControlPlane, LowestName, Disk: one side only).
   * {@code APIReachable} lets both halves hold, and so does a {@code quorumSize} of half the group or less.
   */
  static Optional<String> notExclusive(AgentStatus status) {
    long expected = status.getExpected();
    long heard = status.getHeard();
    long size = status.getQuorumSize();
    String counts = "heard " + heard + " of " + expected + ", quorum " + size;
    if (size * 2 <= expected) {
      return Optional.of("its quorum size is half the group or less (" + counts + ")");
    }
    if (heard * 2 > expected) {
      return Optional.empty();
    }
    TieBreaker first = status.getTieBreakersCount() == 0 ? TieBreaker.TIE_BREAKER_UNSPECIFIED
        : status.getTieBreakers(0);
    if (heard * 2 == expected && (first == TieBreaker.TIE_BREAKER_CONTROL_PLANE
        || first == TieBreaker.TIE_BREAKER_LOWEST_NAME || first == TieBreaker.TIE_BREAKER_DISK)) {
      return Optional.empty();
    }
    String name = switch (first) {
      case TIE_BREAKER_API_REACHABLE -> "APIReachable";
      case TIE_BREAKER_UNSPECIFIED -> "none";
      default -> HumanFormat.enumName(first);
    };
    return Optional.of("only through tie-breaker " + name + " (" + counts + "), which is not split-brain safe");
  }

  /** Decides from the agent's status. */
  static Verdict decide(Target target, AgentStatus status) {
    if (target.isEmpty()) {
      return new Verdict(NOT_FENCED, true, "not fenced: the environment names no peer (DRBD_PEER_NODE_ID with "
          + "DRBD_NODE_ID_<id>, DRBD_PEERS, DRBD_PEER or DRBD_PEER_ADDRESS); is this run by drbdadm?");
    }
    if (status.getMode() != FencingMode.FENCING_MODE_WATCHDOG
        || status.getQuorumLossAction() != QuorumLossAction.QUORUM_LOSS_ACTION_FENCE) {
      return new Verdict(NOT_FENCED, true, "not fenced: group " + status.getGroup() + " does not fence its nodes "
          + "(mode " + HumanFormat.enumName(status.getMode()) + ", quorum loss action "
          + HumanFormat.enumName(status.getQuorumLossAction()) + "): a peer the agents lost may still run");
    }
    if (!status.getQuorumHeld() || status.getFencingInProgress()) {
      return new Verdict(NOT_FENCED, true, "not fenced: this node (" + status.getNode() + ") does not hold quorum"
          + " (heard " + status.getHeard() + " of " + status.getExpected() + ", quorum " + status.getQuorumSize()
          + "): it may be the one cut off");
    }
    Optional<String> exclusive = notExclusive(status);
    if (exclusive.isPresent()) {
      return new Verdict(NOT_FENCED, true, "not fenced: this node (" + status.getNode() + ") holds quorum, but "
          + exclusive.get() + ": the peer's side may hold it too");
    }
    if (!status.hasTimings() || !status.getTimings().hasSafeToAssumeFencedDelay()) {
      return new Verdict(NOT_FENCED, true, "not fenced: the agent reports no safe-to-assume-fenced delay yet");
    }
    com.google.protobuf.Duration d = status.getTimings().getSafeToAssumeFencedDelay();
    Duration safe = Duration.ofSeconds(d.getSeconds(), d.getNanos());
    List<PeerStatus> peers = new ArrayList<>();
    for (String host : target.hosts()) {
      Optional<PeerStatus> p = status.getPeersList().stream().filter(s -> s.getName().equals(host)).findFirst();
      if (p.isEmpty() && target.hosts().size() == 1 && !target.address().isEmpty()) {
        p = byAddress(status, target.address());
      }
      if (p.isEmpty()) {
        return new Verdict(NOT_FENCED, true, "not fenced: DRBD peer " + host + " is not a member of group "
            + status.getGroup() + " as agent " + status.getNode() + " knows it");
      }
      peers.add(p.get());
    }
    if (target.hosts().isEmpty()) {
      Optional<PeerStatus> p = byAddress(status, target.address());
      if (p.isEmpty()) {
        return new Verdict(NOT_FENCED, true, "not fenced: no member of group " + status.getGroup()
            + " has the DRBD peer address " + target.address());
      }
      peers.add(p.get());
    }
    Duration longest = Duration.ZERO;
    List<String> fenced = new ArrayList<>();
    for (PeerStatus p : peers) {
      boolean gone = p.getMemberState() == PeerMemberState.PEER_MEMBER_STATE_LEFT
          || p.getMemberState() == PeerMemberState.PEER_MEMBER_STATE_DEAD;
      if (p.getConfirmed() || !gone && p.getMemberState() == PeerMemberState.PEER_MEMBER_STATE_ALIVE) {
        return new Verdict(NOT_FENCED, true, "not fenced: peer " + p.getName() + " is alive (state "
            + HumanFormat.enumName(p.getMemberState()) + (p.hasSinceLastHeard() ? ", heard "
            + HumanFormat.duration(p.getSinceLastHeard()) + " ago" : "") + "); DRBD lost only its own link");
      }
      if (!p.hasSinceLastHeard()) {
        return new Verdict(NOT_FENCED, true, "not fenced: peer " + p.getName() + " was never heard by this agent,"
            + " so when it was last alive is unknown");
      }
      Duration since = Duration.ofSeconds(p.getSinceLastHeard().getSeconds(), p.getSinceLastHeard().getNanos());
      if (!gone || since.compareTo(safe) < 0) {
        Duration left = safe.minus(since);
        longest = left.compareTo(longest) > 0 ? left : longest;
        continue;
      }
      fenced.add(p.getName() + " (" + HumanFormat.enumName(p.getMemberState()) + ", last heard "
          + HumanFormat.duration(p.getSinceLastHeard()) + " ago)");
    }
    if (fenced.size() < peers.size()) {
      return new Verdict(NOT_FENCED, false, "not fenced yet: peer(s) " + target + " not gone for the "
          + "safe-to-assume-fenced delay " + HumanFormat.duration(d) + " (" + longest.toMillis() + " ms to go)",
          longest);
    }
    return new Verdict(FENCED, true, "fenced: " + String.join(", ", fenced) + " >= safe-to-assume-fenced "
        + HumanFormat.duration(d) + " (agent " + status.getNode() + ", group " + status.getGroup() + ")");
  }

  private static Optional<PeerStatus> byAddress(AgentStatus status, String address) {
    String host = hostOf(address);
    return status.getPeersList().stream().filter(p -> p.getAddressesMap().values().stream()
        .anyMatch(a -> hostOf(a).equals(host))).findFirst();
  }

  // "198.18.0.2", "198.18.0.2:7789", "[fd00::2]:7789" -> the host part.
  private static String hostOf(String address) {
    String a = address.trim();
    if (a.startsWith("[")) {
      int end = a.indexOf(']');
      return end > 0 ? a.substring(1, end) : a;
    }
    int colon = a.indexOf(':');
    return colon > 0 && a.indexOf(':', colon + 1) < 0 ? a.substring(0, colon) : a;
  }
}
