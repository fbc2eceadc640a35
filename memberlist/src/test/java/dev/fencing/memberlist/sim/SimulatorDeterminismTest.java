package dev.fencing.memberlist.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.memberlist.Config;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SimulatorDeterminismTest {

  /** A run with faults, recorded as its membership event log. */
  private static List<String> run(long seed) {
    Simulator sim = new Simulator(seed);
    sim.setDefaultLink(LinkConditions.of(Duration.ofMillis(1), Duration.ofMillis(2), 0.05));
    List<String> log = new ArrayList<>();
    sim.addListener((observer, subject, kind, nanos) -> log.add(nanos + " " + observer.name() + " " + kind + " " + subject.name() + " " + subject.state()));
    List<SimNode> nodes = SimClusters.start(sim, 20, Config.defaultLocal());
    sim.runFor(Duration.ofSeconds(10));
    nodes.get(3).crash();
    nodes.get(7).slowProcessing(Duration.ofSeconds(3));
    sim.runFor(Duration.ofSeconds(40));
    log.add("events=" + sim.time().eventsRun());
    return log;
  }

  @Test
  void sameSeedGivesTheSameRunAndAnotherSeedADifferentOne() {
    List<String> first = run(99);
    List<String> second = run(99);
    List<String> other = run(100);
    assertThat(first).hasSizeGreaterThan(400);
    assertThat(second).isEqualTo(first);
    assertThat(other).isNotEqualTo(first);
  }
}
