package dev.fencing.memberlist.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class LifeguardExperimentTest {

  @Test
  void lifeguardReducesFalsePositivesAtHealthyMembers() {
    long seed = 2017;
    int n = 50;
    int slow = 5;
    Duration maxDelay = Duration.ofSeconds(Long.getLong("lifeguard.maxDelaySeconds", 10));
    Duration duration = Duration.ofSeconds(180);

    LifeguardExperiment.Result off = LifeguardExperiment.run(false, seed, n, slow, maxDelay, duration);
    LifeguardExperiment.Result on = LifeguardExperiment.run(true, seed, n, slow, maxDelay, duration);

    System.out.printf(
        "Lifeguard experiment: N=%d, %d slow members (inbound delay uniform 0..%ds), %ds, seed=%d%n  %s%n  %s%n"
            + "  reduction of healthy-member false positives: %s%n",
        n,
        slow,
        maxDelay.toSeconds(),
        duration.toSeconds(),
        seed,
        off.describe(),
        on.describe(),
        on.healthyFalsePositives() == 0
            ? "all " + off.healthyFalsePositives() + " avoided"
            : String.format("%.1fx", (double) off.healthyFalsePositives() / on.healthyFalsePositives()));
    assertThat(off.healthyFalsePositives()).as("the setup must provoke false positives without Lifeguard, seed=%d", seed).isGreaterThan(0);
    assertThat(on.healthyFalsePositives() * 2)
        .as("Lifeguard at least halves false positives at healthy members, seed=%d", seed)
        .isLessThanOrEqualTo(off.healthyFalsePositives());
  }
}
