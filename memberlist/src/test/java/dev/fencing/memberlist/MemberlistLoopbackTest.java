package dev.fencing.memberlist;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencing.memberlist.codec.Keyring;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Real sockets: a few nodes on loopback with memberlist's local configuration. */
class MemberlistLoopbackTest {
  private final List<Memberlist> started = new ArrayList<>();

  /** What one node's delegates saw. */
  private static final class Recorder implements Delegate, EventDelegate {
    final String state;
    volatile String meta = "";
    final List<String> updates = new CopyOnWriteArrayList<>();
    final List<String> messages = new CopyOnWriteArrayList<>();
    final List<String> remoteStates = new CopyOnWriteArrayList<>();
    final Map<String, NodeState> leaves = new ConcurrentHashMap<>();
    final List<java.net.InetSocketAddress> sources = new CopyOnWriteArrayList<>();

    Recorder(String state) {
      this.state = state;
    }

    @Override
    public byte[] nodeMeta(int limit) {
      return meta.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void notifyUpdate(Node node) {
      updates.add(node.name() + "=" + new String(node.meta(), StandardCharsets.UTF_8));
    }

    @Override
    public void notifyMsg(byte[] msg) {
      messages.add(new String(msg, StandardCharsets.UTF_8));
    }

    @Override
    public void notifyMsg(byte[] msg, java.net.InetSocketAddress from) {
      sources.add(from);
      notifyMsg(msg);
    }

    @Override
    public byte[] localState(boolean join) {
      return state.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void mergeRemoteState(byte[] buf, boolean join) {
      remoteStates.add(new String(buf, StandardCharsets.UTF_8));
    }

    @Override
    public void notifyLeave(Node node) {
      leaves.put(node.name(), node.state());
    }
  }

  private Memberlist start(String name, Recorder r) throws IOException {
    return start(name, r, Config.defaultLocal());
  }

  private Memberlist start(String name, Recorder r, Config base) throws IOException {
    Config c =
        base.toBuilder()
            .name(name)
            .bindAddr("127.0.0.1")
            .bindPort(0)
            .delegate(r)
            .events(r)
            .build();
    Memberlist m = Memberlist.create(c);
    started.add(m);
    return m;
  }

  @AfterEach
  void stopAll() {
    started.forEach(Memberlist::shutdown);
  }

  private static Node member(Memberlist m, String name) {
    return m.members().stream().filter(n -> n.name().equals(name)).findFirst().orElseThrow();
  }

  @Test
  void timingsAppliedToRunningNodesTakeEffectWithoutAnyoneLeaving() throws IOException {
    Recorder ra = new Recorder("a");
    Recorder rb = new Recorder("b");
    Memberlist a = start("a", ra);
    Memberlist b = start("b", rb);
    b.join(List.of(a.localNode().hostPort()));
    await().atMost(Duration.ofSeconds(10)).until(() -> a.numMembers() == 2 && b.numMembers() == 2);

    ProtocolTimings slower = new ProtocolTimings(Duration.ofMillis(400), Duration.ofMillis(150), 5, 7,
        Duration.ofMillis(150), 2, 5, Duration.ofSeconds(20));
    a.applyTimings(slower);
    b.applyTimings(slower);
    long probes = a.stats().probes();
    await().atMost(Duration.ofSeconds(10)).until(() -> a.stats().probes() >= probes + 3);

    assertThat(a.timings()).isEqualTo(slower);
    assertThat(a.config().probeInterval()).as("the start configuration is kept").isEqualTo(
        Config.defaultLocal().probeInterval());
    assertThat(a.numMembers()).isEqualTo(2);
    assertThat(ra.leaves).isEmpty();
    assertThat(rb.leaves).isEmpty();
  }

  @Test
  void userMessagesCarryTheSendersAddress() throws IOException {
    Recorder rb = new Recorder("b");
    Memberlist a = start("a", new Recorder("a"));
    Memberlist b = start("b", rb);
    await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(200)).until(() -> {
      a.sendToAddress(b.localNode().address(), "hi".getBytes(StandardCharsets.UTF_8));
      return !rb.sources.isEmpty();
    });
    assertThat(rb.sources.get(0)).isEqualTo(a.localNode().address());
    assertThat(rb.messages).contains("hi");
  }

  @Test
  void nodesJoinExchangeMessagesAndStateThenLeaveAndFail() throws IOException {
    Recorder ra = new Recorder("state-a");
    Recorder rb = new Recorder("state-b");
    Recorder rc = new Recorder("state-c");
    Memberlist a = start("a", ra);
    Memberlist b = start("b", rb);
    Memberlist c = start("c", rc);

    assertThat(b.join(List.of(a.localNode().hostPort()))).isEqualTo(1);
    assertThat(c.join(List.of(b.localNode().hostPort()))).isEqualTo(1);
    await().atMost(Duration.ofSeconds(10)).until(() -> a.numMembers() == 3 && b.numMembers() == 3 && c.numMembers() == 3);
    assertThat(ra.remoteStates).contains("state-b");
    assertThat(rb.remoteStates).contains("state-a");

    a.sendBestEffort(member(a, "b"), "udp-hello".getBytes(StandardCharsets.UTF_8));
    a.sendReliable(member(a, "c"), "tcp-hello".getBytes(StandardCharsets.UTF_8));
    c.sendToAddress(a.localNode().address(), "by-address".getBytes(StandardCharsets.UTF_8));
    await().atMost(Duration.ofSeconds(5)).until(() -> rb.messages.contains("udp-hello"));
    await().atMost(Duration.ofSeconds(5)).until(() -> rc.messages.contains("tcp-hello"));
    await().atMost(Duration.ofSeconds(5)).until(() -> ra.messages.contains("by-address"));

    ra.meta = "zone=a";
    assertThat(a.updateNode(Duration.ofSeconds(5))).isTrue();
    await().atMost(Duration.ofSeconds(5)).until(() -> rb.updates.contains("a=zone=a") && rc.updates.contains("a=zone=a"));
    assertThat(new String(member(c, "a").meta(), StandardCharsets.UTF_8)).isEqualTo("zone=a");

    b.shutdown();
    // local config: probe 1 s; a and c both suspect b, so one confirmation shrinks the timer to its 3 s minimum
    await().atMost(Duration.ofSeconds(12)).until(() -> ra.leaves.get("b") == NodeState.DEAD && rc.leaves.get("b") == NodeState.DEAD);

    assertThat(c.leave(Duration.ofSeconds(5))).isTrue();
    c.shutdown();
    await().atMost(Duration.ofSeconds(5)).until(() -> ra.leaves.get("c") == NodeState.LEFT);
    assertThat(a.numMembers()).isEqualTo(1);
    MemberlistStats stats = a.stats();
    assertThat(stats.packetsSent()).isPositive();
    assertThat(stats.packetsReceived()).isPositive();
    assertThat(stats.userMessagesReceived()).isEqualTo(1);
  }

  @Test
  void joinFailsWhenNoPeerAnswers() throws IOException {
    Memberlist a = start("lonely", new Recorder(""));
    assertThatThrownBy(() -> a.join(List.of("127.0.0.1:1")))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("127.0.0.1:1");
    assertThat(a.members()).extracting(Node::name).containsExactly("lonely");
  }

  @Test
  void encryptedLabelledNodesTalkAndAStrangerWithoutTheKeyCannotJoin() throws IOException {
    byte[] key = new byte[32];
    key[0] = 7;
    Config secure = Config.defaultLocal().toBuilder().name("x").keyring(new Keyring(key)).label("group-1").build();
    Recorder ra = new Recorder("secret-a");
    Recorder rb = new Recorder("secret-b");
    Memberlist a = start("a", ra, secure);
    Memberlist b = start("b", rb, secure.toBuilder().keyring(new Keyring(key)).build());
    assertThat(b.join(List.of(a.localNode().hostPort()))).isEqualTo(1);
    assertThat(ra.remoteStates).contains("secret-b");
    await().atMost(Duration.ofSeconds(5)).until(() -> a.numMembers() == 2 && b.numMembers() == 2);
    b.sendBestEffort(member(b, "a"), "sealed-udp".getBytes(StandardCharsets.UTF_8));
    b.sendReliable(member(b, "a"), "sealed-tcp".getBytes(StandardCharsets.UTF_8));
    await().atMost(Duration.ofSeconds(5)).until(() -> ra.messages.containsAll(List.of("sealed-udp", "sealed-tcp")));

    Memberlist stranger = start("stranger", new Recorder(""));
    assertThatThrownBy(() -> stranger.join(List.of(a.localNode().hostPort()))).isInstanceOf(IOException.class);
    assertThat(a.numMembers()).isEqualTo(2);
  }
}
