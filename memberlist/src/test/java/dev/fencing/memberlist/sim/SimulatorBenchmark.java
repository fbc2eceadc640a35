package dev.fencing.memberlist.sim;

import dev.fencing.memberlist.Config;
import dev.fencing.memberlist.NodeState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Simulator figures at scale (not a test: prints, never fails on timing). Run with
 *
 * <pre>
 * ./mvnw -pl memberlist test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=dev.fencing.memberlist.sim.SimulatorBenchmark -Dexec.args="1000 lan 42"
 * </pre>
 *
 * Arguments: cluster size (1000), config lan|wan|local (lan), seed (42).
 */
public final class SimulatorBenchmark {
  private SimulatorBenchmark() {}

  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    String configName = args.length > 1 ? args[1] : "lan";
    long seed = args.length > 2 ? Long.parseLong(args[2]) : 42;
    Config base =
        switch (configName) {
          case "wan" -> Config.defaultWan();
          case "local" -> Config.defaultLocal();
          default -> Config.defaultLan();
        };
    long wallStart = System.nanoTime();
    Simulator sim = new Simulator(seed);
    System.out.printf("simulator benchmark: N=%d config=%s seed=%d%n", n, configName, seed);

    List<SimNode> nodes = SimClusters.start(sim, n, base);
    long joined = sim.time().nanos();
    boolean converged = sim.runUntil(() -> SimClusters.converged(nodes), Duration.ofSeconds(600), Duration.ofMillis(500));
    System.out.printf(
        "join: %d nodes joined one seed over %.1fs; %s %.1fs after the last join (virtual time)%n",
        n, joined / 1e9, converged ? "converged" : "NOT converged", (sim.time().nanos() - joined) / 1e9);

    long drainStart = sim.time().nanos();
    sim.runUntil(
        () -> nodes.stream().allMatch(x -> x.protocol().queuedBroadcasts() == 0),
        Duration.ofSeconds(600),
        Duration.ofMillis(500));
    System.out.printf(
        "gossip queues drained (every join broadcast transmitted to its retransmit limit) %.1fs after convergence%n",
        (sim.time().nanos() - drainStart) / 1e9);

    Duration window = Duration.ofSeconds(60);
    long packets0 = sum(nodes, true, false);
    long bytes0 = sum(nodes, false, false);
    long packetsIn0 = sum(nodes, true, true);
    long bytesIn0 = sum(nodes, false, true);
    sim.runFor(window);
    double secs = window.toSeconds();
    System.out.printf(
        "steady state over %ds: per node sent %.1f packets/s %.0f bytes/s, received %.1f packets/s %.0f bytes/s%n",
        window.toSeconds(),
        (sum(nodes, true, false) - packets0) / secs / n,
        (sum(nodes, false, false) - bytes0) / secs / n,
        (sum(nodes, true, true) - packetsIn0) / secs / n,
        (sum(nodes, false, true) - bytesIn0) / secs / n);

    SimNode victim = nodes.get(n / 3);
    Map<String, Long> deadAt = new HashMap<>();
    sim.addListener(
        (observer, subject, kind, nanos) -> {
          if (kind == MembershipListener.Kind.LEAVE
              && subject.name().equals(victim.name())
              && subject.state() == NodeState.DEAD) {
            deadAt.putIfAbsent(observer.name(), nanos);
          }
        });
    long p1 = sum(nodes, true, false);
    long b1 = sum(nodes, false, false);
    victim.crash();
    long crashedAt = sim.time().nanos();
    sim.runUntil(() -> deadAt.size() == n - 1, Duration.ofSeconds(300), Duration.ofMillis(100));
    List<Long> latencies = new ArrayList<>();
    deadAt.values().forEach(t -> latencies.add(t - crashedAt));
    latencies.sort(Long::compare);
    double detectSecs = (sim.time().nanos() - crashedAt) / 1e9;
    if (latencies.isEmpty()) {
      System.out.println("crash detection: nobody declared the crashed node dead within 300s");
    } else {
      System.out.printf(
          "crash detection of %s by %d/%d survivors: first %.2fs, median %.2fs, p99 %.2fs, last %.2fs%n",
          victim.name(),
          latencies.size(),
          n - 1,
          latencies.get(0) / 1e9,
          latencies.get(latencies.size() / 2) / 1e9,
          latencies.get((int) (latencies.size() * 0.99)) / 1e9,
          latencies.get(latencies.size() - 1) / 1e9);
      System.out.printf(
          "during detection: per node %.1f packets/s %.0f bytes/s%n",
          (sum(nodes, true, false) - p1) / detectSecs / (n - 1),
          (sum(nodes, false, false) - b1) / detectSecs / (n - 1));
    }
    double wall = (System.nanoTime() - wallStart) / 1e9;
    System.out.printf(
        "simulated %.0fs of virtual time, %d events, in %.1fs wall clock (%.0f events/s)%n",
        sim.time().nanos() / 1e9, sim.time().eventsRun(), wall, sim.time().eventsRun() / wall);
  }

  private static long sum(List<SimNode> nodes, boolean packets, boolean received) {
    long total = 0;
    for (SimNode node : nodes) {
      if (received) {
        total += packets ? node.counters().packetsReceived.sum() : node.counters().bytesReceived.sum();
      } else {
        total += packets ? node.counters().packetsSent.sum() : node.counters().bytesSent.sum();
      }
    }
    return total;
  }
}
