package dev.fencing.agent.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ConfigException;
import dev.fencing.agent.config.StandaloneConfigLoader;
import dev.fencing.memberlist.Config;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

class MemberlistGossipConfigTest {

  private static final String FILE = """
      group: workers
      expected:
        - name: node-a
          address: 127.0.0.1:7946
        - name: node-b
          address: 127.0.0.1:7947
      fencing:
        mode: Watchdog
      """;

  private static AgentConfig agent(String yaml) throws Exception {
    return AgentConfig.fromStandalone(StandaloneConfigLoader.parse("test.yaml", yaml), "node-a", "test.yaml");
  }

  private static Config config(String yaml) throws Exception {
    return MemberlistGossip.config(agent(yaml), new InetSocketAddress(InetAddress.getLoopbackAddress(), 7946));
  }

  @Test
  void gossipIsLabelledWithTheGroupNameByDefault() throws Exception {
    assertThat(config(FILE).label()).isEqualTo("workers");
    assertThat(config(FILE + "  gossipLabel: GroupName\n").label()).isEqualTo("workers");
  }

  @Test
  void gossipLabelNoneGossipsWithoutALabelForPeersThatHaveNone() throws Exception {
    Config none = config(FILE + "  gossipLabel: None\n");
    assertThat(none.label()).isEmpty();
    assertThat(none.packetOptions().label()).isEmpty();
  }

  @Test
  void anUnknownGossipLabelIsRefusedWithTheField() {
    assertThatThrownBy(() -> config(FILE + "  gossipLabel: Off\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("fencing.gossipLabel");
  }

  /**
   * The transport reads datagrams only from the expected members' addresses (a host without the key
   * would otherwise cost the receive thread a decryption attempt per datagram), and follows the expected set.
   */
  @Test
  void onlyTheExpectedMembersAddressesAreReadAndTheSetFollowsTheConfig() throws Exception {
    AgentConfig agent = agent(FILE.replace("127.0.0.1:7947", "127.0.0.2:7947"));
    MemberlistGossip gossip = MemberlistGossip.create(agent, NodeMeta.EMPTY,
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), java.util.Optional.empty());
    assertThat(gossip.sourceAllowed(InetAddress.getByName("127.0.0.2"))).isTrue();
    assertThat(gossip.sourceAllowed(InetAddress.getByName("127.0.0.1"))).isTrue();
    assertThat(gossip.sourceAllowed(InetAddress.getByName("127.0.0.3"))).isFalse();

    gossip.expectMembers(new ExpectedPeers(java.util.Map.of("node-a", new InetSocketAddress("127.0.0.1", 7946),
        "node-c", new InetSocketAddress("127.0.0.3", 7946))));
    assertThat(gossip.sourceAllowed(InetAddress.getByName("127.0.0.3"))).isTrue();
    assertThat(gossip.sourceAllowed(InetAddress.getByName("127.0.0.2"))).as("no longer expected").isFalse();

    // A member named by a host name that does not resolve must not go unheard: no filtering then.
    gossip.expectMembers(new ExpectedPeers(java.util.Map.of("node-d",
        InetSocketAddress.createUnresolved("node-d.invalid", 7946))));
    assertThat(gossip.sourceAllowed(InetAddress.getByName("127.0.0.9"))).isTrue();
  }
}
