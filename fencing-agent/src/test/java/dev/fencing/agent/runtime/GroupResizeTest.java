package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.agent.config.StandaloneConfig;
import dev.fencing.policy.ResolvedTimings;
import dev.fencing.proto.fencing.v1.Event;
import dev.fencing.proto.fencing.v1.EventType;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Under {@code Auto} the gossip timings follow the group size, so adding or removing a member changes them at every
 * agent. They must be applied to the running gossip: an agent that left and rejoined to apply them would make every
 * consumer see LEFT/JOIN for healthy nodes and could drop quorum.
 */
class GroupResizeTest {

  static final byte[] KEY = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  static final Duration STARTUP = Duration.ofSeconds(60);
  static final String AUTO = "{}";

  @Test
  void aGroupUnderAutoGrowsFromFiveToSixAndShrinksToFourWithoutLeftEventsQuorumLossOrGossipRestart()
      throws Exception {
    List<String> five = List.of("node-a", "node-b", "node-c", "node-d", "node-e");
    List<String> six = List.of("node-a", "node-b", "node-c", "node-d", "node-e", "node-f");
    List<String> four = List.of("node-a", "node-b", "node-c", "node-d");
    try (AgentCluster cluster = AgentCluster.startKeyed(5, AUTO, KEY)) {
      await().atMost(STARTUP).until(() -> cluster.agents.stream().allMatch(a -> a.agent().snapshot().watchdog().armed()
          && a.members().equals(five)));

      StandaloneConfig grown = cluster.groupOf(six);
      assertThat(gossipTimingsDiffer(cluster.config.policy().timings(), grown.policy().timings()))
          .as("Auto derives other gossip timings for 6 members than for 5 (else this test proves nothing)").isTrue();
      for (String name : five) {
        cluster.agent(name).agent().applyConfig(cluster.configFor(name, grown));
      }
      cluster.startAgent("node-f", cluster.configFor("node-f", grown));
      await().atMost(STARTUP).until(() -> six.stream().map(cluster::agent).allMatch(a -> a.members().equals(six)
          && heard(a) == 6));
      for (String name : five) {
        AgentCluster.Agent a = cluster.agent(name);
        assertThat(a.agent().snapshot().watchdog().armed()).as("%s still armed after the group grew", name).isTrue();
        assertThat(a.agent().snapshot().config().orElseThrow().policy().timings()).isEqualTo(grown.policy().timings());
      }
      for (String name : six) {
        assertThat(leftEvents(cluster.agent(name))).as("LEFT events at %s while the group grew", name).isEmpty();
      }

      StandaloneConfig shrunk = cluster.groupOf(four);
      assertThat(gossipTimingsDiffer(grown.policy().timings(), shrunk.policy().timings())).isTrue();
      for (String name : six) {
        cluster.agent(name).agent().applyConfig(cluster.configFor(name, shrunk));
      }
      await().atMost(STARTUP).until(() -> four.stream().map(cluster::agent).allMatch(a -> a.members().equals(four)
          && heard(a) == 4 && a.agent().snapshot().verdict().orElseThrow().expected() == 4));
      cluster.agent("node-e").agent().close();
      cluster.agent("node-f").agent().close();
      await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10))
          .until(() -> four.stream().map(cluster::agent).allMatch(a -> a.agent().snapshot().quorumHeld()));

      for (String name : four) {
        AgentCluster.Agent a = cluster.agent(name);
        assertThat(leftEvents(a)).as("LEFT events at %s: only the removed members", name)
            .allMatch(e -> Set.of("node-e", "node-f").contains(e.getNode().getName()));
        assertThat(a.counter("fencing.quorum.losses")).as("quorum losses at %s", name).isZero();
        assertThat(a.heardRow().keySet()).as("%s's heard row follows the config", name)
            .containsExactlyElementsOf(four.stream().filter(n -> !n.equals(name)).toList());
        assertThat(a.agent().snapshot().watchdog().armed()).as("%s armed", name).isTrue();
        assertThat(a.agent().snapshot().watchdog().fencingInProgress()).as("%s fencing", name).isFalse();
      }
      for (String name : six) {
        assertThat(cluster.agent(name).gossipStarts().get()).as("gossip members %s created", name).isEqualTo(1);
        assertThat(cluster.agent(name).device().events()).as("%s's watchdog", name)
            .doesNotContain("close-without-magic");
      }
    }
  }

  static int heard(AgentCluster.Agent a) {
    return a.agent().snapshot().verdict().map(v -> v.heard()).orElse(0);
  }

  static List<Event> leftEvents(AgentCluster.Agent a) {
    return a.events().stream().filter(e -> e.getType() == EventType.LEFT).toList();
  }

  /** The timings the old agent compared to decide on a gossip restart. */
  static boolean gossipTimingsDiffer(ResolvedTimings x, ResolvedTimings y) {
    return !x.probeInterval().equals(y.probeInterval()) || !x.probeTimeout().equals(y.probeTimeout())
        || x.suspicionMult() != y.suspicionMult() || x.suspicionMaxTimeoutMult() != y.suspicionMaxTimeoutMult()
        || !x.gossipInterval().equals(y.gossipInterval()) || x.gossipNodes() != y.gossipNodes()
        || x.retransmitMult() != y.retransmitMult() || !x.pushPullInterval().equals(y.pushPullInterval());
  }
}
