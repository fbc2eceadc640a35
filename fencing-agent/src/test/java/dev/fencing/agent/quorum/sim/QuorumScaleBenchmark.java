package dev.fencing.agent.quorum.sim;

import dev.fencing.agent.quorum.Overlay;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Benchmark (not a test): the real quorum code of N = 100, 300, 1000 agents on virtual time with random partitions,
 * one-way cuts and stalled nodes; prints per-node quorum traffic, measured {@code T_stop}, false quorum losses and
 * safety violations. Arguments: {@code [seconds] [seed] [n...]} (defaults 300 s, seed 1, 100 300 1000).
 *
 * <pre>
 * ./mvnw -B -o -q -pl fencing-agent -am test-compile dependency:build-classpath \
 *     -Dmdep.outputFile=target/test-classpath.txt -DskipTests
 * java -cp "$(cat fencing-agent/target/test-classpath.txt):fencing-agent/target/classes:fencing-agent/target/test-classes" \
 *     dev.fencing.agent.quorum.sim.QuorumScaleBenchmark 240 1 100 300
 * </pre>
 */
public final class QuorumScaleBenchmark {

  private QuorumScaleBenchmark() {}

  public static void main(String[] args) {
    long seconds = args.length > 0 ? Long.parseLong(args[0]) : 300;
    long seed = args.length > 1 ? Long.parseLong(args[1]) : 1;
    List<Integer> sizes = new ArrayList<>();
    for (int i = 2; i < args.length; i++) {
      sizes.add(Integer.parseInt(args[i]));
    }
    if (sizes.isEmpty()) {
      sizes = List.of(100, 300, 1000);
    }
    System.out.printf("%6s %5s %10s %10s %10s %10s %9s %8s %8s %6s %6s %7s %8s%n", "N", "deg", "pkt/s avg",
        "pkt/s max", "B/s avg", "B/s max", "T_stop", "bound", "cut-off", "false", "unsafe", "regain", "wall");
    for (int n : sizes) {
      ScaleSimulation.Config config = autoConfig(n, seed);
      ScaleScenario.Plan plan = ScaleScenario.random(n, seed, seconds * ScaleScenario.SECOND,
          2 * ScaleScenario.SECOND);
      long start = System.nanoTime();
      ScaleSimulation sim = new ScaleSimulation(config, plan.changes(), plan.stalls());
      ScaleSimulation.Result r = sim.run(seconds * ScaleScenario.SECOND);
      double wall = (System.nanoTime() - start) / 1e9;
      int degree = Overlay.of("sim", names(n)).neighbours("node-0000").size();
      System.out.printf("%6d %5d %10.1f %10.1f %10.0f %10.0f %8.2fs %7.2fs %8d %6d %6d %6.1fs %7.0fs%n", n, degree,
          r.packetsSentPerSecond()[0], r.packetsSentPerSecond()[1], r.bytesSentPerSecond()[0],
          r.bytesSentPerSecond()[1], r.measuredTStopNanos() / 1e9, sim.tStopNanos() / 1e9, r.cutOffNodes(),
          r.falseLosses(), r.safetyViolations(), r.longestRegainNanos() / 1e9, wall);
      System.out.printf("       faults (seed %d, %d s, %d stalls of 0.5-8 s): %s%n", seed, seconds,
          plan.stalls().size(), String.join("; ", plan.episodes()));
    }
  }

  /** The Auto timings of fencing-policy for a group of {@code n}; 1-20 ms latency, 0.5 % loss. */
  static ScaleSimulation.Config autoConfig(int n, long seed) {
    dev.fencing.policy.ResolvedTimings t = dev.fencing.policy.PolicyResolver.resolve(
        dev.fencing.policy.FencingSpec.DEFAULTS, n).timings();
    return new ScaleSimulation.Config(n, t.heartbeatInterval(), t.quorumWindow(), t.localHealthCap(),
        t.evaluationTick(), Duration.ofMillis(1), Duration.ofMillis(20), 0.005, seed);
  }

  private static java.util.SortedSet<String> names(int n) {
    java.util.TreeSet<String> out = new java.util.TreeSet<>();
    for (int i = 0; i < n; i++) {
      out.add(String.format("node-%04d", i));
    }
    return out;
  }
}
