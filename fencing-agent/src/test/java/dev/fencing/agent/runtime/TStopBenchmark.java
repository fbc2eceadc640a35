package dev.fencing.agent.runtime;

import dev.fencing.agent.quorum.PeerQuorumView;
import dev.fencing.agent.quorum.QuorumVerdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.OptionalLong;

/**
 * Measured T_stop versus its bound, with real agents on loopback memberlist (3 agents; fast test timings with a
 * 950 ms bound, or with argument {@code auto} the Auto profile for N=3 with its 3.1 s bound). Each trial arms a fresh cluster, cuts node-c off in the transport and measures:
 *
 * <ul>
 *   <li>stop after last heartbeat: node-c's last watchdog feed minus the latest time a majority member received a
 *       heartbeat from node-c (what ARCHITECTURE §5 bounds by T_stop);
 *   <li>stop after partition: node-c's last feed minus the partition instant;
 *   <li>majority LEFT: partition instant to node-a's LEFT event for node-c (gossip failure detection, not bounded).
 * </ul>
 *
 * Run: {@code ./mvnw -o -pl fencing-agent exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=dev.fencing.agent.runtime.TStopBenchmark [-Dexec.args="TRIALS [auto]"]}. Prints figures; never fails on
 * timing.
 */
public final class TStopBenchmark {

  private TStopBenchmark() {}

  public static void main(String[] args) throws Exception {
    int trials = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    boolean auto = args.length > 1 && args[1].equals("auto");
    String timings = auto ? "{}" : AgentCluster.FAST_TIMINGS;
    List<Double> afterHeartbeat = new ArrayList<>();
    List<Double> afterPartition = new ArrayList<>();
    List<Double> leftLatency = new ArrayList<>();
    Duration bound = null;
    String formula = "";
    for (int trial = 0; trial < trials; trial++) {
      try (AgentCluster cluster = AgentCluster.startWithTimings(3, timings)) {
        bound = cluster.tStop();
        var t = cluster.config.policy().timings();
        formula = "quorumWindow " + t.quorumWindow().toMillis() + "ms x localHealthCap " + t.localHealthCap()
            + " + evaluationTick " + t.evaluationTick().toMillis() + "ms; profile " + t.profile();
        awaitTrue(() -> cluster.agents.stream().allMatch(a -> a.agent().snapshot().watchdog().armed()), 30);
        AgentCluster.Agent a = cluster.agent("node-a");
        AgentCluster.Agent b = cluster.agent("node-b");
        AgentCluster.Agent c = cluster.agent("node-c");
        long partitioned = System.nanoTime();
        cluster.isolate("node-c");
        awaitTrue(() -> c.agent().snapshot().watchdog().fencingInProgress(), 10);
        awaitTrue(() -> !a.members().contains("node-c"), 30);
        long leftSeen = System.nanoTime();
        long lastHeard = Math.max(lastHeardFrom(a, "node-c"), lastHeardFrom(b, "node-c"));
        long lastFeed = c.device().lastFeedNanos();
        afterHeartbeat.add((lastFeed - lastHeard) / 1e6);
        afterPartition.add((lastFeed - partitioned) / 1e6);
        leftLatency.add((leftSeen - partitioned) / 1e6);
        System.out.printf("trial %d: stop after last heartbeat %.1f ms, after partition %.1f ms, majority LEFT"
            + " within %.0f ms (polled)%n", trial + 1, afterHeartbeat.get(trial), afterPartition.get(trial),
            leftLatency.get(trial));
      }
    }
    System.out.printf("%nT_stop bound %d ms (%s)%n", bound.toMillis(), formula);
    System.out.printf("stop after last heartbeat received by the majority: %s%n", summary(afterHeartbeat));
    System.out.printf("stop after partition:                               %s%n", summary(afterPartition));
    System.out.printf("majority reports LEFT after partition:              %s%n", summary(leftLatency));
    System.out.printf("worst measured / bound: %.2f%n", Collections.max(afterHeartbeat) / bound.toMillis());
  }

  /** Monotonic time at which {@code observer} last received a heartbeat from {@code peer}. */
  private static long lastHeardFrom(AgentCluster.Agent observer, String peer) {
    AgentSnapshot s = observer.agent().snapshot();
    QuorumVerdict v = s.verdict().orElseThrow();
    for (PeerQuorumView p : v.peers()) {
      if (p.name().equals(peer)) {
        OptionalLong age = p.sinceLastHeardNanos();
        return age.isPresent() ? v.evaluatedAtNanos() - age.getAsLong() : Long.MIN_VALUE;
      }
    }
    return Long.MIN_VALUE;
  }

  private static String summary(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    return String.format("min %.1f ms, median %.1f ms, max %.1f ms (n=%d)", sorted.get(0),
        sorted.get(sorted.size() / 2), sorted.get(sorted.size() - 1), sorted.size());
  }

  private static void awaitTrue(java.util.function.BooleanSupplier condition, int seconds) throws Exception {
    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("condition not reached within " + seconds + "s");
      }
      Thread.sleep(5);
    }
  }
}
