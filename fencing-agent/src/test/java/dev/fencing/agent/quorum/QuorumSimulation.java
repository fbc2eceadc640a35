package dev.fencing.agent.quorum;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Many {@link QuorumEvaluator}s on virtual time, exchanging heartbeats over a simulated network with loss, delay,
 * directed partitions and process stalls. Each node runs the same loop as the agent's scheduler thread: drain the
 * inbox, measure its own lateness, send a heartbeat round when due (or at once after a late tick), evaluate.
 * Every node has its own monotonic clock origin, so nothing can accidentally compare clocks across nodes.
 */
public final class QuorumSimulation {

  /** Decides whether a packet sent from {@code from} to {@code to} at global time {@code t} is delivered. */
  public interface Network {
    boolean delivers(int from, int to, long t);
  }

  /** One evaluation of one node, in global time. */
  public record Evaluation(int node, long globalNanos, boolean held) {}

  /** A stall of one process (GC pause, SIGSTOP): no ticks, no processing, no sends during [from, to). */
  public record Stall(int node, long fromNanos, long toNanos) {}

  private record Event(long t, long seq, int node, Heartbeat heartbeat, long scheduledTick, Runnable action) {}

  private record Inbound(Heartbeat heartbeat, long arrivedGlobal) {}

  static final String GROUP = "sim";

  private final int n;
  private final List<String> names = new ArrayList<>();
  private final QuorumEvaluator[] evaluators;
  private final long[] clockOffset;
  private final long[] lastRound;
  private final List<ArrayDeque<Inbound>> inboxes = new ArrayList<>();
  private final Random random;
  private final double loss;
  private final long maxDelayNanos;
  private final double duplicate;
  private final long tickNanos;
  private final long heartbeatNanos;
  private final Network network;
  private final List<Stall> stalls;
  private final PriorityQueue<Event> events =
      new PriorityQueue<>(Comparator.comparingLong(Event::t).thenComparingLong(Event::seq));
  private final List<Evaluation> evaluations = new ArrayList<>();
  private long seq;
  private long now;

  QuorumSimulation(int n, Duration heartbeat, Duration window, double cap, Duration tick,
      Supplier<List<TieBreaker>> tieBreakers, double loss, Network network, List<Stall> stalls, long seed) {
    this(n, heartbeat, window, cap, tick, tieBreakers, loss, Duration.ofMillis(5), 0.0, network, stalls, seed);
  }

  /**
   * @param maxDelay packets take a uniform delay up to this (so they also reorder)
   * @param duplicate probability that a delivered packet is delivered once more, up to 2 s later (a replay)
   */
  QuorumSimulation(int n, Duration heartbeat, Duration window, double cap, Duration tick,
      Supplier<List<TieBreaker>> tieBreakers, double loss, Duration maxDelay, double duplicate, Network network,
      List<Stall> stalls, long seed) {
    this(n, heartbeat, window, cap, tick, null, tieBreakers, loss, maxDelay, duplicate, network, stalls, seed);
  }

  /**
   * @param tieBreakLead the settings' tie-break lead; null for the default of {@link QuorumSettings}'s short
   *     constructor
   */
  public QuorumSimulation(int n, Duration heartbeat, Duration window, double cap, Duration tick,
      Duration tieBreakLead, Supplier<List<TieBreaker>> tieBreakers, double loss, Duration maxDelay, double duplicate,
      Network network, List<Stall> stalls, long seed) {
    this.n = n;
    this.random = new Random(seed);
    this.loss = loss;
    this.maxDelayNanos = maxDelay.toNanos();
    this.duplicate = duplicate;
    this.tickNanos = tick.toNanos();
    this.heartbeatNanos = heartbeat.toNanos();
    this.network = network;
    this.stalls = List.copyOf(stalls);
    for (int i = 0; i < n; i++) {
      names.add("node-" + (char) ('a' + i));
    }
    SortedSet<String> expected = new TreeSet<>(names);
    evaluators = new QuorumEvaluator[n];
    clockOffset = new long[n];
    lastRound = new long[n];
    for (int i = 0; i < n; i++) {
      QuorumSettings settings = tieBreakLead == null
          ? new QuorumSettings(names.get(i), expected, n / 2 + 1, window, cap, tick, tieBreakers.get())
          : new QuorumSettings(names.get(i), expected, n / 2 + 1, window, cap, tick, tieBreakers.get(),
              tieBreakLead);
      evaluators[i] = new QuorumEvaluator(GROUP, random.nextLong() | 1L, settings);
      clockOffset[i] = random.nextLong() / 4;
      lastRound[i] = Long.MIN_VALUE;
      inboxes.add(new ArrayDeque<>());
      long phase = (long) (random.nextDouble() * tickNanos);
      schedule(phase, i, null, phase);
    }
  }

  public String name(int node) {
    return names.get(node);
  }

  public QuorumSettings settings() {
    return evaluators[0].settings();
  }

  public List<Evaluation> evaluations() {
    return evaluations;
  }

  /** Runs until global time {@code endNanos}. */
  public void runUntil(long endNanos) {
    while (!events.isEmpty() && events.peek().t() <= endNanos) {
      Event event = events.poll();
      now = event.t();
      if (event.action() != null) {
        event.action().run();
      } else if (event.heartbeat() != null) {
        inboxes.get(event.node()).add(new Inbound(event.heartbeat(), event.t()));
      } else {
        tick(event.node(), event.t(), event.scheduledTick());
      }
    }
  }

  private void tick(int node, long now, long scheduled) {
    long stalledUntil = stalledUntil(node, now);
    if (stalledUntil > now) {
      // A stalled process runs its missed tick once when it resumes (a fixed-rate timer coalesces).
      schedule(stalledUntil, node, null, scheduled);
      return;
    }
    QuorumEvaluator evaluator = evaluators[node];
    long local = now + clockOffset[node];
    long late = now - scheduled;
    ArrayDeque<Inbound> inbox = inboxes.get(node);
    if (!inbox.isEmpty()) {
      late = Math.max(late, now - inbox.peek().arrivedGlobal() - tickNanos);
    }
    evaluator.observeLocalLag(local, late);
    while (!inbox.isEmpty()) {
      evaluator.onHeartbeat(inbox.poll().heartbeat(), local);
    }
    if (lastRound[node] == Long.MIN_VALUE || now - lastRound[node] >= heartbeatNanos || late > heartbeatNanos / 2) {
      lastRound[node] = now;
      for (int peer = 0; peer < n; peer++) {
        if (peer != node) {
          send(node, peer, now, evaluator.heartbeatFor(names.get(peer), local));
        }
      }
    }
    QuorumVerdict verdict = evaluator.evaluate(local);
    evaluations.add(new Evaluation(node, now, verdict.held()));
    long next = scheduled + tickNanos;
    while (next <= now) {
      next += tickNanos;
    }
    schedule(next, node, null, next);
  }

  private void send(int from, int to, long now, Heartbeat heartbeat) {
    if (!network.delivers(from, to, now) || random.nextDouble() < loss) {
      return;
    }
    long delay = 100_000L + (long) (random.nextDouble() * maxDelayNanos);
    // Round trip through the codec: what travels is bytes.
    byte[] bytes = HeartbeatCodec.encode(heartbeat);
    try {
      Heartbeat received = HeartbeatCodec.decode(bytes).orElseThrow();
      schedule(now + delay, to, received, 0);
      if (random.nextDouble() < duplicate) {
        schedule(now + delay + (long) (random.nextDouble() * 2_000_000_000L), to, received, 0);
      }
    } catch (MalformedHeartbeatException e) {
      throw new AssertionError(e);
    }
  }

  private long stalledUntil(int node, long now) {
    long until = now;
    for (Stall stall : stalls) {
      if (stall.node() == node && now >= stall.fromNanos() && now < stall.toNanos()) {
        until = Math.max(until, stall.toNanos());
      }
    }
    return until;
  }

  private void schedule(long t, int node, Heartbeat heartbeat, long scheduledTick) {
    events.add(new Event(t, seq++, node, heartbeat, scheduledTick, null));
  }

  /** Global virtual time of the event being processed (for code called from inside the simulation). */
  public long now() {
    return now;
  }

  /** Runs {@code action} at global virtual time {@code globalNanos} (e.g. a message to or from an arbiter). */
  public void at(long globalNanos, Runnable action) {
    events.add(new Event(globalNanos, seq++, -1, null, 0, action));
  }
}
