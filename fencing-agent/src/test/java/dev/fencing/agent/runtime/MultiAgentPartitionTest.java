package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.agent.api.EventHub;
import dev.fencing.proto.fencing.v1.Event;
import dev.fencing.proto.fencing.v1.EventType;
import dev.fencing.proto.fencing.v1.PeerMemberState;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Real agents on loopback UDP/TCP (memberlist), partitioned in their transports. Timing figures belong to the
 * benchmark; here only outcomes are asserted, and the one time bound asserted (an isolated node's last feed is at most
 * T_stop after the partition) is a safety property the code guarantees regardless of scheduling delays.
 */
class MultiAgentPartitionTest {

  static final Duration STARTUP = Duration.ofSeconds(20);

  static void awaitAllArmed(AgentCluster cluster) {
    await().atMost(STARTUP).until(() -> cluster.agents.stream().allMatch(a -> a.agent().snapshot().watchdog().armed()));
    await().atMost(STARTUP).until(() -> cluster.agents.stream().allMatch(a -> a.members().size() == cluster.agents.size()));
  }

  @Test
  void isolatedNodeStopsFeedingWithinTStopWhileTheOthersKeepFeeding() throws Exception {
    try (AgentCluster cluster = AgentCluster.start(3, "Fence", "LowestName")) {
      awaitAllArmed(cluster);
      await().atMost(STARTUP).until(() -> cluster.agent("node-a").heardRow()
          .equals(java.util.Map.of("node-b", 1.0, "node-c", 1.0)));
      AgentCluster.Agent c = cluster.agent("node-c");
      long partitionedAt = System.nanoTime();
      cluster.isolate("node-c");

      await().atMost(Duration.ofSeconds(10)).until(() -> c.agent().snapshot().watchdog().fencingInProgress());
      int feedsWhenFenced = c.device().feeds();
      assertThat(c.device().lastFeedNanos() - partitionedAt)
          .as("node-c's last feed after the partition (ns), bound T_stop=%s", cluster.tStop())
          .isLessThanOrEqualTo(cluster.tStop().toNanos());

      AgentCluster.Agent a = cluster.agent("node-a");
      AgentCluster.Agent b = cluster.agent("node-b");
      int aFeeds = a.device().feeds();
      int bFeeds = b.device().feeds();
      await().atMost(Duration.ofSeconds(15)).until(() -> a.members().equals(List.of("node-a", "node-b"))
          && b.members().equals(List.of("node-a", "node-b")));
      await().atMost(Duration.ofSeconds(5)).until(() -> a.heardRow()
          .equals(java.util.Map.of("node-b", 1.0, "node-c", 0.0)));
      // The status's peer list follows gossip (it is kept between ticks while gossip reports nothing new).
      await().atMost(Duration.ofSeconds(5)).until(() -> memberState(a, "node-c")
          == PeerMemberState.PEER_MEMBER_STATE_DEAD);
      assertThat(memberState(a, "node-b")).isEqualTo(PeerMemberState.PEER_MEMBER_STATE_ALIVE);
      await().atMost(Duration.ofSeconds(5)).until(() -> a.device().feeds() >= aFeeds + 3 && b.device().feeds() >= bFeeds + 3);
      assertThat(a.agent().snapshot().quorumHeld()).isTrue();
      assertThat(b.agent().snapshot().watchdog().fencingInProgress()).isFalse();
      assertThat(c.device().feeds()).as("node-c never fed again").isEqualTo(feedsWhenFenced);
      assertThat(c.device().events()).doesNotContain("magic-close");

      c.agent().close();
      assertThat(c.device().events()).as("SIGTERM while starving closes without the magic character")
          .endsWith("close-without-magic");
    }
  }

  static PeerMemberState memberState(AgentCluster.Agent agent, String peer) {
    return agent.agent().snapshot().toStatus(0).getPeersList().stream().filter(p -> p.getName().equals(peer))
        .findFirst().orElseThrow().getMemberState();
  }

  @Test
  void aNodeThatCanSendButNotReceiveStopsFeedingWithinTStop() throws Exception {
    try (AgentCluster cluster = AgentCluster.start(3, "Fence", "LowestName")) {
      awaitAllArmed(cluster);
      AgentCluster.Agent c = cluster.agent("node-c");
      long cutAt = System.nanoTime();
      cluster.cut.cutOneWay(cluster.agent("node-a").port(), c.port());
      cluster.cut.cutOneWay(cluster.agent("node-b").port(), c.port());
      await().atMost(Duration.ofSeconds(10)).until(() -> c.agent().snapshot().watchdog().fencingInProgress());
      assertThat(c.device().lastFeedNanos() - cutAt).isLessThanOrEqualTo(cluster.tStop().toNanos());
      assertThat(cluster.agent("node-a").agent().snapshot().watchdog().fencingInProgress()).isFalse();
    }
  }

  @Test
  void aNodeThatBootsIntoAMinorityNeverArmsUntilItJoinsTheMajority() throws Exception {
    try (AgentCluster cluster = AgentCluster.start(3, "Fence", "LowestName", List.of("node-c"))) {
      AgentCluster.Agent a = cluster.agent("node-a");
      AgentCluster.Agent b = cluster.agent("node-b");
      AgentCluster.Agent c = cluster.agent("node-c");
      await().atMost(STARTUP).until(() -> a.agent().snapshot().watchdog().armed()
          && b.agent().snapshot().watchdog().armed());
      Duration armingDelay = cluster.config.policy().timings().armingDelay();
      // atMost leaves the poller 5 s past the window: during() only counts once the condition is first seen true.
      await().during(armingDelay.multipliedBy(2)).atMost(armingDelay.multipliedBy(2).plusSeconds(5))
          .until(() -> !c.agent().snapshot().watchdog().armed() && c.device().events().isEmpty());
      assertThat(c.agent().snapshot().watchdog().disarmReasons())
          .anySatisfy(r -> assertThat(r.getDetail()).isEqualTo("quorum not held"));

      cluster.cut.healAll();
      await().atMost(STARTUP).until(() -> c.agent().snapshot().watchdog().armed());
    }
  }

  @Test
  void withGossipEncryptionOnlyKeyHoldersCountTowardsQuorum() throws Exception {
    byte[] groupKey = new byte[32];
    byte[] otherKey = new byte[32];
    java.util.Arrays.fill(groupKey, (byte) 7);
    java.util.Arrays.fill(otherKey, (byte) 9);
    try (AgentCluster cluster = AgentCluster.startEncrypted(3,
        java.util.Map.of("node-a", groupKey, "node-b", groupKey, "node-c", otherKey))) {
      AgentCluster.Agent a = cluster.agent("node-a");
      AgentCluster.Agent c = cluster.agent("node-c");
      await().atMost(STARTUP).until(() -> a.agent().snapshot().watchdog().armed()
          && cluster.agent("node-b").agent().snapshot().watchdog().armed());
      assertThat(a.agent().snapshot().verdict().orElseThrow().side()).containsExactly("node-a", "node-b");
      Duration armingDelay = cluster.config.policy().timings().armingDelay();
      await().during(armingDelay).atMost(armingDelay.plusSeconds(5))
          .until(() -> !c.agent().snapshot().quorumHeld() && !c.agent().snapshot().watchdog().armed());
      assertThat(c.agent().snapshot().verdict().orElseThrow().peers())
          .allSatisfy(p -> assertThat(p.sinceLastHeardNanos()).as("nothing from other keys decodes").isEmpty());
    }
  }

  @Test
  void excludeKeepsTheMinorityUpAndItsPeersReportEachOtherLeftThenJoinAgain() throws Exception {
    try (AgentCluster cluster = AgentCluster.start(4, "Exclude", "LowestName")) {
      awaitAllArmed(cluster);
      AgentCluster.Agent c = cluster.agent("node-c");
      AgentCluster.Agent d = cluster.agent("node-d");
      List<Event> seenByC = new java.util.concurrent.CopyOnWriteArrayList<>();
      EventHub.Subscription subscription = c.hub().subscribe(() -> { });
      cluster.split(List.of("node-a", "node-b"), List.of("node-c", "node-d"));

      await().atMost(Duration.ofSeconds(10)).until(() -> c.agent().snapshot().isolated() && d.agent().snapshot().isolated());
      await().atMost(Duration.ofSeconds(15)).until(() -> !c.members().contains("node-d") && !d.members().contains("node-c"));
      for (Event e = subscription.poll(); e != null; e = subscription.poll()) {
        seenByC.add(e);
      }
      assertThat(seenByC).as("node-c hears node-d announce isolation")
          .anySatisfy(e -> {
            assertThat(e.getType()).isEqualTo(EventType.LEFT);
            assertThat(e.getNode().getName()).isEqualTo("node-d");
            assertThat(e.getSourceName()).isEqualTo("isolated");
          });
      subscription.close();
      assertThat(c.hub().currentMembers()).extracting(n -> n.getName()).contains("node-c");
      AgentCluster.Agent a = cluster.agent("node-a");
      assertThat(a.agent().snapshot().quorumHeld()).as("LowestName gives the tie to the side holding node-a").isTrue();
      int cFeeds = c.device().feeds();
      await().atMost(Duration.ofSeconds(5)).until(() -> c.device().feeds() >= cFeeds + 3);
      assertThat(c.agent().snapshot().watchdog().fencingInProgress()).isFalse();
      assertThat(c.device().events()).doesNotContain("magic-close", "close-without-magic");

      cluster.cut.healAll();
      await().atMost(Duration.ofSeconds(20)).until(() -> !c.agent().snapshot().isolated()
          && cluster.agents.stream().allMatch(x -> x.members().size() == 4));
    }
  }

  @Test
  void waitOnlyReportsQuorumLoss() throws Exception {
    try (AgentCluster cluster = AgentCluster.start(3, "Wait", "LowestName")) {
      awaitAllArmed(cluster);
      AgentCluster.Agent c = cluster.agent("node-c");
      cluster.isolate("node-c");
      await().atMost(Duration.ofSeconds(10)).until(() -> !c.agent().snapshot().quorumHeld());
      int feeds = c.device().feeds();
      await().atMost(Duration.ofSeconds(5)).until(() -> c.device().feeds() >= feeds + 3);
      assertThat(c.agent().snapshot().watchdog().fencingInProgress()).isFalse();
      assertThat(c.agent().snapshot().isolated()).isFalse();
      assertThat(c.agent().snapshot().watchdog().armed()).isTrue();

      c.agent().close();
      assertThat(c.device().events()).as("SIGTERM while feeding disarms").endsWith("magic-close");
    }
  }

  @Test
  void theDisableFileDisarmsANodeSoItIsNotResetWhenCutOff() throws Exception {
    try (AgentCluster cluster = AgentCluster.start(3, "Fence", "LowestName")) {
      awaitAllArmed(cluster);
      AgentCluster.Agent c = cluster.agent("node-c");
      c.agent().setDisabled(java.util.Optional.of("kernel upgrade by bashible"));
      await().atMost(Duration.ofSeconds(5)).until(() -> !c.agent().snapshot().watchdog().armed());
      assertThat(c.device().events()).endsWith("magic-close");
      assertThat(c.agent().snapshot().toStatus(System.nanoTime()).getDisarmReasonsList())
          .anySatisfy(r -> assertThat(r.getDetail()).isEqualTo("kernel upgrade by bashible"));

      cluster.isolate("node-c");
      AgentCluster.Agent a = cluster.agent("node-a");
      await().atMost(Duration.ofSeconds(15)).until(() -> !a.members().contains("node-c")
          && !c.agent().snapshot().quorumHeld());
      assertThat(c.agent().snapshot().watchdog().fencingInProgress()).isFalse();
      assertThat(c.device().isOpen()).isFalse();

      c.agent().setDisabled(java.util.Optional.empty());
      cluster.cut.healAll();
      await().atMost(Duration.ofSeconds(20)).until(() -> c.agent().snapshot().watchdog().armed());
    }
  }
}
