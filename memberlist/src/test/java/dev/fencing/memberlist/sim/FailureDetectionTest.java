package dev.fencing.memberlist.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.memberlist.Config;
import dev.fencing.memberlist.Node;
import dev.fencing.memberlist.NodeState;
import dev.fencing.memberlist.codec.Suspect;
import dev.fencing.memberlist.state.Suspicion;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class FailureDetectionTest {

  private static Config config(String name) {
    return switch (name) {
      case "lan" -> Config.defaultLan();
      case "local" -> Config.defaultLocal();
      default -> Config.defaultWan();
    };
  }

  /**
   * The bound: some survivor probes the crashed node within two round-robin passes ((N-1) probes each, the list being
   * reshuffled between passes), its probe fails one ProbeInterval later, its suspicion expires after at most
   * SuspicionMaxTimeoutMult × min, and the dead message then needs a few gossip rounds to reach everyone.
   */
  private static long boundNanos(Config c, int n) {
    long interval = c.probeInterval().toNanos();
    long min = Suspicion.minTimeoutNanos(c.suspicionMult(), n, interval);
    long max = c.suspicionMaxTimeoutMult() * min;
    long gossip = 20 * c.gossipInterval().toNanos();
    return 2L * (n - 1) * interval + interval + max + gossip;
  }

  @ParameterizedTest(name = "{0} config, N={1}, seed={2}")
  @CsvSource({"lan, 10, 21", "local, 10, 22", "lan, 50, 23"})
  void crashedNodeIsDeclaredDeadByEverySurvivorWithinTheBound(String configName, int n, long seed) {
    Simulator sim = new Simulator(seed);
    Config base = config(configName);
    List<SimNode> nodes = SimClusters.start(sim, n, base);
    assertThat(sim.runUntil(() -> SimClusters.converged(nodes), Duration.ofSeconds(30), Duration.ofMillis(100)))
        .as("converged, seed=%d", seed)
        .isTrue();
    sim.runFor(Duration.ofSeconds(5));

    SimNode victim = nodes.get(n / 2);
    Map<String, Long> deadAt = new HashMap<>();
    sim.addListener(
        (observer, subject, kind, nanos) -> {
          if (kind == MembershipListener.Kind.LEAVE
              && subject.name().equals(victim.name())
              && subject.state() == NodeState.DEAD) {
            deadAt.putIfAbsent(observer.name(), nanos);
          }
        });
    victim.crash();
    long crashedAt = sim.time().nanos();
    long bound = boundNanos(base, n);
    sim.runUntil(() -> deadAt.size() == n - 1, Duration.ofNanos(bound), Duration.ofMillis(100));

    List<Long> latencies = new ArrayList<>();
    deadAt.values().forEach(t -> latencies.add(t - crashedAt));
    latencies.sort(Long::compare);
    System.out.printf(
        "crash detection %s N=%d seed=%d: first %.2fs, last %.2fs, bound %.2fs, survivors that noticed %d/%d%n",
        configName,
        n,
        seed,
        latencies.isEmpty() ? -1 : latencies.get(0) / 1e9,
        latencies.isEmpty() ? -1 : latencies.get(latencies.size() - 1) / 1e9,
        bound / 1e9,
        deadAt.size(),
        n - 1);
    assertThat(deadAt).as("every survivor declared %s dead, seed=%d", victim.name(), seed).hasSize(n - 1);
    assertThat(latencies).allMatch(l -> l <= bound);
    for (SimNode s : nodes) {
      if (s != victim) {
        assertThat(s.protocol().node(victim.name()).state()).isEqualTo(NodeState.DEAD);
      }
    }
  }

  @Test
  void falseSuspicionIsRefutedAndTheNodeStaysAlive() {
    long seed = 31;
    Simulator sim = new Simulator(seed);
    List<SimNode> nodes = SimClusters.start(sim, 20, Config.defaultLan());
    assertThat(sim.runUntil(() -> SimClusters.converged(nodes), Duration.ofSeconds(30), Duration.ofMillis(100))).isTrue();
    SimNode accused = nodes.get(7);
    SimNode accuser = nodes.get(3);
    List<String> deaths = new ArrayList<>();
    sim.addListener(
        (observer, subject, kind, nanos) -> {
          if (kind == MembershipListener.Kind.LEAVE && subject.name().equals(accused.name())) {
            deaths.add(observer.name());
          }
        });
    long inc = accuser.protocol().node(accused.name()).incarnation();

    accuser.protocol().handleMessage(new Suspect(inc, accused.name(), accuser.name()), accuser.address());
    assertThat(accuser.protocol().node(accused.name()).state()).isEqualTo(NodeState.SUSPECT);
    sim.runFor(Duration.ofSeconds(60));

    assertThat(accused.counters().refutations.sum()).as("seed=%d", seed).isGreaterThanOrEqualTo(1);
    assertThat(deaths).as("nobody declared the accused dead, seed=%d", seed).isEmpty();
    for (SimNode s : nodes) {
      assertThat(s.protocol().node(accused.name()).state()).isEqualTo(NodeState.ALIVE);
      assertThat(s.protocol().node(accused.name()).incarnation()).isGreaterThan(inc);
    }
  }

  @Test
  void gracefulLeaveIsSeenAsLeftByEveryone() {
    long seed = 41;
    Simulator sim = new Simulator(seed);
    List<SimNode> nodes = SimClusters.start(sim, 12, Config.defaultLocal());
    assertThat(sim.runUntil(() -> SimClusters.converged(nodes), Duration.ofSeconds(30), Duration.ofMillis(100))).isTrue();
    SimNode leaver = nodes.get(5);
    leaver.leave();
    sim.runFor(Duration.ofSeconds(3));
    for (SimNode s : nodes) {
      assertThat(s.protocol().node(leaver.name()).state()).as("at %s, seed=%d", s.name(), seed).isEqualTo(NodeState.LEFT);
    }
  }

  @Test
  void partitionedMinorityIsDeclaredDeadAndRecoversWhenPushPullCrossesTheHealedLink() {
    long seed = 51;
    Simulator sim = new Simulator(seed);
    List<SimNode> nodes = SimClusters.start(sim, 10, Config.defaultLocal());
    assertThat(sim.runUntil(() -> SimClusters.converged(nodes), Duration.ofSeconds(30), Duration.ofMillis(100))).isTrue();
    List<SimNode> minority = nodes.subList(0, 3);
    sim.partition(minority);
    sim.runFor(Duration.ofSeconds(40));
    for (SimNode m : minority) {
      Node seen = nodes.get(9).protocol().node(m.name());
      assertThat(seen == null || seen.state() == NodeState.DEAD).as("%s dead or reaped at the majority", m.name()).isTrue();
    }
    sim.heal();
    // Go memberlist does not heal partitions by itself once dead nodes are reaped; re-join as applications do.
    for (SimNode m : minority) {
      sim.join(m, nodes.get(9));
    }
    assertThat(sim.runUntil(() -> SimClusters.converged(nodes), Duration.ofSeconds(30), Duration.ofMillis(100)))
        .as("reconverged, seed=%d", seed)
        .isTrue();
  }

  @Test
  void stalledNodeIsDeclaredDeadThenRefutesAndRejoinsWhenItWakesUp() {
    long seed = 61;
    Simulator sim = new Simulator(seed);
    List<SimNode> nodes = SimClusters.start(sim, 10, Config.defaultLocal());
    assertThat(sim.runUntil(() -> SimClusters.converged(nodes), Duration.ofSeconds(30), Duration.ofMillis(100))).isTrue();
    SimNode sleeper = nodes.get(4);
    long incarnation = nodes.get(0).protocol().node(sleeper.name()).incarnation();

    sleeper.stall(Duration.ofSeconds(12));
    sim.runFor(Duration.ofSeconds(11));
    assertThat(nodes.get(0).protocol().node(sleeper.name()).state()).as("seed=%d", seed).isEqualTo(NodeState.DEAD);

    // After the stall it processes the accusations about itself, refutes with a higher incarnation and is revived.
    boolean back = sim.runUntil(() -> SimClusters.converged(nodes), Duration.ofSeconds(60), Duration.ofMillis(100));
    assertThat(back).as("revived everywhere, seed=%d", seed).isTrue();
    assertThat(sleeper.counters().refutations.sum()).isPositive();
    assertThat(nodes.get(0).protocol().node(sleeper.name()).incarnation()).isGreaterThan(incarnation);
  }

  @Test
  void oneWayCutMakesTheMutedNodeDeadWhileItStillHearsEveryone() {
    long seed = 71;
    Simulator sim = new Simulator(seed);
    List<SimNode> nodes = SimClusters.start(sim, 8, Config.defaultLocal());
    assertThat(sim.runUntil(() -> SimClusters.converged(nodes), Duration.ofSeconds(30), Duration.ofMillis(100))).isTrue();
    SimNode muted = nodes.get(2);
    for (SimNode other : nodes) {
      if (other != muted) {
        sim.cut(muted, other);
      }
    }
    sim.runFor(Duration.ofSeconds(30));
    for (SimNode other : nodes) {
      if (other != muted) {
        Node seen = other.protocol().node(muted.name());
        assertThat(seen == null || seen.state() == NodeState.DEAD).as("%s sees %s dead, seed=%d", other.name(), muted.name(), seed).isTrue();
      }
    }
    assertThat(muted.counters().refutations.sum()).as("it heard the accusations and tried to refute").isPositive();
  }

  @Test
  void clusterConvergesOverALossyNetwork() {
    long seed = 81;
    Simulator sim = new Simulator(seed);
    sim.setDefaultLink(LinkConditions.of(Duration.ofMillis(2), Duration.ofMillis(3), 0.10));
    List<SimNode> nodes = SimClusters.start(sim, 30, Config.defaultLan());
    assertThat(sim.runUntil(() -> SimClusters.converged(nodes), Duration.ofSeconds(60), Duration.ofMillis(100)))
        .as("converged with 10%% loss, seed=%d", seed)
        .isTrue();
    sim.runFor(Duration.ofSeconds(60));
    long deaths = nodes.stream().mapToLong(n -> n.counters().deathsDeclared.sum()).sum();
    System.out.printf("10%% loss, N=30, 60s: deaths declared %d, suspicions %d%n", deaths,
        nodes.stream().mapToLong(n -> n.counters().suspicionsRaised.sum()).sum());
    assertThat(SimClusters.converged(nodes)).as("still converged after 60 s of loss, seed=%d", seed).isTrue();
  }
}
