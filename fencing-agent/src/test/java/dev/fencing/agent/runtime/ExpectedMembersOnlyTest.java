package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.agent.quorum.Heartbeat;
import dev.fencing.agent.quorum.HeartbeatCodec;
import dev.fencing.memberlist.Config;
import dev.fencing.memberlist.Memberlist;
import dev.fencing.memberlist.codec.Keyring;
import dev.fencing.memberlist.codec.MessageCodec;
import dev.fencing.memberlist.codec.PacketCodec;
import dev.fencing.memberlist.codec.UserMsg;
import dev.fencing.proto.fencing.v1.Event;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Only expected members at their configured addresses count (§9): a heartbeat naming a real peer but sent from
 * elsewhere is refused and counted, and a gossip node with an unknown name, or an expected name at another address,
 * never reaches the local API. The intruders here even hold the group key (a stolen key, a removed node).
 */
class ExpectedMembersOnlyTest {

  static final byte[] KEY = "expected-only-16".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  static final List<String> ABC = List.of("node-a", "node-b", "node-c");

  @Test
  void heartbeatsNamingARealPeerFromAnotherAddressAreRejectedAndCounted() throws Exception {
    try (AgentCluster cluster = startedGroup()) {
      AgentCluster.Agent a = cluster.agent("node-a");
      int portB = cluster.agent("node-b").port();
      double before = a.counter("fencing.heartbeats.wrong.source");
      double rejectedBefore = a.counter("fencing.heartbeats.rejected");

      // A spoofed name: node-b's name from an arbitrary port.
      int spoofed;
      try (DatagramSocket spoofer = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
        spoofed = sendUntilCounted(spoofer, a, before + 1);
      }
      // Every spoofed packet is counted once in each counter (wrong.source first, then rejected): wait for the ones
      // still in flight before taking the baseline.
      await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
          .until(() -> a.counter("fencing.heartbeats.wrong.source") == before + spoofed
              && a.counter("fencing.heartbeats.rejected") >= rejectedBefore + spoofed);
      // A wrong address: node-b's port on an address no member has. The gossip transport drops it unread (only the
      // expected members' addresses are read at all), so it never even reaches the heartbeat check.
      double rejected = a.counter("fencing.heartbeats.rejected");
      double wrongSource = a.counter("fencing.heartbeats.wrong.source");
      try (DatagramSocket wrong = new DatagramSocket(new InetSocketAddress(InetAddress.getByName("127.0.0.2"),
          portB))) {
        send(wrong, a, 10);
      }
      Thread.sleep(500);
      assertThat(a.counter("fencing.heartbeats.wrong.source")).isEqualTo(wrongSource);
      assertThat(a.counter("fencing.heartbeats.rejected")).isEqualTo(rejected);
      assertThat(rejected).isGreaterThanOrEqualTo(1);
      assertThat(a.agent().snapshot().quorumHeld()).isTrue();
    }
  }

  @Test
  void gossipNodesWithAnUnknownNameOrAtAnotherAddressNeverReachGetAllOrStreamEvents() throws Exception {
    try (AgentCluster cluster = startedGroup()) {
      AgentCluster.Agent a = cluster.agent("node-a");
      try (Memberlist stranger = intruder("stranger"); Memberlist impostor = intruder("node-b")) {
        String seed = "127.0.0.1:" + a.port();
        stranger.join(List.of(seed));
        impostor.join(List.of(seed));
        await().atMost(Duration.ofSeconds(10))
            .until(() -> a.counter("fencing.gossip.unknown.members.dropped") >= 2);
        // Gossip would spread them within a few gossip rounds; give it that long to show they never appear.
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).until(() -> cluster.agents.stream()
            .allMatch(x -> x.members().equals(ABC)));
      }
      for (AgentCluster.Agent x : cluster.agents) {
        assertThat(x.events()).extracting(e -> e.getNode().getName()).as("events at %s", x.name())
            .doesNotContain("stranger");
        assertThat(x.events()).filteredOn(e -> e.getNode().getName().equals("node-b"))
            .as("node-b's events at %s: only the real node-b's JOIN", x.name())
            .extracting(Event::getType).containsOnly(dev.fencing.proto.fencing.v1.EventType.JOIN);
        assertThat(x.events()).filteredOn(e -> e.getNode().getName().equals("node-b"))
            .allMatch(e -> "10.0.0.2".equals(e.getNode().getAddressesMap().get("InternalIP")));
      }
    }
  }

  /** node-a, node-b, node-c with the group key, all holding quorum and seeing each other. */
  private static AgentCluster startedGroup() throws Exception {
    AgentCluster cluster = AgentCluster.startKeyed(3, AgentCluster.FAST_TIMINGS, KEY);
    try {
      await().atMost(Duration.ofSeconds(20)).until(() -> cluster.agents.stream()
          .allMatch(a -> a.agent().snapshot().quorumHeld() && a.members().equals(ABC)));
      return cluster;
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
  }

  private static Memberlist intruder(String name) throws Exception {
    return Memberlist.create(Config.defaultLocal().toBuilder().name(name).bindAddr("127.0.0.1").bindPort(0)
        .label("test").keyring(new Keyring(KEY)).build());
  }

  /** A sealed heartbeat naming node-b (with a new send time each, so none is a replay of the last). */
  private static byte[] packet() throws Exception {
    PacketCodec codec = new PacketCodec(Config.defaultLocal().toBuilder().name("x").label("test")
        .keyring(new Keyring(KEY)).build().packetOptions());
    byte[] heartbeat = HeartbeatCodec.encode(new Heartbeat("test", "node-b", 99, System.nanoTime(),
        Heartbeat.NO_ECHO, 0));
    return codec.encode(List.of(MessageCodec.encode(new UserMsg(heartbeat))), false, false);
  }

  /**
   * Sends a heartbeat naming node-b from {@code socket} until node-a counted {@code target} (at most 5 s); returns
   * how many were sent.
   */
  private static int sendUntilCounted(DatagramSocket socket, AgentCluster.Agent a, double target) throws Exception {
    InetSocketAddress to = new InetSocketAddress(InetAddress.getLoopbackAddress(), a.port());
    int[] sent = {0};
    await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(100)).until(() -> {
      byte[] p = packet();
      socket.send(new DatagramPacket(p, p.length, to));
      sent[0]++;
      return a.counter("fencing.heartbeats.wrong.source") >= target;
    });
    return sent[0];
  }

  private static void send(DatagramSocket socket, AgentCluster.Agent a, int count) throws Exception {
    InetSocketAddress to = new InetSocketAddress(InetAddress.getLoopbackAddress(), a.port());
    for (int i = 0; i < count; i++) {
      byte[] p = packet();
      socket.send(new DatagramPacket(p, p.length, to));
    }
  }
}
