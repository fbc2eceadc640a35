package dev.fencing.memberlist.state;

import static dev.fencing.memberlist.state.ProtocolHarness.VSN;
import static dev.fencing.memberlist.state.ProtocolHarness.address;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.memberlist.Config;
import dev.fencing.memberlist.Delegate;
import dev.fencing.memberlist.NodeState;
import dev.fencing.memberlist.codec.AckResp;
import dev.fencing.memberlist.codec.Alive;
import dev.fencing.memberlist.codec.Dead;
import dev.fencing.memberlist.codec.IndirectPingReq;
import dev.fencing.memberlist.codec.NackResp;
import dev.fencing.memberlist.codec.Ping;
import dev.fencing.memberlist.codec.PushNodeState;
import dev.fencing.memberlist.codec.PushPull;
import dev.fencing.memberlist.codec.Suspect;
import dev.fencing.memberlist.codec.UserMsg;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SwimProtocolTest {
  private static final Config LAN = Config.defaultLan().toBuilder().name("self").build();

  private static ProtocolHarness withPeers(int n, long seed) {
    ProtocolHarness h = new ProtocolHarness(LAN, seed);
    for (int i = 1; i <= n; i++) {
      h.addPeer(i, VSN);
    }
    return h;
  }

  /** Answers every ping addressed to a peer with an ack, as a healthy cluster would. */
  private static void ackAllPings(ProtocolHarness h, int from) {
    List<Ping> pings = h.sentOf(Ping.class);
    for (Ping p : pings.subList(from, pings.size())) {
      h.protocol.handleMessage(new AckResp(p.seqNo(), null), address(1));
    }
  }

  @Test
  void gossipSleepsWhileNothingIsQueuedAndABroadcastWakesItForTheNextRound() {
    ProtocolHarness h = withPeers(2, 11);
    // Answer probes so that nobody turns suspect: the queue drains and stays empty.
    for (int second = 0; second < 10; second++) {
      int before = h.sentOf(Ping.class).size();
      h.run(1_000);
      ackAllPings(h, before);
    }
    assertThat(h.protocol.queuedBroadcasts()).isZero();
    assertThat(h.protocol.gossipAsleep()).as("no broadcast queued").isTrue();

    int sentBefore = h.sent.size();
    h.addPeer(3, VSN);
    assertThat(h.protocol.gossipAsleep()).as("the alive broadcast about peer-3 wakes gossip").isFalse();
    h.run(LAN.gossipInterval().toMillis());
    List<ProtocolHarness.Sent> gossip = h.sent.subList(sentBefore, h.sent.size()).stream()
        .filter(s -> s.messages().stream().allMatch(m -> m instanceof Alive)).toList();
    assertThat(gossip).as("a gossip round within one interval carries the broadcast").isNotEmpty();
    assertThat(gossip.get(0).messages()).anySatisfy(m -> assertThat(((Alive) m).node()).isEqualTo("peer-3"));
  }

  @Test
  void gossipKeepsTickingForADelegateThatHandsOutBroadcasts() {
    Delegate quiet = new Delegate() {
      @Override
      public List<byte[]> getBroadcasts(int overhead, int limit) {
        return List.of();
      }
    };
    ProtocolHarness h = new ProtocolHarness(LAN.toBuilder().delegate(quiet).build(), 11);
    h.addPeer(1, VSN);
    h.run(10_000);
    assertThat(h.protocol.queuedBroadcasts()).isZero();
    assertThat(h.protocol.gossipAsleep()).as("the delegate may have something at any round").isFalse();
    assertThat(SwimProtocol.handsOutBroadcasts(quiet)).isTrue();
    assertThat(SwimProtocol.handsOutBroadcasts(new Delegate() {})).isFalse();
    assertThat(SwimProtocol.handsOutBroadcasts(null)).isFalse();
  }

  @Test
  void manyTinyBroadcastsAreSentInCompoundsOfAtMost127PartsWhichMemberlist022CanRead() {
    ArrayDeque<byte[]> queue = new ArrayDeque<>();
    for (int i = 0; i < 300; i++) {
      queue.add(new byte[] {(byte) 'a', (byte) i});
    }
    Delegate tiny =
        new Delegate() {
          @Override
          public List<byte[]> getBroadcasts(int overhead, int limit) {
            List<byte[]> out = new ArrayList<>();
            int used = 0;
            while (!queue.isEmpty() && used + overhead + queue.peek().length <= limit) {
              used += overhead + queue.peek().length;
              out.add(queue.poll());
            }
            return out;
          }
        };
    ProtocolHarness h = new ProtocolHarness(LAN.toBuilder().delegate(tiny).build(), 42);
    h.addPeer(1, VSN);
    h.run(2000);
    assertThat(h.sentOf(UserMsg.class)).hasSize(300);
    assertThat(h.sent).allSatisfy(s -> assertThat(s.messages()).hasSizeLessThanOrEqualTo(127));
    // one gossip round's budget held more than 127 of them, so the cap (not the byte budget) split it
    assertThat(h.sent).anySatisfy(s -> assertThat(s.messages()).hasSize(127));
  }

  /**
   * Go starts sequence numbers at 0 on every start, so an ack captured from a node's earlier run matches the same
   * run's first probes again; here each start picks its own first number (same seed, so nothing else differs).
   */
  @Test
  void eachStartNumbersItsProbesFromItsOwnRandomPoint() {
    java.util.Set<Long> first = new java.util.HashSet<>();
    for (int i = 0; i < 4; i++) {
      first.add(withPeers(3, 7).awaitProbe().seqNo());
    }
    assertThat(first).as("first probe's sequence number of four starts").hasSizeGreaterThan(1);
  }

  @Test
  void probesEveryMemberOncePerRoundInRoundRobinOrder() {
    ProtocolHarness h = withPeers(5, 7);
    Map<String, Integer> probed = new HashMap<>();
    int seen = 0;
    for (int tick = 0; tick < 10; tick++) {
      h.run(1000);
      List<Ping> pings = h.sentOf(Ping.class);
      for (Ping p : pings.subList(seen, pings.size())) {
        probed.merge(p.node(), 1, Integer::sum);
      }
      ackAllPings(h, seen);
      seen = pings.size();
    }
    // 10 probe ticks over 5 peers: two full passes, each peer exactly twice, never self
    assertThat(probed).containsOnlyKeys("peer-1", "peer-2", "peer-3", "peer-4", "peer-5");
    assertThat(probed.values()).allMatch(c -> c == 2);
    assertThat(h.protocol.healthScore()).isZero();
  }

  @Test
  void missedAckTriggersIndirectChecksWithNackAndTcpFallbackThenSuspicion() {
    ProtocolHarness h = withPeers(4, 11);
    Ping probe = h.awaitProbe();
    String target = probe.node();
    h.run(499);
    assertThat(h.sentOf(IndirectPingReq.class)).isEmpty();

    h.run(1); // ProbeTimeout
    List<IndirectPingReq> indirect = h.sentOf(IndirectPingReq.class);
    assertThat(indirect).hasSize(3); // IndirectChecks
    assertThat(indirect).allMatch(r -> r.node().equals(target) && r.nack() && r.seqNo() == probe.seqNo());
    assertThat(h.streamPings).hasSize(1);
    assertThat(h.streamPings.get(0).ping().node()).isEqualTo(target);

    h.run(500); // the rest of the (unscaled) probe interval
    assertThat(h.protocol.node(target).state()).isEqualTo(NodeState.SUSPECT);
    assertThat(h.protocol.healthScore()).as("three expected nacks missing").isEqualTo(3);
    assertThat(h.sentOf(Suspect.class)).isEmpty(); // gossiped later, not sent inline
  }

  /**
   * As memberlist: a failed probe accuses its target at the incarnation it had when the probe started, so a
   * refutation heard meanwhile (newer proof of life) voids the accusation instead of forcing another refutation.
   */
  @Test
  void aRefutationHeardDuringAFailedProbeVoidsThatProbesAccusation() {
    ProtocolHarness h = withPeers(4, 11);
    Ping probe = h.awaitProbe();
    String target = probe.node();
    int i = Integer.parseInt(target.substring("peer-".length()));
    long startedAt = h.protocol.node(target).incarnation();
    h.run(600); // direct timeout passed, indirect pings out, no ack
    h.protocol.handleMessage(
        new Alive(startedAt + 1, target, address(i).getAddress().getAddress(), 7946, null, VSN), address(i));
    h.run(500); // the probe's deadline
    assertThat(h.counters.probeFailures.sum()).as("the probe itself still failed").isEqualTo(1);
    assertThat(h.protocol.node(target).state()).isEqualTo(NodeState.ALIVE);
    assertThat(h.protocol.node(target).incarnation()).isEqualTo(startedAt + 1);
    assertThat(h.protocol.count(NodeState.SUSPECT)).isZero();
  }

  @Test
  void nacksFromRelaysMeanTheProblemIsTheTargetNotUs() {
    ProtocolHarness h = withPeers(4, 11);
    long seq = h.awaitProbe().seqNo();
    h.run(500);
    for (int i = 0; i < 3; i++) {
      h.protocol.handleMessage(new NackResp(seq), address(2));
    }
    h.run(500);
    assertThat(h.protocol.healthScore()).isZero();
    assertThat(h.protocol.count(NodeState.SUSPECT)).isEqualTo(1);
  }

  @Test
  void indirectAckCountsAsSuccessAndLowersTheHealthScore() {
    ProtocolHarness h = withPeers(4, 11);
    long seq = h.awaitProbe().seqNo();
    h.run(700);
    h.protocol.handleMessage(new AckResp(seq, null), address(3));
    h.run(299);
    assertThat(h.protocol.count(NodeState.SUSPECT)).isZero();
  }

  @Test
  void oldPeersGetNoNackFlagAndNoTcpPing() {
    ProtocolHarness h = new ProtocolHarness(LAN, 3);
    h.addPeer(1, new byte[] {1, 2, 2, 0, 0, 0});
    h.addPeer(2, new byte[] {1, 2, 2, 0, 0, 0});
    h.awaitProbe();
    h.run(500);
    List<IndirectPingReq> indirect = h.sentOf(IndirectPingReq.class);
    assertThat(indirect).hasSize(1).allMatch(r -> !r.nack());
    assertThat(h.streamPings).isEmpty();
    h.run(500);
    assertThat(h.protocol.healthScore()).as("no nack-capable relay: +1").isEqualTo(1);
  }

  @Test
  void probingASuspectPiggybacksTheSuspicionOnThePing() {
    ProtocolHarness h = withPeers(1, 5);
    h.protocol.handleMessage(new Suspect(1, "peer-1", "peer-9"), address(9));
    Ping ping = h.awaitProbe();
    ProtocolHarness.Sent probe =
        h.sent.stream().filter(s -> s.messages().contains(ping)).findFirst().orElseThrow();
    assertThat(probe.messages()).hasSize(2);
    assertThat(probe.messages().get(0)).isInstanceOf(Ping.class);
    assertThat(probe.messages().get(1)).isEqualTo(new Suspect(1, "peer-1", "self"));
    assertThat(probe.crc()).as("peer speaks protocol 5").isTrue();
  }

  @Test
  void suspicionAboutSelfIsRefutedWithAHigherIncarnation() {
    ProtocolHarness h = withPeers(3, 5);
    long inc = h.protocol.localNode().incarnation();
    h.protocol.handleMessage(new Suspect(inc + 4, "self", "peer-1"), address(1));
    assertThat(h.protocol.localNode().incarnation()).isEqualTo(inc + 5);
    assertThat(h.protocol.localNode().state()).isEqualTo(NodeState.ALIVE);
    assertThat(h.protocol.healthScore()).isEqualTo(1);
    assertThat(h.counters.refutations.sum()).isEqualTo(1);
    h.run(1000);
    assertThat(h.sentOf(Alive.class)).anyMatch(a -> a.node().equals("self") && a.incarnation() == inc + 5);
  }

  @Test
  void remoteDeathIsOnlySuspectedLocallyWhileLeftIsTakenAsIs() {
    ProtocolHarness h = withPeers(2, 5);
    List<PushNodeState> remote = new ArrayList<>();
    remote.add(new PushNodeState("peer-1", address(1).getAddress().getAddress(), 7946, null, 1, 2, VSN));
    remote.add(new PushNodeState("peer-2", address(2).getAddress().getAddress(), 7946, null, 1, 3, VSN));
    remote.add(new PushNodeState("peer-3", address(3).getAddress().getAddress(), 7946, null, 1, 0, VSN));
    assertThat(h.protocol.mergeRemoteState(new PushPull(false, remote, new byte[0]))).isNull();
    assertThat(h.protocol.node("peer-1").state()).isEqualTo(NodeState.SUSPECT);
    assertThat(h.protocol.node("peer-2").state()).isEqualTo(NodeState.LEFT);
    assertThat(h.protocol.node("peer-3").state()).isEqualTo(NodeState.ALIVE);
  }

  @Test
  void mergeWithAnIncompatibleProtocolVersionIsRefused() {
    ProtocolHarness h = withPeers(1, 5);
    List<PushNodeState> remote =
        List.of(new PushNodeState("old", address(7).getAddress().getAddress(), 7946, null, 1, 0, new byte[] {1, 1, 1, 0, 0, 0}));
    assertThat(h.protocol.mergeRemoteState(new PushPull(false, remote, new byte[0]))).contains("protocol version");
    assertThat(h.protocol.node("old")).isNull();
  }

  @Test
  void relayForwardsTheAckOrNacksAfterProbeTimeout() {
    ProtocolHarness h = withPeers(2, 5);
    byte[] target = address(2).getAddress().getAddress();
    h.protocol.handleMessage(
        new IndirectPingReq(77, target, 7946, "peer-2", true, address(1).getAddress().getAddress(), 7946, "peer-1"),
        address(1));
    Ping relayed = h.sentOf(Ping.class).get(h.sentOf(Ping.class).size() - 1);
    assertThat(relayed.node()).isEqualTo("peer-2");
    h.protocol.handleMessage(new AckResp(relayed.seqNo(), null), address(2));
    assertThat(h.sentOf(AckResp.class)).anyMatch(a -> a.seqNo() == 77);

    h.protocol.handleMessage(
        new IndirectPingReq(78, target, 7946, "peer-2", true, address(1).getAddress().getAddress(), 7946, "peer-1"),
        address(1));
    h.run(500);
    assertThat(h.sentOf(NackResp.class)).containsExactly(new NackResp(78));
  }

  @Test
  void deadAboutAnotherNodeRemovesItFromMembersAndLeaveBroadcastsSelfAsLeft() {
    ProtocolHarness h = withPeers(2, 5);
    h.protocol.handleMessage(new Dead(1, "peer-1", "peer-2"), address(2));
    assertThat(h.protocol.node("peer-1").state()).isEqualTo(NodeState.DEAD);
    assertThat(h.protocol.numMembers()).isEqualTo(2);
    List<String> done = new ArrayList<>();
    assertThat(h.protocol.leave(() -> done.add("left"))).isTrue();
    assertThat(h.protocol.localNode().state()).isEqualTo(NodeState.LEFT);
    h.run(5000); // gossip transmits the leave up to its retransmit limit
    assertThat(done).containsExactly("left");
    assertThat(h.sentOf(Dead.class)).anyMatch(d -> d.node().equals("self") && d.from().equals("self"));
  }

  @Test
  void pushPullIntervalGrowsWithEveryDoublingAbove32Nodes() {
    long s = 1_000_000_000L;
    assertThat(SwimProtocol.pushPullScale(30 * s, 1)).isEqualTo(30 * s);
    assertThat(SwimProtocol.pushPullScale(30 * s, 32)).isEqualTo(30 * s);
    assertThat(SwimProtocol.pushPullScale(30 * s, 33)).isEqualTo(60 * s);
    assertThat(SwimProtocol.pushPullScale(30 * s, 64)).isEqualTo(60 * s);
    assertThat(SwimProtocol.pushPullScale(30 * s, 65)).isEqualTo(90 * s);
    assertThat(SwimProtocol.pushPullScale(30 * s, 256)).isEqualTo(120 * s);
    assertThat(SwimProtocol.pushPullScale(30 * s, 1000)).isEqualTo(180 * s);
  }

  @Test
  void recentlyDeadNodesStillReceiveGossipUntilGossipToTheDeadTime() {
    Config config = LAN.toBuilder().gossipNodes(5).gossipToTheDeadTime(Duration.ofSeconds(5)).build();
    ProtocolHarness h = new ProtocolHarness(config, 9);
    h.addPeer(1, VSN);
    h.protocol.handleMessage(new Dead(1, "peer-1", "peer-7"), address(7));
    h.sent.clear();
    h.run(1000); // the dead broadcast is gossiped, and peer-1 is one of the few targets
    assertThat(h.sent).anyMatch(p -> p.to().equals(address(1)));

    h.run(5000);
    h.protocol.handleMessage(new Alive(1, "peer-2", address(2).getAddress().getAddress(), 7946, null, VSN), address(2));
    h.sent.clear();
    h.run(1000);
    assertThat(h.sent).as("gossip goes to peer-2 only").isNotEmpty().noneMatch(p -> p.to().equals(address(1)));
  }

  @Test
  void tcpFallbackAckKeepsTheTargetAliveWhenUdpProbesFail() {
    ProtocolHarness h = withPeers(4, 11);
    Ping probe = h.awaitProbe();
    h.run(500);
    assertThat(h.streamPings).hasSize(1);
    h.protocol.streamPingResult(probe.seqNo(), true);
    h.run(500);
    assertThat(h.protocol.node(probe.node()).state()).isEqualTo(NodeState.ALIVE);
    assertThat(h.protocol.healthScore()).isZero();
  }

  /**
   * A member that sends messages the protocol can only complain about (pings for another node, here) gets one
   * warning per interval, with the count, not one per message: the warnings are written under the protocol's lock,
   * on the thread that also receives the quorum heartbeats.
   */
  @Test
  void aFloodOfBadMessagesIsLoggedOncePerIntervalWithItsCount() {
    ProtocolHarness h = withPeers(1, 11);
    ch.qos.logback.classic.Logger logger =
        (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(SwimProtocol.class);
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines =
        new ch.qos.logback.core.read.ListAppender<>();
    lines.start();
    ch.qos.logback.classic.Level level = logger.getLevel();
    logger.setLevel(ch.qos.logback.classic.Level.WARN); // the test config keeps only errors of this package
    logger.setAdditive(false);
    logger.addAppender(lines);
    try {
      for (int i = 0; i < 1_000; i++) {
        h.protocol.handleMessage(new Ping(i, "someone-else", null, 0, "peer-1"), address(1));
      }
      assertThat(messages(lines, "ping_for_other_node")).singleElement().asString()
          .contains("target=someone-else").endsWith("count=1 not_logged=0");

      h.run(dev.fencing.memberlist.limits.Refusals.LOG_INTERVAL.toMillis() + 1);
      h.protocol.handleMessage(new Ping(1_000, "someone-else", null, 0, "peer-1"), address(1));
      assertThat(messages(lines, "ping_for_other_node")).hasSize(2).last().asString()
          .endsWith("count=1001 not_logged=999");
    } finally {
      logger.detachAppender(lines);
      logger.setAdditive(true);
      logger.setLevel(level);
    }
  }

  private static List<String> messages(
      ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines, String event) {
    return lines.list.stream().map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
        .filter(m -> m.startsWith("event=" + event + " ")).toList();
  }
}
