package dev.fencing.agent.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.policy.NetworkCidr;
import dev.fencing.policy.Reachability;
import java.net.InetAddress;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@code fencing.networks} / {@code reachability} and per-member {@code gossipAddresses} in a standalone file. */
class StandaloneNetworksTest {

  static String file(String nodeB, String networks) {
    return """
        group: workers
        expected:
          - {name: node-a, address: '10.0.0.1:7946', gossipAddresses: {'10.1.0.0/24': '10.1.0.1:7946'}}
          - {name: node-b, address: '10.0.0.2:7946'%s}
          - {name: node-c, address: '10.0.0.3:7946', gossipAddresses: {'10.1.0.0/24': '10.1.0.3:7946'}}
        fencing:
          quorum: {tieBreakers: [LowestName]}
          %s
        """.formatted(nodeB, networks);
  }

  static final String NETWORKS = "networks: ['10.0.0.0/24', '10.1.0.0/24']\n  reachability: All";

  @Test
  void networksReachabilityAndPerNetworkAddressesAreRead() throws Exception {
    StandaloneConfig config = StandaloneConfigLoader.parse("f.yaml",
        file(", gossipAddresses: {'10.1.0.0/24': '10.1.0.2:7946'}", NETWORKS));
    assertThat(config.policy().networks().texts()).containsExactly("10.0.0.0/24", "10.1.0.0/24");
    assertThat(config.policy().networks().reachability()).isEqualTo(Reachability.ALL);
    assertThat(config.member("node-b").orElseThrow().gossipAddresses())
        .isEqualTo(Map.of("10.1.0.0/24", "10.1.0.2:7946"));
  }

  @Test
  void aMemberWithoutAnAddressOnANetworkOrOneOutsideItIsRefused() {
    assertThatThrownBy(() -> StandaloneConfigLoader.parse("f.yaml", file("", NETWORKS)))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("expected[1].gossipAddresses: member node-b has no address on network 10.1.0.0/24;"
            + " add '10.1.0.0/24: <ip inside it>:<port>'");
    assertThatThrownBy(() -> StandaloneConfigLoader.parse("f.yaml",
        file(", gossipAddresses: {'10.1.0.0/24': '10.2.0.2:7946'}", NETWORKS)))
        .hasMessageContaining("expected[1].gossipAddresses: 10.2.0.2:7946 (member node-b) is not an IP inside"
            + " 10.1.0.0/24");
    assertThatThrownBy(() -> StandaloneConfigLoader.parse("f.yaml",
        file(", gossipAddresses: {'10.9.0.0/24': '10.9.0.2:7946'}", NETWORKS)))
        .hasMessageContaining("'10.9.0.0/24' is not one of fencing.networks [10.0.0.0/24, 10.1.0.0/24]");
  }

  @Test
  void badNetworksGetTheNodeGroupsMessages() {
    assertThatThrownBy(() -> StandaloneConfigLoader.parse("f.yaml",
        file("", "networks: ['10.0.0.0/24', '10.0.0.0/24']\n  reachability: Some")))
        .hasMessageContaining("fencing.networks: networks[1] '10.0.0.0/24' repeats networks[0] '10.0.0.0/24'")
        .hasMessageContaining("fencing.reachability: reachability 'Some' is not known; use one of Any, All");
  }

  @Test
  void theControllersConfigIsCompletedWithTheLocalAddressInsideEachNetwork() throws Exception {
    StandaloneConfig file = StandaloneConfigLoader.parse("f.yaml",
        file(", gossipAddresses: {'10.1.0.0/24': '10.1.0.2:7946'}", NETWORKS));
    // As from a controller: node-b's entry names only its gossip address.
    AgentConfig fromController = new AgentConfig(file.group(), "node-b", file.members().stream()
        .map(m -> m.name().equals("node-b") ? m.withGossipAddresses(Map.of()) : m).toList(), file.policy(),
        java.util.List.of(), Optional.empty(), Optional.empty(), "controller", "e", 1);
    AgentConfig completed = LocalNetworkAddresses.complete(fromController, cidr ->
        cidr.text().equals("10.1.0.0/24") ? Optional.of(address("10.1.0.22")) : Optional.of(address("10.0.0.99")));
    assertThat(completed.selfMember().gossipAddresses()).isEqualTo(Map.of("10.1.0.0/24", "10.1.0.22:7946"));
    assertThat(completed.member("node-a")).isEqualTo(fromController.member("node-a"));
    assertThat(LocalNetworkAddresses.complete(fromController, cidr -> Optional.empty())).isSameAs(fromController);
    assertThat(LocalNetworkAddresses.fromInterfaces(NetworkCidr.parse("127.0.0.0/8")))
        .contains(InetAddress.getLoopbackAddress());
  }

  private static InetAddress address(String ip) {
    try {
      return InetAddress.getByName(ip);
    } catch (java.net.UnknownHostException e) {
      throw new IllegalStateException(e);
    }
  }
}
