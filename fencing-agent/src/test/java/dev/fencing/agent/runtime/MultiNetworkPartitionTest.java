package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.NetworkReachability;
import dev.fencing.proto.fencing.v1.PeerStatus;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Three real agents gossiping on two loopback networks (one memberlist each), one of them cut off on the second
 * network only. Under Any nobody fences; under All the cut-off node fences within T_stop while the others keep
 * quorum (each of them still confirms the other on both networks).
 */
class MultiNetworkPartitionTest {

  static final Duration STARTUP = Duration.ofSeconds(20);

  static void awaitArmedOnBothNetworks(AgentCluster cluster) {
    await().atMost(STARTUP).until(() -> cluster.agents.stream().allMatch(a -> a.agent().snapshot().watchdog().armed()));
    await().atMost(STARTUP).until(() -> cluster.agents.stream().allMatch(a -> a.agent().snapshot().toStatus(0)
        .getPeersList().stream().allMatch(p -> p.getNetworksCount() == 2
            && p.getNetworksList().stream().allMatch(NetworkReachability::getConfirmed))));
  }

  @Test
  void underAnyLosingOneNetworkFencesNobody() throws Exception {
    try (AgentCluster cluster = AgentCluster.startOnTwoNetworks(3, "Any")) {
      awaitArmedOnBothNetworks(cluster);
      AgentCluster.Agent c = cluster.agent("node-c");
      cluster.isolateOnSecondNetwork("node-c");
      int feeds = c.device().feeds();
      Duration observe = cluster.tStop().multipliedBy(3);
      await().during(observe).atMost(observe.plusSeconds(5)).until(() ->
          cluster.agents.stream().noneMatch(a -> a.agent().snapshot().watchdog().fencingInProgress()));
      assertThat(c.device().feeds()).isGreaterThan(feeds);
      PeerStatus aSeenByC = c.agent().snapshot().toStatus(0).getPeersList().get(0);
      assertThat(aSeenByC.getName()).isEqualTo("node-a");
      assertThat(aSeenByC.getConfirmed()).isTrue();
      assertThat(aSeenByC.getNetworksList()).extracting(NetworkReachability::getNetwork, NetworkReachability::getConfirmed)
          .containsExactly(org.assertj.core.groups.Tuple.tuple(AgentCluster.NETWORK_1, true),
              org.assertj.core.groups.Tuple.tuple(AgentCluster.NETWORK_2, false));
    }
  }

  @Test
  void underAllTheNodeCutOffOnOneNetworkFencesWithinTStopAndTheOthersKeepQuorum() throws Exception {
    try (AgentCluster cluster = AgentCluster.startOnTwoNetworks(3, "All")) {
      awaitArmedOnBothNetworks(cluster);
      AgentCluster.Agent a = cluster.agent("node-a");
      AgentCluster.Agent c = cluster.agent("node-c");
      long cutAt = System.nanoTime();
      cluster.isolateOnSecondNetwork("node-c");
      await().atMost(Duration.ofSeconds(10)).until(() -> c.agent().snapshot().watchdog().fencingInProgress());
      assertThat(c.device().lastFeedNanos() - cutAt).isLessThanOrEqualTo(cluster.tStop().toNanos());
      int aFeeds = a.device().feeds();
      await().atMost(Duration.ofSeconds(5)).until(() -> a.device().feeds() >= aFeeds + 3);
      assertThat(a.agent().snapshot().quorumHeld()).isTrue();
      assertThat(a.agent().snapshot().verdict().orElseThrow().side()).containsExactly("node-a", "node-b");
      assertThat(cluster.agent("node-b").agent().snapshot().watchdog().fencingInProgress()).isFalse();
    }
  }

  @Test
  void underAllLosingTheGossipAddressNetworkIsReportedLeftAtTheOthers() throws Exception {
    try (AgentCluster cluster = AgentCluster.startOnTwoNetworks(3, "All")) {
      awaitArmedOnBothNetworks(cluster);
      AgentCluster.Agent a = cluster.agent("node-a");
      await().atMost(STARTUP).until(() -> a.members().equals(List.of("node-a", "node-b", "node-c")));
      cluster.isolateOnFirstNetwork("node-c");
      // Still alive on the second network, but All needs every network: consumers see node-c LEFT.
      await().atMost(Duration.ofSeconds(15)).until(() -> a.members().equals(List.of("node-a", "node-b")));
      assertThat(a.agent().snapshot().quorumHeld()).isTrue();
    }
  }

  @Test
  void statusAndReportsCarryTheNetworksAndEveryAddress() throws Exception {
    try (AgentCluster cluster = AgentCluster.startOnTwoNetworks(3, "Any")) {
      awaitArmedOnBothNetworks(cluster);
      AgentCluster.Agent a = cluster.agent("node-a");
      AgentStatus status = a.agent().snapshot().toStatus(0);
      assertThat(status.getNetworksList()).containsExactly(AgentCluster.NETWORK_1, AgentCluster.NETWORK_2);
      AgentReport report = a.agent().snapshot().toReport(0);
      assertThat(report.getNetworkAddressesMap()).isEqualTo(Map.of(AgentCluster.NETWORK_1, "127.0.1.1",
          AgentCluster.NETWORK_2, "127.0.2.1"));
      assertThat(report.getPeersList()).allSatisfy(p -> assertThat(p.getNetworksCount()).isEqualTo(2));
      // GetAll: each node's addresses per network as its gossip metadata announces them.
      await().atMost(STARTUP).until(() -> a.hub().currentMembers().stream()
          .filter(n -> n.getName().equals("node-b")).anyMatch(n -> n.getAddressesMap().equals(Map.of(
              "InternalIP", "10.0.0.2", AgentCluster.NETWORK_1, "127.0.1.1", AgentCluster.NETWORK_2, "127.0.2.1"))));
      assertThat(a.members()).isEqualTo(List.of("node-a", "node-b", "node-c"));
    }
  }
}
