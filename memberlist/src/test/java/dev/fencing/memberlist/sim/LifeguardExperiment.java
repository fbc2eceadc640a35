package dev.fencing.memberlist.sim;

import dev.fencing.memberlist.Config;
import dev.fencing.memberlist.NodeState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The Lifeguard paper's false-positive experiment on the simulator: a few members process messages slowly (every
 * inbound message waits a random time up to {@code maxDelay}); we count how often healthy members are declared dead
 * anywhere in the cluster, with Lifeguard on (memberlist defaults) and off (awareness max 1, suspicion timeout fixed at
 * its minimum: SWIM with suspicion). The buddy system (suspect piggybacked on pings) stays on in both, as memberlist
 * cannot switch it off.
 */
final class LifeguardExperiment {
  record Result(
      boolean lifeguard,
      int healthyFalsePositives,
      int healthyVictims,
      int slowDeclaredDead,
      long suspicionsRaised,
      long packetsSent,
      double seconds,
      double firstDetectionSeconds,
      double medianDetectionSeconds) {

    String describe() {
      return String.format(
          "lifeguard=%-5s healthy-member false positives=%d (distinct victims %d), slow members declared dead=%d,"
              + " suspicions raised=%d, packets/node/s=%.1f, detection of a real crash: first %.1fs median %.1fs",
          lifeguard,
          healthyFalsePositives,
          healthyVictims,
          slowDeclaredDead,
          suspicionsRaised,
          packetsSent / seconds,
          firstDetectionSeconds,
          medianDetectionSeconds);
    }
  }

  private LifeguardExperiment() {}

  static Config config(boolean lifeguard) {
    Config lan = Config.defaultLan();
    if (lifeguard) {
      return lan;
    }
    return lan.toBuilder().awarenessMaxMultiplier(1).lifeguardSuspicion(false).build();
  }

  static Result run(boolean lifeguard, long seed, int n, int slow, Duration maxDelay, Duration duration) {
    Simulator sim = new Simulator(seed);
    List<SimNode> nodes = SimClusters.start(sim, n, config(lifeguard));
    if (!sim.runUntil(() -> SimClusters.converged(nodes), Duration.ofSeconds(60), Duration.ofMillis(200))) {
      throw new AssertionError("cluster did not converge before the experiment, seed=" + seed);
    }
    Set<String> slowNames = new HashSet<>();
    for (int i = 0; i < slow; i++) {
      SimNode s = nodes.get(1 + i * (n - 1) / slow);
      s.slowProcessing(maxDelay);
      slowNames.add(s.name());
    }
    int[] healthyFp = new int[1];
    int[] slowDead = new int[1];
    Set<String> victims = new HashSet<>();
    boolean[] counting = {true};
    sim.addListener(
        (observer, subject, kind, nanos) -> {
          if (!counting[0] || kind != MembershipListener.Kind.LEAVE || subject.state() != NodeState.DEAD) {
            return;
          }
          if (slowNames.contains(subject.name())) {
            slowDead[0]++;
          } else {
            healthyFp[0]++;
            victims.add(subject.name());
          }
        });
    long suspicionsBefore = nodes.stream().mapToLong(x -> x.counters().suspicionsRaised.sum()).sum();
    long packetsBefore = nodes.stream().mapToLong(x -> x.counters().packetsSent.sum()).sum();
    sim.runFor(duration);
    long suspicions = nodes.stream().mapToLong(x -> x.counters().suspicionsRaised.sum()).sum() - suspicionsBefore;
    long packets = nodes.stream().mapToLong(x -> x.counters().packetsSent.sum()).sum() - packetsBefore;

    // Then a real failure of a healthy member, while the slow members are still slow.
    counting[0] = false;
    SimNode victim = nodes.get(n - 1);
    List<Long> detections = new ArrayList<>();
    sim.addListener(
        (observer, subject, kind, nanos) -> {
          if (kind == MembershipListener.Kind.LEAVE
              && subject.state() == NodeState.DEAD
              && subject.name().equals(victim.name())
              && !slowNames.contains(observer.name())) {
            detections.add(nanos);
          }
        });
    victim.crash();
    long crashedAt = sim.time().nanos();
    int healthySurvivors = n - 1 - slow;
    sim.runUntil(() -> detections.size() >= healthySurvivors, Duration.ofSeconds(180), Duration.ofMillis(100));
    detections.sort(Long::compare);
    double first = detections.isEmpty() ? Double.NaN : (detections.get(0) - crashedAt) / 1e9;
    double median = detections.isEmpty() ? Double.NaN : (detections.get(detections.size() / 2) - crashedAt) / 1e9;
    return new Result(
        lifeguard,
        healthyFp[0],
        victims.size(),
        slowDead[0],
        suspicions,
        packets / n,
        duration.toNanos() / 1e9,
        first,
        median);
  }
}
