package dev.fencing.agent.control;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Duration;
import dev.fencing.agent.quorum.QuorumSettings;
import dev.fencing.agent.quorum.QuorumSimulation;
import dev.fencing.agent.quorum.TieBreaker;
import dev.fencing.proto.nodemanager.v1.TieBreakGrant;
import dev.fencing.proto.nodemanager.v1.TieBreakRequest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * The real {@link ControlPlaneTieBreaker} of every node on the quorum simulation's virtual time, talking to a fake
 * controller arbiter (grants the first asker, renews only for an overlapping side, refuses a disjoint side with the
 * "held by the other side" reason) over a link with a random delay per message, up to half a heartbeat interval each
 * way. Timings are those of the e2e lab (heartbeat 250 ms, window 1.5 s, cap 1.5, tick 100 ms). Fixed seeds, no
 * sleeps.
 */
class ControlPlaneTieBreakSimulationTest {

  static final java.time.Duration HEARTBEAT = java.time.Duration.ofMillis(250);
  static final java.time.Duration WINDOW = java.time.Duration.ofMillis(1500);
  static final double CAP = 1.5;
  static final java.time.Duration TICK = java.time.Duration.ofMillis(100);
  static final java.time.Duration LEAD = QuorumSettings.defaultTieBreakLead(WINDOW, HEARTBEAT, TICK);
  static final long SECOND = 1_000_000_000L;
  static final long MAX_LEASE_NANOS = 5 * SECOND;

  /**
   * The controller's arbiter ({@code TieBreakArbiter}), reduced to its grant rule, on the simulation's global clock:
   * a side is granted only if it intersects every side holding a still-valid grant; the same side is renewed.
   */
  static final class FakeArbiter {
    private final java.util.Map<TreeSet<String>, Long> valid = new java.util.HashMap<>();
    int grants;
    int refusals;

    TieBreakGrant decide(long requestId, List<String> requested, long now) {
      TreeSet<String> asked = new TreeSet<>(requested);
      valid.values().removeIf(expiresAt -> now - expiresAt >= 0);
      for (TreeSet<String> held : valid.keySet()) {
        if (disjoint(held, asked)) {
          refusals++;
          return TieBreakGrant.newBuilder().setRequestId(requestId).setGranted(false)
              .setReason(ControlPlaneTieBreaker.HELD_BY_OTHER_SIDE_PREFIX + held.first()).build();
        }
      }
      valid.put(asked, now + MAX_LEASE_NANOS);
      grants++;
      return TieBreakGrant.newBuilder().setRequestId(requestId).setGranted(true)
          .setValidFor(Duration.newBuilder().setSeconds(MAX_LEASE_NANOS / SECOND)).setReason("granted").build();
    }

    private static boolean disjoint(Set<String> a, Set<String> b) {
      return b.stream().noneMatch(a::contains);
    }
  }

  /** A simulation whose nodes use {@code tieBreakers: [ControlPlane]} against {@code arbiter}. */
  private static QuorumSimulation simulation(int n, java.time.Duration lead, FakeArbiter arbiter,
      boolean controllerReachable, double loss, QuorumSimulation.Network network, long seed) {
    AtomicReference<QuorumSimulation> sim = new AtomicReference<>();
    Random linkDelays = new Random(seed ^ 0x5DEECE66DL);
    long maxOneWay = HEARTBEAT.toNanos() / 2;
    List<ControlPlaneTieBreaker> created = new ArrayList<>();
    ControlPlaneTieBreaker.ConfigIdentity identity = new ControlPlaneTieBreaker.ConfigIdentity() {
      @Override
      public String epoch() {
        return "e1";
      }

      @Override
      public long revision() {
        return 1;
      }
    };
    QuorumSimulation simulation = new QuorumSimulation(n, HEARTBEAT, WINDOW, CAP, TICK, lead, () -> {
      ControlPlaneTieBreaker[] self = new ControlPlaneTieBreaker[1];
      self[0] = new ControlPlaneTieBreaker((TieBreakRequest request) -> {
        if (!controllerReachable) {
          return false;
        }
        QuorumSimulation s = sim.get();
        long there = s.now() + 1_000_000L + (long) (linkDelays.nextDouble() * maxOneWay);
        s.at(there, () -> {
          TieBreakGrant grant = arbiter.decide(request.getRequestId(), request.getSideList(), s.now());
          long back = s.now() + 1_000_000L + (long) (linkDelays.nextDouble() * maxOneWay);
          s.at(back, () -> self[0].onGrant(grant));
        });
        return true;
      }, identity);
      created.add(self[0]);
      return List.<TieBreaker>of(self[0]);
    }, loss, java.time.Duration.ofMillis(20), 0.0, network, List.of(), seed);
    sim.set(simulation);
    return simulation;
  }

  private static QuorumSimulation.Network split(Set<Integer> sideA, long t0) {
    return (from, to, t) -> t < t0 || sideA.contains(from) == sideA.contains(to);
  }

  private static boolean heldAfter(QuorumSimulation sim, Set<Integer> nodes, long after) {
    return sim.evaluations().stream().anyMatch(e -> nodes.contains(e.node()) && e.globalNanos() > after && e.held());
  }

  /** The first evaluation of {@code nodes} after {@code from} that did not hold quorum, or -1. */
  private static long firstGap(QuorumSimulation sim, Set<Integer> nodes, long from) {
    return sim.evaluations().stream().filter(e -> nodes.contains(e.node()) && e.globalNanos() >= from && !e.held())
        .mapToLong(QuorumSimulation.Evaluation::globalNanos).min().orElse(-1);
  }

  private static Set<Integer> randomHalf(Random random, int n) {
    List<Integer> all = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      all.add(i);
    }
    java.util.Collections.shuffle(all, random);
    return new HashSet<>(all.subList(0, n / 2));
  }

  private static Set<Integer> complement(Set<Integer> side, int n) {
    Set<Integer> other = new HashSet<>();
    for (int i = 0; i < n; i++) {
      if (!side.contains(i)) {
        other.add(i);
      }
    }
    return other;
  }

  /**
   * 2+2 split (random halves, random instant, loss up to 5 %): exactly one side keeps quorum at every evaluation —
   * no tied evaluation without an answer, so no fence starts there — and the other side stops within T_stop.
   */
  @Property(tries = 200, seed = "20261122")
  void evenSplitKeepsExactlyOneSideHoldingWithoutAGap(@ForAll long scenarioSeed) {
    Random random = new Random(scenarioSeed);
    int n = 4;
    Set<Integer> sideA = randomHalf(random, n);
    long t0 = 3 * SECOND + (long) (random.nextDouble() * 3 * SECOND);
    double loss = random.nextDouble() * 0.05;
    FakeArbiter arbiter = new FakeArbiter();
    QuorumSimulation sim = simulation(n, LEAD, arbiter, true, loss, split(sideA, t0), scenarioSeed);
    long bound = t0 + sim.settings().tStop().toNanos();
    sim.runUntil(bound + 6 * SECOND);

    Set<Integer> sideB = complement(sideA, n);
    String scenario = "sideA=" + sideA + " t0=" + t0 + " loss=" + loss + " grants=" + arbiter.grants
        + " refusals=" + arbiter.refusals;
    long warm = 2 * SECOND;
    assertThat(firstGap(sim, Set.of(0, 1, 2, 3), warm)).as("no node lost quorum before the split: " + scenario)
        .satisfiesAnyOf(g -> assertThat(g).isEqualTo(-1L), g -> assertThat(g).isGreaterThan(t0));
    long gapA = firstGap(sim, sideA, warm);
    long gapB = firstGap(sim, sideB, warm);
    assertThat(gapA == -1 || gapB == -1)
        .as("one side held quorum at every evaluation (first gap A=%d B=%d): %s", gapA, gapB, scenario).isTrue();
    Set<Integer> loser = gapA == -1 ? sideB : sideA;
    assertThat(heldAfter(sim, loser, bound)).as("the other side held quorum after T_stop: " + scenario).isFalse();
  }

  /** Controller unreachable from every node: nobody gets the tie, both halves stop within T_stop. */
  @Property(tries = 60, seed = "4242")
  void evenSplitWithTheControllerUnreachableStopsBothSides(@ForAll long scenarioSeed) {
    Random random = new Random(scenarioSeed);
    Set<Integer> sideA = randomHalf(random, 4);
    long t0 = 3 * SECOND + (long) (random.nextDouble() * 3 * SECOND);
    QuorumSimulation sim = simulation(4, LEAD, new FakeArbiter(), false, 0.02, split(sideA, t0), scenarioSeed);
    long bound = t0 + sim.settings().tStop().toNanos();
    sim.runUntil(bound + 4 * SECOND);
    assertThat(heldAfter(sim, sideA, bound)).as("side A held after T_stop").isFalse();
    assertThat(heldAfter(sim, complement(sideA, 4), bound)).as("side B held after T_stop").isFalse();
    assertThat(heldAfter(sim, Set.of(0, 1, 2, 3), t0 - SECOND)).as("scenario sanity: quorum held before").isTrue();
  }

  /**
   * Random partitions of 3–7 nodes (any sizes, loss, packets in flight across the cut), the arbiter reachable with
   * delay: two disjoint sides never both hold quorum after T_stop, and a side smaller than half never holds it.
   */
  @Property(tries = 200, seed = "777")
  void partitionedSidesNeverBothHoldQuorumBeyondTStop(
      @ForAll @IntRange(min = 3, max = 7) int n, @ForAll long scenarioSeed) {
    Random random = new Random(scenarioSeed);
    Set<Integer> sideA = new HashSet<>();
    while (sideA.isEmpty() || sideA.size() == n) {
      sideA.clear();
      for (int i = 0; i < n; i++) {
        if (random.nextBoolean()) {
          sideA.add(i);
        }
      }
    }
    long t0 = 3 * SECOND + (long) (random.nextDouble() * 3 * SECOND);
    double loss = random.nextDouble() * 0.3;
    QuorumSimulation sim = simulation(n, LEAD, new FakeArbiter(), true, loss, split(sideA, t0), scenarioSeed);
    long bound = t0 + sim.settings().tStop().toNanos();
    sim.runUntil(bound + 4 * SECOND);
    Set<Integer> sideB = complement(sideA, n);
    String scenario = "n=" + n + " sideA=" + sideA + " t0=" + t0 + " loss=" + loss;
    assertThat(heldAfter(sim, sideA, bound) && heldAfter(sim, sideB, bound))
        .as("both sides held quorum after T_stop: " + scenario).isFalse();
    for (Set<Integer> side : List.of(sideA, sideB)) {
      if (2 * side.size() < n) {
        assertThat(heldAfter(sim, side, bound)).as("minority " + side + " held after T_stop: " + scenario)
            .isFalse();
      }
    }
  }

  /**
   * The defect this guards against, reproduced: without asking early (lead 0) the first tied evaluation has no
   * answer yet, so the side the controller then grants has already had a not-held evaluation (under Fence: a
   * started fence) — both sides fence.
   */
  @Test
  void withoutAskingEarlyTheGrantedSideAlsoHasAGap() {
    long t0 = 4 * SECOND;
    Set<Integer> sideA = Set.of(0, 1);
    FakeArbiter arbiter = new FakeArbiter();
    QuorumSimulation sim = simulation(4, java.time.Duration.ZERO, arbiter, true, 0.0, split(sideA, t0), 1L);
    sim.runUntil(t0 + sim.settings().tStop().toNanos() + 4 * SECOND);
    assertThat(arbiter.grants).as("the controller did grant one side").isPositive();
    assertThat(firstGap(sim, sideA, 2 * SECOND)).isGreaterThan(t0);
    assertThat(firstGap(sim, Set.of(2, 3), 2 * SECOND)).isGreaterThan(t0);
  }

  /** With the lead, the same scenario keeps one side without a gap. */
  @Test
  void askingEarlyKeepsTheGrantedSideWithoutAGap() {
    long t0 = 4 * SECOND;
    Set<Integer> sideA = Set.of(0, 1);
    FakeArbiter arbiter = new FakeArbiter();
    QuorumSimulation sim = simulation(4, LEAD, arbiter, true, 0.0, split(sideA, t0), 1L);
    long bound = t0 + sim.settings().tStop().toNanos();
    sim.runUntil(bound + 4 * SECOND);
    long gapA = firstGap(sim, sideA, 2 * SECOND);
    long gapB = firstGap(sim, Set.of(2, 3), 2 * SECOND);
    assertThat(gapA == -1 ^ gapB == -1).as("exactly one side without a gap (A=%d, B=%d)", gapA, gapB).isTrue();
    long loserGap = gapA == -1 ? gapB : gapA;
    assertThat(loserGap).isGreaterThan(t0).isLessThanOrEqualTo(bound);
  }
}
