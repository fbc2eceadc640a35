package dev.fencing.agent.membership;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.policy.GossipNetworks;
import dev.fencing.policy.NetworkCidr;
import dev.fencing.policy.Reachability;
import dev.fencing.policy.ResolvedTimings;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The merge of per-network member states by the reachability rule, and routing by destination network. */
class MultiNetworkGossipTest {

  /** One network's member: records sends and joins, lets the test announce member changes. */
  static final class FakeNetwork implements GossipMembership {
    GossipListener listener;
    final List<InetSocketAddress> sent = new CopyOnWriteArrayList<>();
    final List<String> joined = new CopyOnWriteArrayList<>();

    @Override
    public void start(GossipListener l) {
      listener = l;
    }

    @Override
    public int join(List<String> hostPorts) {
      joined.addAll(hostPorts);
      return hostPorts.size();
    }

    @Override
    public List<GossipMember> members() {
      return List.of();
    }

    @Override
    public void sendTo(InetSocketAddress address, byte[] message) {
      sent.add(address);
    }

    @Override
    public void updateMeta(NodeMeta meta, Duration timeout) {
    }

    @Override
    public void applyTimings(ResolvedTimings timings) {
    }

    @Override
    public void applyKeys(List<byte[]> keys) {
    }

    @Override
    public void expectMembers(ExpectedPeers expected) {
    }

    @Override
    public GossipTraffic traffic() {
      return new GossipTraffic(1, 2, 3, 4);
    }

    @Override
    public void leaveAndClose(Duration timeout) {
    }
  }

  static final String N1 = "10.0.0.0/24";
  static final String N2 = "10.1.0.0/24";

  final FakeNetwork one = new FakeNetwork();
  final FakeNetwork two = new FakeNetwork();
  final List<GossipMember> seen = new ArrayList<>();

  MultiNetworkGossip start(Reachability rule) throws Exception {
    NetworkPlan plan = NetworkPlan.of(NetworkPlanTest.config(GossipNetworks.parse(List.of(N1, N2), rule),
        NetworkPlanTest.MEMBERS));
    MultiNetworkGossip gossip = new MultiNetworkGossip(List.of(
        new MultiNetworkGossip.OnNetwork(NetworkCidr.parse(N1), one),
        new MultiNetworkGossip.OnNetwork(NetworkCidr.parse(N2), two)), plan);
    gossip.start(new GossipListener() {
      @Override
      public void onUserMessage(byte[] message, InetSocketAddress from, long receivedNanos) {
      }

      @Override
      public void onMemberChange(GossipMember member) {
        seen.add(member);
      }

      @Override
      public void onUnexpectedMember(String name, String hostPort) {
      }
    });
    return gossip;
  }

  static GossipMember member(String hostPort, GossipState state) {
    return new GossipMember("b", hostPort, NodeMeta.EMPTY, state);
  }

  @Test
  void underAnyAMemberStaysAliveWhileAliveOnOneNetwork() throws Exception {
    start(Reachability.ANY);
    one.listener.onMemberChange(member("10.0.0.2:7946", GossipState.ALIVE));
    two.listener.onMemberChange(member("10.1.0.2:7946", GossipState.ALIVE));
    two.listener.onMemberChange(member("10.1.0.2:7946", GossipState.DEAD));
    assertThat(seen).extracting(GossipMember::state).containsExactly(GossipState.ALIVE, GossipState.ALIVE,
        GossipState.ALIVE);
    one.listener.onMemberChange(member("10.0.0.2:7946", GossipState.DEAD));
    assertThat(seen.get(seen.size() - 1).state()).isEqualTo(GossipState.DEAD);
  }

  @Test
  void underAllAMemberIsAliveOnlyWhileAliveOnEveryNetwork() throws Exception {
    start(Reachability.ALL);
    one.listener.onMemberChange(member("10.0.0.2:7946", GossipState.ALIVE));
    assertThat(seen).as("not yet seen on the second network").isEmpty();
    two.listener.onMemberChange(member("10.1.0.2:7946", GossipState.ALIVE));
    two.listener.onMemberChange(member("10.1.0.2:7946", GossipState.SUSPECT));
    two.listener.onMemberChange(member("10.1.0.2:7946", GossipState.DEAD));
    assertThat(seen).extracting(GossipMember::state).containsExactly(GossipState.ALIVE, GossipState.SUSPECT,
        GossipState.DEAD);
  }

  @Test
  void aMergedMemberCarriesItsAddressOnTheFirstNetworkWhicheverNetworkReportedIt() throws Exception {
    start(Reachability.ALL);
    one.listener.onMemberChange(member("10.0.0.2:7946", GossipState.ALIVE));
    two.listener.onMemberChange(member("10.1.0.2:7946", GossipState.ALIVE));
    one.listener.onMemberChange(member("10.0.0.2:7946", GossipState.DEAD));
    assertThat(seen).extracting(GossipMember::hostPort).containsOnly("10.0.0.2:7946");
    assertThat(seen.get(seen.size() - 1).state()).isEqualTo(GossipState.DEAD);
  }

  @Test
  void sendsAndJoinsGoOutOnTheDestinationsNetworkAndTrafficAddsUp() throws Exception {
    MultiNetworkGossip gossip = start(Reachability.ANY);
    gossip.sendTo(new InetSocketAddress("10.1.0.2", 7946), new byte[1]);
    gossip.sendTo(new InetSocketAddress("10.0.0.3", 7946), new byte[1]);
    gossip.sendTo(new InetSocketAddress("10.7.0.3", 7946), new byte[1]);
    assertThat(one.sent).containsExactly(new InetSocketAddress("10.0.0.3", 7946));
    assertThat(two.sent).containsExactly(new InetSocketAddress("10.1.0.2", 7946));
    assertThat(gossip.join(List.of("10.0.0.2:7946", "10.1.0.3:7946", "10.1.0.2:7946"))).isEqualTo(3);
    assertThat(one.joined).containsExactly("10.0.0.2:7946");
    assertThat(two.joined).containsExactly("10.1.0.3:7946", "10.1.0.2:7946");
    assertThat(gossip.traffic()).isEqualTo(new GossipTraffic(2, 4, 6, 8));
    assertThat(gossip.membersByNetwork()).containsOnlyKeys(N1, N2);
  }
}
