package dev.fencing.memberlist.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.memberlist.Config;
import dev.fencing.memberlist.ProtocolTimings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Timings applied to running nodes take effect at once and never make anyone leave or be declared dead. */
class LiveTimingsTest {
  private static final long SEED = 20261123L;

  private static ProtocolTimings timings(Duration probe, Duration gossip, Duration pushPull) {
    return new ProtocolTimings(probe, probe.dividedBy(2), 4, 6, gossip, 3, 4, pushPull);
  }

  @Test
  void fasterTimingsAppliedToARunningClusterSpeedUpProbesAndPushPullWithoutAnyLeave() {
    Simulator sim = new Simulator(SEED);
    List<String> leaves = new ArrayList<>();
    sim.addListener((observer, subject, kind, nanos) -> {
      if (kind == MembershipListener.Kind.LEAVE) {
        leaves.add(observer.name() + " saw " + subject.name() + " leave");
      }
    });
    Config base = timings(Duration.ofSeconds(2), Duration.ofMillis(400), Duration.ofSeconds(20))
        .applyTo(Config.defaultLan().toBuilder()).build();
    List<SimNode> nodes = SimClusters.start(sim, 5, base);
    assertThat(sim.runUntil(() -> SimClusters.converged(nodes), Duration.ofSeconds(30), Duration.ofMillis(100)))
        .as("seed %d: converged", SEED).isTrue();

    long probesBefore = probes(nodes);
    long pushPullsBefore = pushPulls(nodes);
    sim.runFor(Duration.ofSeconds(20));
    long slowProbes = probes(nodes) - probesBefore;
    long slowPushPulls = pushPulls(nodes) - pushPullsBefore;

    ProtocolTimings fast = timings(Duration.ofMillis(200), Duration.ofMillis(100), Duration.ofSeconds(2));
    nodes.forEach(n -> n.protocol().applyTimings(fast));
    long probesAfter = probes(nodes);
    long pushPullsAfter = pushPulls(nodes);
    sim.runFor(Duration.ofSeconds(20));
    long fastProbes = probes(nodes) - probesAfter;
    long fastPushPulls = pushPulls(nodes) - pushPullsAfter;

    assertThat(nodes).allSatisfy(n -> assertThat(n.protocol().timings()).isEqualTo(fast));
    assertThat(fastProbes).as("seed %d: probes in 20 s at 2 s then at 200 ms (slow=%d)", SEED, slowProbes)
        .isGreaterThanOrEqualTo(5 * slowProbes);
    assertThat(fastPushPulls).as("seed %d: push/pulls in 20 s at 20 s then at 2 s (slow=%d)", SEED, slowPushPulls)
        .isGreaterThanOrEqualTo(3 * Math.max(1, slowPushPulls));
    assertThat(SimClusters.converged(nodes)).isTrue();
    assertThat(leaves).as("seed %d: nobody left or died", SEED).isEmpty();
  }

  @Test
  void slowerTimingsAppliedToARunningClusterStillDetectAFailedNode() {
    Simulator sim = new Simulator(SEED);
    Config base = timings(Duration.ofMillis(200), Duration.ofMillis(100), Duration.ofSeconds(5))
        .applyTo(Config.defaultLan().toBuilder()).build();
    List<SimNode> nodes = SimClusters.start(sim, 4, base);
    assertThat(sim.runUntil(() -> SimClusters.converged(nodes), Duration.ofSeconds(30), Duration.ofMillis(100)))
        .isTrue();
    ProtocolTimings slow = timings(Duration.ofSeconds(1), Duration.ofMillis(300), Duration.ofSeconds(30));
    nodes.forEach(n -> n.protocol().applyTimings(slow));
    sim.runFor(Duration.ofSeconds(5));
    assertThat(SimClusters.converged(nodes)).as("seed %d: still converged on the slower timings", SEED).isTrue();

    nodes.get(3).crash();
    assertThat(sim.runUntil(() -> SimClusters.converged(nodes), Duration.ofSeconds(60), Duration.ofMillis(100)))
        .as("seed %d: the crashed node is declared dead on the new timings", SEED).isTrue();
  }

  private static long probes(List<SimNode> nodes) {
    return nodes.stream().mapToLong(n -> n.counters().probes.sum()).sum();
  }

  private static long pushPulls(List<SimNode> nodes) {
    return nodes.stream().mapToLong(n -> n.counters().pushPulls.sum()).sum();
  }
}
