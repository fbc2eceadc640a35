package dev.fencing.agent.quorum.sim;

import dev.fencing.agent.quorum.Heartbeat;
import dev.fencing.agent.quorum.HeartbeatCodec;
import dev.fencing.agent.quorum.MalformedHeartbeatException;
import dev.fencing.agent.quorum.QuorumEvaluator;
import dev.fencing.agent.quorum.QuorumSettings;
import dev.fencing.agent.quorum.QuorumVerdict;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SortedSet;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * N agents' real quorum code — {@link QuorumEvaluator} with its overlay and reach digests, every heartbeat encoded
 * and decoded by {@link HeartbeatCodec} — on virtual time over an in-memory network with latency, loss, partitions,
 * one-way cuts and stalled processes. Each node runs the agent's quorum loop (FencingAgent's tick): measure its own
 * lateness and inbox backlog, drain the inbox, send a round to {@link QuorumEvaluator#heartbeatTargets} when due (at
 * once after a late tick), evaluate. Every node has its own clock origin. Deterministic: one seed drives latency,
 * loss, clock origins and boot ids, so a run is replayed by its seed.
 *
 * <p>It measures what the safety argument promises: at every sample instant more than {@code T_stop} after the last
 * topology change, all nodes holding quorum are in one bidirectional component, and it has at least a quorum of
 * members; for every node cut off into a component smaller than a quorum, how long after the change it stopped
 * holding (measured {@code T_stop}); quorum losses of nodes whose component still has a quorum and which did not
 * stall themselves (false losses); and every node's quorum traffic.
 */
public final class ScaleSimulation {

  /** Bytes memberlist adds to a user message: message type, label header, AES-GCM version + nonce + tag. */
  static final int ENVELOPE_BYTES = 1 + 2 + 29;
  private static final long UPTIME_NANOS = 365L * 24 * 3600 * 1_000_000_000L;

  /**
   * What to simulate.
   *
   * @param n group size
   * @param heartbeatInterval quorum heartbeat period
   * @param quorumWindow the window
   * @param localHealthCap window stretch cap
   * @param evaluationTick quorum loop period
   * @param minLatency one-way delay, lower end
   * @param maxLatency one-way delay, upper end (uniform in between, so packets also reorder)
   * @param loss probability that a packet is lost
   * @param seed drives everything random
   */
  public record Config(int n, Duration heartbeatInterval, Duration quorumWindow, double localHealthCap,
      Duration evaluationTick, Duration minLatency, Duration maxLatency, double loss, long seed) {}

  /** A process stall (SIGSTOP, GC): no ticks, no processing, no sends during {@code [from, to)}. */
  public record Stall(int node, long fromNanos, long toNanos) {}

  /** The network changes to {@code topology} at {@code atNanos}. */
  public record Change(long atNanos, Topology topology) {}

  /**
   * What a run measured.
   *
   * @param seconds simulated seconds
   * @param packetsSentPerSecond per node: mean and max over nodes
   * @param bytesSentPerSecond per node, memberlist payload plus {@link #ENVELOPE_BYTES}: mean and max
   * @param packetsReceivedPerSecond per node: mean and max
   * @param measuredTStopNanos the longest a node cut off into a component without quorum kept holding after the change
   * @param cutOffNodes how many (node, change) pairs that measurement covers
   * @param falseLosses quorum losses of non-stalled nodes whose component had a quorum
   * @param safetyViolations sample instants, beyond {@code T_stop} after a change, at which holders were in two
   *     components or in a component without a quorum
   * @param longestRegainNanos after a change that put a node into a component with a quorum: the longest until it
   *     held (only for nodes that did not hold at the change)
   * @param unregained nodes in a quorum component that never held again before the next change
   */
  public record Result(double seconds, double[] packetsSentPerSecond, double[] bytesSentPerSecond,
      double[] packetsReceivedPerSecond, long measuredTStopNanos, int cutOffNodes, int falseLosses,
      int safetyViolations, long longestRegainNanos, int unregained) {}

  private record Event(long t, long seq, int kind, int node, byte[] bytes) {}

  private record Inbound(byte[] bytes, long arrivedNanos) {}

  private static final int TICK = 0;
  private static final int DELIVER = 1;
  private static final int CHANGE = 2;
  private static final int SAMPLE = 3;

  private final Config config;
  private final int n;
  private final int quorum;
  private final long tickNanos;
  private final long heartbeatNanos;
  private final long tStopNanos;
  private final long maxWindowNanos;
  private final SplittableRandom random;
  private final QuorumEvaluator[] evaluators;
  private final long[] offset;
  private final long[] lastRound;
  private final boolean[] roundSent;
  private final List<ArrayDeque<Inbound>> inboxes = new ArrayList<>();
  private final List<List<Stall>> stalls = new ArrayList<>();
  private final List<Change> changes;
  private final PriorityQueue<Event> events =
      new PriorityQueue<>(Comparator.comparingLong(Event::t).thenComparingLong(Event::seq));
  private long seq;

  private Topology topology;
  private long lastChangeNanos;
  private int[] componentSizes;
  // Holding state per node (global time): held at the last evaluation, until heldUntil.
  private final boolean[] held;
  private final long[] heldUntil;
  private final long[] cutOffAt;
  private final long[] regainFrom;
  private final long[] packetsSent;
  private final long[] bytesSent;
  private final long[] packetsReceived;
  private long measuredTStop;
  private int cutOffNodes;
  private int falseLosses;
  private int safetyViolations;
  private long longestRegain;
  private int unregained;

  /**
   * @param changes topology changes in time order (the network starts fully connected)
   * @param stallList process stalls
   */
  public ScaleSimulation(Config config, List<Change> changes, List<Stall> stallList) {
    this.config = config;
    this.n = config.n();
    this.quorum = n / 2 + 1;
    this.tickNanos = config.evaluationTick().toNanos();
    this.heartbeatNanos = config.heartbeatInterval().toNanos();
    this.random = new SplittableRandom(config.seed());
    this.changes = List.copyOf(changes);
    List<String> names = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      names.add(String.format("node-%04d", i));
    }
    SortedSet<String> expected = new TreeSet<>(names);
    evaluators = new QuorumEvaluator[n];
    offset = new long[n];
    lastRound = new long[n];
    roundSent = new boolean[n];
    held = new boolean[n];
    heldUntil = new long[n];
    cutOffAt = new long[n];
    regainFrom = new long[n];
    packetsSent = new long[n];
    bytesSent = new long[n];
    packetsReceived = new long[n];
    QuorumSettings first = null;
    for (int i = 0; i < n; i++) {
      QuorumSettings settings = new QuorumSettings(names.get(i), expected, quorum, config.quorumWindow(),
          config.localHealthCap(), config.evaluationTick(), List.of());
      first = first == null ? settings : first;
      evaluators[i] = new QuorumEvaluator("sim", Heartbeat.newBootId(random), settings);
      // Each node's monotonic clock reads its uptime (Linux CLOCK_MONOTONIC, System.nanoTime), up to a year.
      offset[i] = Math.floorMod(random.nextLong(), UPTIME_NANOS);
      inboxes.add(new ArrayDeque<>());
      stalls.add(new ArrayList<>());
      cutOffAt[i] = -1;
      regainFrom[i] = 0;
      long phase = (long) (random.nextDouble() * tickNanos);
      schedule(phase, TICK, i, null);
    }
    this.tStopNanos = first.tStop().toNanos();
    this.maxWindowNanos = first.maxWindowNanos();
    for (Stall s : stallList) {
      stalls.get(s.node()).add(s);
    }
    topology = Topology.connected(n);
    componentSizes = topology.componentSizes();
    for (int i = 0; i < this.changes.size(); i++) {
      schedule(this.changes.get(i).atNanos(), CHANGE, i, null);
    }
    schedule(0, SAMPLE, -1, null);
  }

  /** The bound the settings promise: {@code quorumWindow × localHealthCap + evaluationTick}. */
  public long tStopNanos() {
    return tStopNanos;
  }

  /** Runs until {@code endNanos} and reports. */
  public Result run(long endNanos) {
    while (!events.isEmpty() && events.peek().t() <= endNanos) {
      Event e = events.poll();
      switch (e.kind()) {
        case TICK -> tick(e.node(), e.t(), e.bytes() == null ? e.t() : bytesToLong(e.bytes()));
        case DELIVER -> inboxes.get(e.node()).add(new Inbound(e.bytes(), e.t()));
        case CHANGE -> change(changes.get(e.node()).topology(), e.t());
        default -> sample(e.t());
      }
    }
    closeEpisode(endNanos);
    double seconds = endNanos / 1e9;
    return new Result(seconds, meanMax(packetsSent, seconds), meanMax(bytesSent, seconds),
        meanMax(packetsReceived, seconds), measuredTStop, cutOffNodes, falseLosses, safetyViolations, longestRegain,
        unregained);
  }

  /** The evaluator of {@code node} (for tests that look at one node's view). */
  QuorumEvaluator evaluator(int node) {
    return evaluators[node];
  }

  /** {@code node}'s clock reading at global time {@code t}. */
  long localTime(int node, long t) {
    return t + offset[node];
  }

  /** Whether {@code node} holds quorum at global time {@code t} (as its feed deadline would allow). */
  public boolean holds(int node, long t) {
    return held[node] && t - heldUntil[node] <= 0;
  }

  private void tick(int node, long now, long scheduled) {
    long resume = stalledUntil(node, now);
    if (resume > now) {
      schedule(resume, TICK, node, longToBytes(scheduled));
      return;
    }
    QuorumEvaluator evaluator = evaluators[node];
    long local = now + offset[node];
    long late = now - scheduled;
    ArrayDeque<Inbound> inbox = inboxes.get(node);
    if (!inbox.isEmpty()) {
      late = Math.max(late, now - inbox.peek().arrivedNanos() - tickNanos);
    }
    evaluator.observeLocalLag(local, late);
    while (!inbox.isEmpty()) {
      Inbound in = inbox.poll();
      try {
        evaluator.onHeartbeat(HeartbeatCodec.decode(in.bytes()).orElseThrow(), local);
      } catch (MalformedHeartbeatException e) {
        throw new AssertionError("the simulator only carries encoded heartbeats", e);
      }
    }
    if (!roundSent[node] || now - lastRound[node] >= heartbeatNanos || late > heartbeatNanos / 2) {
      roundSent[node] = true;
      lastRound[node] = now;
      for (String target : evaluator.heartbeatTargets(local)) {
        byte[] bytes = HeartbeatCodec.encode(evaluator.heartbeatFor(target, local));
        int to = Integer.parseInt(target.substring(5));
        packetsSent[node]++;
        bytesSent[node] += bytes.length + ENVELOPE_BYTES;
        if (topology.delivers(node, to) && random.nextDouble() >= config.loss()) {
          long min = config.minLatency().toNanos();
          long delay = min + (long) (random.nextDouble() * (config.maxLatency().toNanos() - min));
          packetsReceived[to]++;
          schedule(now + delay, DELIVER, to, bytes);
        }
      }
    }
    QuorumVerdict verdict = evaluator.evaluate(local);
    boolean wasHolding = holds(node, now);
    boolean previouslyHeld = held[node];
    long previousUntil = heldUntil[node];
    held[node] = verdict.held();
    heldUntil[node] = verdict.heldUntilNanos() - offset[node];
    if (previouslyHeld && (!wasHolding || !verdict.held())) {
      // The holding interval ended: at its heldUntil if that lapsed before this tick, else now.
      holdEnded(node, wasHolding ? now : previousUntil, !verdict.held());
    }
    if (verdict.held() && !wasHolding) {
      holdStarted(node, now);
    }
    long next = scheduled + tickNanos;
    while (next <= now) {
      next += tickNanos;
    }
    schedule(next, TICK, node, null);
  }

  private void holdEnded(int node, long at, boolean evaluatedLost) {
    if (cutOffAt[node] >= 0) {
      measuredTStop = Math.max(measuredTStop, at - cutOffAt[node]);
      cutOffAt[node] = -1;
      return;
    }
    if (evaluatedLost && componentSizes[topology.labels()[node]] >= quorum
        && !stalledWithin(node, at - maxWindowNanos - tickNanos, at)) {
      falseLosses++;
    }
  }

  private void holdStarted(int node, long at) {
    if (regainFrom[node] >= 0) {
      longestRegain = Math.max(longestRegain, at - regainFrom[node]);
      regainFrom[node] = -1;
    }
  }

  private void change(Topology next, long now) {
    closeEpisode(now);
    topology = next;
    componentSizes = next.componentSizes();
    lastChangeNanos = now;
    for (int i = 0; i < n; i++) {
      boolean quorate = componentSizes[next.labels()[i]] >= quorum;
      boolean holding = holds(i, now);
      cutOffAt[i] = !quorate && holding ? now : -1;
      if (cutOffAt[i] >= 0) {
        cutOffNodes++;
      }
      regainFrom[i] = quorate && !holding ? now : -1;
    }
  }

  /** Ends the measurements of the episode that ends at {@code now}: still holding or not yet regained. */
  private void closeEpisode(long now) {
    for (int i = 0; i < n; i++) {
      if (cutOffAt[i] >= 0) {
        measuredTStop = Math.max(measuredTStop, now - cutOffAt[i]);
        cutOffAt[i] = -1;
      }
      if (regainFrom[i] >= 0 && stalledUntil(i, now) <= now) {
        unregained++;
        regainFrom[i] = -1;
      }
    }
  }

  private void sample(long now) {
    if (now - lastChangeNanos > tStopNanos) {
      int holderLabel = -1;
      boolean violation = false;
      for (int i = 0; i < n; i++) {
        if (!holds(i, now)) {
          continue;
        }
        int label = topology.labels()[i];
        if (componentSizes[label] < quorum || (holderLabel >= 0 && label != holderLabel)) {
          violation = true;
        }
        holderLabel = label;
      }
      if (violation) {
        safetyViolations++;
      }
    }
    schedule(now + tickNanos, SAMPLE, -1, null);
  }

  private long stalledUntil(int node, long now) {
    long until = now;
    for (Stall s : stalls.get(node)) {
      if (now >= s.fromNanos() && now < s.toNanos()) {
        until = Math.max(until, s.toNanos());
      }
    }
    return until;
  }

  private boolean stalledWithin(int node, long from, long to) {
    for (Stall s : stalls.get(node)) {
      if (s.fromNanos() < to && s.toNanos() > from) {
        return true;
      }
    }
    return false;
  }

  private void schedule(long t, int kind, int node, byte[] bytes) {
    events.add(new Event(t, seq++, kind, node, bytes));
  }

  private static double[] meanMax(long[] perNode, double seconds) {
    double sum = 0;
    double max = 0;
    for (long v : perNode) {
      sum += v;
      max = Math.max(max, v);
    }
    return new double[] {sum / perNode.length / seconds, max / seconds};
  }

  // A stalled tick carries its original scheduled instant, so the resumed tick measures how late it is.
  private static byte[] longToBytes(long v) {
    return java.nio.ByteBuffer.allocate(Long.BYTES).putLong(v).array();
  }

  private static long bytesToLong(byte[] b) {
    return java.nio.ByteBuffer.wrap(b).getLong();
  }
}
