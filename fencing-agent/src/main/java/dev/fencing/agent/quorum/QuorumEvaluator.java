package dev.fencing.agent.quorum;

import dev.fencing.policy.Reachability;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
 * <p>Relayed evidence (groups above {@link Overlay#DIRECT_MAX}): heartbeats go only to the {@link Overlay} ring
 * neighbours and carry a {@link ReachDigest}: the sender's evidence age of every member. A digest counts only with a
 * valid echo of one of our send times {@code s} in the same heartbeat, and then gives member {@code r} the evidence
 * instant {@code s − age(r)} on our clock. The sender counts {@code age(r)} from the instant it received {@code s}
 * (evidence it got later counts as age 0), and {@code s} was sent before it arrived, so that instant is no later
 * than the real instant of the sender's evidence: relayed evidence only ever ages with real time, along a chain of
 * round trips. Entries a neighbour already reported (within {@link #OMIT_MARGIN_LEVELS}) are left out of the digest
 * to it, which only withholds evidence. A member counts while its freshest evidence, direct or relayed
 * ({@link #evidenceAgeNanos}), is within the window.
 * Relayed evidence is used only with one network: a group with several networks heartbeats every peer
 * directly on every network.
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
    // Boots of this peer we received heartbeats of before its current one, with the latest send time received of
    // each: a packet of one of them that is not newer is a replay (a new boot id that collides with a left one sends
    // newer times and counts again). Bounded: the oldest is forgotten first.
    final Map<Long, Long> leftBoots = new java.util.LinkedHashMap<>();
    // When (our clock) we received that send time: the ages in our digest to it count from here.
    long latestReceivedAtNanos;
    boolean relayed;
    long relayedNanos;
    // A version 1 heartbeat from an agent that does not read digests: answer it in version 1, even off the overlay.
    boolean legacy;
    long legacyHeardNanos;
    // It asked us for an echo (its version 1 heartbeats always do); we answer once, within the longest window.
    boolean wantsEcho;
    long wantsEchoNanos;
    // In the latest round we heartbeat it on our own account (neighbour or detour), not only to answer it.
    boolean initiative = true;
    // Its latest heartbeat that echoed our boot id came in version 1 or 2: it does not read version 3 whatever its
    // own boot id says (an agent that reads version 3 writes it to us once it has heard our boot id).
    boolean readsNoCompact;
    // In the latest round it is the detour we ask for a digest (see heartbeatTargets).
    boolean askDigest;
    // It asked us for a digest in its answer (it is short of evidence and we are its detour): the next heartbeat to
    // it carries one.
    boolean digestWanted;
    long digestWantedNanos;

    boolean hasEvidence() {
      return confirmed || relayed;
    }

    /** The freshest evidence instant, direct or relayed (only meaningful with {@link #hasEvidence()}). */
    long evidenceNanos() {
      if (!relayed) {
        return confirmedNanos;
      }
      if (!confirmed) {
        return relayedNanos;
      }
      return relayedNanos - confirmedNanos > 0 ? relayedNanos : confirmedNanos;
    }
  }

  /** Boots per peer remembered as left ({@code PeerState.leftBoots}). */
  static final int LEFT_BOOTS_KEPT = 8;

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
  private Overlay overlay;
  // The overlay is relayed and the group has one network (several networks always heartbeat directly).
  private boolean relayed;
  private SortedSet<String> peerNames;
  private SortedSet<String> neighbours;
  // The peers' states in overlay member order (null at this node's own index): the index order of digests.
  private PeerState[] byIndex;
  // The latest verdict's side and what it was built from (see side()).
  private Side lastSide;
  private int detourRounds;
  // Per overlay neighbour (its slot): the evidence instant, on our clock, of every member (overlay index) that its
  // digests reported, and whether it reported one since its current boot. Evidence never gets older at the sender,
  // so the neighbour still has at least that; an entry our evidence does not beat by more than OMIT_MARGIN_LEVELS
  // units is left out of our digest to it.
  private Map<String, Integer> neighbourSlots;
  private long[][] reportedNanos;
  private boolean[][] reported;
  private long[] reportedBootId;
  private ReachDigest[] cachedDigests;
  private long[] cachedDigestNanos;

  /**
   * Entries of a digest to a neighbour are left out when our evidence is at most this many digest units fresher
   * than what the neighbour itself last reported of that member (a report about one heartbeat old: in a healthy
   * group its evidence has moved on by about that much since). The neighbour loses at most this much freshness
   * (two units are a seventh of the window), and entries it would only receive back, or receive no fresher than it
   * already has, are not sent at all.
   */
  static final int OMIT_MARGIN_LEVELS = 2;

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

  /**
   * Applies a new configuration; round-trip history of members that stay expected is kept, and so is the local lag
   * observed so far (capped by the new settings at each evaluation).
   */
  public void reconfigure(QuorumSettings newSettings) {
    this.settings = newSettings;
    long memory = newSettings.quorumWindow().toNanos();
    this.localHealth = localHealth == null ? new LocalHealth(memory) : localHealth.carriedInto(memory);
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
    TreeSet<String> names = new TreeSet<>(newSettings.expected());
    names.remove(newSettings.self());
    peerNames = Collections.unmodifiableSortedSet(names);
    overlay = Overlay.of(group, newSettings.expected());
    relayed = overlay.relayed() && networks.size() == 1;
    neighbours = relayed ? overlay.neighbours(newSettings.self()) : peerNames;
    Map<String, PeerState> peers = evidence.get(networks.get(0));
    byIndex = new PeerState[overlay.members().size()];
    for (int i = 0; i < byIndex.length; i++) {
      byIndex[i] = peers.get(overlay.members().get(i));
    }
    Map<String, Integer> slots = new HashMap<>();
    if (relayed) {
      for (String neighbour : neighbours) {
        slots.put(neighbour, slots.size());
      }
    }
    neighbourSlots = slots;
    reportedNanos = new long[slots.size()][byIndex.length];
    reported = new boolean[slots.size()][byIndex.length];
    reportedBootId = new long[slots.size()];
    cachedDigests = new ReachDigest[slots.size()];
    cachedDigestNanos = new long[slots.size()];
  }

  /**
   * The overlay of the expected set (all-to-all up to {@link Overlay#DIRECT_MAX} members). Heartbeats follow it only
   * with one network: with several, every peer is heartbeat directly on every network.
   */
  public Overlay overlay() {
    return overlay;
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
    // Each peer's youngest evidence on the networks used so far: a network the switch adds starts from it, not from
    // nothing. Otherwise adding, removing or renaming the networks of a running group (the CRD field may change)
    // would leave every armed node without evidence at the next tick and fence the whole group at once. The copies
    // keep their instants, so they expire when the evidence they copy would have: quorum is held no longer than
    // round trips actually measured allow, and under All a new network counts as the old ones did for one quorum
    // window at most, until its own round trips arrive.
    Map<String, Long> youngest = new HashMap<>();
    evidence.forEach((network, peers) -> peers.forEach((peer, state) -> {
      if (state.hasEvidence()) {
        youngest.merge(peer, state.evidenceNanos(), (x, y) -> x - y > 0 ? x : y);
      }
    }));
    List<String> before = networks;
    this.networks = List.copyOf(names);
    this.reachability = java.util.Objects.requireNonNull(rule, "rule");
    Map<String, java.util.Set<String>> copy = new HashMap<>();
    onNetworks.forEach((peer, nets) -> copy.put(peer, java.util.Set.copyOf(nets)));
    this.peerNetworks = copy;
    reconfigure(settings);
    for (String network : networks) {
      if (before.contains(network)) {
        continue;
      }
      evidence.get(network).forEach((peer, state) -> {
        Long at = youngest.get(peer);
        if (at != null) {
          state.confirmed = true;
          state.confirmedNanos = at;
        }
      });
    }
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
    return peerNames;
  }

  /**
   * The peers to send a heartbeat to in the round at {@code nowNanos}. In a small group: every peer. In a relayed
   * group: the overlay neighbours; every peer that asked us for an echo since our last heartbeat to it, within the
   * longest window (an older agent during a rollout heartbeating everyone, a node whose overlay differs while a
   * config change propagates, or a node that added us as a detour), answered once per request; and detours: while
   * fewer than {@code quorumSize + max(neighbours, N/20)} members have evidence younger than three quarters of the
   * window (a partition took the rest and lengthened the relayed paths inside our side), up to as many peers as we
   * have neighbours among those whose evidence is older but within the longest window, a different choice each
   * round, so a node whose component still has a quorum is not cut off from it by the overlay alone, plus one peer
   * off the overlay that answered us within the window, asked for its digest. A detour is only asked; evidence still
   * needs its round trip.
   */
  public SortedSet<String> heartbeatTargets(long nowNanos) {
    if (!relayed) {
      return peerNames;
    }
    TreeSet<String> targets = new TreeSet<>(neighbours);
    long window = settings.quorumWindow().toNanos();
    long comfortable = window - window / 4;
    int comfortablyCounted = 1;
    List<String> detourCandidates = new ArrayList<>();
    List<String> digestSources = new ArrayList<>();
    List<String> answered = new ArrayList<>();
    for (int i = 0; i < byIndex.length; i++) {
      PeerState state = byIndex[i];
      if (state == null) {
        continue;
      }
      String name = overlay.members().get(i);
      state.initiative = neighbours.contains(name);
      state.askDigest = false;
      // Once per request: a second answer would echo the same send time again, which proves nothing new.
      if (state.wantsEcho && nowNanos - state.wantsEchoNanos <= settings.maxWindowNanos()
          && (!state.sent || state.wantsEchoNanos - state.lastSentNanos > 0)) {
        answered.add(name);
      }
      long age = state.hasEvidence() ? nowNanos - state.evidenceNanos() : Long.MAX_VALUE;
      if (!state.initiative && state.confirmed && nowNanos - state.confirmedNanos <= window
          && Heartbeat.readsCompactDigests(state.latestReceivedBootId) && !state.readsNoCompact) {
        digestSources.add(name);
      }
      if (age <= comfortable) {
        comfortablyCounted++;
      } else if (!state.initiative && age <= settings.maxWindowNanos()) {
        detourCandidates.add(name);
      }
    }
    // Detours only while the quorum is at risk: few members beyond the quorum have evidence with a quarter of the
    // window to spare (a partition took the rest, and relayed paths inside our side got longer).
    int margin = Math.max(neighbours.size(), byIndex.length / 20);
    if (comfortablyCounted < settings.quorumSize() + margin) {
      // A different order per node (so no peer becomes everyone's detour) and per round (so a detour across the
      // cut, which never answers, does not take a slot for good).
      int salt = settings.self().hashCode() * 31 + detourRounds++;
      java.util.Comparator<String> order = java.util.Comparator.comparingInt(
          c -> Integer.rotateLeft(c.hashCode() ^ salt, 13) * 0x9E3779B1);
      detourCandidates.sort(order);
      for (String detour : detourCandidates.subList(0, Math.min(neighbours.size(), detourCandidates.size()))) {
        evidence.get(networks.get(0)).get(detour).initiative = true;
        targets.add(detour);
      }
      // One peer off the overlay that answered us within the window (so it is likely on our side) and reads
      // version 3 is asked for its reach digest: it relays what that member reaches, which a node whose overlay
      // neighbours all ended up across the cut has no other way to learn (detours' round trips alone count a few
      // members a round). One a round keeps the bytes small.
      if (!digestSources.isEmpty()) {
        String source = java.util.Collections.min(digestSources, order);
        PeerState state = evidence.get(networks.get(0)).get(source);
        state.initiative = true;
        state.askDigest = true;
        targets.add(source);
      }
    }
    // Answers never ask for an echo themselves, so two nodes never keep each other answering.
    targets.addAll(answered);
    return targets;
  }

  private boolean legacyActive(PeerState state, long nowNanos) {
    return state.legacy && nowNanos - state.legacyHeardNanos <= settings.maxWindowNanos();
  }

  /**
   * Builds the heartbeat to send to {@code peer} now and remembers its send time (an echo can never confirm a time
   * later than our latest send to that peer). In a relayed group a heartbeat to an overlay neighbour carries this
   * node's reach digest, except to an older agent (which reads only version 1).
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
    // Digests go to overlay neighbours, and in an answer to a detour that asked for one; any other detour or
    // answer is there for its round trip.
    boolean neighbour = neighbours.contains(peer);
    boolean digestAsked = !neighbour && state.digestWanted
        && nowNanos - state.digestWantedNanos <= settings.maxWindowNanos();
    Optional<ReachDigest> digest = relayed && !legacyActive(state, nowNanos)
        && (neighbour || digestAsked) ? Optional.of(digestFor(peer, nowNanos)) : Optional.empty();
    if (digestAsked) {
      state.digestWanted = false;
    }
    // An older agent reads only version 1, which always asks for an echo (it ignores that, heartbeating everyone).
    boolean wantsEcho = !relayed || state.initiative || legacyActive(state, nowNanos);
    // Version 3 only to an agent whose boot id reads it and which has not shown otherwise (see readsNoCompact).
    boolean compact = Heartbeat.readsCompactDigests(state.latestReceivedBootId) && !state.readsNoCompact;
    return new Heartbeat(group, settings.self(), bootId, nowNanos, state.latestReceivedBootId,
        state.latestReceivedSendNanos, digest, wantsEcho, compact, relayed && state.askDigest && !neighbour);
  }

  /**
   * This node's reach digest for overlay neighbour {@code neighbour} (or for a detour that asked for one) at
   * {@code nowNanos} (built once per neighbour and instant). The level unit is {@code quorumWindow / MAX_LEVEL}
   * rounded up to the millisecond, so every age within the window is representable. Left out
   * ({@link ReachDigest#NONE}, which a receiver skips exactly as an absent entry): this node itself and the neighbour
   * (the round trip of the heartbeat carries that evidence), and every member whose evidence the neighbour reported
   * to us at most {@link #OMIT_MARGIN_LEVELS} units older than ours (it has that evidence already, or nearly; a
   * detour's reports are not kept, so nothing is left out for it on that account). Leaving an entry out only
   * withholds evidence, it never makes any look fresher.
   */
  ReachDigest digestFor(String neighbour, long nowNanos) {
    Integer slot = neighbourSlots.get(neighbour);
    if (slot != null && cachedDigests[slot] != null && cachedDigestNanos[slot] == nowNanos) {
      return cachedDigests[slot];
    }
    int unitMillis = (int) Math.min(0xFFFF,
        Math.max(1, (settings.quorumWindow().toMillis() + ReachDigest.MAX_LEVEL - 1) / ReachDigest.MAX_LEVEL));
    long unitNanos = unitMillis * 1_000_000L;
    long margin = OMIT_MARGIN_LEVELS * unitNanos;
    PeerState addressee = evidence.get(networks.get(0)).get(neighbour);
    // What a detour reported is not kept: its digest (answering our request) leaves nothing out.
    boolean knowsReports = slot != null && reportedBootId[slot] == addressee.latestReceivedBootId;
    long[] theirs = slot == null ? null : reportedNanos[slot];
    boolean[] has = slot == null ? null : reported[slot];
    // Ages count from when we received the send time this heartbeat echoes, not from now (see the class comment).
    long base = addressee.latestReceivedBootId == Heartbeat.NO_ECHO ? nowNanos : addressee.latestReceivedAtNanos;
    byte[] packed = new byte[ReachDigest.packedLength(byIndex.length)];
    for (int i = 0; i < byIndex.length; i++) {
      PeerState state = byIndex[i];
      int level;
      if (state == null || state == addressee || !state.hasEvidence()) {
        level = ReachDigest.NONE;
      } else if (knowsReports && has[i] && state.evidenceNanos() - theirs[i] <= margin) {
        level = ReachDigest.NONE;
      } else {
        level = ReachDigest.levelFor(base - state.evidenceNanos(), unitNanos);
      }
      ReachDigest.setLevel(packed, i, level);
    }
    ReachDigest digest = new ReachDigest(overlay.fingerprint(), unitMillis, packed, byIndex.length);
    if (slot != null) {
      cachedDigests[slot] = digest;
      cachedDigestNanos[slot] = nowNanos;
    }
    return digest;
  }

  /**
   * Age of the freshest evidence that {@code peer} is reachable in both directions — a round trip with it, or one
   * relayed through neighbours — at {@code nowNanos}; empty if there never was any. A peer counts towards quorum
   * while this is within the window. (To combine several evidence sources, combine these ages.)
   */
  public OptionalLong evidenceAgeNanos(String peer, long nowNanos) {
    if (!peerNames.contains(peer)) {
      return OptionalLong.empty();
    }
    PeerState state = combined(peer);
    if (!state.hasEvidence()) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(nowNanos - state.evidenceNanos());
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
    // A captured heartbeat sent again must not make a dead peer look heard (its last contact feeds the controller's
    // fenced-node rule and drbd-fence-peer): only a newer one of its current boot, or one of a boot not seen before,
    // counts. The sender's send times are monotonic within a boot. (Quorum itself never depended on this: only an
    // echo of one of our own send times confirms.)
    long senderBoot = heartbeat.senderBootId();
    boolean correcting = false;
    if (state.latestReceivedBootId != Heartbeat.NO_ECHO) {
      Long latest = senderBoot == state.latestReceivedBootId ? Long.valueOf(state.latestReceivedSendNanos)
          : state.leftBoots.get(senderBoot);
      if (latest != null && heartbeat.sendNanos() - latest <= 0) {
        // The sender's own heartbeats echo our send times in order, so one that is not newer never completes a round
        // trip that a newer one has not: a replay or a reordered packet stays stale. One that does complete a fresh
        // round trip proves it is the sender's, and the recorded send time ahead of it was not (see CORRECTED).
        if (senderBoot != state.latestReceivedBootId || !completesFreshRoundTrip(state, heartbeat, nowNanos)) {
          return HeartbeatOutcome.STALE;
        }
        correcting = true;
      }
    }
    state.heard = true;
    state.lastHeardNanos = nowNanos;
    if (heartbeat.wantsEcho()) {
      state.wantsEcho = true;
      state.wantsEchoNanos = nowNanos;
    }
    if (heartbeat.wantsDigest()) {
      state.digestWanted = true;
      state.digestWantedNanos = nowNanos;
    }
    if (heartbeat.digest().isEmpty() && !Heartbeat.readsDigests(heartbeat.senderBootId())) {
      state.legacy = true;
      state.legacyHeardNanos = nowNanos;
    } else {
      state.legacy = false;
    }
    if (heartbeat.echoBootId() == bootId) {
      // Every agent writes version 1 or 2 until it has heard our boot id (which says we read version 3); one that
      // still does after that does not read version 3 whatever its own boot id says.
      state.readsNoCompact = !heartbeat.compact();
    }
    if (correcting || state.latestReceivedBootId != heartbeat.senderBootId()
        || heartbeat.sendNanos() - state.latestReceivedSendNanos > 0) {
      if (state.latestReceivedBootId != Heartbeat.NO_ECHO && state.latestReceivedBootId != senderBoot) {
        state.leftBoots.remove(senderBoot);
        state.leftBoots.put(state.latestReceivedBootId, state.latestReceivedSendNanos);
        if (state.leftBoots.size() > LEFT_BOOTS_KEPT) {
          state.leftBoots.remove(state.leftBoots.keySet().iterator().next());
        }
      }
      state.latestReceivedBootId = heartbeat.senderBootId();
      state.latestReceivedSendNanos = heartbeat.sendNanos();
      state.latestReceivedAtNanos = nowNanos;
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
    if (heartbeat.digest().isPresent()) {
      applyDigest(heartbeat.digest().get(), echo, heartbeat.sender(), heartbeat.senderBootId());
    }
    return correcting ? HeartbeatOutcome.CORRECTED : HeartbeatOutcome.CONFIRMED;
  }

  /** Whether {@code heartbeat} echoes a send time of ours to its sender that no heartbeat has confirmed yet. */
  private boolean completesFreshRoundTrip(PeerState state, Heartbeat heartbeat, long nowNanos) {
    long echo = heartbeat.echoNanos();
    return heartbeat.echoBootId() == bootId && state.sent && echo - state.lastSentNanos <= 0 && echo - nowNanos <= 0
        && (!state.confirmed || echo - state.confirmedNanos > 0);
  }

  /**
   * Relayed evidence: member {@code r} was reachable from the sender {@code age(r)} before the sender built the
   * digest, which was after it received our send time {@code echo}; so {@code echo − age(r)} is an evidence instant
   * on our clock no later than the real one. A digest over another expected set (another fingerprint, e.g. while a
   * config change propagates) or in a group that is not relayed is ignored; the echo still counted.
   */
  private void applyDigest(ReachDigest digest, long echo, String sender, long senderBootId) {
    if (!relayed || digest.fingerprint() != overlay.fingerprint() || digest.count() != byIndex.length) {
      return;
    }
    Integer slot = neighbourSlots.get(sender);
    long[] theirs = null;
    boolean[] has = null;
    if (slot != null) {
      if (reportedBootId[slot] != senderBootId) {
        // A restarted neighbour lost its evidence: what its earlier boot reported says nothing about it now.
        reportedBootId[slot] = senderBootId;
        Arrays.fill(reported[slot], false);
      }
      theirs = reportedNanos[slot];
      has = reported[slot];
    }
    for (int i = 0; i < byIndex.length; i++) {
      PeerState state = byIndex[i];
      int level = digest.level(i);
      if (state == null || level == ReachDigest.NONE) {
        continue;
      }
      long instant = echo - digest.ageNanos(level);
      if (!state.relayed || instant - state.relayedNanos > 0) {
        state.relayed = true;
        state.relayedNanos = instant;
      }
      if (has != null && (!has[i] || instant - theirs[i] > 0)) {
        has[i] = true;
        theirs[i] = instant;
      }
    }
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

    List<String> early = new ArrayList<>();
    List<PeerQuorumView> views = new ArrayList<>(byIndex.length);
    long[] confirmedTimes = new long[byIndex.length];
    int counted = 0;
    // In a relayed group: the latest direct contact with any peer not counted now (see PeerQuorumView).
    boolean unheardRegionBound = relayed;
    // With several networks a peer's evidence is its per-network evidence combined (see combined).
    PeerState[] states = byIndex;
    if (networks.size() > 1) {
      states = new PeerState[byIndex.length];
      for (int i = 0; i < byIndex.length; i++) {
        states[i] = byIndex[i] == null ? null : combined(overlay.members().get(i));
      }
    }
    long latestUncountedHeard = 0;
    boolean anyUncountedHeard = false;
    boolean[] inWindow = new boolean[byIndex.length];
    for (int i = 0; i < byIndex.length; i++) {
      PeerState state = states[i];
      if (state == null) {
        early.add(settings.self());
        continue;
      }
      inWindow[i] = state.hasEvidence() && nowNanos - state.evidenceNanos() <= window;
      if (inWindow[i]) {
        confirmedTimes[counted++] = state.evidenceNanos();
        if (nowNanos - state.evidenceNanos() <= earlyWindow) {
          early.add(overlay.members().get(i));
        }
      } else {
        if (state.heard && (!anyUncountedHeard || state.lastHeardNanos - latestUncountedHeard > 0)) {
          anyUncountedHeard = true;
          latestUncountedHeard = state.lastHeardNanos;
        }
      }
    }
    for (int i = 0; i < byIndex.length; i++) {
      PeerState state = states[i];
      if (state == null) {
        continue;
      }
      OptionalLong heardAge = state.heard ? OptionalLong.of(nowNanos - state.lastHeardNanos) : OptionalLong.empty();
      if (!inWindow[i] && unheardRegionBound && anyUncountedHeard) {
        heardAge = OptionalLong.of(nowNanos - latestUncountedHeard);
      }
      views.add(new PeerQuorumView(overlay.members().get(i), inWindow[i],
          state.hasEvidence() ? OptionalLong.of(nowNanos - state.evidenceNanos()) : OptionalLong.empty(),
          heardAge, perNetwork(overlay.members().get(i), nowNanos, window)));
    }
    SortedSet<String> side = side(states, inWindow);
    int expected = settings.expected().size();
    int heard = side.size();
    int quorumSize = settings.quorumSize();

    boolean held;
    String outcome = "none";
    long tieWinValidUntil = 0;
    boolean tieWinExpires = false;
    if (heard >= quorumSize) {
      held = true;
      if (2 * early.size() == expected && !settings.tieBreakers().isEmpty()) {
        SortedSet<String> earlySide = Collections.unmodifiableSortedSet(new TreeSet<>(early));
        // Only this exact half would remain once the older confirmations lapse: get the tie-break answer now.
        // The one that will decide (only the first is ever asked).
        settings.tieBreakers().stream().findFirst()
            .ifPresent(t -> t.prepare(earlySide, settings.expected(), nowNanos));
        outcome = "majority; tie likely soon, tie-breakers asked early for " + earlySide;
      }
    } else if (2 * heard == expected && heard == quorumSize - 1) {
      held = false;
      outcome = "no tie-breaker configured";
      // Only the first tie-breaker decides: a later one would be asked on a half that got no answer (it does not
      // reach the controller or the disk) while the other half got its win, and could hold that half too: split
      // brain. The policy accepts one tie-breaker; a longer list (an older controller, a cached config) is cut.
      Optional<TieBreaker> tieBreaker = settings.tieBreakers().stream().findFirst();
      if (tieBreaker.isPresent()) {
        TieBreakVerdict verdict = tieBreaker.get().evaluate(side, settings.expected(), nowNanos);
        outcome = verdict.reason();
        held = verdict.outcome() == TieBreakVerdict.Outcome.WIN;
        if (held && verdict.winValidUntilNanos().isPresent()) {
          tieWinExpires = true;
          tieWinValidUntil = verdict.winValidUntilNanos().getAsLong();
        }
      }
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
   * The confirmed side: every expected member except the peers not confirmed in the window. The previous verdict's
   * side when the same peers are out (an idle agent builds it once, not ten times a second); otherwise a new one,
   * built by removing from a copy of the sorted expected set (linear, not sorted inserts: at a thousand members this
   * runs every tick).
   */
  private SortedSet<String> side(PeerState[] states, boolean[] inWindow) {
    Side last = lastSide;
    boolean same = last != null && last.settings() == settings && last.overlay() == overlay
        && last.out().length == states.length;
    for (int i = 0; same && i < states.length; i++) {
      same = last.out()[i] == (states[i] != null && !inWindow[i]);
    }
    if (same) {
      return last.members();
    }
    boolean[] out = new boolean[states.length];
    TreeSet<String> side = new TreeSet<>(settings.expected());
    for (int i = 0; i < states.length; i++) {
      out[i] = states[i] != null && !inWindow[i];
      if (out[i]) {
        side.remove(overlay.members().get(i));
      }
    }
    lastSide = new Side(settings, overlay, out, FrozenSide.owning(side));
    return lastSide.members();
  }

  /** A side, and the settings, overlay and out-of-window flags (overlay order) it was built from. */
  private record Side(QuorumSettings settings, Overlay overlay, boolean[] out, SortedSet<String> members) {}

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
