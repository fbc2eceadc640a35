package dev.fencing.agent.quorum.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * The real quorum code of 5–50 agents (relayed reach digests above 16) on virtual time: the safety argument of
 * fencing-agent/README.md, checked at every evaluation tick. Deterministic by seed.
 */
class ScaleSimulationTest {

  private static final long SECOND = ScaleScenario.SECOND;

  private static ScaleSimulation.Config config(int n, long seed) {
    return QuorumScaleBenchmark.autoConfig(n, seed);
  }

  private static Topology split(int n, int cutOff, Set<Integer> openOneWay) {
    int[] labels = new int[n];
    for (int i = 0; i < cutOff; i++) {
      labels[n - 1 - i] = 1;
    }
    return new Topology(labels, openOneWay);
  }

  @ParameterizedTest(name = "N={0} cut off {1}")
  @CsvSource({"5, 2", "30, 12", "50, 15"})
  void cutOffMinorityStopsWithinTStopWhileTheMajorityKeepsQuorumAndAllRegainAfterTheHeal(int n, int cutOff) {
    ScaleSimulation sim = new ScaleSimulation(config(n, 11), List.of(
        new ScaleSimulation.Change(20 * SECOND, split(n, cutOff, Set.of())),
        new ScaleSimulation.Change(45 * SECOND, Topology.connected(n))), List.of());

    ScaleSimulation.Result r = sim.run(70 * SECOND);

    assertThat(r.cutOffNodes()).as("every cut-off node held quorum at the cut").isEqualTo(cutOff);
    assertThat(r.measuredTStopNanos()).isPositive().isLessThanOrEqualTo(sim.tStopNanos());
    assertThat(r.safetyViolations()).isZero();
    assertThat(r.falseLosses()).as("majority members losing quorum").isZero();
    assertThat(r.unregained()).as("nodes without quorum 25 s after the heal").isZero();
    for (int i = 0; i < n; i++) {
      assertThat(sim.holds(i, 70 * SECOND)).as("node %d holds after the heal", i).isTrue();
    }
  }

  @Test
  void aMajorityNodeWhoseOverlayNeighboursAreAllCutOffKeepsQuorumThroughADigestItAsksFor() {
    int n = 200;
    int x = 17;
    String name = String.format("node-%04d", x);
    java.util.SortedSet<String> neighbours = new ScaleSimulation(config(n, 3), List.of(), List.of()).evaluator(x)
        .overlay().neighbours(name);
    // A minority of 70 holding every overlay neighbour of x; x stays with the other 129 (quorum 101).
    int[] labels = new int[n];
    int minority = 0;
    for (String neighbour : neighbours) {
      labels[Integer.parseInt(neighbour.substring(5))] = 1;
      minority++;
    }
    for (int i = n - 1; minority < 70; i--) {
      if (i != x && labels[i] == 0) {
        labels[i] = 1;
        minority++;
      }
    }
    ScaleSimulation sim = new ScaleSimulation(config(n, 3), List.of(
        new ScaleSimulation.Change(15 * SECOND, new Topology(labels, Set.of()))), List.of());

    ScaleSimulation.Result r = sim.run(45 * SECOND);

    // Its detours' round trips alone count about 8 members a round, far below 101 in a 6 s window.
    assertThat(r.falseLosses()).as("majority members losing quorum").isZero();
    assertThat(sim.holds(x, 45 * SECOND)).as("%s with all %d neighbours cut off", name, neighbours.size())
        .isTrue();
    assertThat(r.safetyViolations()).isZero();
    assertThat(r.cutOffNodes()).isEqualTo(70);
  }

  @ParameterizedTest(name = "N={0}, the cut-off nodes can only {1}")
  @CsvSource({"7, send", "7, receive", "40, send", "40, receive"})
  void oneWayCutOffNodesStopWithinTStop(int n, String direction) {
    int cutOff = n / 4 + 1;
    Set<Integer> open = Set.of(direction.equals("send") ? 1 * 65536 : 1);
    ScaleSimulation sim = new ScaleSimulation(config(n, 5), List.of(
        new ScaleSimulation.Change(20 * SECOND, split(n, cutOff, open))), List.of());

    ScaleSimulation.Result r = sim.run(40 * SECOND);

    assertThat(r.cutOffNodes()).isEqualTo(cutOff);
    assertThat(r.measuredTStopNanos()).isLessThanOrEqualTo(sim.tStopNanos());
    assertThat(r.safetyViolations()).isZero();
    assertThat(r.falseLosses()).isZero();
  }

  @ParameterizedTest(name = "N={0} seed {1}")
  @CsvSource({"5, 1", "9, 2", "20, 3", "33, 4", "50, 5"})
  void randomPartitionsOneWayCutsAndStallsNeverLeaveTwoComponentsHolding(int n, long seed) {
    ScaleScenario.Plan plan = ScaleScenario.random(n, seed, 150 * SECOND, 4 * SECOND);
    ScaleSimulation sim = new ScaleSimulation(config(n, seed), plan.changes(), plan.stalls());

    ScaleSimulation.Result r = sim.run(150 * SECOND);

    assertThat(r.safetyViolations()).as("seed %d, faults %s", seed, plan.episodes()).isZero();
    assertThat(r.measuredTStopNanos()).as("seed %d, faults %s", seed, plan.episodes())
        .isLessThanOrEqualTo(sim.tStopNanos());
    assertThat(r.cutOffNodes()).isPositive();
  }

  @Test
  void aStalledNodeStopsHoldingAndRegainsAfterItResumes() {
    int n = 20;
    long from = 20 * SECOND;
    ScaleSimulation sim = new ScaleSimulation(config(n, 3), List.of(),
        List.of(new ScaleSimulation.Stall(4, from, from + 12 * SECOND)));

    sim.run(from + 11 * SECOND);
    assertThat(sim.holds(4, from + 11 * SECOND)).as("stalled for 11 s, past T_stop").isFalse();
    ScaleSimulation.Result r = sim.run(from + 30 * SECOND);

    assertThat(sim.holds(4, from + 30 * SECOND)).isTrue();
    assertThat(r.falseLosses()).as("the other 19 keep quorum").isZero();
  }

  @Test
  void relayedGroupsSendToAFewNeighboursOnly() {
    ScaleSimulation sim = new ScaleSimulation(config(50, 8), List.of(), List.of());

    ScaleSimulation.Result r = sim.run(30 * SECOND);

    Duration heartbeat = config(50, 8).heartbeatInterval();
    double allToAll = 49.0 / (heartbeat.toMillis() / 1000.0);
    assertThat(r.packetsSentPerSecond()[1]).as("max packets/s per node vs %s all-to-all", allToAll)
        .isLessThan(allToAll / 3);
    assertThat(r.falseLosses()).isZero();
  }
}
