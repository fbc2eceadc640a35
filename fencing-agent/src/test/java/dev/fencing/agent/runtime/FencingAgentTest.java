package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.agent.api.EventHub;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.StandaloneConfigLoader;
import dev.fencing.agent.membership.MemberlistGossip;
import dev.fencing.agent.quorum.MonotonicClock;
import dev.fencing.agent.watchdog.RecordingWatchdogDevice;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class FencingAgentTest {

  @Test
  void gossipThatCannotStartIsRetriedUntilItDoes() throws Exception {
    int port = LoopbackPorts.free();
    AgentConfig config = AgentConfig.fromStandalone(StandaloneConfigLoader.parse("solo.yaml",
        "group: solo\nexpected:\n  - {name: node-a, address: 127.0.0.1:" + port + "}\n"
            + "fencing:\n  mode: Notify\n  quorum: {tieBreakers: []}\n  timings: " + AgentCluster.FAST_TIMINGS
            + "\n"), "node-a", "solo.yaml");
    AtomicInteger attempts = new AtomicInteger();
    GossipFactory flaky = (cfg, meta) -> {
      if (attempts.incrementAndGet() < 3) {
        throw new IOException("address already in use (test)");
      }
      return MemberlistGossip.create(cfg, meta, new InetSocketAddress(InetAddress.getLoopbackAddress(), port),
          Optional.empty());
    };
    EventHub hub = new EventHub(16, InstantSource.system());
    try (FencingAgent agent = new FencingAgent("node-a", new FencingAgent.Dependencies(MonotonicClock.system(),
        InstantSource.system(), new RecordingWatchdogDevice(), flaky, hub, new SimpleMeterRegistry(), "test",
        Optional.empty(), Optional.empty(), Duration.ofMillis(200), Duration.ofSeconds(1)))) {
      agent.start();
      agent.applyConfig(config);
      await().atMost(Duration.ofSeconds(10)).until(() -> hub.currentMembers().stream()
          .anyMatch(n -> n.getName().equals("node-a")));
      assertThat(attempts.get()).isEqualTo(3);
      assertThat(agent.healthy()).isTrue();
    }
  }

  @Test
  void updatesAfterStopAreIgnored() {
    FencingAgent agent = new FencingAgent("node-a", new FencingAgent.Dependencies(MonotonicClock.system(),
        InstantSource.system(), new RecordingWatchdogDevice(), (cfg, meta) -> {
          throw new IOException("unused");
        }, new EventHub(16, InstantSource.system()), new SimpleMeterRegistry(), "test", Optional.empty(),
        Optional.empty(), Duration.ofSeconds(1), Duration.ofSeconds(1)));
    agent.start();
    agent.close();
    agent.setDisabled(Optional.of("late"));
    assertThat(agent.healthy()).isFalse();
  }
}
