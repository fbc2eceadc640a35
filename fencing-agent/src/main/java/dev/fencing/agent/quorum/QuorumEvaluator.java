package dev.fencing.agent.quorum;

import dev.fencing.policy.Reachability;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * Quorum by round trips (ARCHITECTURE §5). Pure: no threads, no clock of its own; every method takes this node's
 * monotonic time. Not thread-safe: one evaluation thread owns it.
 *
 * <p>{@code confirmed[p]} is the latest of <em>our own</em> send times that peer {@code p} echoed back, so it proves
 * a round trip this node → p → this node that started at that instant. Quorum is held when
 * {@code 1 + |{p : now − confirmed[p] ≤ window}| ≥ quorumSize}; on an exact half split the tie-breakers decide. Since
 * every counted instant is one of our send times that a peer received, a node cut off in either direction stops
 * holding quorum at most {@code window × cap} after the last of its heartbeats that reached the other side, and
 * stops feeding by the next evaluation: {@link QuorumSettings#tStop()}.
 *
 * <p>Asking early: a remote tie-breaker cannot answer on the evaluation where the tie appears. So while the window
 * still holds a majority but only exactly half of the members have round trips younger than
 * {@code window − tieBreakLead}, the tie-breakers are {@linkplain TieBreaker#prepare prepared} for that side, and the
 * answer is in hand when the older confirmations lapse. Preparing never changes {@code held} or {@code heldUntil};
 * those depend only on the confirmations in the window and, at the tie itself, the tie-breaker's verdict.
 *
 * <p>Several networks ({@link #useNetworks}): every network keeps its own round-trip evidence (heartbeats on network
 * N echo only send times of N), and a peer's confirmation is combined per evaluation by the reachability rule: Any =
 * the latest confirmed round trip on any network, All = the oldest of the latest per network, and none unless every
 * network has one. Either way the combined instant is one of our send times that the peer received, so the bound
 * above holds unchanged.
 */
public final class QuorumEvaluator {

  /** Per expected peer. Times are on this node's clock except {@code latestReceivedSend} (the peer's clock). */
  private static final class PeerState {
    boolean sent;
    long lastSentNanos;
    boolean heard;
    long lastHeardNanos;
    boolean confirmed;
    long confirmedNanos;
    long latestReceivedBootId = Heartbeat.NO_ECHO;
    long latestReceivedSendNanos;
  }

  private final String group;
  private final long bootId;
  private QuorumSettings settings;
  private LocalHealth localHealth;
  /** The network of a single-network group (and the default of the methods without a network). */
  public static final String SINGLE_NETWORK = "";

  private List<String> networks = List.of(SINGLE_NETWORK);
  private Reachability reachability = Reachability.ANY;
  // Per peer, the networks it has an address on (absent: every network); evidence combines over these only.
  private Map<String, java.util.Set<String>> peerNetworks = Map.of();
  // network → expected peer → its evidence on that network.
  private final Map<String, Map<String, PeerState>> evidence = new LinkedHashMap<>();

  /**
   * @param group the group name carried in (and required of) every heartbeat
   * @param bootId random non-zero id of this agent process; echoes of another boot's send times never count
   * @param settings expected set, quorum size, timings, tie-breakers
   */
  public QuorumEvaluator(String group, long bootId, QuorumSettings settings) {
    if (bootId == Heartbeat.NO_ECHO) {
      throw new IllegalArgumentException("boot id must not be 0");
    }
    this.group = group;
    this.bootId = bootId;
    reconfigure(settings);
  }

  /** Applies a new configuration; round-trip history of members that stay expected is kept. */
  public void reconfigure(QuorumSettings newSettings) {
    this.settings = newSettings;
    this.localHealth = new LocalHealth(newSettings.quorumWindow().toNanos());
    evidence.keySet().retainAll(networks);
    for (String network : networks) {
      Map<String, PeerState> peers = evidence.computeIfAbsent(network, n -> new HashMap<>());
      peers.keySet().retainAll(newSettings.expected());
      for (String name : newSettings.expected()) {
        if (!name.equals(newSettings.self())) {
          peers.computeIfAbsent(name, n -> new PeerState());
        }
      }
    }
  }

  /**
   * Sets the gossip networks round trips are measured on and how they combine; evidence of networks that stay is
   * kept. One network ({@code [SINGLE_NETWORK]}) is the default and behaves exactly as before networks existed.
   */
  public void useNetworks(List<String> names, Reachability rule) {
    useNetworks(names, rule, Map.of());
  }

  /**
   * As {@link #useNetworks(List, Reachability)}, judging each peer named in {@code onNetworks} only on the networks
   * listed for it (those it has an address on): a network where a peer has no address yet (the controller has not
   * learnt it) neither confirms nor vetoes it, so {@code All} means every network the peer is known on.
   */
  public void useNetworks(List<String> names, Reachability rule, Map<String, java.util.Set<String>> onNetworks) {
    if (names.isEmpty() || names.size() != names.stream().distinct().count()) {
      throw new IllegalArgumentException("networks must be distinct and at least one: " + names);
    }
    this.networks = List.copyOf(names);
    this.reachability = java.util.Objects.requireNonNull(rule, "rule");
    Map<String, java.util.Set<String>> copy = new HashMap<>();
    onNetworks.forEach((peer, nets) -> copy.put(peer, java.util.Set.copyOf(nets)));
    this.peerNetworks = copy;
    reconfigure(settings);
  }

  /** The networks round trips are measured on. */
  public List<String> networks() {
    return networks;
  }

  public QuorumSettings settings() {
    return settings;
  }

  public long bootId() {
    return bootId;
  }

  public String group() {
    return group;
  }

  /** The expected peers (every expected member except this node), in name order. */
  public SortedSet<String> peers() {
    TreeSet<String> names = new TreeSet<>(settings.expected());
    names.remove(settings.self());
    return names;
  }

  /**
   * Builds the heartbeat to send to {@code peer} now and remembers its send time (an echo can never confirm a time
   * later than our latest send to that peer).
   */
  public Heartbeat heartbeatFor(String peer, long nowNanos) {
    return heartbeatFor(peer, networks.get(0), nowNanos);
  }

  /** As {@link #heartbeatFor(String, long)}, for the heartbeat to {@code peer} on {@code network}. */
  public Heartbeat heartbeatFor(String peer, String network, long nowNanos) {
    Map<String, PeerState> peers = evidence.get(network);
    if (peers == null) {
      throw new IllegalArgumentException("'" + network + "' is not one of the networks " + networks);
    }
    PeerState state = peers.get(peer);
    if (state == null) {
      throw new IllegalArgumentException("'" + peer + "' is not an expected peer of " + settings.self());
    }
    state.sent = true;
    state.lastSentNanos = nowNanos;
    return new Heartbeat(group, settings.self(), bootId, nowNanos, state.latestReceivedBootId,
        state.latestReceivedSendNanos);
  }

  /** Processes one received heartbeat; never throws on content from the network. */
  public HeartbeatOutcome onHeartbeat(Heartbeat heartbeat, long nowNanos) {
    return onHeartbeat(heartbeat, networks.get(0), nowNanos);
  }

  /** As {@link #onHeartbeat(Heartbeat, long)}, for a heartbeat that arrived on {@code network}. */
  public HeartbeatOutcome onHeartbeat(Heartbeat heartbeat, String network, long nowNanos) {
    Map<String, PeerState> peers = evidence.getOrDefault(network, Map.of());
    if (!group.equals(heartbeat.group())) {
      return HeartbeatOutcome.WRONG_GROUP;
    }
    if (settings.self().equals(heartbeat.sender())) {
      return HeartbeatOutcome.FROM_SELF;
    }
    PeerState state = peers.get(heartbeat.sender());
    if (state == null) {
      return HeartbeatOutcome.UNKNOWN_SENDER;
    }
    state.heard = true;
    state.lastHeardNanos = nowNanos;
    if (state.latestReceivedBootId != heartbeat.senderBootId()
        || heartbeat.sendNanos() - state.latestReceivedSendNanos > 0) {
      state.latestReceivedBootId = heartbeat.senderBootId();
      state.latestReceivedSendNanos = heartbeat.sendNanos();
    }
    if (heartbeat.echoBootId() != bootId || !state.sent) {
      return HeartbeatOutcome.HEARD;
    }
    long echo = heartbeat.echoNanos();
    // An echo of a time we never sent (later than our latest send to this peer) proves nothing.
    if (echo - state.lastSentNanos > 0 || echo - nowNanos > 0) {
      return HeartbeatOutcome.HEARD;
    }
    if (!state.confirmed || echo - state.confirmedNanos > 0) {
      state.confirmed = true;
      state.confirmedNanos = echo;
    }
    return HeartbeatOutcome.CONFIRMED;
  }

  /**
   * Records how late this node itself was: a timer that fired late, or the age of the oldest inbound message when
   * it was processed. Stretches the window (capped) for one quorum window.
   */
  public void observeLocalLag(long nowNanos, long lateNanos) {
    localHealth.observe(nowNanos, lateNanos);
  }

  /** Evaluates quorum at {@code nowNanos}. */
  public QuorumVerdict evaluate(long nowNanos) {
    long baseWindow = settings.quorumWindow().toNanos();
    long lag = Math.min(localHealth.currentLag(nowNanos), settings.maxWindowNanos() - baseWindow);
    long window = baseWindow + lag;
    long earlyWindow = window - settings.tieBreakLead().toNanos();

    TreeSet<String> side = new TreeSet<>();
    side.add(settings.self());
    TreeSet<String> earlySide = new TreeSet<>();
    earlySide.add(settings.self());
    List<PeerQuorumView> views = new ArrayList<>();
    SortedSet<String> peerNames = peers();
    long[] confirmedTimes = new long[peerNames.size()];
    int counted = 0;
    for (String name : peerNames) {
      PeerState state = combined(name);
      boolean inWindow = state.confirmed && nowNanos - state.confirmedNanos <= window;
      if (inWindow) {
        side.add(name);
        confirmedTimes[counted++] = state.confirmedNanos;
        if (nowNanos - state.confirmedNanos <= earlyWindow) {
          earlySide.add(name);
        }
      }
      views.add(new PeerQuorumView(name, inWindow,
          state.confirmed ? OptionalLong.of(nowNanos - state.confirmedNanos) : OptionalLong.empty(),
          state.heard ? OptionalLong.of(nowNanos - state.lastHeardNanos) : OptionalLong.empty(),
          perNetwork(name, nowNanos, window)));
    }
    int expected = settings.expected().size();
    int heard = side.size();
    int quorumSize = settings.quorumSize();

    boolean held;
    String outcome = "none";
    long tieWinValidUntil = 0;
    boolean tieWinExpires = false;
    if (heard >= quorumSize) {
      held = true;
      if (2 * earlySide.size() == expected && !settings.tieBreakers().isEmpty()) {
        // Only this exact half would remain once the older confirmations lapse: get the tie-break answer now.
        for (TieBreaker tieBreaker : settings.tieBreakers()) {
          tieBreaker.prepare(Collections.unmodifiableSortedSet(earlySide), settings.expected(), nowNanos);
        }
        outcome = "majority; tie likely soon, tie-breakers asked early for " + earlySide;
      }
    } else if (2 * heard == expected && heard == quorumSize - 1) {
      held = false;
      StringBuilder reasons = new StringBuilder();
      for (TieBreaker tieBreaker : settings.tieBreakers()) {
        TieBreakVerdict verdict = tieBreaker.evaluate(side, settings.expected(), nowNanos);
        if (reasons.length() > 0) {
          reasons.append("; ");
        }
        reasons.append(verdict.reason());
        if (verdict.outcome() != TieBreakVerdict.Outcome.NO_ANSWER) {
          held = verdict.outcome() == TieBreakVerdict.Outcome.WIN;
          if (held && verdict.winValidUntilNanos().isPresent()) {
            tieWinExpires = true;
            tieWinValidUntil = verdict.winValidUntilNanos().getAsLong();
          }
          break;
        }
      }
      outcome = reasons.length() == 0 ? "no tie-breaker configured" : reasons.toString();
    } else {
      held = false;
    }

    long heldUntil = nowNanos;
    if (held) {
      int needed = heard >= quorumSize ? quorumSize - 1 : heard - 1;
      if (needed <= 0) {
        heldUntil = nowNanos + settings.evaluationTick().toNanos();
      } else {
        long[] sorted = Arrays.copyOf(confirmedTimes, counted);
        Arrays.sort(sorted);
        // The needed-th most recent confirmation is the one whose expiry drops the count below what is needed.
        heldUntil = sorted[counted - needed] + window;
      }
      if (tieWinExpires && tieWinValidUntil - heldUntil < 0) {
        // A tie won on a lease holds no longer than the lease, even if the next evaluation is late.
        heldUntil = tieWinValidUntil;
      }
      if (heldUntil - nowNanos < 0) {
        held = false;
        heldUntil = nowNanos;
      }
    }
    return new QuorumVerdict(held, nowNanos, heldUntil, expected, heard, quorumSize, side, outcome, window, lag,
        views);
  }

  /**
   * {@code peer}'s evidence over every network, combined by the reachability rule: confirmed at the latest
   * confirmation of any network (Any) or at the oldest network's latest one, only when every network has one (All);
   * heard at the latest heartbeat on any network (the later, the safer for safe-to-assume-fenced).
   */
  private PeerState combined(String peer) {
    if (networks.size() == 1) {
      return evidence.get(networks.get(0)).get(peer);
    }
    PeerState out = new PeerState();
    boolean everyNetwork = true;
    long latest = 0;
    long oldest = 0;
    boolean any = false;
    java.util.Set<String> known = peerNetworks.get(peer);
    for (Map.Entry<String, Map<String, PeerState>> onNetwork : evidence.entrySet()) {
      if (known != null && !known.contains(onNetwork.getKey())) {
        continue;
      }
      PeerState s = onNetwork.getValue().get(peer);
      if (s.heard && (!out.heard || s.lastHeardNanos - out.lastHeardNanos > 0)) {
        out.heard = true;
        out.lastHeardNanos = s.lastHeardNanos;
      }
      if (!s.confirmed) {
        everyNetwork = false;
        continue;
      }
      latest = !any || s.confirmedNanos - latest > 0 ? s.confirmedNanos : latest;
      oldest = !any || s.confirmedNanos - oldest < 0 ? s.confirmedNanos : oldest;
      any = true;
    }
    if (reachability == Reachability.ALL) {
      out.confirmed = any && everyNetwork;
      out.confirmedNanos = oldest;
    } else {
      out.confirmed = any;
      out.confirmedNanos = latest;
    }
    return out;
  }

  /** Per-network evidence of {@code peer} for status and reports; empty for a single network (nothing changes). */
  private List<NetworkEvidence> perNetwork(String peer, long nowNanos, long window) {
    if (networks.size() == 1) {
      return List.of();
    }
    List<NetworkEvidence> out = new ArrayList<>(networks.size());
    for (String network : networks) {
      PeerState s = evidence.get(network).get(peer);
      out.add(new NetworkEvidence(network, s.confirmed && nowNanos - s.confirmedNanos <= window,
          s.confirmed ? OptionalLong.of(nowNanos - s.confirmedNanos) : OptionalLong.empty(),
          s.heard ? OptionalLong.of(nowNanos - s.lastHeardNanos) : OptionalLong.empty()));
    }
    return out;
  }
}
