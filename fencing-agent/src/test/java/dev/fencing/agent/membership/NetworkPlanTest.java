package dev.fencing.agent.membership;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ExpectedMember;
import dev.fencing.policy.FencingSpec;
import dev.fencing.policy.GossipNetworks;
import dev.fencing.policy.PolicyResolver;
import dev.fencing.policy.Reachability;
import dev.fencing.policy.TieBreakerKind;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class NetworkPlanTest {

  static AgentConfig config(GossipNetworks networks, List<ExpectedMember> members) {
    FencingSpec spec = FencingSpec.DEFAULTS.withTieBreakers(List.of(TieBreakerKind.LOWEST_NAME))
        .withNetworks(networks);
    return new AgentConfig("g", "a", members, PolicyResolver.resolve(spec, members.size()), List.of(),
        Optional.empty(), Optional.empty(), "controller", "e", 1);
  }

  static final List<ExpectedMember> MEMBERS = List.of(
      new ExpectedMember("a", "10.0.0.1", 7946, Map.of(), Map.of("10.1.0.0/24", "10.1.0.1:7946")),
      new ExpectedMember("b", "10.0.0.2", 7946, Map.of(), Map.of("10.1.0.0/24", "10.9.0.2:7946")),
      new ExpectedMember("c", "10.0.0.3", 7946, Map.of()));

  @Test
  void oneNetworkIsEveryMembersGossipAddress() {
    NetworkPlan plan = NetworkPlan.of(config(GossipNetworks.SINGLE, MEMBERS));
    assertThat(plan.multiple()).isFalse();
    assertThat(plan.networks()).containsExactly(NetworkPlan.SINGLE);
    assertThat(plan.address("b", NetworkPlan.SINGLE)).contains(new InetSocketAddress("10.0.0.2", 7946));
    assertThat(plan.expectedOn(NetworkPlan.SINGLE)).isEqualTo(ExpectedPeers.of(MEMBERS));
  }

  @Test
  void perNetworkAddressesFallBackToTheGossipAddressAndOnesOutsideTheirNetworkAreRefused() {
    NetworkPlan plan = NetworkPlan.of(config(GossipNetworks.parse(List.of("10.0.0.0/24", "10.1.0.0/24"),
        Reachability.ALL), MEMBERS));
    assertThat(plan.reachability()).isEqualTo(Reachability.ALL);
    assertThat(plan.address("b", "10.0.0.0/24")).contains(new InetSocketAddress("10.0.0.2", 7946));
    assertThat(plan.address("a", "10.1.0.0/24")).contains(new InetSocketAddress("10.1.0.1", 7946));
    assertThat(plan.address("b", "10.1.0.0/24")).as("outside its network").isEmpty();
    assertThat(plan.address("c", "10.1.0.0/24")).as("nothing known there").isEmpty();
    assertThat(plan.refused()).containsExactly("b 10.1.0.0/24 10.9.0.2:7946");
    assertThat(plan.networkOf("a", new InetSocketAddress("10.1.0.1", 7946))).contains("10.1.0.0/24");
    assertThat(plan.networkOf("a", new InetSocketAddress("10.0.0.1", 7946))).contains("10.0.0.0/24");
    assertThat(plan.networkOf("a", new InetSocketAddress("10.0.0.2", 7946))).as("another member's address")
        .isEmpty();
    assertThat(plan.networksByMember()).isEqualTo(Map.of("a", java.util.Set.of("10.0.0.0/24", "10.1.0.0/24"),
        "b", java.util.Set.of("10.0.0.0/24"), "c", java.util.Set.of("10.0.0.0/24")));
  }
}
