package dev.fencing.agent.quorum;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * Safety and liveness of round-trip quorum over random partitions (two-way and one-way), packet loss and process
 * stalls, on virtual time. Each try derives its scenario from {@code scenarioSeed}; jqwik prints it on failure and the
 * fixed property seed makes every run identical.
 */
class QuorumSafetyPropertiesTest {

  static final Duration HEARTBEAT = Duration.ofMillis(250);
  static final Duration WINDOW = Duration.ofSeconds(3);
  static final double CAP = 1.5;
  static final Duration TICK = Duration.ofMillis(250);
  static final long SECOND = 1_000_000_000L;

  enum Cut {
    BOTH_WAYS, A_TO_B_ONLY, B_TO_A_ONLY
  }

  /**
   * Two disjoint sides never both hold quorum later than T_stop after the partition; a minority side stops. Packets
   * are lost, delayed up to 800 ms (so reordered, and still in flight across the cut when it starts) and replayed.
   */
  @Property(tries = 400, seed = "20261122")
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
    Cut cut = Cut.values()[random.nextInt(3)];
    long t0 = 3 * SECOND + (long) (random.nextDouble() * 3 * SECOND);
    double loss = random.nextDouble() * 0.3;
    boolean lowestName = random.nextBoolean();
    List<QuorumSimulation.Stall> stalls = new ArrayList<>();
    if (random.nextBoolean()) {
      long from = (long) (random.nextDouble() * (t0 + 2 * SECOND));
      stalls.add(new QuorumSimulation.Stall(random.nextInt(n), from, from + (long) (random.nextDouble() * 6 * SECOND)));
    }
    QuorumSimulation.Network network = (from, to, t) -> {
      if (t < t0 || sideA.contains(from) == sideA.contains(to)) {
        return true;
      }
      return switch (cut) {
        case BOTH_WAYS -> false;
        case A_TO_B_ONLY -> !sideA.contains(from);
        case B_TO_A_ONLY -> sideA.contains(from);
      };
    };
    Duration maxDelay = Duration.ofNanos(100_000L + (long) (random.nextDouble() * 800_000_000L));
    double duplicate = random.nextDouble() * 0.1;
    QuorumSimulation sim = new QuorumSimulation(n, HEARTBEAT, WINDOW, CAP, TICK,
        () -> lowestName ? List.of(new LowestNameTieBreaker()) : List.of(), loss, maxDelay, duplicate, network,
        stalls, scenarioSeed);
    long bound = t0 + sim.settings().tStop().toNanos();
    sim.runUntil(bound + 4 * SECOND);

    boolean aHeldLate = heldAfter(sim, sideA, true, bound);
    boolean bHeldLate = heldAfter(sim, sideA, false, bound);
    String scenario = "n=" + n + " sideA=" + sideA + " cut=" + cut + " t0=" + t0 + " loss=" + loss + " stalls="
        + stalls + " lowestName=" + lowestName + " maxDelay=" + maxDelay + " duplicate=" + duplicate;
    assertThat(aHeldLate && bHeldLate).as("both sides held quorum after T_stop: " + scenario).isFalse();
    int quorum = n / 2 + 1;
    for (boolean a : new boolean[] {true, false}) {
      int size = a ? sideA.size() : n - sideA.size();
      boolean holdsLowest = a == sideA.contains(0);
      boolean canHold = size >= quorum || (lowestName && 2 * size == n && holdsLowest);
      if (!canHold) {
        assertThat(heldAfter(sim, sideA, a, bound))
            .as("side " + (a ? "A" : "B") + " cannot form quorum yet held it after T_stop: " + scenario)
            .isFalse();
      }
    }
  }

  /** A node that can send but not receive, or receive but not send, stops holding quorum within T_stop. */
  @Property(tries = 120, seed = "4242")
  void oneWayIsolatedNodeStopsHoldingWithinTStop(
      @ForAll @IntRange(min = 3, max = 7) int n, @ForAll boolean canSendOnly, @ForAll long scenarioSeed) {
    Random random = new Random(scenarioSeed);
    int isolated = random.nextInt(n);
    long t0 = 2 * SECOND + (long) (random.nextDouble() * 4 * SECOND);
    QuorumSimulation.Network network = (from, to, t) -> {
      if (t < t0) {
        return true;
      }
      return canSendOnly ? to != isolated : from != isolated;
    };
    QuorumSimulation sim = new QuorumSimulation(n, HEARTBEAT, WINDOW, CAP, TICK,
        () -> List.of(new LowestNameTieBreaker()), 0.05, network, List.of(), scenarioSeed);
    long bound = t0 + sim.settings().tStop().toNanos();
    sim.runUntil(bound + 3 * SECOND);

    boolean heldBefore = sim.evaluations().stream()
        .anyMatch(e -> e.node() == isolated && e.globalNanos() < t0 && e.held());
    boolean heldLate = sim.evaluations().stream()
        .anyMatch(e -> e.node() == isolated && e.globalNanos() > bound && e.held());
    assertThat(heldBefore).as("the node held quorum before it was cut off (scenario sanity)").isTrue();
    assertThat(heldLate).as(sim.name(isolated) + " (canSendOnly=" + canSendOnly + ") held quorum after T_stop")
        .isFalse();
  }

  /** A strict majority that hears itself keeps quorum under 10% loss and a 2 s stall of one of its members. */
  @Property(tries = 120, seed = "777")
  void majorityKeepsQuorumUnderLossAndAStall(@ForAll @IntRange(min = 3, max = 7) int n, @ForAll long scenarioSeed) {
    Random random = new Random(scenarioSeed);
    int quorum = n / 2 + 1;
    int majoritySize = quorum + random.nextInt(n - quorum + 1);
    List<Integer> shuffled = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      shuffled.add(i);
    }
    java.util.Collections.shuffle(shuffled, random);
    Set<Integer> majority = new HashSet<>(shuffled.subList(0, majoritySize));
    boolean oneWay = random.nextBoolean();
    QuorumSimulation.Network network = (from, to, t) -> {
      if (majority.contains(from) == majority.contains(to)) {
        return true;
      }
      return oneWay && majority.contains(from);
    };
    int stalled = shuffled.get(random.nextInt(majoritySize));
    long stallFrom = 3 * SECOND + (long) (random.nextDouble() * 5 * SECOND);
    List<QuorumSimulation.Stall> stalls = List.of(new QuorumSimulation.Stall(stalled, stallFrom, stallFrom + 2 * SECOND));
    QuorumSimulation sim = new QuorumSimulation(n, HEARTBEAT, WINDOW, CAP, TICK, List::of, 0.10, network, stalls,
        scenarioSeed);
    sim.runUntil(14 * SECOND);

    long warmUp = 2 * SECOND;
    List<QuorumSimulation.Evaluation> lost = sim.evaluations().stream()
        .filter(e -> majority.contains(e.node()) && e.globalNanos() >= warmUp && !e.held())
        .toList();
    assertThat(lost).as("majority " + majority + " of " + n + " lost quorum; stalled " + sim.name(stalled) + " at "
        + stallFrom).isEmpty();
  }

  private static boolean heldAfter(QuorumSimulation sim, Set<Integer> sideA, boolean a, long bound) {
    return sim.evaluations().stream()
        .anyMatch(e -> sideA.contains(e.node()) == a && e.globalNanos() > bound && e.held());
  }
}
