package dev.fencing.agent.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class AgentHealthTest {

  private static AgentHealth health(Duration since, Duration tick, boolean config, boolean held) {
    return new AgentHealth(false, since, tick, config, held);
  }

  @Test
  void theStuckBoundIsTenSecondsOrFiveTicksWhicheverIsLonger() {
    assertThat(AgentHealth.stuckAfter(Duration.ofMillis(100))).isEqualTo(Duration.ofSeconds(10));
    assertThat(AgentHealth.stuckAfter(Duration.ofSeconds(2))).isEqualTo(Duration.ofSeconds(10));
    assertThat(AgentHealth.stuckAfter(Duration.ofSeconds(3))).isEqualTo(Duration.ofSeconds(15));
  }

  @Test
  void aLoopThatEvaluatedWithinTheBoundIsLiveAndOneThatDidNotIsStuck() {
    Duration tick = Duration.ofMillis(500);
    assertThat(health(Duration.ofMillis(9_999), tick, true, true).liveness()).isEmpty();
    assertThat(health(Duration.ofSeconds(10), tick, true, true).liveness()).hasValueSatisfying(
        reason -> assertThat(reason).startsWith("quorum loop stuck").contains("10000ms ago"));
    assertThat(health(Duration.ofSeconds(14), Duration.ofSeconds(3), true, true).liveness())
        .as("a slow tick stretches the bound").isEmpty();
  }

  @Test
  void readinessNeedsLivenessAConfigAndQuorumInThatOrder() {
    Duration tick = Duration.ofMillis(500);
    assertThat(health(Duration.ofSeconds(11), tick, false, false).readiness()).hasValueSatisfying(
        reason -> assertThat(reason).startsWith("quorum loop stuck"));
    assertThat(health(Duration.ZERO, tick, false, false).readiness()).hasValue("no config");
    assertThat(health(Duration.ZERO, tick, true, false).readiness()).hasValue("quorum not held");
    assertThat(health(Duration.ZERO, tick, true, true).readiness()).isEmpty();
  }

  @Test
  void aStoppedAgentIsNeitherLiveNorReady() {
    AgentHealth stopped = new AgentHealth(true, Duration.ZERO, Duration.ofMillis(500), true, true);
    assertThat(stopped.liveness()).hasValue("agent stopped");
    assertThat(stopped.readiness()).hasValue("agent stopped");
  }
}
