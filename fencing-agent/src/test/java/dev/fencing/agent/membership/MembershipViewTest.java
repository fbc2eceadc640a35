package dev.fencing.agent.membership;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MembershipViewTest {

  final List<String> events = new ArrayList<>();
  final MembershipView view = new MembershipView("a",
      (type, name, addresses, time, source) -> events.add(type + " " + name + " " + addresses + " " + source),
      InstantSource.fixed(Instant.EPOCH), "node=a group=g", expected("a", "b"));

  static ExpectedPeers expected(String... names) {
    Map<String, InetSocketAddress> out = new java.util.HashMap<>();
    for (String n : names) {
      out.put(n, new InetSocketAddress("127.0.0.1", 1));
    }
    return new ExpectedPeers(out);
  }

  static GossipMember member(String name, GossipState state, boolean isolated) {
    return new GossipMember(name, "127.0.0.1:1", new NodeMeta(Map.of("InternalIP", "10.0.0." + name.length()),
        isolated), state);
  }

  @Test
  void joinWhenAliveLeftWhenDeadAndOnlyOnChange() {
    view.apply(member("b", GossipState.ALIVE, false));
    view.apply(member("b", GossipState.SUSPECT, false));
    view.apply(member("b", GossipState.DEAD, false));
    view.apply(member("b", GossipState.DEAD, false));
    view.apply(member("b", GossipState.ALIVE, false));
    assertThat(events).containsExactly(
        "JOIN b {InternalIP=10.0.0.1} gossip",
        "LEFT b {InternalIP=10.0.0.1} gossip",
        "JOIN b {InternalIP=10.0.0.1} gossip");
  }

  @Test
  void everyChangeToWhatMemberReturnsMovesTheChangeCount() {
    long start = view.changes();
    view.apply(member("b", GossipState.ALIVE, false));
    long afterJoin = view.changes();
    assertThat(afterJoin).isGreaterThan(start);
    view.apply(member("b", GossipState.ALIVE, true));
    long afterIsolated = view.changes();
    assertThat(afterIsolated).as("an update without an event still changes member()").isGreaterThan(afterJoin);
    assertThat(view.member("b")).hasValueSatisfying(m -> assertThat(m.meta().isolated()).isTrue());

    assertThat(view.apply(member("zed", GossipState.ALIVE, false))).isFalse();
    view.expect(expected("a", "b", "c"));
    assertThat(view.changes()).as("a stranger dropped, nobody forgotten: member() unchanged").isEqualTo(afterIsolated);

    view.expect(expected("a"));
    assertThat(view.member("b")).isEmpty();
    assertThat(view.changes()).as("b forgotten").isGreaterThan(afterIsolated);
  }

  @Test
  void anIsolatedMemberIsReportedLeftAndJoinsAgainWhenItClearsTheFlag() {
    view.apply(member("b", GossipState.ALIVE, false));
    view.apply(member("b", GossipState.ALIVE, true));
    view.apply(member("b", GossipState.ALIVE, false));
    assertThat(events).containsExactly(
        "JOIN b {InternalIP=10.0.0.1} gossip",
        "LEFT b {InternalIP=10.0.0.1} isolated",
        "JOIN b {InternalIP=10.0.0.1} isolated");
  }

  @Test
  void aMemberFirstSeenIsolatedIsNotAnnounced() {
    view.apply(member("b", GossipState.ALIVE, true));
    assertThat(events).isEmpty();
    assertThat(view.member("b")).isPresent();
  }

  @Test
  void addressChangesRepublishJoin() {
    view.apply(member("b", GossipState.ALIVE, false));
    view.apply(new GossipMember("b", "127.0.0.1:1", new NodeMeta(Map.of("InternalIP", "10.9.9.9"), false),
        GossipState.ALIVE));
    assertThat(events).last().isEqualTo("JOIN b {InternalIP=10.9.9.9} gossip");
  }

  @Test
  void thisNodesOwnIsolationDoesNotHideItLocally() {
    view.apply(member("a", GossipState.ALIVE, true));
    assertThat(events).containsExactly("JOIN a {InternalIP=10.0.0.1} gossip");
  }

  @Test
  void metaRoundTripsAndRejectsForeignBytes() {
    NodeMeta meta = new NodeMeta(Map.of("InternalIP", "10.0.0.5", "eth1", "fe80::1"), true);
    assertThat(NodeMeta.decode(meta.encode())).isEqualTo(meta);
    assertThat(NodeMeta.decode(new byte[0])).isEqualTo(NodeMeta.EMPTY);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> NodeMeta.decode(new byte[] {'F', 1, 0, 3, 5}))
        .hasMessageContaining("truncated");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> NodeMeta.decode("serf-tags".getBytes()))
        .hasMessageContaining("not fencing-agent metadata");
  }

  @Test
  void anUnknownNameOrAnExpectedNameAtAnotherAddressIsDroppedAndNeverPublished() {
    boolean stranger = view.apply(member("x", GossipState.ALIVE, false));
    boolean impostor = view.apply(new GossipMember("b", "127.0.0.2:1", NodeMeta.EMPTY, GossipState.ALIVE));
    assertThat(stranger).isFalse();
    assertThat(impostor).isFalse();
    assertThat(events).isEmpty();
    assertThat(view.member("x")).isEmpty();
    assertThat(view.countByState().values().stream().mapToInt(Integer::intValue).sum()).isZero();
  }

  @Test
  void aMemberRemovedFromTheExpectedSetGetsALeftAndOneAddedLaterAppears() {
    view.apply(member("b", GossipState.ALIVE, false));
    assertThat(view.apply(member("c", GossipState.ALIVE, false))).isFalse();
    view.expect(expected("a", "c"));
    assertThat(view.apply(member("c", GossipState.ALIVE, false))).isTrue();
    assertThat(events).containsExactly(
        "JOIN b {InternalIP=10.0.0.1} gossip",
        "LEFT b {InternalIP=10.0.0.1} config",
        "JOIN c {InternalIP=10.0.0.1} gossip");
    assertThat(view.member("b")).isEmpty();
  }
}
