package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.agent.api.EventHub;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.StandaloneConfigLoader;
import dev.fencing.agent.membership.MemberlistGossip;
import dev.fencing.agent.watchdog.RecordingWatchdogDevice;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** {@code /healthz} and {@code /readyz} of a real agent whose quorum loop runs on an injected clock. */
class QuorumLoopHealthTest {

  private final AtomicLong now = new AtomicLong(1_000_000_000L);

  private static AgentConfig soloConfig(int port) throws Exception {
    return AgentConfig.fromStandalone(StandaloneConfigLoader.parse("solo.yaml",
        "group: solo\nexpected:\n  - {name: node-a, address: 127.0.0.1:" + port + "}\n"
            + "fencing:\n  mode: Notify\n  quorum: {tieBreakers: []}\n  timings: " + AgentCluster.FAST_TIMINGS
            + "\n"), "node-a", "solo.yaml");
  }

  private FencingAgent agent(GossipFactory gossip) {
    return new FencingAgent("node-a", new FencingAgent.Dependencies(now::get, InstantSource.system(),
        new RecordingWatchdogDevice(), gossip, new EventHub(16, InstantSource.system()), new SimpleMeterRegistry(),
        "test", Optional.empty(), Optional.empty(), Duration.ofMillis(200), Duration.ofSeconds(1), true));
  }

  @Test
  void aQuorumLoopThatStopsEvaluatingTurnsLivenessAndReadinessRed() throws Exception {
    int port = LoopbackPorts.free();
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch blocked = new CountDownLatch(1);
    // Creating gossip runs on the quorum thread: blocking it there stops the loop, as a deadlock would.
    GossipFactory stuck = (cfg, meta) -> {
      blocked.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.IOException("interrupted while blocked (test)");
      }
      return MemberlistGossip.create(cfg, meta, new InetSocketAddress(InetAddress.getLoopbackAddress(), port),
          Optional.empty());
    };
    try (FencingAgent agent = agent(stuck)) {
      agent.start();
      await().atMost(Duration.ofSeconds(10)).until(() -> agent.snapshot().takenAtNanos() == now.get());
      assertThat(agent.health().liveness()).isEmpty();
      assertThat(agent.health().readiness()).hasValue("no config");

      agent.applyConfig(soloConfig(port));
      blocked.await();
      now.addAndGet(Duration.ofMillis(9_900).toNanos());
      assertThat(agent.health().liveness()).as("within max(10 s, 5 ticks)").isEmpty();
      now.addAndGet(Duration.ofMillis(200).toNanos());
      assertThat(agent.health().liveness()).hasValueSatisfying(r -> assertThat(r).startsWith("quorum loop stuck"));
      assertThat(agent.health().readiness()).hasValueSatisfying(r -> assertThat(r).startsWith("quorum loop stuck"));
      assertThat(agent.healthy()).isFalse();

      release.countDown();
      await().atMost(Duration.ofSeconds(10)).until(() -> agent.health().liveness().isEmpty());
      await().atMost(Duration.ofSeconds(10)).until(() -> agent.health().readiness().isEmpty());
    }
  }

  @Test
  void anAgentWhoseLoopNeverRanIsUnhealthyAfterTheBound() {
    try (FencingAgent agent = agent((cfg, meta) -> {
      throw new java.io.IOException("unused");
    })) {
      // Not started: no tick ever runs.
      now.addAndGet(Duration.ofSeconds(9).toNanos());
      assertThat(agent.health().liveness()).isEmpty();
      now.addAndGet(Duration.ofSeconds(1).toNanos());
      assertThat(agent.health().liveness()).hasValueSatisfying(r -> assertThat(r).startsWith("quorum loop stuck"));
    }
  }
}
