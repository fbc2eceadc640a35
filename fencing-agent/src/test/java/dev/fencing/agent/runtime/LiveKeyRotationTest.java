package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The controller's three-phase key rotation (install the new key as secondary → use it as primary → remove the old
 * one) applied to a live group: every agent swaps keys in its running memberlist, nobody leaves, quorum holds, and
 * the revision each agent installed is what it reports.
 */
class LiveKeyRotationTest {

  static final byte[] OLD = "old-key-16-bytes".getBytes(StandardCharsets.US_ASCII);
  static final byte[] NEW = "new-key-32-bytes-new-key-32-byte".getBytes(StandardCharsets.US_ASCII);
  static final Duration STARTUP = Duration.ofSeconds(30);
  static final List<String> ALL = List.of("node-a", "node-b", "node-c", "node-d", "node-e");

  @Test
  void keysRotateThroughAllThreePhasesWithoutLeftEventsQuorumLossOrGossipRestart() throws Exception {
    try (AgentCluster cluster = AgentCluster.startKeyed(5, GroupResizeTest.AUTO, OLD)) {
      await().atMost(STARTUP).until(() -> cluster.agents.stream().allMatch(a -> a.agent().snapshot().watchdog().armed()
          && a.members().equals(ALL)));

      // Phase 1 reaches node-e late: until then it knows only the old key, which everyone still encrypts with.
      rotate(cluster, ALL.subList(0, 4), List.of(OLD, NEW), 2);
      await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10)).until(() -> allHeardByAll(cluster));
      assertThat(keyringRevision(cluster.agent("node-e"))).isZero();
      rotate(cluster, List.of("node-e"), List.of(OLD, NEW), 2);

      rotate(cluster, ALL, List.of(NEW, OLD), 3);
      await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10)).until(() -> allHeardByAll(cluster));
      rotate(cluster, ALL, List.of(NEW), 4);
      await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10)).until(() -> allHeardByAll(cluster));

      for (String name : ALL) {
        AgentCluster.Agent a = cluster.agent(name);
        assertThat(keyringRevision(a)).as("keyring revision %s reports", name).isEqualTo(4);
        assertThat(GroupResizeTest.leftEvents(a)).as("LEFT events at %s", name).isEmpty();
        assertThat(a.counter("fencing.quorum.losses")).as("quorum losses at %s", name).isZero();
        assertThat(a.gossipStarts().get()).as("gossip members %s created", name).isEqualTo(1);
        assertThat(a.agent().snapshot().watchdog().armed()).as("%s armed", name).isTrue();
      }

      // The old key is gone: a node that encrypts with it only is no longer heard by anyone.
      rotate(cluster, List.of("node-e"), List.of(OLD), 5);
      await().atMost(Duration.ofSeconds(10)).until(() -> ALL.subList(0, 4).stream().map(cluster::agent)
          .allMatch(a -> GroupResizeTest.heard(a) == 4));
      await().atMost(Duration.ofSeconds(10)).until(() -> !cluster.agent("node-e").agent().snapshot().quorumHeld());
    }
  }

  private static void rotate(AgentCluster cluster, List<String> names, List<byte[]> keys, long revision) {
    for (String name : names) {
      cluster.agent(name).agent().applyConfig(AgentCluster.withKeys(name, cluster.config, keys, revision));
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> names.stream().map(cluster::agent)
        .allMatch(a -> keyringRevision(a) == revision));
  }

  /** What the agent reports to the controller as installed. */
  private static long keyringRevision(AgentCluster.Agent a) {
    return a.agent().snapshot().toReport(System.nanoTime()).getKeyringRevision();
  }

  private static boolean allHeardByAll(AgentCluster cluster) {
    return cluster.agents.stream().allMatch(a -> GroupResizeTest.heard(a) == 5 && a.agent().snapshot().quorumHeld());
  }
}
