package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.StandaloneConfigLoader;
import org.junit.jupiter.api.Test;

class GossipLabelRestartTest {

  private static final String FILE = """
      group: workers
      expected:
        - name: node-a
          address: 127.0.0.1:7946
      fencing:
        mode: Watchdog
      """;

  private static AgentConfig agent(String yaml) throws Exception {
    return AgentConfig.fromStandalone(StandaloneConfigLoader.parse("test.yaml", yaml), "node-a", "test.yaml");
  }

  @Test
  void switchingTheGossipLabelRestartsTheMemberBecauseMemberlistCannotChangeItWhileRunning() throws Exception {
    AgentConfig labelled = agent(FILE);
    AgentConfig none = agent(FILE + "  gossipLabel: None\n");
    assertThat(FencingAgent.gossipRestartNeeded(labelled, none)).isTrue();
    assertThat(FencingAgent.gossipRestartNeeded(none, labelled)).isTrue();
    assertThat(FencingAgent.gossipRestartNeeded(none, agent(FILE + "  gossipLabel: None\n"))).isFalse();
  }
}
