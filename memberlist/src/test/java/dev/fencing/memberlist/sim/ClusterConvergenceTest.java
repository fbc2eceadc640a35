package dev.fencing.memberlist.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.memberlist.Config;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ClusterConvergenceTest {

  @ParameterizedTest(name = "N={0} converges within {1}s")
  @CsvSource({"5, 10", "50, 30", "500, 60"})
  void everyNodeSeesEveryOtherAliveAfterJoiningOneSeed(int n, int boundSeconds) {
    long seed = 1000 + n;
    Simulator sim = new Simulator(seed);
    List<SimNode> nodes = SimClusters.start(sim, n, Config.defaultLan());
    long joinedAt = sim.time().nanos();

    boolean converged = sim.runUntil(() -> SimClusters.converged(nodes), Duration.ofSeconds(boundSeconds), Duration.ofMillis(100));

    double seconds = (sim.time().nanos() - joinedAt) / 1e9;
    System.out.printf("convergence N=%d seed=%d after last join: %.2fs (events=%d)%n", n, seed, seconds, sim.time().eventsRun());
    assertThat(converged).as("converged within %ds, seed=%d", boundSeconds, seed).isTrue();
  }
}
